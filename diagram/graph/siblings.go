package graph

import (
	"fmt"
	"math"
	"sort"

	"github.com/excalibot/excalibot/layout"
	"github.com/excalibot/excalibot/scene"
)

// A new node joined to a node whose other children (or parents) stand in a line — a stacked
// column of an org chart, a row under a parent — goes at the end of that line, one step further,
// and its arrow takes the route its neighbour in the line has (the bus of a stacked column).

// siblings are the placed nodes that stand to anchor as id does: its children when id is a child
// of anchor, else its parents.
func siblings(g sceneGraph, anchor, id string, pending map[string]bool) []string {
	child := false
	for _, e := range g.edges {
		if e.from == anchor && e.to == id {
			child = true
		}
	}
	var out []string
	for _, e := range g.edges {
		switch {
		case child && e.from == anchor && !pending[e.to] && e.to != id:
			out = append(out, e.to)
		case !child && e.to == anchor && !pending[e.from] && e.from != id:
			out = append(out, e.from)
		}
	}
	return out
}

// lineSpot is a place at the end of a line of siblings: the node's top-left corner and the
// line's siblings, the one it follows last.
type lineSpot struct {
	at   scene.Point
	line []string
}

// lineEnd is where a node of size w×h continues the lines the siblings stand in: columns (or
// rows) of siblings whose centres share an x (a y), at least one of two or more. The node goes at
// the end of the shortest line (the last of those), one step on from its last sibling, the step
// being the one between two siblings of a line; a column grows away from its anchor, or
// downwards beside it; a row, and a column beside its anchor, may also grow at their start. None
// when the siblings stand in no such lines. ok is false when the
// siblings stand in no such lines.
func lineEnd(w *scene.Scene, anchor string, sibs []string, width, height float64) []lineSpot {
	if len(sibs) < 2 {
		return nil
	}
	a, _ := w.Get(anchor)
	ac := a.Center()
	cs := make(map[string]scene.Point, len(sibs))
	for _, s := range sibs {
		e, _ := w.Get(s)
		cs[s] = e.Center()
	}
	for _, column := range []bool{true, false} {
		// Lines: siblings grouped by the coordinate they share.
		var lines [][]string
		for _, s := range sibs {
			placed := false
			for i, l := range lines {
				c0, c := cs[l[0]], cs[s]
				if column && math.Abs(c.X-c0.X) < 2 || !column && math.Abs(c.Y-c0.Y) < 2 {
					lines[i] = append(l, s)
					placed = true
					break
				}
			}
			if !placed {
				lines = append(lines, []string{s})
			}
		}
		if len(lines) == len(sibs) {
			continue // no two siblings share a line
		}
		if len(lines) > 1 && !column {
			continue // rows side by side are columns read the other way
		}
		// A column grows downwards, or upwards when it hangs above its anchor; a row to the right.
		up := true
		for _, c := range cs {
			up = up && c.Y < ac.Y
		}
		along := func(s string) float64 {
			if column && up {
				return -cs[s].Y
			}
			if column {
				return cs[s].Y
			}
			return cs[s].X
		}
		var step scene.Point
		for _, l := range lines {
			sort.Slice(l, func(i, j int) bool { return along(l[i]) < along(l[j]) })
			if len(l) >= 2 && step == (scene.Point{}) {
				a, b := cs[l[len(l)-2]], cs[l[len(l)-1]]
				step = scene.Point{X: b.X - a.X, Y: b.Y - a.Y}
			}
		}
		// A lone sibling is a line of its own only when it starts level with a longer line (the
		// last column of a stacked grid); otherwise it stands apart and the longer lines are
		// extended.
		var start scene.Point
		for _, l := range lines {
			if len(l) >= 2 {
				start = cs[l[0]]
				break
			}
		}
		var best []string
		for _, l := range lines {
			c := cs[l[0]]
			level := column && math.Abs(c.Y-start.Y) < 2 || !column && math.Abs(c.X-start.X) < 2
			if (len(l) >= 2 || level) && (best == nil || len(l) <= len(best)) {
				best = l
			}
		}
		end := cs[best[len(best)-1]]
		spots := []lineSpot{{scene.Point{X: end.X + step.X - width/2, Y: end.Y + step.Y - height/2}, best}}
		// A row, or a column beside its anchor (a layer of a left-right graph), may grow at its
		// start too; a stacked column hangs from its bus at the start.
		if first := cs[best[0]]; !column || !isBelow(cs, ac) && !up {
			spots = append(spots, lineSpot{scene.Point{X: first.X - step.X - width/2, Y: first.Y - step.Y - height/2}, []string{best[0]}})
		}
		return spots
	}
	return nil
}

// isBus reports whether the arrow between a and b is a bus of straight segments with bends.
func isBus(w *scene.Scene, g sceneGraph, a, b string) bool {
	for _, e := range g.edges {
		if e.from == a && e.to == b || e.from == b && e.to == a {
			m, _ := w.Get(e.id)
			return m.Roundness == nil && len(m.Points) >= 3
		}
	}
	return false
}

// isBelow reports whether every point lies below y of the anchor's centre.
func isBelow(cs map[string]scene.Point, ac scene.Point) bool {
	for _, c := range cs {
		if c.Y <= ac.Y {
			return false
		}
	}
	return true
}

// followRoute gives the arrow between anchor and id the route of the arrow between anchor and
// sibling when that one is a bus of straight segments (sharp, with bends): the same bends, the
// last one moved along its segment to face id.
func followRoute(w *scene.Scene, g sceneGraph, anchor, id, sibling string) error {
	var arrow, model string
	for _, e := range g.edges {
		if (e.from == anchor && e.to == id) || (e.from == id && e.to == anchor) {
			arrow = e.id
		}
		if (e.from == anchor && e.to == sibling) || (e.from == sibling && e.to == anchor) {
			model = e.id
		}
	}
	m, ok := w.Get(model)
	if arrow == "" || !ok || m.Roundness != nil || len(m.Points) < 3 {
		return nil
	}
	pts := m.AbsPoints()
	if m.StartBinding == nil || m.StartBinding.ElementID != anchor {
		for i, j := 0, len(pts)-1; i < j; i, j = i+1, j-1 {
			pts[i], pts[j] = pts[j], pts[i]
		}
	}
	s, _ := w.Get(sibling)
	n, _ := w.Get(id)
	sc, nc := s.Center(), n.Center()
	bends := make([]layout.Point, 0, len(pts)-2)
	for _, p := range pts[1 : len(pts)-1] {
		bends = append(bends, layout.Point{X: p.X, Y: p.Y})
	}
	lb := &bends[len(bends)-1]
	switch {
	case math.Abs(lb.Y-sc.Y) < 1: // the bus ends level with the sibling: level with the new node
		lb.Y = nc.Y
	case math.Abs(lb.X-sc.X) < 1:
		lb.X = nc.X
	default:
		return nil
	}
	a, _ := w.Get(arrow)
	from := a.StartBinding.ElementID
	if from != anchor {
		for i, j := 0, len(bends)-1; i < j; i, j = i+1, j-1 {
			bends[i], bends[j] = bends[j], bends[i]
		}
	}
	if err := w.Update(arrow, func(e *scene.Element) error {
		setBends(w, e, bends)
		e.Roundness = nil
		return nil
	}); err != nil {
		return fmt.Errorf("route edge %q: %w", arrow, err)
	}
	return nil
}
