package bot

import (
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/excalibot/excalibot/diagram/mermaid"
	"github.com/excalibot/excalibot/scene"
)

// fakeMermaid draws one rectangle per diagram, or refuses diagrams containing "BROKEN" with a
// syntax error on the line that holds it, as a drawer that converts Mermaid does.
type fakeMermaid struct {
	mu    sync.Mutex
	calls []string
}

func (f *fakeMermaid) draw(req DrawRequest) (DrawResult, error) {
	f.mu.Lock()
	f.calls = append(f.calls, req.Prompt)
	f.mu.Unlock()
	for i, l := range strings.Split(req.Prompt, "\n") {
		if strings.Contains(l, "BROKEN") {
			return DrawResult{}, &mermaid.Error{Line: i + 1, LineText: l, Message: "found '(' where Mermaid expected ']'",
				Hint: `put a label containing brackets in double quotes, e.g. A["Call f(x)"]`}
		}
	}
	sc := scene.New()
	if req.Scene != nil {
		sc = req.Scene.Clone()
	}
	e := scene.NewElement(scene.Rectangle)
	e.ID = "m" + strings.Repeat("m", sc.Len())
	e.Width, e.Height = 100, 50
	if _, err := sc.Add(e); err != nil {
		return DrawResult{}, err
	}
	return DrawResult{Scene: sc, Memory: req.Memory, Summary: "Drew the Mermaid flowchart diagram.", Changed: true}, nil
}

func TestMermaidMessage(t *testing.T) {
	h := newHarness(t, Options{}, nil)
	fm := &fakeMermaid{}
	h.drawer.mermaid = fm

	// A fenced diagram is drawn directly: a new revision and the picture, the model never asked.
	msg := "here you go:\n```mermaid\nflowchart TD\n  A --> B\n```"
	h.say(thread, msg)
	h.rec.wait(t, 1)
	r := h.rec.last(thread)
	if r.Error || r.Image == nil || !strings.Contains(r.Text, "Mermaid flowchart") {
		t.Fatalf("reply = %+v; want the picture and the summary", r)
	}
	if got := h.rev(t, thread).Rev; got != 1 {
		t.Errorf("revision = %d, want 1", got)
	}
	if len(h.drawer.prompts) != 0 {
		t.Errorf("the agent was asked %q; Mermaid should not need it", h.drawer.prompts)
	}
	if len(fm.calls) != 1 || fm.calls[0] != msg {
		t.Errorf("converter got %q, want the whole message", fm.calls)
	}

	// A syntax error: a reply with the line and the hint, and the scene stays at revision 1.
	h.say(thread, "flowchart TD\n  A[BROKEN(x)] --> B")
	h.rec.wait(t, 1)
	r = h.rec.last(thread)
	for _, want := range []string{"line 2", "A[BROKEN(x)] --> B", "expected ']'", "Hint: put a label", "Nothing in the diagram changed"} {
		if !strings.Contains(r.Text, want) {
			t.Errorf("error reply %q does not contain %q", r.Text, want)
		}
	}
	if !r.Error || r.Image != nil {
		t.Errorf("error reply: Error %v, image %v; want an error without a picture", r.Error, r.Image != nil)
	}
	if got := h.rev(t, thread).Rev; got != 1 {
		t.Errorf("revision after a refused diagram = %d, want 1", got)
	}

	// Ordinary requests still go to the agent, and the Mermaid diagram is on the scene it gets.
	h.say(thread, "make the boxes blue")
	h.rec.wait(t, 1)
	if len(h.drawer.prompts) != 1 {
		t.Fatalf("agent prompts %q, want the one plain request", h.drawer.prompts)
	}
	sc, err := scene.Decode(h.rev(t, thread).Scene)
	if err != nil {
		t.Fatal(err)
	}
	if !sc.Has("m") || !sc.Has("r2") {
		t.Errorf("scene ids %v, want the Mermaid shape m and the agent's r2", sc.IDs())
	}
}

// Only a request that is one message holding a Mermaid diagram is marked as one: several messages
// answered together are a request for the agent, whatever they hold.
func TestMermaidRequest(t *testing.T) {
	h := newHarness(t, Options{UserRatePerMinute: noRateLimit, ChatRatePerMinute: noRateLimit}, nil)
	h.hold = true
	h.say(thread, "```mermaid\nflowchart TD\n  A --> B\n```")
	h.say(thread, "and make it blue")
	h.answer(h.rec, thread)
	h.hold = false
	h.say(thread, "flowchart LR\n  A --> B")
	h.say(thread, "draw a flowchart of the login")
	if got, want := h.drawer.marked, []bool{false, true, false}; !slices.Equal(got, want) {
		t.Errorf("requests marked Mermaid: %v, want %v", got, want)
	}
}

func TestIsMermaid(t *testing.T) {
	for _, tc := range []struct {
		text string
		want bool
	}{
		{"```mermaid\nflowchart TD\n A-->B\n```", true},
		{"Can you draw this?\n\n~~~ mermaid\nsequenceDiagram\n A->>B: hi\n~~~", true},
		{"```Mermaid\ngraph LR\nA-->B\n```", true},
		{"flowchart TD\n  A --> B", true},
		{"graph LR\n  A --> B", true},
		{"sequenceDiagram\n  Alice->>Bob: hi", true},
		{"sequencediagram\n  Alice->>Bob: hi", true},
		{"classDiagram\n  Animal <|-- Dog", true},
		{"stateDiagram-v2\n  [*] --> Still", true},
		{"pie title Pets\n  \"Dogs\" : 3", true},
		{"---\ntitle: Flow\n---\nflowchart LR\n  A --> B", true},
		{"%% a comment\nerDiagram\n  A ||--o{ B : has", true},
		{"```flowchart TD\n  A --> B```", true}, // Slack's code block
		{"see:\n```sequenceDiagram\n  A->>B: hi\n```", true},
		{"```\nflowchart of the login\n```", false},
		{"flowchart TD", false}, // the keyword alone is not a diagram yet
		{"graph of our user signups by month\nplease", false},
		{"pie chart of our costs\nrent 40%", false},
		{"draw a flowchart of the login process", false},
		{"```go\nfunc main() {}\n```", false},
		{"sequence diagram: the user logs in", false},
	} {
		if got := isMermaid(tc.text); got != tc.want {
			t.Errorf("isMermaid(%q) = %v, want %v", tc.text, got, tc.want)
		}
	}
}
