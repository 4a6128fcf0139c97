package bot

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"
)

// What the core keeps in the store: an incoming message in the inbox, a reply and the taking down
// of working signs in the outbox. Each body carries a version, so a newer program can tell an old
// row from a new one.
const codecVersion = 1

// Kinds of outbox rows.
const (
	kindReply = "reply" // a Reply, posted with the adapter's Send (or SendSteps)
	kindSigns = "signs" // a run's working signs to take down, after its reply
)

type storedFile struct {
	Name string `json:"name"`
	MIME string `json:"mime,omitempty"`
	Size int64  `json:"size,omitempty"`
	Ref  string `json:"ref,omitempty"`
}

type storedMessage struct {
	V        int          `json:"v"`
	EventID  string       `json:"event,omitempty"`
	ID       string       `json:"id,omitempty"`
	User     string       `json:"user,omitempty"`
	UserName string       `json:"user_name,omitempty"`
	Text     string       `json:"text"`
	Files    []storedFile `json:"files,omitempty"`
	Received int64        `json:"received,omitempty"` // Unix milliseconds
}

// encodeMessage is msg as the inbox keeps it: everything the run needs later, in any process; a
// file is kept as its reference.
func encodeMessage(msg Message) ([]byte, error) {
	m := storedMessage{V: codecVersion, EventID: msg.EventID, ID: msg.ID, User: msg.User, UserName: msg.UserName, Text: msg.Text}
	if !msg.Received.IsZero() {
		m.Received = msg.Received.UnixMilli()
	}
	for _, f := range msg.Files {
		m.Files = append(m.Files, storedFile{Name: f.Name, MIME: f.MIME, Size: f.Size, Ref: f.Ref})
	}
	b, err := json.Marshal(m)
	if err != nil {
		return nil, fmt.Errorf("encode message: %w", err)
	}
	return b, nil
}

// decodeMessage reads a kept message back; its files fetch through a (nil when the adapter cannot).
func decodeMessage(key ThreadKey, body []byte, a Adapter) (Message, error) {
	var m storedMessage
	if err := json.Unmarshal(body, &m); err != nil {
		return Message{}, fmt.Errorf("read a kept message: %w", err)
	}
	if m.V != codecVersion {
		return Message{}, fmt.Errorf("read a kept message: version %d, this program reads %d", m.V, codecVersion)
	}
	msg := Message{Key: key, EventID: m.EventID, ID: m.ID, User: m.User, UserName: m.UserName, Text: m.Text}
	if m.Received != 0 {
		msg.Received = time.UnixMilli(m.Received)
	}
	ff, _ := a.(FileFetcher)
	for _, f := range m.Files {
		at := Attachment{Name: f.Name, MIME: f.MIME, Size: f.Size, Ref: f.Ref}
		if ff != nil {
			at.Fetch = func(ctx context.Context, max int64) ([]byte, error) { return ff.FetchFile(ctx, at, max) }
		} else {
			at.Fetch = func(context.Context, int64) ([]byte, error) {
				return nil, errors.New("the chat platform's adapter cannot download files")
			}
		}
		msg.Files = append(msg.Files, at)
	}
	return msg, nil
}

type storedReply struct {
	V     int   `json:"v"`
	Reply Reply `json:"reply"`
}

func encodeReply(r Reply) ([]byte, error) {
	b, err := json.Marshal(storedReply{V: codecVersion, Reply: r})
	if err != nil {
		return nil, fmt.Errorf("encode reply: %w", err)
	}
	return b, nil
}

func decodeReply(body []byte) (Reply, error) {
	var s storedReply
	if err := json.Unmarshal(body, &s); err != nil {
		return Reply{}, fmt.Errorf("read a kept reply: %w", err)
	}
	if s.V != codecVersion {
		return Reply{}, fmt.Errorf("read a kept reply: version %d, this program reads %d", s.V, codecVersion)
	}
	return s.Reply, nil
}

type storedSigns struct {
	V    int    `json:"v"`
	Sign string `json:"sign,omitempty"` // the adapter's handle (SignedStatus); "" when it gave none
}

func encodeSigns(sign string) []byte {
	b, _ := json.Marshal(storedSigns{V: codecVersion, Sign: sign}) // two strings: cannot fail
	return b
}

func decodeSigns(body []byte) (string, error) {
	var s storedSigns
	if err := json.Unmarshal(body, &s); err != nil || s.V != codecVersion {
		return "", fmt.Errorf("read kept working signs %q: not version %d", body, codecVersion)
	}
	return s.Sign, nil
}
