package tools

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/excalibot/excalibot/diagram/mermaid"
	"github.com/excalibot/excalibot/internal/plural"
	"github.com/excalibot/excalibot/scene"
)

// SetMermaid gives the set a Mermaid converter; without one create_from_mermaid refuses.
func (s *Set) SetMermaid(c mermaid.Converter) {
	s.mu.Lock()
	s.mermaid = c
	s.mu.Unlock()
}

const beforeMermaid = "before-mermaid"

// createFromMermaid converts the model's Mermaid and puts it on the canvas, beside what is there or
// (replace) instead of it. It replaces s.sc like restore_snapshot: the result is a loaded file, not
// a sequence of edits.
func (s *Set) createFromMermaid(ctx context.Context, sc *scene.Scene, o *object) (string, error) {
	src, _ := o.str("mermaid")
	replace, _ := o.boolean("replace")
	o.finish("mermaid", "replace")
	if !o.p.ok() {
		return "", o.p
	}
	if strings.TrimSpace(src) == "" {
		return "", refuse("mermaid: missing; give the diagram's text, e.g. {\"mermaid\":\"flowchart LR\\n  A[Client] --> B[Server]\"}")
	}
	if s.mermaid == nil {
		return "", refuse("Mermaid is not available here (no browser); draw with " + CreateGraph + " or " + BatchCreateElements + " instead")
	}
	d, err := s.mermaid.Mermaid(ctx, src)
	var se *mermaid.Error
	switch {
	case errors.As(err, &se):
		return "", refuse("%s. Fix that line and call %s again.", se.Error(), CreateFromMermaid)
	case err != nil:
		return "", refuse("the Mermaid diagram could not be converted: %v", err)
	}
	next, info, err := mermaid.Import(sc, d, replace)
	if err != nil {
		return "", refuse("%v", err)
	}
	if n := next.Len(); n > s.lim.MaxElements {
		return "", refuse("the diagram has %s and the canvas would hold %d, over the limit of %d; draw a smaller diagram", plural.Count(len(d.Elements), "element", ""), n, s.lim.MaxElements)
	}
	if replace && sc.Len() > 0 {
		s.saveSnapshot(beforeMermaid, sc)
	}
	s.sc = next
	text := info.String()
	if replace && sc.Len() > 0 {
		text += fmt.Sprintf(" The old drawing was replaced; %s {\"name\":%q} brings it back.", RestoreSnapshot, beforeMermaid)
	}
	return text, nil
}
