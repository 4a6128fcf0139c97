package measure

import (
	"math"

	"github.com/excalibot/excalibot/scene"
)

func area(r scene.Rect) float64 { return r.Width * r.Height }

// contains reports whether a holds b entirely (borders may touch).
func contains(a, b scene.Rect) bool {
	const eps = 0.5
	return b.X >= a.X-eps && b.Y >= a.Y-eps && b.X+b.Width <= a.X+a.Width+eps && b.Y+b.Height <= a.Y+a.Height+eps
}

// intersection returns the width and height of the overlap of a and b (0 when apart).
func intersection(a, b scene.Rect) (w, h float64) {
	w = math.Min(a.X+a.Width, b.X+b.Width) - math.Max(a.X, b.X)
	h = math.Min(a.Y+a.Height, b.Y+b.Height) - math.Max(a.Y, b.Y)
	return math.Max(w, 0), math.Max(h, 0)
}

func overlapArea(a, b scene.Rect) float64 {
	w, h := intersection(a, b)
	return w * h
}

// inset shrinks r by m on every side (not below zero size).
func inset(r scene.Rect, m float64) scene.Rect {
	w, h := math.Max(r.Width-2*m, 0), math.Max(r.Height-2*m, 0)
	return scene.Rect{X: r.X + (r.Width-w)/2, Y: r.Y + (r.Height-h)/2, Width: w, Height: h}
}

// project returns where p falls along the polyline, as a fraction of its length (0 at the first
// point, 1 at the last), and its distance from it. A polyline of no length gives 0.5.
func project(pts []scene.Point, p scene.Point) (along, dist float64) {
	if len(pts) == 0 {
		return 0.5, 0
	}
	total := 0.0
	for i := 0; i+1 < len(pts); i++ {
		total += math.Hypot(pts[i+1].X-pts[i].X, pts[i+1].Y-pts[i].Y)
	}
	if total == 0 {
		return 0.5, math.Hypot(p.X-pts[0].X, p.Y-pts[0].Y)
	}
	best, bestAt, walked := math.Inf(1), 0.0, 0.0
	for i := 0; i+1 < len(pts); i++ {
		a, b := pts[i], pts[i+1]
		dx, dy := b.X-a.X, b.Y-a.Y
		l := math.Hypot(dx, dy)
		t := 0.0
		if l > 0 {
			t = math.Max(0, math.Min(1, ((p.X-a.X)*dx+(p.Y-a.Y)*dy)/(l*l)))
		}
		d := math.Hypot(p.X-(a.X+t*dx), p.Y-(a.Y+t*dy))
		if d < best {
			best, bestAt = d, walked+t*l
		}
		walked += l
	}
	return bestAt / total, best
}

// polylinesCross reports whether two polylines cross properly somewhere: each segment of one
// strictly crosses a segment of the other, not merely touching or overlapping along a line.
func polylinesCross(a, b []scene.Point) bool {
	for i := 0; i+1 < len(a); i++ {
		for j := 0; j+1 < len(b); j++ {
			if scene.SegmentsCross(a[i], a[i+1], b[j], b[j+1]) {
				return true
			}
		}
	}
	return false
}
