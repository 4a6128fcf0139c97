package layout

import "math"

// Routes: the points of dot's splines an arrow is drawn through, a labelled edge's two halves
// joined at its label, and the caller's view of a laid-out plan.

// curveStep is about the longest stretch of a spline left without a point to draw through.
const curveStep = 80.0

// bezier is the point at t of the cubic Bézier p0 p1 p2 p3.
func bezier(p0, p1, p2, p3 Point, t float64) Point {
	u := 1 - t
	a, b, c, d := u*u*u, 3*u*u*t, 3*u*t*t, t*t*t
	return Point{a*p0.X + b*p1.X + c*p2.X + d*p3.X, a*p0.Y + b*p1.Y + c*p2.Y + d*p3.Y}
}

// curvePoints keeps the points a spline passes through between its ends: each segment's middle
// and the joints between segments. A drawing that curves through them follows dot's route around
// the nodes in between. A spline of one segment, a gentle curve, gives none: it is drawn straight.
func curvePoints(pts []Point) []Point {
	if len(pts) <= 4 {
		return nil
	}
	var out []Point
	for i := 0; i+3 < len(pts); i += 3 {
		p0, p1, p2, p3 := pts[i], pts[i+1], pts[i+2], pts[i+3]
		// A long segment gets more points, so the curve drawn through them keeps to dot's
		// spline instead of cutting the corners of the nodes it goes around.
		n := max(2, min(6, int(dist(p0, p3)/curveStep)+1))
		for k := 1; k < n; k++ {
			out = append(out, bezier(p0, p1, p2, p3, float64(k)/float64(n)))
		}
		if i+3 < len(pts)-1 {
			out = append(out, p3)
		}
	}
	return out
}

// result turns a laid-out plan into the caller's terms: the real nodes, the caller's clusters, a
// route and label centre per edge, stacked leaves put in their places.
func (p *plan) result(pl placed) Result {
	g := p.g
	res := Result{Nodes: make(map[string]Rect, len(g.Nodes)), Clusters: make(map[string]Rect, len(g.Clusters)),
		Routes: make([][]Point, len(g.Edges)), Labels: make([]Point, len(g.Edges)), Sharp: make([]bool, len(g.Edges)),
		Direction: p.dir, Arrangement: p.arrangement}
	for i, n := range p.nodes {
		if n.kind == realNode && pl.laid[i] {
			res.Nodes[g.Nodes[n.ref].ID] = pl.nodes[i]
		}
	}
	for ci, c := range p.clusters {
		if c.id != "" {
			res.Clusters[c.id] = pl.clusters[ci]
		}
	}
	for k, e := range p.edges {
		if e.gone || e.edge < 0 || e.part != 0 {
			continue
		}
		if ge := g.Edges[e.edge]; ge.From == ge.To {
			continue // a loop: the caller draws it beside its node
		}
		res.Routes[e.edge] = curvePoints(pl.splines[k])
	}
	ends := map[int][2]Point{} // per labelled edge routed through its label: where its route starts and ends
	for i, l := range p.label {
		if l >= 0 && p.nodes[l].gone {
			// A label between two bands sits half-way along its flat edge, in the gap.
			for k, e := range p.edges {
				if e.edge == i && e.part == 0 && !e.gone && len(pl.splines[k]) >= 4 {
					at := splineMiddle(pl.splines[k])
					res.Labels[i], res.Routes[i] = at, []Point{at}
				}
			}
			continue
		}
		if l < 0 || !pl.laid[l] {
			continue
		}
		var first, second []Point
		for k, e := range p.edges {
			switch {
			case e.edge != i || e.gone:
			case e.part == 1:
				first = pl.splines[k]
			case e.part == 2:
				second = pl.splines[k]
			}
		}
		c := pl.nodes[l]
		at := Point{c.X + c.Width/2, c.Y + c.Height/2}
		res.Labels[i] = at
		res.Routes[i] = throughLabel(first, at, second)
		if len(first) > 0 && len(second) > 0 {
			ends[i] = [2]Point{first[0], second[len(second)-1]}
		}
	}
	p.expandBlocks(pl, &res)
	p.centreLabels(pl, &res, ends)
	p.tightenClusters(pl, &res)
	return res
}

// clusterMargin is the room dot keeps between a cluster's border and what it holds (margin=20).
const clusterMargin = 20.0

// tightenClusters takes in each group's box where it reaches beyond what the group holds by more
// than dot's margin, below and to either side (the top holds the title): a gate, the invisible
// point that orders groups, takes a place of its own in its layer inside the group, and dot's box
// holds it, an empty strip along the group's edge. A group holding a loop keeps its box, which
// holds the loop's room.
func (p *plan) tightenClusters(pl placed, res *Result) {
	if !p.hasGates() {
		return
	}
	g := p.g
	order := make([]int, 0, len(p.clusters))
	for ci, c := range p.clusters {
		if c.id != "" {
			order = append(order, ci)
		}
	}
	p.innermostFirst(order)
	inside := func(id string, ci int) bool { return p.within(p.nodes[p.realIndex(id)].cluster, ci) }
	for _, ci := range order {
		id := p.clusters[ci].id
		old, ok := res.Clusters[id]
		if !ok {
			continue
		}
		var boxes []Rect
		loop := false
		for _, n := range g.Nodes {
			if r, ok := res.Nodes[n.ID]; ok && inside(n.ID, ci) {
				boxes = append(boxes, r)
			}
		}
		for cj, c := range p.clusters {
			if cj != ci && c.id != "" && p.within(cj, ci) {
				boxes = append(boxes, res.Clusters[c.id])
			}
		}
		for k, e := range g.Edges {
			if !inside(e.From, ci) || !inside(e.To, ci) {
				continue
			}
			if e.From == e.To {
				loop = true
				break
			}
			if l := p.label[k]; l >= 0 && !p.nodes[l].gone && pl.laid[l] {
				boxes = append(boxes, pl.nodes[l])
			}
			for _, pt := range res.Routes[k] {
				boxes = append(boxes, Rect{pt.X, pt.Y, 0, 0})
			}
		}
		if loop || len(boxes) == 0 {
			continue
		}
		in := union(boxes)
		left := math.Max(old.X, in.X-clusterMargin)
		right := math.Min(old.X+old.Width, in.X+in.Width+clusterMargin)
		bottom := math.Min(old.Y+old.Height, in.Y+in.Height+clusterMargin)
		if right > left && bottom > old.Y {
			res.Clusters[id] = Rect{left, old.Y, right - left, bottom - old.Y}
		}
	}
}

// throughLabel joins the two halves of a labelled edge at its label: the points of each half,
// the shorter half given more points on its longest stretches until both have as many, so the
// label's centre is the route's middle point.
func throughLabel(first []Point, at Point, second []Point) []Point {
	a, b := curvePoints(first), curvePoints(second)
	aEnd, bEnd := at, at
	if len(first) > 0 {
		aEnd = first[0]
	}
	if len(second) > 0 {
		bEnd = second[len(second)-1]
	}
	// a runs from the tail's end to the label, b from the label to the head's end.
	lineA := append(append([]Point{aEnd}, a...), at)
	lineB := append(append([]Point{at}, b...), bEnd)
	for len(lineA) < len(lineB) {
		lineA = splitLongest(lineA)
	}
	for len(lineB) < len(lineA) {
		lineB = splitLongest(lineB)
	}
	out := append([]Point(nil), lineA[1:len(lineA)-1]...)
	out = append(out, at)
	return append(out, lineB[1:len(lineB)-1]...)
}

// splineMiddle is the point half-way along a spline's segments (the middle segment's middle).
func splineMiddle(pts []Point) Point {
	n := (len(pts) - 1) / 3
	i := 3 * (n / 2)
	if n%2 == 0 {
		return pts[i] // the joint between the two middle segments
	}
	p0, p1, p2, p3 := pts[i], pts[i+1], pts[i+2], pts[i+3]
	return Point{(p0.X + 3*p1.X + 3*p2.X + p3.X) / 8, (p0.Y + 3*p1.Y + 3*p2.Y + p3.Y) / 8}
}

// splitLongest adds the middle of a polyline's longest segment.
func splitLongest(line []Point) []Point {
	best, bestLen := 0, -1.0
	for i := 1; i < len(line); i++ {
		if d := dist(line[i-1], line[i]); d > bestLen {
			best, bestLen = i, d
		}
	}
	mid := Point{(line[best-1].X + line[best].X) / 2, (line[best-1].Y + line[best].Y) / 2}
	out := append([]Point(nil), line[:best]...)
	out = append(out, mid)
	return append(out, line[best:]...)
}
