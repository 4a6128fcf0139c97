package graph

import (
	"fmt"
	"math"

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

// labelBends are the offsets, nearest first, of the bend clearLabels tries beside an arrow's
// straight line, either side.
var labelBends = []float64{40, -40, 80, -80, 120, -120, 160, -160, 200, -200, 240, -240}

// clearLabels takes the label of each straight arrow of ids off the texts and nodes it lies on.
// A follow-up draws its new arrows straight between nodes already placed, and Excalidraw puts an
// arrow's label in the middle of its path, so where that middle is taken (another arrow's label,
// a node between the ends) the label lands on it. The arrow gets one bend beside its line — the
// nearest that leaves its label clear and takes the arrow through no node — or, where none does,
// stays as it was.
func clearLabels(w *scene.Scene, ids []string) error {
	nodes := graphNodes(w)
	for _, id := range ids {
		a, ok := w.Get(id)
		if !ok || a.Type != scene.Arrow || a.Label() == "" || len(a.Points) != 2 ||
			a.StartBinding == nil || a.EndBinding == nil || a.StartBinding.ElementID == a.EndBinding.ElementID {
			continue
		}
		if !labelCrowded(w, a, nodes) {
			continue
		}
		pts := a.AbsPoints()
		p, q := pts[0], pts[len(pts)-1]
		l := math.Hypot(q.X-p.X, q.Y-p.Y)
		if l == 0 {
			continue
		}
		mid := layout.Point{X: (p.X + q.X) / 2, Y: (p.Y + q.Y) / 2}
		nx, ny := -(q.Y-p.Y)/l, (q.X-p.X)/l
		was := struct {
			x, y   float64
			points []scene.Point
			round  *scene.Roundness
		}{a.X, a.Y, a.Points, a.Roundness}
		cleared := false
		for _, d := range labelBends {
			bend := layout.Point{X: mid.X + d*nx, Y: mid.Y + d*ny}
			if err := w.Update(id, func(e *scene.Element) error {
				setBends(w, e, []layout.Point{bend})
				e.Roundness = &scene.Roundness{Type: scene.RoundnessProportional}
				return nil
			}); err != nil {
				return fmt.Errorf("bend %q off the labels in its way: %w", id, err)
			}
			if b, _ := w.Get(id); nodesHit(b, nodes) == 0 && !labelCrowded(w, b, nodes) {
				cleared = true
				break
			}
		}
		if cleared {
			continue
		}
		if err := w.Update(id, func(e *scene.Element) error {
			e.X, e.Y, e.Points, e.Roundness = was.x, was.y, was.points, was.round
			return nil
		}); err != nil {
			return fmt.Errorf("put %q back: %w", id, err)
		}
	}
	return nil
}

// labelCrowded reports whether arrow a's label lies on another text or on a node.
func labelCrowded(w *scene.Scene, a scene.Element, nodes []scene.Element) bool {
	t, ok := w.Get(a.Label())
	if !ok || t.Text == "" {
		return false
	}
	box := t.Bounds()
	crowded := false
	w.Each(func(e *scene.Element) bool {
		if e.ID != t.ID && e.Type == scene.Text && e.Text != "" && box.Intersects(e.Bounds()) {
			crowded = true
		}
		return !crowded
	})
	for _, n := range nodes {
		crowded = crowded || box.Intersects(n.Bounds())
	}
	return crowded
}
