package bot

import (
	"context"
	"regexp"
	"strings"

	"github.com/excalibot/excalibot/scene"
)

// MermaidDrawer draws a Mermaid diagram onto a thread's scene without the model (cmd/excalibot
// wires the renderer's Mermaid page and the tools' import). Optional: without one, Mermaid in a
// message goes to the agent like any request.
type MermaidDrawer interface {
	// DrawMermaid adds the diagram in src (a whole message; it may hold a ```mermaid fence) to
	// sc, nil for a new thread, and returns the new scene. A diagram Mermaid refuses returns a
	// *mermaid.Error, whose UserMessage the reply says.
	DrawMermaid(ctx context.Context, src string, sc *scene.Scene) (MermaidDrawing, error)
}

// MermaidDrawing is a scene with a Mermaid diagram drawn on it.
type MermaidDrawing struct {
	Scene *scene.Scene
	// Summary says what was drawn: its type, the shapes, a picture fallback, what was repaired.
	Summary string
}

// SetMermaid turns on drawing Mermaid messages directly.
func (b *Bot) SetMermaid(m MermaidDrawer) {
	b.mu.Lock()
	b.mermaid = m
	b.mu.Unlock()
}

// drawerFor returns who carries out the requests: the Mermaid drawer for a single message that is
// a Mermaid diagram, else the agent.
func (b *Bot) drawerFor(prompts []string) Drawer {
	b.mu.Lock()
	m := b.mermaid
	b.mu.Unlock()
	if m == nil || len(prompts) != 1 || !isMermaid(prompts[0]) {
		return b.drawer
	}
	return mermaidRun{m}
}

// mermaidRun is a Drawer that converts the prompt itself. The agent's memory is left as it was.
type mermaidRun struct{ m MermaidDrawer }

var _ Drawer = mermaidRun{}

func (r mermaidRun) Draw(ctx context.Context, req DrawRequest) (DrawResult, error) {
	d, err := r.m.DrawMermaid(ctx, req.Prompt, req.Scene)
	if err != nil {
		return DrawResult{}, err
	}
	return DrawResult{Scene: d.Scene, Memory: req.Memory, Summary: d.Summary, Changed: true}, nil
}

var (
	// A ```mermaid (or ~~~mermaid) fence anywhere in the message.
	reMermaidFence = regexp.MustCompile("(?im)^[ \t]*(```|~~~)[ \t]*mermaid\\b")
	// A first line that is a diagram keyword, as Mermaid writes it (any case: the converter fixes
	// it), alone or with what may follow it there; plain sentences like "graph of sales" are not.
	reMermaidStart = regexp.MustCompile(`(?i)^(?:(?:flowchart|graph)(?:[ \t]+(?:TD|TB|BT|RL|LR))?|sequenceDiagram|classDiagram(?:-v2)?|stateDiagram(?:-v2)?|erDiagram|journey|gantt|pie(?:[ \t]+(?:showData|title[ \t].*))?|mindmap|timeline|gitGraph|quadrantChart|requirementDiagram|C4(?:Context|Container|Component|Dynamic|Deployment)|(?:sankey|xychart|block|packet|architecture|radar|treemap)-beta|kanban)[ \t]*;?$`)
)

// isMermaid reports whether a message is a Mermaid diagram: it holds a ```mermaid fence or a code
// block starting with a diagram keyword (Slack's "```flowchart TD"), or its first line (after %%
// comments and a --- front-matter block) is a diagram keyword and more follows.
func isMermaid(text string) bool {
	if reMermaidFence.MatchString(text) {
		return true
	}
	for _, l := range strings.Split(text, "\n") {
		l = strings.TrimSpace(l)
		if rest, ok := strings.CutPrefix(l, "```"); ok && reMermaidStart.MatchString(strings.TrimSpace(rest)) {
			return true
		}
	}
	lines := strings.Split(strings.ReplaceAll(strings.TrimSpace(text), "\r\n", "\n"), "\n")
	i := 0
	if len(lines) > 0 && strings.TrimSpace(lines[0]) == "---" {
		for i = 1; i < len(lines) && strings.TrimSpace(lines[i]) != "---"; i++ {
		}
		i++
	}
	for i < len(lines) && (strings.HasPrefix(strings.TrimSpace(lines[i]), "%%") || strings.TrimSpace(lines[i]) == "") {
		i++
	}
	return i < len(lines)-1 && reMermaidStart.MatchString(strings.TrimSpace(lines[i]))
}
