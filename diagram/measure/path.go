package measure

import (
	"math"

	"github.com/excalibot/excalibot/scene"
)

// drawnPath returns the line Excalidraw draws for an arrow or a line, as a fine polyline in scene
// coordinates. A rounded one that is not elbowed is drawn by rough.js's curve(): a Catmull-Rom
// spline through its points with the first and last point doubled, each piece a cubic Bézier
// (curveTightness 0). It bulges past its points' polyline at every bend, so measuring the polyline
// misses the nodes and arrows the curve actually meets. Elbowed and sharp arrows are their polyline.
func drawnPath(e *scene.Element) []scene.Point {
	pts := e.AbsPoints()
	if e.Roundness == nil || e.Elbowed || len(pts) < 3 {
		return pts
	}
	// rough.js's _curveWithOffset doubles the ends, then _curve draws from ps[1] to ps[n-2].
	ps := make([]scene.Point, 0, len(pts)+2)
	ps = append(ps, pts[0])
	ps = append(ps, pts...)
	ps = append(ps, pts[len(pts)-1])
	out := []scene.Point{ps[1]}
	for i := 1; i+2 < len(ps); i++ {
		p0, p1, p2, p3 := ps[i-1], ps[i], ps[i+1], ps[i+2]
		c1 := scene.Point{X: p1.X + (p2.X-p0.X)/6, Y: p1.Y + (p2.Y-p0.Y)/6}
		c2 := scene.Point{X: p2.X + (p1.X-p3.X)/6, Y: p2.Y + (p1.Y-p3.Y)/6}
		// About one sample every 4 px, at least 8 a piece: finer than any node's margin.
		steps := max(8, int(math.Ceil(dist(p1, c1)+dist(c1, c2)+dist(c2, p2))/4))
		for k := 1; k <= steps; k++ {
			out = append(out, bezier(p1, c1, c2, p2, float64(k)/float64(steps)))
		}
	}
	return out
}

func bezier(a, b, c, d scene.Point, t float64) scene.Point {
	u := 1 - t
	w0, w1, w2, w3 := u*u*u, 3*u*u*t, 3*u*t*t, t*t*t
	return scene.Point{X: w0*a.X + w1*b.X + w2*c.X + w3*d.X, Y: w0*a.Y + w1*b.Y + w2*c.Y + w3*d.Y}
}

func dist(a, b scene.Point) float64 { return math.Hypot(b.X-a.X, b.Y-a.Y) }

func pathLength(pts []scene.Point) float64 {
	l := 0.0
	for i := 1; i < len(pts); i++ {
		l += dist(pts[i-1], pts[i])
	}
	return l
}
