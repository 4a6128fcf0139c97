package layout

import "math"

// Quality: what a person looking at a laid-out graph calls wrong in it, counted on the routes the
// arrows will be drawn along. Fitting lays a graph out in several ways and keeps the one with the
// fewest defects among those that read well at chat size, so a rearrangement that fits the
// screen by sending arrows through boxes or across groups loses to one that does not.

// defects counts, for one laid-out candidate, what makes its picture harder to read.
type defects struct {
	crossings int // pairs of edges that cross (edges sharing an end never count)
	through   int // edges passing through a node that is not one of their ends
	borders   int // group borders crossed beyond those an edge must cross to reach its ends
	hooks     int // edges whose route runs on past an end, away from the other, and turns back
	stretch   int // layers inside a group's span holding none of its members, and staircases of groups
}

// weight is one figure for comparing candidates: an arrow through a box reads as a wrong
// connection, worse than a crossing, and so, less, does an arrow that leaves its box the wrong
// way and hooks back; a needless trip out of a group and back is half a crossing, and so is a
// layer of a group holding none of its members, or a group starting beside the one feeding it.
func (d defects) weight() float64 {
	return float64(d.crossings) + 3*float64(d.through) + 0.5*float64(d.borders) + 2*float64(d.hooks) + stretchWeight*float64(d.stretch)
}

// stretchWeight is what a layer of a group without any of its members, or a pair of groups in a
// staircase, counts against a crossing (at 1, pictures already compact were traded for taller
// ones with longer arrows).
const stretchWeight = 0.5

// hookSlack is how far along the layers a route may run past both of its ends before it counts as
// a hook: dot's splines round off a little beyond a node's border.
const hookSlack = 24.0

// hooked reports whether a route runs along the layers past both of its ends' boxes, a loop out
// and back that a person reads as an arrow leaving the wrong way: dot draws one when it breaks a
// cycle through one half of a labelled edge and not the other, so the label's rank lies beyond
// the tail.
func hooked(dir Direction, route []Point, a, b Rect) bool {
	along := func(p Point) float64 {
		if dir == LeftRight {
			return p.X
		}
		return p.Y
	}
	lo, hi := math.Min(a.Y, b.Y), math.Max(a.Y+a.Height, b.Y+b.Height)
	if dir == LeftRight {
		lo, hi = math.Min(a.X, b.X), math.Max(a.X+a.Width, b.X+b.Width)
	}
	for _, p := range route {
		if v := along(p); v < lo-hookSlack || v > hi+hookSlack {
			return true
		}
	}
	return false
}

// routeLines is, per edge, the polyline from its tail's centre through its route to its head's
// centre (nil for an edge that is not laid out).
func routeLines(g Graph, r Result) [][]Point {
	lines := make([][]Point, len(g.Edges))
	for i, e := range g.Edges {
		a, ok1 := r.Nodes[e.From]
		b, ok2 := r.Nodes[e.To]
		if !ok1 || !ok2 {
			continue
		}
		line := []Point{{a.X + a.Width/2, a.Y + a.Height/2}}
		if i < len(r.Routes) {
			line = append(line, r.Routes[i]...)
		}
		lines[i] = append(line, Point{b.X + b.Width/2, b.Y + b.Height/2})
	}
	return lines
}

// measureDefects counts the defects of g laid out as r.
func measureDefects(g Graph, r Result) defects {
	var d defects
	lines := routeLines(g, r)
	for i := range lines {
		for j := i + 1; j < len(lines); j++ {
			ei, ej := g.Edges[i], g.Edges[j]
			if lines[i] == nil || lines[j] == nil || ei.From == ej.From || ei.From == ej.To || ei.To == ej.From || ei.To == ej.To {
				continue
			}
			if PolylinesCross(lines[i], lines[j]) {
				d.crossings++
			}
		}
	}
	const inset = 4 // an arrow gliding along a border is no hit
	for i, e := range g.Edges {
		if lines[i] == nil || e.From == e.To {
			continue
		}
		if hooked(r.Direction, lines[i], r.Nodes[e.From], r.Nodes[e.To]) {
			d.hooks++
		}
		for _, n := range g.Nodes {
			if n.ID == e.From || n.ID == e.To {
				continue
			}
			b := r.Nodes[n.ID]
			if b.Width <= 2*inset || b.Height <= 2*inset {
				continue
			}
			if lineHitsRect(lines[i], Rect{b.X + inset, b.Y + inset, b.Width - 2*inset, b.Height - 2*inset}) {
				d.through++
			}
		}
	}
	// A group an edge has one end in must be crossed once; any other crossing of its border is
	// needless.
	parent := make(map[string]string, len(g.Clusters))
	for _, c := range g.Clusters {
		parent[c.ID] = c.Parent
	}
	cluster := make(map[string]string, len(g.Nodes))
	for _, n := range g.Nodes {
		cluster[n.ID] = n.Cluster
	}
	inside := func(node, c string) bool {
		for k := cluster[node]; k != ""; k = parent[k] {
			if k == c {
				return true
			}
		}
		return false
	}
	for i, e := range g.Edges {
		if lines[i] == nil || e.From == e.To {
			continue
		}
		for _, c := range g.Clusters {
			box, ok := r.Clusters[c.ID]
			if !ok {
				continue
			}
			need := 0
			if inside(e.From, c.ID) != inside(e.To, c.ID) {
				need = 1
			}
			if n := borderCrossings(lines[i], box); n > need {
				d.borders += n - need
			}
		}
	}
	return d
}

// lineHitsRect reports whether a polyline passes through the inside of r.
func lineHitsRect(line []Point, r Rect) bool {
	for k := 1; k < len(line); k++ {
		if segmentHitsRect(line[k-1], line[k], r) {
			return true
		}
	}
	return false
}

// segmentHitsRect reports whether the segment a–b has a part strictly inside r (Liang–Barsky
// clipping).
func segmentHitsRect(a, b Point, r Rect) bool {
	t0, t1 := 0.0, 1.0
	dx, dy := b.X-a.X, b.Y-a.Y
	clip := func(p, q float64) bool {
		if p == 0 {
			return q > 0
		}
		t := q / p
		if p < 0 {
			if t > t1 {
				return false
			}
			t0 = math.Max(t0, t)
		} else {
			if t < t0 {
				return false
			}
			t1 = math.Min(t1, t)
		}
		return true
	}
	if !clip(-dx, a.X-r.X) || !clip(dx, r.X+r.Width-a.X) || !clip(-dy, a.Y-r.Y) || !clip(dy, r.Y+r.Height-a.Y) {
		return false
	}
	return t1-t0 > 1e-9
}

// borderCrossings counts how often a polyline crosses the border of r.
func borderCrossings(line []Point, r Rect) int {
	in := func(p Point) bool {
		return p.X > r.X && p.X < r.X+r.Width && p.Y > r.Y && p.Y < r.Y+r.Height
	}
	n := 0
	for k := 1; k < len(line); k++ {
		a, b := line[k-1], line[k]
		if in(a) != in(b) {
			n++
			continue
		}
		if !in(a) && segmentHitsRect(a, b, r) { // in and out again within one segment
			n += 2
		}
	}
	return n
}
