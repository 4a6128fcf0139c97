package agent

import (
	"encoding/json"
	"fmt"
	"time"

	"github.com/excalibot/excalibot/agent/ollama"
)

// Memory is what a thread remembers between runs: the user's requests with the agent's short
// summaries (never old tool payloads), and the scene as the last run left it, so that the next run
// can be told what changed outside the agent. The store keeps it as opaque bytes (Marshal).
type Memory struct {
	Exchanges []Exchange
	// Scene is the scene at the end of the last run; nil before the first run.
	Scene []ElementState
	// HasScene tells an empty scene left by a run from no run at all.
	HasScene bool
}

// Exchange is one earlier run as the model sees it in later runs.
type Exchange struct {
	Request string    `json:"request"`
	Summary string    `json:"summary"`
	At      time.Time `json:"at"`
}

// maxExchanges caps what a thread stores; the token budget decides what is sent.
const maxExchanges = 50

const memoryVersion = 1

type memoryWire struct {
	Version   int            `json:"version"`
	Exchanges []Exchange     `json:"exchanges"`
	Scene     []ElementState `json:"scene,omitempty"`
	HasScene  bool           `json:"has_scene,omitempty"`
}

// Marshal encodes the memory for storage.
func (m Memory) Marshal() ([]byte, error) {
	b, err := json.Marshal(memoryWire{Version: memoryVersion, Exchanges: m.Exchanges, Scene: m.Scene, HasScene: m.HasScene})
	if err != nil {
		return nil, fmt.Errorf("encode agent memory: %w", err)
	}
	return b, nil
}

// UnmarshalMemory decodes bytes written by Marshal. Empty input is an empty memory.
func UnmarshalMemory(b []byte) (Memory, error) {
	if len(b) == 0 {
		return Memory{}, nil
	}
	var w memoryWire
	if err := json.Unmarshal(b, &w); err != nil {
		return Memory{}, fmt.Errorf("decode agent memory: %w", err)
	}
	if w.Version != memoryVersion {
		return Memory{}, fmt.Errorf("decode agent memory: version %d, this program reads version %d", w.Version, memoryVersion)
	}
	return Memory{Exchanges: w.Exchanges, Scene: w.Scene, HasScene: w.HasScene}, nil
}

// Add returns the memory with one more exchange, keeping at most maxExchanges.
func (m Memory) Add(e Exchange) Memory {
	ex := append(append([]Exchange(nil), m.Exchanges...), e)
	if len(ex) > maxExchanges {
		ex = ex[len(ex)-maxExchanges:]
	}
	m.Exchanges = ex
	return m
}

// History returns the newest exchanges that fit in budget tokens, oldest first, as user/assistant
// message pairs. A pair is kept or dropped whole.
func (m Memory) History(budget int) []ollama.Message {
	var keep []Exchange
	used := 0
	for i := len(m.Exchanges) - 1; i >= 0; i-- {
		e := m.Exchanges[i]
		cost := estimateTokens(e.Request) + estimateTokens(e.Summary) + 8
		if used+cost > budget {
			break
		}
		used += cost
		keep = append(keep, e)
	}
	msgs := make([]ollama.Message, 0, 2*len(keep))
	for i := len(keep) - 1; i >= 0; i-- {
		msgs = append(msgs,
			ollama.Message{Role: ollama.RoleUser, Content: keep[i].Request},
			ollama.Message{Role: ollama.RoleAssistant, Content: keep[i].Summary})
	}
	return msgs
}

// estimateTokens is a rough count (about 4 bytes per token for English and JSON); the model's
// own prompt_eval_count is logged against num_ctx for the real figure.
func estimateTokens(s string) int { return (len(s) + 3) / 4 }

func messageTokens(m ollama.Message) int {
	n := 4 + estimateTokens(m.Content) + imageTokens*len(m.Images)
	for _, c := range m.ToolCalls {
		n += 8 + estimateTokens(c.Name) + (len(c.Args)+3)/4
	}
	return n
}

// trimConversation keeps msgs under budget tokens. msgs[:keepHead] (system prompt, memory, the
// request) always stay. Older tool results are shortened first; then whole turns (an assistant
// message with the tool messages answering it) are dropped oldest first, so a call is never
// separated from its result. The newest turn is never touched.
func trimConversation(msgs []ollama.Message, keepHead, budget int) []ollama.Message {
	total := 0
	for _, m := range msgs {
		total += messageTokens(m)
	}
	if total <= budget {
		return msgs
	}
	// Turn boundaries after the head: each turn starts at an assistant message.
	var starts []int
	for i := keepHead; i < len(msgs); i++ {
		if msgs[i].Role == ollama.RoleAssistant {
			starts = append(starts, i)
		}
	}
	if len(starts) < 2 {
		return msgs
	}
	last := starts[len(starts)-1]
	out := append([]ollama.Message(nil), msgs...)
	const omitted = "(older result shortened to save context)"
	for i := keepHead; i < last && total > budget; i++ {
		if out[i].Role == ollama.RoleTool && len(out[i].Content) > 200 {
			total -= messageTokens(out[i])
			out[i].Content = out[i].Content[:120] + "… " + omitted
			total += messageTokens(out[i])
		}
	}
	drop := 0 // number of whole turns dropped from the front
	end := keepHead
	for drop < len(starts)-1 && total > budget {
		next := starts[drop+1]
		for i := starts[drop]; i < next; i++ {
			total -= messageTokens(out[i])
		}
		end = next
		drop++
	}
	if end == keepHead {
		return out
	}
	return append(out[:keepHead:keepHead], out[end:]...)
}
