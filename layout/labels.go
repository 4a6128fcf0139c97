package layout

import "math"

// centreLabels moves each label that dot put far from the middle of its edge's route (the edge
// runs a long way on one side of the label's layer) to the route's middle, or as near to it as it
// can go without touching a node, another label, another edge or a group's title strip (a label
// among converging edges would be read as theirs), and so does each label dot put across a
// group's border: dot keeps a node out of a group's members in its own layer only, and the
// group's box reaches as far as its members in every layer. The label stays the middle point of
// the route.
func (p *plan) centreLabels(pl placed, res *Result, ends map[int][2]Point) {
	centre := func(id string) Point {
		r := res.Nodes[id]
		return Point{r.X + r.Width/2, r.Y + r.Height/2}
	}
	edgeLine := func(i int) []Point {
		e := p.g.Edges[i]
		return append(append([]Point{centre(e.From)}, res.Routes[i]...), centre(e.To))
	}
	var blocked, groups []Rect
	for _, r := range res.Nodes {
		blocked = append(blocked, r)
	}
	for ci, c := range p.clusters {
		if c.id != "" {
			groups = append(groups, pl.clusters[ci])
		}
	}
	onBorder := func(b Rect) bool {
		for _, g := range groups {
			if straddles(b, g) {
				return true
			}
		}
		return false
	}
	for ci, c := range p.clusters {
		if c.id != "" && c.title > 0 {
			r := pl.clusters[ci]
			blocked = append(blocked, Rect{r.X, r.Y, r.Width, c.title + 4})
		}
	}
	size := func(i int) (float64, float64) {
		n := p.nodes[p.label[i]]
		return n.w, n.h
	}
	labelBox := func(i int, at Point) Rect {
		w, h := size(i)
		return Rect{at.X - w/2, at.Y - h/2, w, h}
	}
	for _, i := range sortedKeys(keysOf2(ends)) {
		line := append(append([]Point{ends[i][0]}, res.Routes[i]...), ends[i][1])
		at := res.Labels[i]
		if f := arcShare(line, at); f > 0.35 && f < 0.65 && !onBorder(labelBox(i, at)) {
			continue
		}
		clear := func(q Point) bool {
			b := labelBox(i, q)
			if onBorder(b) {
				return false
			}
			for _, r := range blocked {
				if overlapsRect(b, r) {
					return false
				}
			}
			for j, l := range res.Labels {
				if j != i && p.label[j] >= 0 && overlapsRect(b, labelBox(j, l)) {
					return false
				}
			}
			for j := range p.g.Edges {
				if j != i && lineMeetsRect(edgeLine(j), b) {
					return false
				}
			}
			return true
		}
		for _, f := range []float64{0.5, 0.45, 0.55, 0.4, 0.6, 0.35, 0.65} {
			q, k := pointAt(line, f)
			if !clear(q) {
				continue
			}
			// The route through the new place: the points before it, the place, the points after.
			before := append(append([]Point(nil), line[:k]...), q)
			after := append([]Point{q}, line[k:]...)
			for len(before) < len(after) {
				before = splitLongest(before)
			}
			for len(after) < len(before) {
				after = splitLongest(after)
			}
			route := append([]Point(nil), before[1:len(before)-1]...)
			route = append(route, q)
			res.Routes[i] = append(route, after[1:len(after)-1]...)
			res.Labels[i] = q
			break
		}
	}
}

// arcShare is how far along the polyline (as a share of its length) its point nearest to q is.
func arcShare(line []Point, q Point) float64 {
	var total, run, best, bestAt float64
	best = math.Inf(1)
	for k := 1; k < len(line); k++ {
		total += dist(line[k-1], line[k])
	}
	for k := 1; k < len(line); k++ {
		a, b := line[k-1], line[k]
		l := dist(a, b)
		t := 0.0
		if l > 0 {
			t = math.Max(0, math.Min(1, ((q.X-a.X)*(b.X-a.X)+(q.Y-a.Y)*(b.Y-a.Y))/(l*l)))
		}
		if d := dist(q, Point{a.X + t*(b.X-a.X), a.Y + t*(b.Y-a.Y)}); d < best {
			best, bestAt = d, run+t*l
		}
		run += l
	}
	if total == 0 {
		return 0.5
	}
	return bestAt / total
}

// pointAt is the point a share f of the way along the polyline, and the index of the point after
// it.
func pointAt(line []Point, f float64) (Point, int) {
	var total float64
	for k := 1; k < len(line); k++ {
		total += dist(line[k-1], line[k])
	}
	goal := f * total
	for k := 1; k < len(line); k++ {
		l := dist(line[k-1], line[k])
		if goal <= l || k == len(line)-1 {
			t := 0.0
			if l > 0 {
				t = math.Min(1, goal/l)
			}
			a, b := line[k-1], line[k]
			return Point{a.X + t*(b.X-a.X), a.Y + t*(b.Y-a.Y)}, k
		}
		goal -= l
	}
	return line[0], 1
}

// lineMeetsRect reports whether a polyline passes through a rectangle.
func lineMeetsRect(line []Point, r Rect) bool {
	in := func(q Point) bool { return q.X >= r.X && q.X <= r.X+r.Width && q.Y >= r.Y && q.Y <= r.Y+r.Height }
	corners := []Point{{r.X, r.Y}, {r.X + r.Width, r.Y}, {r.X + r.Width, r.Y + r.Height}, {r.X, r.Y + r.Height}}
	for k := 1; k < len(line); k++ {
		a, b := line[k-1], line[k]
		if in(a) || in(b) {
			return true
		}
		for c := range corners {
			if segmentsCross(a, b, corners[c], corners[(c+1)%4]) {
				return true
			}
		}
	}
	return false
}

// straddles reports whether box b lies across the border of g: partly inside it, partly out.
func straddles(b, g Rect) bool {
	return overlapsRect(b, g) && !(b.X >= g.X && b.Y >= g.Y && b.X+b.Width <= g.X+g.Width && b.Y+b.Height <= g.Y+g.Height)
}

func overlapsRect(a, b Rect) bool {
	return a.X < b.X+b.Width && b.X < a.X+a.Width && a.Y < b.Y+b.Height && b.Y < a.Y+a.Height
}

func keysOf2(m map[int][2]Point) map[int]bool {
	out := make(map[int]bool, len(m))
	for k := range m {
		out[k] = true
	}
	return out
}
