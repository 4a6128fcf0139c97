package agent

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ollama/ollama/api"
)

// fakeOllama speaks Ollama's /api/chat: it decodes the request, and streams the next scripted turn
// as NDJSON chunks (content, then tool calls, then a done chunk with metrics), flushing each one
// as the real server does. It answers HEAD / like Ollama, and 404 for a model it does not have.
type fakeOllama struct {
	t     testing.TB
	model string // the only model pulled

	mu       sync.Mutex
	turns    []fakeTurn
	requests []api.ChatRequest
	raw      [][]byte
}

// fakeTurn is one scripted reply.
type fakeTurn struct {
	chunks []api.ChatResponse
	cut    bool          // end the body without the done chunk
	delay  time.Duration // wait before answering (a slow model); ends early if the client leaves
}

func newFakeOllama(t testing.TB, turns ...fakeTurn) (*fakeOllama, *httptest.Server) {
	f := &fakeOllama{t: t, model: "qwen3:8b", turns: turns}
	srv := httptest.NewServer(f)
	t.Cleanup(srv.Close)
	return f, srv
}

func (f *fakeOllama) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	switch {
	case r.URL.Path == "/" && (r.Method == http.MethodHead || r.Method == http.MethodGet):
		io.WriteString(w, "Ollama is running")
		return
	case r.URL.Path != "/api/chat" || r.Method != http.MethodPost:
		http.NotFound(w, r)
		return
	}
	body, err := io.ReadAll(r.Body)
	if err != nil {
		http.Error(w, `{"error":"read body"}`, http.StatusBadRequest)
		return
	}
	var req api.ChatRequest
	if err := json.Unmarshal(body, &req); err != nil {
		w.WriteHeader(http.StatusBadRequest)
		io.WriteString(w, `{"error":"invalid request: `+err.Error()+`"}`)
		return
	}
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	if req.Model != f.model {
		w.WriteHeader(http.StatusNotFound)
		io.WriteString(w, `{"error":"model '`+req.Model+`' not found"}`)
		return
	}
	f.mu.Lock()
	f.requests = append(f.requests, req)
	f.raw = append(f.raw, body)
	var turn fakeTurn
	ok := len(f.turns) > 0
	if ok {
		turn, f.turns = f.turns[0], f.turns[1:]
	}
	f.mu.Unlock()
	if !ok {
		w.WriteHeader(http.StatusInternalServerError)
		io.WriteString(w, `{"error":"fake: no scripted turn left"}`)
		return
	}
	if turn.delay > 0 {
		select {
		case <-time.After(turn.delay):
		case <-r.Context().Done():
			return
		}
	}
	w.Header().Set("Content-Type", "application/x-ndjson")
	enc := json.NewEncoder(w)
	for _, c := range turn.chunks {
		if turn.cut && c.Done {
			break
		}
		c.Model, c.CreatedAt = req.Model, time.Now().UTC()
		if err := enc.Encode(c); err != nil {
			return
		}
		w.(http.Flusher).Flush()
	}
}

// request returns the i-th chat request received.
func (f *fakeOllama) request(i int) api.ChatRequest {
	f.t.Helper()
	f.mu.Lock()
	defer f.mu.Unlock()
	if i >= len(f.requests) {
		f.t.Fatalf("request %d: only %d received", i, len(f.requests))
	}
	return f.requests[i]
}

func (f *fakeOllama) count() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return len(f.requests)
}

// left is the number of scripted turns not played.
func (f *fakeOllama) left() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return len(f.turns)
}

// say is a turn that streams text in a few chunks.
func say(text string) fakeTurn {
	var chunks []api.ChatResponse
	for _, part := range splitWords(text, 3) {
		chunks = append(chunks, api.ChatResponse{Message: api.Message{Role: "assistant", Content: part}})
	}
	return fakeTurn{chunks: append(chunks, doneChunk())}
}

// calls is a turn whose tool calls arrive in a chunk of their own, as Ollama sends them.
func calls(cs ...api.ToolCall) fakeTurn {
	for i := range cs {
		cs[i].Function.Index = i
		if cs[i].ID == "" {
			cs[i].ID = "call_" + cs[i].Function.Name + string(rune('a'+i))
		}
	}
	return fakeTurn{chunks: []api.ChatResponse{
		{Message: api.Message{Role: "assistant", ToolCalls: cs}},
		doneChunk(),
	}}
}

// call builds a tool call from a JSON object of arguments, keeping its key order.
func call(name, args string) api.ToolCall {
	a := api.NewToolCallFunctionArguments()
	if err := json.Unmarshal([]byte(args), &a); err != nil {
		panic("bad test args for " + name + ": " + err.Error())
	}
	return api.ToolCall{Function: api.ToolCallFunction{Name: name, Arguments: a}}
}

func doneChunk() api.ChatResponse {
	return api.ChatResponse{Message: api.Message{Role: "assistant"}, Done: true, DoneReason: "stop",
		Metrics: api.Metrics{PromptEvalCount: 1200, EvalCount: 80, TotalDuration: 3 * time.Millisecond}}
}

func splitWords(s string, n int) []string {
	words := strings.SplitAfter(s, " ")
	var out []string
	for i := 0; i < len(words); i += n {
		out = append(out, strings.Join(words[i:min(i+n, len(words))], ""))
	}
	return out
}
