package agentdraw

import (
	"context"
	"fmt"
	"strings"

	"github.com/excalibot/excalibot/bot"
	"github.com/excalibot/excalibot/diagram/mermaid"
	"github.com/excalibot/excalibot/internal/plural"
	"github.com/excalibot/excalibot/scene"
)

// drawMermaid converts the request's Mermaid diagram (the whole message; it may hold a ```mermaid
// fence) and imports it as the create_from_mermaid tool does, beside the thread's drawing. The
// agent's memory is left as it was. A diagram Mermaid refuses returns the converter's
// *mermaid.Error.
func (d *Drawer) drawMermaid(ctx context.Context, req bot.DrawRequest) (bot.DrawResult, error) {
	sc := req.Scene
	if sc == nil {
		sc = scene.New()
	}
	dg, err := d.opt.Mermaid.Mermaid(ctx, req.Prompt)
	if err != nil {
		return bot.DrawResult{}, err
	}
	next, info, err := mermaid.Import(sc, dg, false)
	if err != nil {
		return bot.DrawResult{}, err
	}
	if limit := d.opt.Limits.MaxElements; limit > 0 && next.Len() > limit {
		return bot.DrawResult{}, overLimit{next.Len(), limit}
	}
	return bot.DrawResult{Scene: next, Memory: req.Memory, Summary: mermaidSummary(info), Changed: true}, nil
}

// mermaidSummary is the chat reply's text: shorter than what the model reads.
func mermaidSummary(m mermaid.Imported) string {
	kind := strings.TrimSuffix(m.Type, "-v2")
	var s string
	if m.Image {
		s = fmt.Sprintf("Excalidraw has no shapes for Mermaid %s diagrams, so this one is a picture: it cannot be edited shape by shape (flowchart, sequence, class, state and ER diagrams can).", kind)
	} else {
		s = fmt.Sprintf("Drew the Mermaid %s diagram: %s, %s. Ask me to change it, or open it in the editor.", kind,
			plural.Count(len(m.Shapes), "shape", ""), plural.Count(m.Arrows, "arrow", ""))
	}
	if len(m.Fixes) > 0 {
		s += " I fixed: " + strings.Join(m.Fixes, "; ") + "."
	}
	return s
}

// overLimit is a Mermaid diagram that would take the drawing over its element limit; the person
// who sent it reads why.
type overLimit struct{ n, max int }

var _ bot.UserMessager = overLimit{}

func (e overLimit) Error() string {
	return fmt.Sprintf("the diagram would bring the drawing to %d elements, over the limit of %d", e.n, e.max)
}

func (e overLimit) UserMessage() string { return e.Error() }
