package agent

import (
	"context"
	"encoding/json"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/excalibot/excalibot/agent/ollama"
	"github.com/excalibot/excalibot/diagram/mermaid"
	"github.com/excalibot/excalibot/scene"
	"github.com/excalibot/excalibot/tools"
)

// scriptedPlanner is a Model and Formatter that plays answers in order, without HTTP: each
// ChatFormat request takes the next answer. Chat (the tool loop) fails with chatErr, or says
// it has nothing to draw.
type scriptedPlanner struct {
	mu      sync.Mutex
	answers []string
	chatErr error

	chats   int
	formats []json.RawMessage // the format of each ChatFormat request (nil: a free answer)
	sent    [][]ollama.Message
}

func (s *scriptedPlanner) Chat(_ context.Context, msgs []ollama.Message, _ []tools.Spec) (ollama.Reply, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.chats++
	if s.chatErr != nil {
		return ollama.Reply{}, s.chatErr
	}
	return ollama.Reply{Message: ollama.Message{Role: ollama.RoleAssistant, Content: "nothing to do"}}, nil
}

func (s *scriptedPlanner) ChatFormat(_ context.Context, msgs []ollama.Message, format json.RawMessage) (ollama.Reply, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.formats = append(s.formats, format)
	s.sent = append(s.sent, append([]ollama.Message(nil), msgs...))
	if len(s.answers) == 0 {
		return ollama.Reply{Message: ollama.Message{Role: ollama.RoleAssistant}}, nil
	}
	a := s.answers[0]
	s.answers = s.answers[1:]
	return ollama.Reply{Message: ollama.Message{Role: ollama.RoleAssistant, Content: a}, PromptTokens: 900, OutputTokens: 120}, nil
}

func (s *scriptedPlanner) requests() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.formats)
}

// lastUser is the last user message of request i.
func (s *scriptedPlanner) lastUser(t *testing.T, i int) string {
	t.Helper()
	s.mu.Lock()
	defer s.mu.Unlock()
	if i >= len(s.sent) {
		t.Fatalf("request %d: only %d sent", i, len(s.sent))
	}
	ms := s.sent[i]
	for j := len(ms) - 1; j >= 0; j-- {
		if ms[j].Role == ollama.RoleUser {
			return ms[j].Content
		}
	}
	return ""
}

// describedPlanner is a scriptedPlanner that also says what the model can do.
type describedPlanner struct {
	*scriptedPlanner
	info ollama.ModelInfo
}

func (d describedPlanner) Describe(context.Context) (ollama.ModelInfo, error) { return d.info, nil }

// toolsOnlyModel can call tools but cannot answer in a format.
type toolsOnlyModel struct{}

func (toolsOnlyModel) Chat(context.Context, []ollama.Message, []tools.Spec) (ollama.Reply, error) {
	return ollama.Reply{Message: ollama.Message{Role: ollama.RoleAssistant, Content: "ok"}}, nil
}

// recordingSet is a tool set that records the calls made through it, whole.
type recordingSet struct {
	*tools.Set
	mu    sync.Mutex
	calls []planRecorded
}

type planRecorded struct {
	name string
	args map[string]any
}

func (r *recordingSet) Call(ctx context.Context, name string, args json.RawMessage) tools.Result {
	var m map[string]any
	_ = json.Unmarshal(args, &m)
	r.mu.Lock()
	if name != "get_scene" {
		r.calls = append(r.calls, planRecorded{name, m})
	}
	r.mu.Unlock()
	return r.Set.Call(ctx, name, args)
}

func (r *recordingSet) names() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []string
	for _, c := range r.calls {
		out = append(out, c.name)
	}
	return out
}

func (r *recordingSet) reset() {
	r.mu.Lock()
	r.calls = nil
	r.mu.Unlock()
}

func newRecordingSet(sc *scene.Scene) *recordingSet {
	if sc == nil {
		sc = scene.New()
	}
	return &recordingSet{Set: tools.New(sc, tools.Limits{})}
}

func (r *recordingSet) request(prompt string, mem Memory) Request {
	return Request{Prompt: prompt, Tools: r, Memory: mem, Scene: SetView{r.Set}}
}

// fixtureMermaid converts any flowchart to the elements the real converter made for a small
// one (diagram/mermaid/testdata/mermaid-flow.converted.json).
type fixtureMermaid struct{ calls []string }

func (f *fixtureMermaid) Mermaid(_ context.Context, src string) (mermaid.Diagram, error) {
	f.calls = append(f.calls, src)
	b, err := os.ReadFile("../diagram/mermaid/testdata/mermaid-flow.converted.json")
	if err != nil {
		return mermaid.Diagram{}, err
	}
	var fx struct {
		Type     string            `json:"type"`
		Elements []json.RawMessage `json:"elements"`
	}
	if err := json.Unmarshal(b, &fx); err != nil {
		return mermaid.Diagram{}, err
	}
	return mermaid.Diagram{Elements: fx.Elements, Type: fx.Type}, nil
}

func planAgent(m Model, proto Protocol) *Agent {
	return New(m, Config{Protocol: proto}, nil)
}

func runPlanned(t *testing.T, a *Agent, req Request) Result {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	res, err := a.Run(ctx, req)
	if err != nil {
		t.Fatalf("run: %v", err)
	}
	return res
}
