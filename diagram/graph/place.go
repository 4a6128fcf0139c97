package graph

import (
	"context"
	"fmt"
	"maps"
	"math"

	"github.com/excalibot/excalibot/diagram"
	"github.com/excalibot/excalibot/layout"
	"github.com/excalibot/excalibot/scene"
)

// Placing new nodes into a diagram that is already on the canvas (Add, a node moved into a
// group): nothing else moves, so the spot is searched around where a layout of the whole graph
// would put the node.

// obstacles are the boxes a newly placed node must keep clear of: every other node, free text and
// group (except the groups the node goes into), grown by diagram.Gap.
func obstacles(w *scene.Scene, skip map[string]bool, own map[string]bool) []scene.Rect {
	var out []scene.Rect
	w.Each(func(e *scene.Element) bool {
		if skip[e.ID] || own[e.ID] || e.ContainerID != "" || e.Type.IsLinear() {
			return true
		}
		b := e.Bounds()
		out = append(out, scene.Rect{X: b.X - diagram.Gap, Y: b.Y - diagram.Gap, Width: b.Width + 2*diagram.Gap, Height: b.Height + 2*diagram.Gap})
		return true
	})
	return out
}

// arrowClearance is the least room kept between a newly placed node and an arrow it is not on.
const arrowClearance = 10.0

func hits(r scene.Rect, obs []scene.Rect) bool {
	for _, o := range obs {
		if r.X < o.X+o.Width && o.X < r.X+r.Width && r.Y < o.Y+o.Height && o.Y < r.Y+r.Height {
			return true
		}
	}
	return false
}

// freeSpot returns the top-left corner where a w×h box is acceptable to ok that costs least:
// its distance from want (along the layers counting twice, so the node keeps to its layer:
// the layers run the way dir says, and back says they run right to left, or upwards, as in the
// odd rows of a snake) plus what grow says placing it there costs (nil for nothing). The spots
// tried are a grid of box-sized steps around want, forwards along the layers and both ways
// across them.
func freeSpot(want scene.Point, width, height float64, dir layout.Direction, back bool, ok func(scene.Rect) bool, grow func(scene.Rect) float64) (scene.Point, bool) {
	stepA, stepB := width+diagram.Gap, height+diagram.Gap // across the layers, along them
	if dir == layout.LeftRight {
		stepA, stepB = height+diagram.Gap, width+diagram.Gap
	}
	if back {
		stepB = -stepB
	}
	at := func(i, j int) scene.Point {
		p := want
		if dir == layout.LeftRight {
			p.X += float64(j) * stepB
			p.Y += float64(i) * stepA
		} else {
			p.X += float64(i) * stepA
			p.Y += float64(j) * stepB
		}
		return p
	}
	best, bestCost, found := want, math.Inf(1), false
	for j := 0; j < 30; j++ {
		along := 2 * float64(j) * math.Abs(stepB)
		if along >= bestCost {
			break // no spot further along can cost less
		}
		for i := 0; i < 12; i++ {
			for _, s := range []int{i, -i} {
				cost := along + float64(i)*stepA
				if cost >= bestCost {
					break
				}
				p := at(s, j)
				r := scene.Rect{X: p.X, Y: p.Y, Width: width, Height: height}
				if grow != nil {
					if cost += grow(r); cost >= bestCost {
						continue
					}
				}
				if ok(r) {
					best, bestCost, found = p, cost, true
				}
				if i == 0 {
					break
				}
			}
		}
	}
	return best, found
}

// growthWeight is what a px of a group grown to hold a new node costs against a px of distance
// from where the layout wants the node: a group stretched to hold a node far out is wider than
// its siblings and leaves room empty, which costs more than a node a little off its place.
const growthWeight = 2.0

// groupGrowth is, for a new node at r in the group groupID, how much the group and each group
// around it grow (width and height added, summed over the groups), times growthWeight; nil for a
// node in no group.
func groupGrowth(w *scene.Scene, groupID string) func(scene.Rect) float64 {
	var boxes []scene.Element
	for g := groupID; g != ""; g = parentGroup(w, g) {
		b, _ := w.Get(g)
		boxes = append(boxes, b)
	}
	if len(boxes) == 0 {
		return nil
	}
	return func(r scene.Rect) float64 {
		var grown float64
		inner := r
		for _, f := range boxes {
			box := grownTo(f, inner)
			if !emptyGroup(f) {
				grown += box.Width - f.Width + box.Height - f.Height
			}
			inner = box
		}
		return growthWeight * grown
	}
}

// crossingWeight is what one crossing of a new node's arrows with an arrow already drawn costs,
// in px of distance from the wanted spot: a spot a little further off that keeps arrows apart
// reads better.
const crossingWeight = 300.0

// arrowCrossings is, for a new node id at r, how many arrows already drawn the straight arrows
// from r to its placed neighbours would cross, times crossingWeight. Arrows that end at the
// same neighbour are not counted (they meet there), nor arrows to nodes not placed yet (skip).
func arrowCrossings(w *scene.Scene, id string, skip map[string]bool, placed []string) func(scene.Rect) float64 {
	type line struct {
		ends [2]string
		pts  []scene.Point
	}
	var lines []line
	w.Each(func(e *scene.Element) bool {
		if e.Type != scene.Arrow || e.StartBinding == nil || e.EndBinding == nil {
			return true
		}
		s, t := e.StartBinding.ElementID, e.EndBinding.ElementID
		if s == id || t == id || skip[s] || skip[t] {
			return true
		}
		lines = append(lines, line{[2]string{s, t}, e.DrawnPath()})
		return true
	})
	type end struct {
		id string
		at scene.Point
	}
	var ends []end
	for _, n := range placed {
		if e, ok := w.Get(n); ok {
			ends = append(ends, end{n, e.Center()})
		}
	}
	if len(ends) == 0 || len(lines) == 0 {
		return nil
	}
	return func(r scene.Rect) float64 {
		c := scene.Point{X: r.X + r.Width/2, Y: r.Y + r.Height/2}
		n := 0
		for _, nb := range ends {
			for _, l := range lines {
				if l.ends[0] == nb.id || l.ends[1] == nb.id {
					continue
				}
				for k := 1; k < len(l.pts); k++ {
					if scene.SegmentsCross(c, nb.at, l.pts[k-1], l.pts[k]) {
						n++
						break
					}
				}
			}
		}
		return crossingWeight * float64(n)
	}
}

// costs is the sum of the costs that are not nil, nil for none.
func costs(fs ...func(scene.Rect) float64) func(scene.Rect) float64 {
	var live []func(scene.Rect) float64
	for _, f := range fs {
		if f != nil {
			live = append(live, f)
		}
	}
	if len(live) == 0 {
		return nil
	}
	return func(r scene.Rect) float64 {
		var sum float64
		for _, f := range live {
			sum += f(r)
		}
		return sum
	}
}

// grownTo is group box f grown to hold inner within its margins (and its title strip above).
func grownTo(f scene.Element, inner scene.Rect) scene.Rect {
	minX, minY := inner.X-groupMargin, inner.Y-groupMargin-FrameTitle
	maxX, maxY := inner.X+inner.Width+groupMargin, inner.Y+inner.Height+groupMargin
	if !emptyGroup(f) {
		top := f.Y
		if f.Type == scene.Frame {
			top -= FrameTitle // the frame's name sits above it
		}
		minX, minY = math.Min(f.X, minX), math.Min(top, minY)
		maxX, maxY = math.Max(f.X+f.Width, maxX), math.Max(f.Y+f.Height, maxY)
	}
	return scene.Rect{X: minX, Y: minY, Width: maxX - minX, Height: maxY - minY}
}

// spotTest says whether a new node may go at r: clear of every obstacle and, for a node going into
// a group, such that the group (and each group around it) grown to hold it touches nothing outside.
// Arrows to the neighbours already placed must not pass through other nodes either, and no
// arrow drawn already may pass under the node.
func spotTest(w *scene.Scene, id, groupID string, skip map[string]bool, placed []string) func(scene.Rect) bool {
	var chain []string // the group and the groups around it, innermost first
	own := map[string]bool{}
	for g := groupID; g != ""; g = parentGroup(w, g) {
		chain = append(chain, g)
		own[g] = true
	}
	obs := obstacles(w, skip, own)
	var nodes []scene.Element
	var ends []scene.Point
	w.Each(func(e *scene.Element) bool {
		if IsNode(e.Type) && !skip[e.ID] && !IsBox(e) {
			nodes = append(nodes, *e)
		}
		return true
	})
	for _, n := range placed {
		if e, ok := w.Get(n); ok {
			ends = append(ends, e.Center())
		}
	}
	// Arrows already drawn between other nodes must not run under the new node (or its label).
	var lines [][]scene.Point
	w.Each(func(e *scene.Element) bool {
		if e.Type == scene.Arrow && !(e.StartBinding != nil && e.StartBinding.ElementID == id) && !(e.EndBinding != nil && e.EndBinding.ElementID == id) {
			lines = append(lines, e.AbsPoints())
		}
		return true
	})
	clearLines := func(r scene.Rect) bool {
		box := scene.NewElement(scene.Rectangle)
		box.X, box.Y, box.Width, box.Height = r.X-arrowClearance, r.Y-arrowClearance, r.Width+2*arrowClearance, r.Height+2*arrowClearance
		for _, l := range lines {
			for k := 1; k < len(l); k++ {
				if scene.SegmentIntersects(box, l[k-1], l[k]) {
					return false
				}
			}
		}
		c := scene.Point{X: r.X + r.Width/2, Y: r.Y + r.Height/2}
		for i, end := range ends {
			for _, n := range nodes {
				if n.ID != placed[i] && scene.SegmentIntersects(n, c, end) {
					return false
				}
			}
		}
		return true
	}
	if groupID == "" {
		return func(r scene.Rect) bool { return !hits(r, obs) && clearLines(r) }
	}
	// What lies outside each group of the chain: not its members, itself, its title or its parents.
	outside := make([][]scene.Rect, len(chain))
	boxes := make([]scene.Element, len(chain))
	for k, g := range chain {
		boxes[k], _ = w.Get(g)
		in := map[string]bool{g: true, TitleOf(w, g): true}
		for _, m := range Members(w, g) {
			in[m] = true
		}
		w.Each(func(e *scene.Element) bool {
			if skip[e.ID] || in[e.ID] || own[e.ID] || e.ContainerID != "" || e.Type.IsLinear() {
				return true
			}
			outside[k] = append(outside[k], e.Bounds())
			return true
		})
	}
	return func(r scene.Rect) bool {
		if hits(r, obs) || !clearLines(r) {
			return false
		}
		inner := r
		for k, f := range boxes {
			grown := grownTo(f, inner)
			if hits(grown, outside[k]) {
				return false
			}
			inner = grown
		}
		return true
	}
}

// inGroup reports whether every node of ids is in group (or, for "", in none).
func inGroup(w *scene.Scene, ids []string, group string) bool {
	for _, id := range ids {
		if e, ok := w.Get(id); !ok || groupOf(w, &e) != group {
			return false
		}
	}
	return true
}

// roomIn is the part of group g a node may take without the group growing: inside its margins,
// below a box's title strip.
func roomIn(g scene.Element) scene.Rect {
	top := groupMargin
	if g.Type != scene.Frame {
		top += FrameTitle // a box's title is drawn inside its top strip
	}
	return scene.Rect{X: g.X + groupMargin, Y: g.Y + top, Width: g.Width - 2*groupMargin, Height: g.Height - top - groupMargin}
}

// placeNew puts the nodes in fresh (already on w, at any position) near their laid-out neighbours
// and leaves every other node where it is: a node's offset from a neighbour that is already placed
// is taken from a layout of the whole graph, then the node slides to the nearest free spot.
func placeNew(ctx context.Context, w *scene.Scene, fresh []string, dir layout.Direction) error {
	if len(fresh) == 0 {
		return nil
	}
	g := readGraph(w, nil)
	_, r, err := layoutOf(ctx, w, g, dir, layout.Fit{}, Options{})
	if err != nil {
		return err
	}
	pending := map[string]bool{}
	for _, id := range fresh {
		pending[id] = true
	}
	neighbours := map[string][]string{}
	for _, e := range g.edges {
		neighbours[e.from] = append(neighbours[e.from], e.to)
		neighbours[e.to] = append(neighbours[e.to], e.from)
	}
	bounds, hasOld := diagram.Bounds(w, pending)
	// Nodes with a placed neighbour go first, so chains of new nodes grow from the old diagram.
	for len(pending) > 0 {
		id, anchor := nextToPlace(fresh, pending, neighbours)
		e, _ := w.Get(id)
		ln := r.Nodes[id]
		var want scene.Point
		back := false // the layers run backwards around the anchor (a mirrored diagram, a snake's odd row)
		switch {
		case anchor != "":
			a, _ := w.Get(anchor)
			la := r.Nodes[anchor]
			fx, fy := flips(w, r, anchor, neighbours[anchor], pending)
			back = dir == layout.LeftRight && fx || dir != layout.LeftRight && fy
			// The offset is between top-left corners; mirrored, it is between the far corners.
			dx, dy := ln.X-la.X, ln.Y-la.Y
			if fx {
				dx = -(ln.X + ln.Width - la.X - la.Width)
			}
			if fy {
				dy = -(ln.Y + ln.Height - la.Y - la.Height)
			}
			want = scene.Point{X: a.X + dx, Y: a.Y + dy}
		case hasOld && dir == layout.LeftRight:
			want = scene.Point{X: bounds.X + ln.X, Y: bounds.Y + bounds.Height + 2*diagram.Gap}
		case hasOld:
			want = scene.Point{X: bounds.X + bounds.Width + 2*diagram.Gap, Y: bounds.Y + ln.Y}
		default:
			want = scene.Point{X: ln.X, Y: ln.Y}
		}
		skip := map[string]bool{id: true}
		for p := range pending {
			skip[p] = true
		}
		placedExcept := func(except string) []string {
			var placed []string
			for _, n := range neighbours[id] {
				if !pending[n] && n != except {
					placed = append(placed, n)
				}
			}
			return placed
		}
		// The end of a line of its siblings first, keeping the line's own spacing (closer than
		// diagram.Gap); an arrow along a bus runs beside the line, not straight to its anchor.
		p, found := want, false
		var follow string // the sibling whose bus the new arrow takes
		if anchor != "" {
			for _, sp := range lineEnd(w, anchor, siblings(g, anchor, id, pending), e.Width, e.Height) {
				if !inGroup(w, sp.line, groupOf(w, &e)) {
					continue // a line of another group's nodes: its group would grow over them
				}
				last := sp.line[len(sp.line)-1]
				bus := isBus(w, g, anchor, last)
				inLine := maps.Clone(skip)
				for _, s := range sp.line {
					inLine[s] = true
				}
				except := ""
				if bus {
					except = anchor
				}
				if spotTest(w, id, groupOf(w, &e), inLine, placedExcept(except))(scene.Rect{X: sp.at.X, Y: sp.at.Y, Width: e.Width, Height: e.Height}) {
					p, found = sp.at, true
					if bus {
						follow = last
					}
					break
				}
			}
		}
		test := spotTest(w, id, groupOf(w, &e), skip, placedExcept(""))
		crossed := arrowCrossings(w, id, skip, placedExcept(""))
		if gr := groupOf(w, &e); !found && gr != "" && !emptyGroup(mustElem(w, gr)) {
			// Inside the group as it is first: a group grown to hold a node placed at the far end of
			// its layer comes out much wider than its siblings.
			room := roomIn(mustElem(w, gr))
			p, found = freeSpot(want, e.Width, e.Height, dir, back, func(r scene.Rect) bool {
				return r.X >= room.X && r.Y >= room.Y && r.X+r.Width <= room.X+room.Width && r.Y+r.Height <= room.Y+room.Height && test(r)
			}, crossed)
		}
		if !found {
			p, found = freeSpot(want, e.Width, e.Height, dir, back, test, costs(groupGrowth(w, groupOf(w, &e)), crossed))
		}
		if gr := groupOf(w, &e); !found && gr != "" && !emptyGroup(mustElem(w, gr)) {
			// No spot where the group can grow around the node: open a band in the group for it.
			if p, err = makeRoom(w, id, gr, string(dir), back, want); err != nil {
				return err
			}
		} else if !found {
			// A crowded canvas: below everything, where nothing can be in the way.
			all, _ := diagram.Bounds(w, skip)
			p = scene.Point{X: all.X, Y: all.Y + all.Height + 2*diagram.Gap}
		}
		if err := w.MoveBy([]string{id}, p.X-e.X, p.Y-e.Y); err != nil {
			return fmt.Errorf("place node %q: %w", id, err)
		}
		delete(pending, id)
		if follow != "" {
			if err := followRoute(w, g, anchor, id, follow); err != nil {
				return err
			}
		}
		if gr := groupOf(w, &e); gr != "" {
			if err := fitGroup(w, gr, pending); err != nil {
				return err
			}
		}
	}
	return nil
}

// flips says whether the canvas runs the other way round from the layout around anchor, on each
// axis: the left half of a mind map, or a diagram a person mirrored. It compares where the anchor's
// placed neighbours are on the canvas with where the layout puts them.
func flips(w *scene.Scene, r layout.Result, anchor string, nbs []string, pending map[string]bool) (x, y bool) {
	a, _ := w.Get(anchor)
	ca := a.Center()
	la := r.Nodes[anchor]
	var votesX, votesY int
	for _, n := range nbs {
		if pending[n] {
			continue
		}
		e, ok := w.Get(n)
		ln, inLayout := r.Nodes[n]
		if !ok || !inLayout {
			continue
		}
		c := e.Center()
		sx, lx := c.X-ca.X, (ln.X+ln.Width/2)-(la.X+la.Width/2)
		sy, ly := c.Y-ca.Y, (ln.Y+ln.Height/2)-(la.Y+la.Height/2)
		if math.Abs(sx) > 1 && math.Abs(lx) > 1 {
			if sx*lx < 0 {
				votesX++
			} else {
				votesX--
			}
		}
		if math.Abs(sy) > 1 && math.Abs(ly) > 1 {
			if sy*ly < 0 {
				votesY++
			} else {
				votesY--
			}
		}
	}
	return votesX > 0, votesY > 0
}

func mustElem(w *scene.Scene, id string) scene.Element {
	e, _ := w.Get(id)
	return e
}

// nextToPlace picks the first pending node (in the order given) with a placed neighbour, or the
// first pending node when none has one.
func nextToPlace(order []string, pending map[string]bool, nb map[string][]string) (id, anchor string) {
	for _, id := range order {
		if !pending[id] {
			continue
		}
		for _, n := range nb[id] {
			if !pending[n] {
				return id, n
			}
		}
	}
	for _, id := range order {
		if pending[id] {
			return id, ""
		}
	}
	return "", ""
}
