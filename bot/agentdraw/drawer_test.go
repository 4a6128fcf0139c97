package agentdraw

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"sync"
	"testing"

	"github.com/excalibot/excalibot/agent"
	"github.com/excalibot/excalibot/agent/ollama"
	"github.com/excalibot/excalibot/bot"
	"github.com/excalibot/excalibot/tools"
)

// scriptedModel answers each request with the next reply of its script.
type scriptedModel struct {
	mu      sync.Mutex
	replies []ollama.Message
	err     error
}

func (m *scriptedModel) Chat(ctx context.Context, msgs []ollama.Message, specs []tools.Spec) (ollama.Reply, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.err != nil {
		return ollama.Reply{}, m.err
	}
	if len(m.replies) == 0 {
		return ollama.Reply{Message: ollama.Message{Role: ollama.RoleAssistant, Content: "Finished."}}, nil
	}
	r := m.replies[0]
	m.replies = m.replies[1:]
	return ollama.Reply{Message: r}, nil
}

func call(name, args string) ollama.ToolCall {
	return ollama.ToolCall{ID: name, Name: name, Args: json.RawMessage(args)}
}

func TestDrawer(t *testing.T) {
	model := &scriptedModel{replies: []ollama.Message{
		{Role: ollama.RoleAssistant, ToolCalls: []ollama.ToolCall{call("batch_create_elements", `{"elements":[
			{"id":"api","type":"rectangle","x":0,"y":0,"width":160,"height":80,"text":"API"},
			{"id":"db","type":"ellipse","x":300,"y":0,"width":160,"height":80,"text":"Postgres"},
			{"id":"a1","type":"arrow","startElementId":"api","endElementId":"db"}]}`)}},
		{Role: ollama.RoleAssistant, ToolCalls: []ollama.ToolCall{call("done", `{}`)}},
	}}
	d := New(agent.New(model, agent.Config{}, nil), Options{}, nil)
	var steps []bot.Progress
	res, err := d.Draw(context.Background(), bot.DrawRequest{Prompt: "API talks to Postgres", Progress: func(p bot.Progress) { steps = append(steps, p) }})
	if err != nil {
		t.Fatal(err)
	}
	sc := res.Scene
	for _, id := range []string{"api", "db", "a1"} {
		if !sc.Has(id) {
			t.Errorf("scene lacks %s", id)
		}
	}
	if !res.Changed || res.Summary == "" || len(res.Memory) == 0 {
		t.Errorf("result = changed %v, summary %q, memory %d bytes; want a change, a summary and memory", res.Changed, res.Summary, len(res.Memory))
	}
	if len(steps) == 0 || steps[0].Shapes != 2 || steps[0].Arrows != 1 {
		t.Errorf("progress = %+v; want 2 shapes and 1 arrow after the batch", steps)
	}

	// A follow-up that only answers changes nothing.
	model.replies = []ollama.Message{{Role: ollama.RoleAssistant, Content: "Which box do you mean?"}}
	res2, err := d.Draw(context.Background(), bot.DrawRequest{Prompt: "make it bigger", Scene: res.Scene, Memory: res.Memory})
	if err != nil {
		t.Fatal(err)
	}
	if res2.Changed {
		t.Errorf("a reply without tool calls reported a change")
	}

	// Model errors come through as they are (they are written for users).
	model.err = errors.New("Ollama is not reachable at http://127.0.0.1:11434")
	if _, err := d.Draw(context.Background(), bot.DrawRequest{Prompt: "x"}); err == nil || !strings.Contains(err.Error(), "not reachable") {
		t.Errorf("err = %v", err)
	}

}
