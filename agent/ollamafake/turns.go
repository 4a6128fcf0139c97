package ollamafake

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/ollama/ollama/api"
)

// Say is a turn that streams text in chunks of a few words, then the done chunk.
func Say(text string) Turn {
	var chunks []api.ChatResponse
	words := strings.SplitAfter(text, " ")
	for i := 0; i < len(words); i += 3 {
		part := strings.Join(words[i:min(i+3, len(words))], "")
		chunks = append(chunks, api.ChatResponse{Message: api.Message{Role: "assistant", Content: part}})
	}
	return Turn{Chunks: append(chunks, DoneChunk())}
}

// Calls is a turn whose tool calls arrive in a chunk of their own, as Ollama sends them, then the
// done chunk. Calls without an ID get one.
func Calls(cs ...api.ToolCall) Turn {
	cs = append([]api.ToolCall(nil), cs...)
	for i := range cs {
		cs[i].Function.Index = i
		if cs[i].ID == "" {
			cs[i].ID = fmt.Sprintf("call_%s_%d", cs[i].Function.Name, callSeq.Add(1))
		}
	}
	return Turn{Chunks: []api.ChatResponse{
		{Message: api.Message{Role: "assistant", ToolCalls: cs}},
		DoneChunk(),
	}}
}

var callSeq atomic.Int64

// Call builds a tool call from a JSON object of arguments, keeping its key order. It panics on
// bad JSON: the arguments are a test's own literal.
func Call(name, args string) api.ToolCall {
	a := api.NewToolCallFunctionArguments()
	if err := json.Unmarshal([]byte(args), &a); err != nil {
		panic("ollamafake: bad arguments for " + name + ": " + err.Error())
	}
	return api.ToolCall{Function: api.ToolCallFunction{Name: name, Arguments: a}}
}

// DoneChunk is the final chunk with plausible metrics.
func DoneChunk() api.ChatResponse {
	return api.ChatResponse{Message: api.Message{Role: "assistant"}, Done: true, DoneReason: "stop",
		Metrics: api.Metrics{PromptEvalCount: 1200, EvalCount: 80, TotalDuration: 3 * time.Millisecond}}
}

// Fail is a turn answered with an HTTP error status, e.g. 500 {"error":"…"}.
func Fail(status int, msg string) Turn { return Turn{Status: status, Error: msg} }

// Slow delays a turn, e.g. beyond the client's request timeout.
func Slow(t Turn, d time.Duration) Turn {
	t.Delay += d
	return t
}

// Cut ends a turn's stream before its done chunk, as when the runner crashes.
func Cut(t Turn) Turn {
	t.Cut = true
	return t
}

// Script plays turns in order, one per request; once they are used up every request gets a 500
// naming the fact, so a test that scripted too few turns fails loudly.
func Script(turns ...Turn) Responder {
	var mu sync.Mutex
	return func(api.ChatRequest) Turn {
		mu.Lock()
		defer mu.Unlock()
		if len(turns) == 0 {
			return Fail(http.StatusInternalServerError, "ollamafake: no scripted turn left")
		}
		t := turns[0]
		turns = turns[1:]
		return t
	}
}

// Request returns the user's request in the latest user message: the text inside
// <request>…</request> when the agent wrapped it so, or the whole message.
func Request(req api.ChatRequest) string {
	for i := len(req.Messages) - 1; i >= 0; i-- {
		m := req.Messages[i]
		if m.Role != "user" {
			continue
		}
		text := m.Content
		if _, rest, ok := strings.Cut(text, "<request>"); ok {
			text, _, _ = strings.Cut(rest, "</request>")
		}
		return strings.TrimSpace(text)
	}
	return ""
}

// answered reports whether the conversation's last message is a tool result: the model has
// acted on the request and should finish.
func answered(req api.ChatRequest) bool {
	n := len(req.Messages)
	return n > 0 && req.Messages[n-1].Role == "tool"
}

var boxSeq atomic.Int64

// Boxes is an instant model that draws: for a request it calls create_element with one labelled
// rectangle (the label is the request, cut to 40 characters; the id is new to the whole test
// run, so follow-ups add to the scene), and once the tool has answered it calls done with the
// summary "Drew a box for: <request>.".
func Boxes(req api.ChatRequest) Turn {
	prompt := Request(req)
	if answered(req) {
		sum, _ := json.Marshal(map[string]string{"summary": "Drew a box for: " + prompt + "."})
		return Calls(Call("done", string(sum)))
	}
	n := boxSeq.Add(1)
	label := []rune(prompt)
	if len(label) > 40 {
		label = label[:40]
	}
	args, _ := json.Marshal(map[string]any{
		"id": fmt.Sprintf("box%d", n), "type": "rectangle",
		"x": (n % 8) * 220, "y": (n / 8) * 140, "width": 180, "height": 90, "text": string(label),
	})
	return Calls(Call("create_element", string(args)))
}
