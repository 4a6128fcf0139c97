package ollama

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/ollama/ollama/api"

	"github.com/excalibot/excalibot/agent/ollamafake"
	"github.com/excalibot/excalibot/tools"
)

func TestParseHost(t *testing.T) {
	tests := []struct{ in, want, err string }{
		{"", "http://127.0.0.1:11434", ""},
		{"0.0.0.0", "http://0.0.0.0:11434", ""},
		{"gpu-box:8080", "http://gpu-box:8080", ""},
		{"http://ollama.internal", "http://ollama.internal:80", ""},
		{"https://ollama.example.com/prefix", "https://ollama.example.com:443/prefix", ""},
		{"[::1]:11434", "http://[::1]:11434", ""},
		{"ftp://x", "", "scheme must be http or https"},
		{"host:99999", "", "port"},
	}
	for _, tt := range tests {
		u, err := parseHost(tt.in)
		if tt.err != "" {
			if err == nil || !strings.Contains(err.Error(), tt.err) {
				t.Errorf("parseHost(%q) err %v, want %q", tt.in, err, tt.err)
			}
			continue
		}
		if err != nil || u.String() != tt.want {
			t.Errorf("parseHost(%q) = %v, %v; want %s", tt.in, u, err, tt.want)
		}
	}
}

// drawSpecs are tools for a chat request; what they are does not matter to the client.
var drawSpecs = []tools.Spec{
	{Name: "batch_create_elements", Description: "create elements",
		Parameters: json.RawMessage(`{"type":"object","properties":{"elements":{"type":"array"}},"required":["elements"]}`)},
	{Name: "done", Description: "finish", Parameters: json.RawMessage(`{"type":"object","properties":{"summary":{"type":"string"}}}`)},
}

func chatOnce(t *testing.T, cfg Config) (Reply, error) {
	t.Helper()
	m, err := New(cfg, nil)
	if err != nil {
		t.Fatal(err)
	}
	return m.Chat(context.Background(), []Message{{Role: RoleUser, Content: "hi"}}, drawSpecs)
}

func TestOllamaUnreachable(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close() // nothing listens there now
	_, err = chatOnce(t, Config{Host: addr, Model: "qwen3:8b"})
	if !errors.Is(err, ErrUnreachable) || !strings.Contains(err.Error(), "ollama serve") || !strings.Contains(err.Error(), addr) {
		t.Fatalf("err %v, want ErrUnreachable naming the URL and `ollama serve`", err)
	}
	// The person who asked reads the same words, found through the caller's wrapping.
	var told interface{ UserMessage() string }
	if !errors.As(fmt.Errorf("agent run: %w", err), &told) || told.UserMessage() != err.Error() {
		t.Errorf("err %v has no words for people behind a wrapping", err)
	}
}

func TestOllamaNoToolSupport(t *testing.T) {
	f := ollamafake.New(t, ollamafake.Config{Models: []string{ollamafake.ToolLessModel}})
	_, err := chatOnce(t, Config{Host: f.URL(), Model: ollamafake.ToolLessModel})
	if !errors.Is(err, ErrNoToolSupport) || !strings.Contains(err.Error(), "qwen3") {
		t.Fatalf("err %v, want ErrNoToolSupport naming models that have it", err)
	}
}

func TestOllamaErrorMidStream(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, `{"model":"m","message":{"role":"assistant","content":"a"},"done":false}`+"\n")
		io.WriteString(w, `{"error":"an error was encountered while running the model"}`+"\n")
	}))
	defer srv.Close()
	_, err := chatOnce(t, Config{Host: srv.URL, Model: "m"})
	if err == nil || !strings.Contains(err.Error(), "an error was encountered") {
		t.Fatalf("err %v, want the server's error", err)
	}
}

func TestOllamaReplyAndOptions(t *testing.T) {
	turn := ollamafake.Calls(ollamafake.Call("batch_create_elements", `{"elements":[{"id":"b","type":"rectangle"}],"z":1,"a":2}`))
	turn.Chunks = append([]api.ChatResponse{{Message: api.Message{Role: "assistant", Content: "Drawing "}}}, turn.Chunks...)
	f := ollamafake.New(t, ollamafake.Config{Models: []string{ollamafake.ToolModel}, Responder: ollamafake.Script(turn)})
	temp := 0.3
	r, err := chatOnce(t, Config{Host: f.URL(), Model: ollamafake.ToolModel, NumCtx: 8192, Temperature: &temp, Think: true})
	if err != nil {
		t.Fatal(err)
	}
	if r.Message.Content != "Drawing " || len(r.Message.ToolCalls) != 1 || r.PromptTokens != 1200 {
		t.Fatalf("reply %+v", r)
	}
	if got, want := string(r.Message.ToolCalls[0].Args), `{"elements":[{"id":"b","type":"rectangle"}],"z":1,"a":2}`; got != want {
		t.Errorf("args %s, want %s (key order kept)", got, want)
	}
	req := f.Requests()[0]
	if req.Options["num_ctx"] != float64(8192) || req.Options["temperature"] != 0.3 || req.Think.Value != true {
		t.Errorf("options %v think %v", req.Options, req.Think)
	}
	if req.Stream != nil && !*req.Stream {
		t.Error("request must stream")
	}
}

func TestNearContextLimitIsLogged(t *testing.T) {
	turn := ollamafake.Say("ok")
	turn.Chunks[len(turn.Chunks)-1].PromptEvalCount = 15000
	f := ollamafake.New(t, ollamafake.Config{Models: []string{ollamafake.ToolModel}, Responder: ollamafake.Script(turn)})
	var logs bytes.Buffer
	m, err := New(Config{Host: f.URL(), Model: ollamafake.ToolModel}, slog.New(slog.NewTextHandler(&logs, nil)))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := m.Chat(context.Background(), []Message{{Role: RoleUser, Content: "hi"}}, nil); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(logs.String(), "prompt close to the context window") || !strings.Contains(logs.String(), "prompt_tokens=15000") {
		t.Errorf("log %q lacks the near-limit warning", logs.String())
	}
}

func TestAPIToolsKeepsSchema(t *testing.T) {
	specs := []tools.Spec{
		{Name: "done", Description: "finish"},
		{Name: "move", Parameters: json.RawMessage(`{"type":"object","properties":{"id":{"type":"string"},"dx":{"type":"number"},"color":{"type":"string","enum":["red","blue"]}},"required":["id"]}`)},
		{Name: "bad", Parameters: json.RawMessage(`[1]`)},
	}
	if _, err := APITools(specs); err == nil || !strings.Contains(err.Error(), "tool bad") {
		t.Fatalf("err %v, want an error naming the bad tool", err)
	}
	ts, err := APITools(specs[:2])
	if err != nil {
		t.Fatal(err)
	}
	b, _ := json.Marshal(ts)
	want := `[{"type":"function","function":{"name":"done","description":"finish","parameters":{"type":"object","properties":{}}}},` +
		`{"type":"function","function":{"name":"move","parameters":{"type":"object","required":["id"],"properties":{"id":{"type":"string"},"dx":{"type":"number"},"color":{"type":"string","enum":["red","blue"]}}}}}]`
	if string(b) != want {
		t.Errorf("got  %s\nwant %s", b, want)
	}
}

// TestRequestToolsFollowSpecs: the converted tool list is remembered between requests, so a
// request offering other tools (or the same names with another schema) must not get the old ones.
func TestRequestToolsFollowSpecs(t *testing.T) {
	o, err := New(Config{Model: "m", Host: "http://127.0.0.1:1"}, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	a := []tools.Spec{{Name: "done", Description: "finish"}}
	b := []tools.Spec{{Name: "done", Description: "finish"}, {Name: "move", Parameters: json.RawMessage(`{"type":"object","properties":{"id":{"type":"string"}}}`)}}
	b2 := []tools.Spec{{Name: "done", Description: "finish"}, {Name: "move", Parameters: json.RawMessage(`{"type":"object","properties":{"dx":{"type":"number"}}}`)}}
	for i, specs := range [][]tools.Spec{a, a, b, b2, a} {
		req, err := o.request(nil, specs)
		if err != nil {
			t.Fatal(err)
		}
		got, _ := json.Marshal(req.Tools)
		wantTools, _ := APITools(specs)
		want, _ := json.Marshal(wantTools)
		if string(got) != string(want) {
			t.Errorf("request %d: tools\n got  %s\n want %s", i, got, want)
		}
	}
}

// TestBadCallErrorLines: an error about the model's call is ErrBadToolCall however Ollama sends
// it: an HTTP 500, an error line in the stream, or an error line under a key of its own.
func TestBadCallErrorLines(t *testing.T) {
	chunk := `{"model":"m","message":{"role":"assistant","content":""},"done":false}` + "\n"
	tests := []struct {
		name   string
		status int
		body   string
		bad    bool
	}{
		{"EOF as a 500", 500, `{"error":"EOF"}`, true},
		{"EOF as a stream line", 200, chunk + `{"error":"EOF"}` + "\n", true},
		{"under another key", 200, chunk + `{"error parsing tool call":"invalid character 'c' looking for beginning of value"}` + "\n", true},
		{"under another key, no final newline", 200, chunk + `{"error parsing tool call":"unexpected end of JSON input"}`, true},
		{"runner crashed", 200, chunk + `{"error":"an error was encountered while running the model"}` + "\n", false},
		{"cut without a word", 200, chunk, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				w.WriteHeader(tt.status)
				io.WriteString(w, tt.body)
			}))
			defer srv.Close()
			_, err := chatOnce(t, Config{Host: srv.URL, Model: "m"})
			if err == nil {
				t.Fatal("got no error")
			}
			if got := errors.Is(err, ErrBadToolCall); got != tt.bad {
				t.Errorf("err %v: bad call %v, want %v", err, got, tt.bad)
			}
		})
	}
}
