package scene

import "math"

// DrawnPath returns the line Excalidraw draws for an arrow or a line, as a fine polyline in scene
// coordinates. A rounded one that is not elbowed is drawn by rough.js's curve(): a Catmull-Rom
// spline through its points with the first and last point doubled, each piece a cubic Bézier
// (curveTightness 0). It bulges past its points' polyline at every bend, so a test on the
// polyline misses the nodes and arrows the curve actually meets. Elbowed and sharp arrows are
// their polyline.
func (e *Element) DrawnPath() []Point {
	pts := e.AbsPoints()
	if e.Roundness == nil || e.Elbowed || len(pts) < 3 {
		return pts
	}
	// rough.js's _curveWithOffset doubles the ends, then _curve draws from ps[1] to ps[n-2].
	ps := make([]Point, 0, len(pts)+2)
	ps = append(ps, pts[0])
	ps = append(ps, pts...)
	ps = append(ps, pts[len(pts)-1])
	out := []Point{ps[1]}
	for i := 1; i+2 < len(ps); i++ {
		p0, p1, p2, p3 := ps[i-1], ps[i], ps[i+1], ps[i+2]
		c1 := Point{X: p1.X + (p2.X-p0.X)/6, Y: p1.Y + (p2.Y-p0.Y)/6}
		c2 := Point{X: p2.X + (p1.X-p3.X)/6, Y: p2.Y + (p1.Y-p3.Y)/6}
		// About one sample every 4 px, at least 8 a piece: finer than any node's margin.
		steps := max(8, int(math.Ceil(math.Hypot(c1.X-p1.X, c1.Y-p1.Y)+math.Hypot(c2.X-c1.X, c2.Y-c1.Y)+math.Hypot(p2.X-c2.X, p2.Y-c2.Y))/4))
		for k := 1; k <= steps; k++ {
			out = append(out, bezier(p1, c1, c2, p2, float64(k)/float64(steps)))
		}
	}
	return out
}
