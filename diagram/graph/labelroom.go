package graph

import (
	"fmt"

	"github.com/excalibot/excalibot/layout"
	"github.com/excalibot/excalibot/scene"
	"github.com/excalibot/excalibot/scene/fontmetrics"
)

// keepLabelsInRoom keeps each arrow label the layout made room for within that room when it
// would otherwise lie on another label or on a node. Excalidraw wraps an arrow's label at 70 % of
// the arrow's width, so a label laid out on two or three lines comes out on one line on a wide
// arrow, wider than the room kept for it and over its neighbours (the labels of the edges fanning
// out of one node, side by side on one layer). Such a label gets the line breaks it was laid out
// with written into its text, which Excalidraw keeps. ids are the edges' arrows in the order of
// lg.Edges.
func keepLabelsInRoom(w *scene.Scene, lg layout.Graph, ids []string) error {
	type label struct {
		arrow string
		t     scene.Element
		room  float64
	}
	var labels []label
	for i, id := range ids {
		if i >= len(lg.Edges) || lg.Edges[i].LabelWidth <= 0 {
			continue
		}
		a, ok := w.Get(id)
		if !ok || a.Label() == "" {
			continue
		}
		if t, ok := w.Get(a.Label()); ok && t.Text != "" {
			labels = append(labels, label{id, t, lg.Edges[i].LabelWidth})
		}
	}
	box := func(e scene.Element) scene.Rect { return scene.Rect{X: e.X, Y: e.Y, Width: e.Width, Height: e.Height} }
	nodes := graphNodes(w)
	for i, l := range labels {
		if l.t.Width <= l.room+2 {
			continue
		}
		on := false
		for j, o := range labels {
			on = on || j != i && box(l.t).Intersects(box(o.t))
		}
		for _, n := range nodes {
			on = on || box(l.t).Intersects(box(n))
		}
		if !on {
			continue
		}
		text := fontmetrics.Wrap(l.t.FontFamily, l.t.FontSize, l.t.OriginalText, l.room+0.5)
		if text == l.t.Text {
			continue
		}
		if _, err := w.SetLabel(l.arrow, text); err != nil {
			return fmt.Errorf("keep the label of %q in its room: %w", l.arrow, err)
		}
		if t, ok := w.Get(l.t.ID); ok {
			labels[i].t = t
		}
	}
	return nil
}
