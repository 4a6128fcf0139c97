// Package diagram holds what the diagram builders share (diagram/graph's placement, diagram/sequence,
// the element tools): the size a new node starts at, widening a node to its label, and where a new
// diagram goes on a canvas that already holds a drawing.
//
// Builders keep no state of their own: they read the scene and write it, so a drawing a person
// edited in Excalidraw is the one the next call works on.
package diagram

import (
	"fmt"
	"math"
	"strings"

	"github.com/excalibot/excalibot/scene"
)

// Gap is the least gap kept between a newly placed node and anything already on the canvas.
const Gap = 40.0

// DefaultSize is the size a shape starts at when none is given (the diagram guide's sizes); a shape
// still grows to fit its label. ok is false for types with no default.
func DefaultSize(t scene.Type) (width, height float64, ok bool) {
	switch t {
	case scene.Rectangle:
		return 160, 80, true
	case scene.Ellipse:
		return 140, 70, true
	case scene.Diamond:
		return 220, 130, true // a diamond's label gets only half its width
	}
	return 0, 0, false
}

// FitLabel widens a node until its label needs no line breaks beyond the ones written: the scene
// grows shapes in height to fit a label, but an ellipse or diamond then breaks long words, and a
// layout has room to make nodes wider instead.
func FitLabel(w *scene.Scene, id string) error {
	for range 12 {
		e, _ := w.Get(id)
		l, ok := w.Get(e.Label())
		if !ok || strings.Count(l.Text, "\n") <= strings.Count(l.OriginalText, "\n") || e.Width > 600 {
			return nil
		}
		if err := w.Update(id, func(e *scene.Element) error { e.Width = math.Round(e.Width * 1.2); return nil }); err != nil {
			return fmt.Errorf("widen %q for its label: %w", id, err)
		}
	}
	return nil
}

// Bounds is scene.Bounds without lines, arrows and the elements in skip (and their labels): what a
// new node or diagram keeps clear of. Arrows are left out because they follow their nodes; skip
// holds nodes not placed yet. ok is false when nothing is left.
func Bounds(w *scene.Scene, skip map[string]bool) (box scene.Rect, ok bool) {
	w.Each(func(e *scene.Element) bool {
		if skip[e.ID] || skip[e.ContainerID] || e.Type.IsLinear() {
			return true
		}
		if b := scene.BoundingBox(*e); ok {
			box = box.Union(b)
		} else {
			box, ok = b, true
		}
		return true
	})
	return box, ok
}

// Beside is the top-left corner for a new diagram: right of what w already holds, tops aligned,
// never on top of it; the origin on an empty canvas.
func Beside(w *scene.Scene) scene.Point {
	before, ok := Bounds(w, nil)
	if !ok {
		return scene.Point{}
	}
	return scene.Point{X: before.X + before.Width + 3*Gap, Y: before.Y}
}

// Slug makes an id from a label, "Load Balancer" → "load-balancer", keeping ASCII letters and
// digits only (ids are plain ASCII); it may be "" (a label in another script).
func Slug(label string, max int) string {
	var b strings.Builder
	dash := false
	for _, r := range strings.ToLower(label) {
		if r >= 'a' && r <= 'z' || r >= '0' && r <= '9' {
			if dash && b.Len() > 0 {
				b.WriteByte('-')
			}
			dash = false
			b.WriteRune(r)
		} else {
			dash = true
		}
		if b.Len() >= max {
			break
		}
	}
	return b.String()
}

// FreshID returns base (or fallback when base is ""), with "-2", "-3"… added until taken says no.
func FreshID(base, fallback string, max int, taken func(string) bool) string {
	if base == "" {
		base = fallback
	}
	if len(base) > max-4 {
		base = strings.TrimRight(base[:max-4], "-")
	}
	id := base
	for i := 2; taken(id); i++ {
		id = fmt.Sprintf("%s-%d", base, i)
	}
	return id
}
