package agentdraw

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"strings"
	"testing"

	"github.com/excalibot/excalibot/agent"
	"github.com/excalibot/excalibot/agent/ollama"
	"github.com/excalibot/excalibot/bot"
	"github.com/excalibot/excalibot/diagram/mermaid"
	"github.com/excalibot/excalibot/scene"
	"github.com/excalibot/excalibot/tools"
)

// fixtureConverter answers every diagram with the flowchart the real converter made of
// diagram/mermaid/testdata's source, or with err.
type fixtureConverter struct {
	t   *testing.T
	err error
}

func (c fixtureConverter) Mermaid(context.Context, string) (mermaid.Diagram, error) {
	if c.err != nil {
		return mermaid.Diagram{}, c.err
	}
	b, err := os.ReadFile("../../diagram/mermaid/testdata/mermaid-flow.converted.json")
	if err != nil {
		c.t.Fatal(err)
	}
	var d mermaid.Diagram
	if err := json.Unmarshal(b, &d); err != nil {
		c.t.Fatal(err)
	}
	return d, nil
}

// TestDrawMermaid: a request marked as a Mermaid diagram is converted and imported without the
// model when there is a converter; otherwise the agent draws it.
func TestDrawMermaid(t *testing.T) {
	refused := &mermaid.Error{Line: 2, Message: "found '(' where Mermaid expected ']'"}
	memory := []byte(`{"version":1}`)
	for _, tc := range []struct {
		name      string
		conv      mermaid.Converter
		limit     int
		mermaid   bool
		wantAgent bool
		wantErr   string
		refusal   bool // the error is the converter's *mermaid.Error
		wantText  string
	}{
		{name: "converted", conv: fixtureConverter{t: t}, mermaid: true, wantText: "Drew the Mermaid flowchart diagram"},
		{name: "refused", conv: fixtureConverter{t: t, err: refused}, mermaid: true, wantErr: "expected ']'", refusal: true},
		{name: "over the element limit", conv: fixtureConverter{t: t}, limit: 3, mermaid: true, wantErr: "over the limit of 3"},
		{name: "no converter", mermaid: true, wantAgent: true},
		{name: "not Mermaid", conv: fixtureConverter{t: t}, wantAgent: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			model := &scriptedModel{replies: []ollama.Message{{Role: ollama.RoleAssistant, Content: "Which diagram?"}}}
			d := New(agent.New(model, agent.Config{}, nil), Options{Mermaid: tc.conv, Limits: tools.Limits{MaxElements: tc.limit}}, nil)
			res, err := d.Draw(context.Background(), bot.DrawRequest{Prompt: "```mermaid\nflowchart TD\n  A --> B\n```",
				Scene: scene.New(), Memory: memory, Mermaid: tc.mermaid})
			if asked := len(model.replies) == 0; asked != tc.wantAgent {
				t.Errorf("the model was asked: %v, want %v", asked, tc.wantAgent)
			}
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("err = %v, want %q", err, tc.wantErr)
				}
				var me *mermaid.Error
				if errors.As(err, &me) != tc.refusal {
					t.Errorf("err = %v is a *mermaid.Error: %v, want %v", err, !tc.refusal, tc.refusal)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if tc.wantAgent {
				return
			}
			if !res.Changed || res.Scene.Len() == 0 || !strings.Contains(res.Summary, tc.wantText) || string(res.Memory) != string(memory) {
				t.Errorf("result: changed %v, %d elements, summary %q, memory %s; want the diagram, %q and the memory kept",
					res.Changed, res.Scene.Len(), res.Summary, res.Memory, tc.wantText)
			}
		})
	}
}
