package scene

import (
	"math"
	"testing"
)

func TestDrawnPath(t *testing.T) {
	a := NewElement(Arrow)
	a.Points = []Point{{0, 0}, {100, 100}, {200, 0}}
	a.Roundness = &Roundness{Type: RoundnessProportional}
	got := a.DrawnPath()
	if got[0] != (Point{0, 0}) || got[len(got)-1] != (Point{200, 0}) {
		t.Errorf("ends %v … %v, want (0,0) … (200,0)", got[0], got[len(got)-1])
	}
	// rough.js: from (0,0) to (100,100) with controls (0,0)+((100,100)-(0,0))/6 and
	// (100,100)+((0,0)-(200,0))/6; its middle is the Bézier at t=0.5.
	mid := bezier(Point{0, 0}, Point{100.0 / 6, 100.0 / 6}, Point{100 - 200.0/6, 100}, Point{100, 100}, 0.5)
	found := false
	for _, p := range got {
		if math.Hypot(p.X-mid.X, p.Y-mid.Y) < 1e-9 {
			found = true
		}
	}
	if !found {
		t.Errorf("the curve misses rough.js's point %v", mid)
	}
	length := func(ps []Point) float64 {
		l := 0.0
		for i := 1; i < len(ps); i++ {
			l += math.Hypot(ps[i].X-ps[i-1].X, ps[i].Y-ps[i-1].Y)
		}
		return l
	}
	if l, poly := length(got), length(a.AbsPoints()); l <= poly {
		t.Errorf("curve length %v, want more than the polyline's %v: it bulges out at the bend", l, poly)
	}
	a.Roundness = nil
	if got := a.DrawnPath(); len(got) != 3 {
		t.Errorf("a sharp arrow is drawn along %d points, want its 3", len(got))
	}
}
