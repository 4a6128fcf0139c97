package layout

// countCrossings counts crossing pairs among the edges of g as laid out in r. Edges sharing a node
// never count: they meet at that node by design.
func countCrossings(g Graph, r Result) int {
	lines := make([][]Point, len(g.Edges))
	for i, e := range g.Edges {
		a, b := r.Nodes[e.From], r.Nodes[e.To]
		line := []Point{{a.X + a.Width/2, a.Y + a.Height/2}}
		if i < len(r.Routes) {
			line = append(line, r.Routes[i]...)
		}
		lines[i] = append(line, Point{b.X + b.Width/2, b.Y + b.Height/2})
	}
	n := 0
	for i := range lines {
		for j := i + 1; j < len(lines); j++ {
			ei, ej := g.Edges[i], g.Edges[j]
			if ei.From == ej.From || ei.From == ej.To || ei.To == ej.From || ei.To == ej.To {
				continue
			}
			if PolylinesCross(lines[i], lines[j]) {
				n++
			}
		}
	}
	return n
}

// PolylinesCross reports whether two polylines properly cross (touching ends do not count).
func PolylinesCross(a, b []Point) bool {
	for i := 0; i+1 < len(a); i++ {
		for j := 0; j+1 < len(b); j++ {
			if segmentsCross(a[i], a[i+1], b[j], b[j+1]) {
				return true
			}
		}
	}
	return false
}

func segmentsCross(p1, p2, q1, q2 Point) bool {
	d1 := orient(q1, q2, p1)
	d2 := orient(q1, q2, p2)
	d3 := orient(p1, p2, q1)
	d4 := orient(p1, p2, q2)
	return d1*d2 < 0 && d3*d4 < 0
}

func orient(a, b, c Point) float64 {
	return (b.X-a.X)*(c.Y-a.Y) - (b.Y-a.Y)*(c.X-a.X)
}
