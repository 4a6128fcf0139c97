package graph

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"math"
	"slices"

	"github.com/excalibot/excalibot/layout"
	"github.com/excalibot/excalibot/scene"
)

// How a whole diagram is fitted to the screen it is shown on: a chat client scales the picture to
// its width, so a strip of 10:1 has text too small to read. Draw and Relayout give the layout
// these bounds; Add does not rearrange what is there.
const (
	// MaxAspect is the most a drawn graph's longer side may be of its shorter side.
	MaxAspect = 2.5
	// ShownWidth, ShownHeight and MinTextPx: text must be at least MinTextPx high when the
	// picture is shown in a ShownWidth×ShownHeight preview, which bounds the picture's width and
	// height by its smallest font.
	ShownWidth  = 1600.0
	ShownHeight = 1200.0
	MinTextPx   = 9.0
	// SmallPicture is the longer side (px) up to which a drawing is left as laid out: it reads on
	// a phone whatever its shape.
	SmallPicture = 1000.0
	// pictureMargin is the renderer's padding on each side of the drawing.
	pictureMargin = 20.0
)

// fitFor is the fit of a layout of g: MaxAspect, the widest the picture may be for its smallest
// text, and whether the direction may turn (only when the caller did not ask for one).
func fitFor(w *scene.Scene, g sceneGraph, turn bool) layout.Fit {
	smallest := math.Inf(1)
	look := func(id string) {
		if l, ok := w.Get(id); ok && l.Type == scene.Text && l.FontSize > 0 {
			smallest = math.Min(smallest, l.FontSize)
		}
	}
	for _, id := range g.nodes {
		e, _ := w.Get(id)
		look(e.Label())
	}
	for _, ed := range g.edges {
		e, _ := w.Get(ed.id)
		look(e.Label())
	}
	for _, f := range g.frames {
		look(TitleOf(w, f))
	}
	f := layout.Fit{MaxAspect: MaxAspect, Small: SmallPicture, Turn: turn}
	if !math.IsInf(smallest, 1) {
		f.MaxWidth = ShownWidth*smallest/MinTextPx - 2*pictureMargin
		f.MaxHeight = ShownHeight*smallest/MinTextPx - 2*pictureMargin
	}
	return f
}

// layoutOf runs the layout over the scene's graph with the nodes' current sizes and the edges'
// labels, fitted to fit (the zero Fit for dot's plain layout), by the engine opt names.
func layoutOf(ctx context.Context, w *scene.Scene, g sceneGraph, dir layout.Direction, fit layout.Fit, opt Options) (layout.Graph, layout.Result, error) {
	lg := layout.Graph{Direction: dir, Fit: fit, Engine: opt.Engine}
	for _, f := range g.frames {
		lg.Clusters = append(lg.Clusters, layout.Cluster{ID: f, TitleHeight: FrameTitle, Parent: g.parent[f]})
	}
	for _, id := range g.nodes {
		e, _ := w.Get(id)
		lg.Nodes = append(lg.Nodes, layout.Node{ID: id, Width: e.Width, Height: e.Height, Cluster: g.frame[id]})
	}
	for _, e := range g.edges {
		le := layout.Edge{From: e.from, To: e.to}
		a, _ := w.Get(e.id)
		if l, ok := w.Get(a.Label()); ok && a.Label() != "" && l.Text != "" {
			le.LabelWidth, le.LabelHeight = l.Width, l.Height
		}
		lg.Edges = append(lg.Edges, le)
	}
	run := layout.Layout
	if opt.Layout != nil {
		run = opt.Layout
	}
	r, err := run(ctx, lg)
	if errors.Is(err, layout.ErrInvalid) && dir == layout.MindMap && len(lg.Clusters) > 0 {
		return lg, r, errors.New("direction mindmap: a mind map has no groups; drop the groups or use TB or LR")
	}
	if err != nil {
		return lg, r, fmt.Errorf("layout: %w", err)
	}
	return lg, r, nil
}

// applyLayout moves every node, group and edge of g to where r puts them, shifted by (ox, oy).
// Frames move first: moving a frame drags its children, and the boxes and nodes then go to their
// places. A frame's title is drawn above it, a box's inside its top strip.
func applyLayout(w *scene.Scene, lg layout.Graph, r layout.Result, ox, oy float64) error {
	for _, c := range lg.Clusters {
		rc := r.Clusters[c.ID]
		if e, _ := w.Get(c.ID); e.Type != scene.Frame {
			continue
		}
		if err := w.Update(c.ID, func(e *scene.Element) error {
			e.X, e.Y = rc.X+ox, rc.Y+oy+FrameTitle
			e.Width, e.Height = rc.Width, rc.Height-FrameTitle
			return nil
		}); err != nil {
			return fmt.Errorf("place frame %q: %w", c.ID, err)
		}
	}
	for _, c := range lg.Clusters {
		if e, _ := w.Get(c.ID); e.Type == scene.Frame {
			continue
		}
		rc := r.Clusters[c.ID]
		if err := placeBox(w, c.ID, scene.Rect{X: rc.X + ox, Y: rc.Y + oy, Width: rc.Width, Height: rc.Height}); err != nil {
			return err
		}
	}
	for _, n := range lg.Nodes {
		e, _ := w.Get(n.ID)
		rn := r.Nodes[n.ID]
		if err := w.MoveBy([]string{n.ID}, rn.X+ox-e.X, rn.Y+oy-e.Y); err != nil {
			return fmt.Errorf("place node %q: %w", n.ID, err)
		}
	}
	return nil
}

// routeEdges gives each laid-out edge the points of its route, so an edge that skips a layer goes
// around the nodes between instead of through them, and a label sits where the layout made room
// for it: a labelled route has its label's centre as its middle point, where Excalidraw centres
// an arrow's label. The scene puts the ends on the borders. The curve Excalidraw draws through
// the points can cut a node's corner that dot's spline avoided; then the straight line (through
// the label's place) is taken instead when it passes fewer nodes. Routes are shifted by (ox, oy)
// like the nodes (applyLayout); a bus of stacked leaves is drawn with sharp corners.
func routeEdges(w *scene.Scene, ids []string, r layout.Result, ox, oy float64) error {
	nodes := graphNodes(w)
	shift := func(ps []layout.Point) []layout.Point {
		out := make([]layout.Point, len(ps))
		for k, b := range ps {
			out[k] = layout.Point{X: b.X + ox, Y: b.Y + oy}
		}
		return out
	}
	for i, id := range ids {
		if i >= len(r.Routes) {
			break
		}
		if a, _ := w.Get(id); a.StartBinding.ElementID == a.EndBinding.ElementID {
			if err := drawLoop(w, id); err != nil {
				return err
			}
			continue
		}
		bends := shift(r.Routes[i])
		sharp := i < len(r.Sharp) && r.Sharp[i]
		if err := w.Update(id, func(e *scene.Element) error {
			setBends(w, e, bends)
			if i < len(r.Ends) && r.Ends[i] != [2]layout.Point{} {
				aimEnds(w, e, bends, shift(r.Ends[i][:]))
			}
			if sharp {
				e.Roundness = nil
			} else if e.Roundness == nil {
				e.Roundness = &scene.Roundness{Type: scene.RoundnessProportional}
			}
			return nil
		}); err != nil {
			return fmt.Errorf("route edge %q: %w", id, err)
		}
		a, _ := w.Get(id)
		if sharp || nodesHit(a, nodes) == 0 {
			continue
		}
		if err := unblock(w, id, bends, nodes); err != nil {
			return fmt.Errorf("route edge %q: %w", id, err)
		}
	}
	return nil
}

// aimEnds binds each end of e where the layout made its route meet the node's border: the focus
// of the line from the neighbouring bend (or the other end) to that point, so the scene puts the
// end on that line, and an orthogonal route stays orthogonal to its last point.
func aimEnds(w *scene.Scene, e *scene.Element, bends, ends []layout.Point) {
	tail, head := ends[0], ends[1]
	fromTail, fromHead := head, tail
	if len(bends) > 0 {
		fromTail, fromHead = bends[0], bends[len(bends)-1]
	}
	if e.StartBinding != nil {
		if s, ok := w.Get(e.StartBinding.ElementID); ok {
			e.StartBinding.Focus = scene.FocusOf(s, scene.Point(fromTail), scene.Point(tail))
		}
	}
	if e.EndBinding != nil {
		if t, ok := w.Get(e.EndBinding.ElementID); ok {
			e.EndBinding.Focus = scene.FocusOf(t, scene.Point(fromHead), scene.Point(head))
		}
	}
}

// drawLoop puts the arrow id, from a node back to itself, beside its node (selfLoop).
func drawLoop(w *scene.Scene, id string) error {
	if err := w.Update(id, func(e *scene.Element) error {
		n, _ := w.Get(e.StartBinding.ElementID)
		e.X, e.Y = n.X+n.Width, n.Y+n.Height/4
		lw := 0.0
		if l, ok := w.Get(e.Label()); ok && e.Label() != "" && l.Text != "" {
			lw = l.Width
		}
		e.Points = selfLoop(n.Width, n.Height, lw)
		e.Roundness = &scene.Roundness{Type: scene.RoundnessProportional}
		return nil
	}); err != nil {
		return fmt.Errorf("route loop %q: %w", id, err)
	}
	return nil
}

// graphNodes is the nodes of w arrows may not pass through: every node, group boxes not counted.
func graphNodes(w *scene.Scene) []scene.Element {
	var nodes []scene.Element
	w.Each(func(e *scene.Element) bool {
		if IsNode(e.Type) && !IsBox(e) {
			nodes = append(nodes, *e)
		}
		return true
	})
	return nodes
}

// blockedArrows is the set of bound arrows of w that pass through a node not their end.
func blockedArrows(w *scene.Scene) map[string]bool {
	nodes := graphNodes(w)
	out := map[string]bool{}
	w.Each(func(e *scene.Element) bool {
		if e.Type == scene.Arrow && e.StartBinding != nil && e.EndBinding != nil && nodesHit(*e, nodes) > 0 {
			out[e.ID] = true
		}
		return true
	})
	return out
}

// unblockNew reroutes the bound arrows that pass through a node now and did not before (those
// in before): the new ones, and those a node placed or moved since came to lie on. An arrow
// that already did stays as it was: a person may have drawn it so.
func unblockNew(w *scene.Scene, before map[string]bool) error {
	now := blockedArrows(w)
	nodes := graphNodes(w)
	for _, id := range slices.Sorted(maps.Keys(now)) {
		if before[id] {
			continue
		}
		a, _ := w.Get(id)
		pts := a.AbsPoints()
		var bends []layout.Point
		for _, p := range pts[1 : len(pts)-1] {
			bends = append(bends, layout.Point{X: p.X, Y: p.Y})
		}
		if err := unblock(w, id, bends, nodes); err != nil {
			return fmt.Errorf("route edge %q: %w", id, err)
		}
	}
	return nil
}

// unblock reroutes an arrow whose drawn path passes through a node that is not one of its ends:
// drawn with sharp corners it keeps to its points (the curve bulges past them at its bends);
// else straight, through its label's place; else around each node in its way (detour). The
// first of these that passes fewest nodes stays.
func unblock(w *scene.Scene, id string, bends []layout.Point, nodes []scene.Element) error {
	a, _ := w.Get(id)
	labelled := a.Label() != "" && len(bends)%2 == 1
	type try struct {
		bends []layout.Point
		sharp bool
	}
	tries := []try{{bends, false}, {bends, true}}
	if labelled {
		tries = append(tries, try{bends[len(bends)/2 : len(bends)/2+1], false})
	} else {
		tries = append(tries, try{nil, false})
	}
	set := func(t try) error {
		return w.Update(id, func(e *scene.Element) error {
			setBends(w, e, t.bends)
			e.Roundness = &scene.Roundness{Type: scene.RoundnessProportional}
			if t.sharp {
				e.Roundness = nil
			}
			return nil
		})
	}
	best, bestHit := tries[0], math.MaxInt
	for _, t := range tries {
		if err := set(t); err != nil {
			return err
		}
		a, _ = w.Get(id)
		if h := nodesHit(a, nodes); h < bestHit {
			best, bestHit = t, h
		}
		if bestHit == 0 {
			return set(best)
		}
	}
	if err := set(best); err != nil {
		return err
	}
	a, _ = w.Get(id)
	var boxes []scene.Rect
	for _, n := range nodes {
		if n.ID != a.StartBinding.ElementID && n.ID != a.EndBinding.ElementID {
			boxes = append(boxes, n.Bounds())
		}
	}
	from := a.AbsPoints()
	for _, m := range detourMargins {
		line, ok := detour(from, boxes, m)
		if !ok {
			continue
		}
		inner := make([]layout.Point, 0, len(line))
		for _, p := range line[1 : len(line)-1] {
			inner = append(inner, layout.Point{X: p.X, Y: p.Y})
		}
		if labelled {
			inner = centreOn(inner, best.bends[len(best.bends)/2])
		}
		if err := set(try{inner, true}); err != nil {
			return err
		}
		if a, _ = w.Get(id); nodesHit(a, nodes) < bestHit {
			return nil
		}
	}
	return set(best)
}

// centreOn adds points (halving the longest stretch) on the shorter side of at until at is the
// middle point of bends, where Excalidraw centres an arrow's label.
func centreOn(bends []layout.Point, at layout.Point) []layout.Point {
	k := -1
	for i, b := range bends {
		if math.Abs(b.X-at.X) < 0.5 && math.Abs(b.Y-at.Y) < 0.5 {
			k = i
		}
	}
	if k < 0 {
		return bends
	}
	before, after := append([]layout.Point(nil), bends[:k]...), append([]layout.Point(nil), bends[k+1:]...)
	half := func(ps []layout.Point, from, to layout.Point) []layout.Point {
		line := append(append([]layout.Point{from}, ps...), to)
		best, bestLen := 1, -1.0
		for i := 1; i < len(line); i++ {
			if d := math.Hypot(line[i].X-line[i-1].X, line[i].Y-line[i-1].Y); d > bestLen {
				best, bestLen = i, d
			}
		}
		mid := layout.Point{X: (line[best-1].X + line[best].X) / 2, Y: (line[best-1].Y + line[best].Y) / 2}
		out := append([]layout.Point(nil), line[1:best]...)
		out = append(out, mid)
		return append(out, line[best:len(line)-1]...)
	}
	first, last := at, at
	if len(bends) > 0 {
		first, last = bends[0], bends[len(bends)-1]
	}
	for len(before) < len(after) {
		before = half(before, first, at)
	}
	for len(after) < len(before) {
		after = half(after, at, last)
	}
	return append(append(before, at), after...)
}

// nodesHit counts the nodes an arrow's drawn path passes through, other than its own ends.
func nodesHit(a scene.Element, nodes []scene.Element) int {
	pts := a.DrawnPath()
	n := 0
	for _, nd := range nodes {
		if a.StartBinding != nil && nd.ID == a.StartBinding.ElementID || a.EndBinding != nil && nd.ID == a.EndBinding.ElementID {
			continue
		}
		if nd.Width <= 2*glide || nd.Height <= 2*glide {
			continue
		}
		in := nd
		in.X, in.Y, in.Width, in.Height = nd.X+glide, nd.Y+glide, nd.Width-2*glide, nd.Height-2*glide
		for k := 1; k < len(pts); k++ {
			if scene.SegmentIntersects(in, pts[k-1], pts[k]) {
				n++
				break
			}
		}
	}
	return n
}

// glide is how far into a node an arrow may come without passing through it: one gliding along
// a border reads as going past (diagram/measure counts the same way).
const glide = 4.0

// setBends sets an arrow's points to its start centre, the bends and its end centre; the scene then
// moves the two ends onto the borders, aimed at the neighbouring bend.
func setBends(w *scene.Scene, e *scene.Element, bends []layout.Point) {
	s, _ := w.Get(e.StartBinding.ElementID)
	t, _ := w.Get(e.EndBinding.ElementID)
	cs, ct := s.Center(), t.Center()
	e.X, e.Y = cs.X, cs.Y
	e.Points = []scene.Point{{}}
	for _, b := range bends {
		e.Points = append(e.Points, scene.Point{X: b.X - cs.X, Y: b.Y - cs.Y})
	}
	e.Points = append(e.Points, scene.Point{X: ct.X - cs.X, Y: ct.Y - cs.Y})
}
