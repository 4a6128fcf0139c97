package relay

import (
	"encoding/json"
	"fmt"
)

// Kinds of outbox rows.
const (
	kindReply = "reply" // a bot.Reply (bot.EncodeReply), posted with the adapter's Send (or SendSteps)
	kindSigns = "signs" // a run's working signs to take down, after its reply
)

// signsVersion is the version of a kept signs row, so a newer program can tell an old row.
const signsVersion = 1

type storedSigns struct {
	V    int    `json:"v"`
	Sign string `json:"sign,omitempty"` // the adapter's handle (SignedStatus); "" when it gave none
}

func encodeSigns(sign string) []byte {
	b, _ := json.Marshal(storedSigns{V: signsVersion, Sign: sign}) // two strings: cannot fail
	return b
}

func decodeSigns(body []byte) (string, error) {
	var s storedSigns
	if err := json.Unmarshal(body, &s); err != nil || s.V != signsVersion {
		return "", fmt.Errorf("read kept working signs %q: not version %d", body, signsVersion)
	}
	return s.Sign, nil
}
