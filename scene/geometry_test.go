package scene

import (
	"fmt"
	"math"
	"testing"
)

func nearPt(a, b Point, tol float64) bool {
	return math.Abs(a.X-b.X) <= tol && math.Abs(a.Y-b.Y) <= tol
}

func sharp(e Element) Element { e.Roundness = nil; return e }

func rotated(e Element, a float64) Element { e.Angle = a; return e }

func TestCornerRadius(t *testing.T) {
	v := 10.0
	tests := []struct {
		x    float64
		r    *Roundness
		want float64
	}{
		{100, nil, 0},
		{100, &Roundness{Type: RoundnessProportional}, 25},
		{100, &Roundness{Type: RoundnessLegacy}, 25},
		{100, &Roundness{Type: RoundnessAdaptive}, 25}, // below the 128 px cutoff: 25%
		{128, &Roundness{Type: RoundnessAdaptive}, 32},
		{400, &Roundness{Type: RoundnessAdaptive}, 32}, // capped
		{400, &Roundness{Type: RoundnessAdaptive, Value: &v}, 10},
		{20, &Roundness{Type: RoundnessAdaptive, Value: &v}, 5},
	}
	for _, tt := range tests {
		if got := CornerRadius(tt.x, tt.r); got != tt.want {
			t.Errorf("CornerRadius(%g, %+v) = %g, want %g", tt.x, tt.r, got, tt.want)
		}
	}
}

func TestEdgePoint(t *testing.T) {
	r100 := shape(Rectangle, "r", 0, 0, 100, 100) // adaptive: corner radius 25
	tests := []struct {
		name   string
		e      Element
		toward Point
		gap    float64
		want   Point
	}{
		{"sharp rect right", sharp(shape(Rectangle, "r", 0, 0, 100, 50)), Point{500, 25}, 0, Point{100, 25}},
		{"sharp rect right with gap", sharp(shape(Rectangle, "r", 0, 0, 100, 50)), Point{500, 25}, 5, Point{105, 25}},
		{"sharp rect up", sharp(shape(Rectangle, "r", 0, 0, 100, 50)), Point{50, -300}, 5, Point{50, -5}},
		// Gap along the arrow, not per axis: a horizontal arrow stays horizontal.
		{"rounded rect flat side", shape(Rectangle, "r", 0, 0, 100, 50), Point{-400, 25}, 8, Point{-8, 25}},
		// Towards a rounded corner the ray meets the quadratic corner curve at its middle:
		// 0.25·(75,0) + 0.5·(100,0) + 0.25·(100,25) = (93.75, 6.25).
		{"rounded rect corner", r100, Point{150, -50}, 0, Point{93.75, 6.25}},
		// Ellipse 200x100: the 45° ray meets it where x/100 = y/50·... at (100+100/√5, 50+100/√5).
		{"ellipse diagonal", shape(Ellipse, "e", 0, 0, 200, 100), Point{200, 150}, 0, Point{100 + 100/math.Sqrt(5), 50 + 100/math.Sqrt(5)}},
		{"ellipse right with gap", shape(Ellipse, "e", 0, 0, 200, 100), Point{900, 50}, 5, Point{205, 50}},
		// Sharp diamond 100x60: tips at getDiamondPoints (51,0), (100,31), (51,60), (0,31).
		// A horizontal ray at y=30 meets the top-right edge at x = 51 + 49·30/31.
		{"sharp diamond right", sharp(shape(Diamond, "d", 0, 0, 100, 60)), Point{500, 30}, 0, Point{51 + 49*30.0/31, 30}},
		{"sharp diamond up", sharp(shape(Diamond, "d", 0, 0, 100, 60)), Point{50, -500}, 0, Point{50, 31 - 31*50.0/51}},
		// Rotated 90°: a 100x50 box becomes 50 wide, so the right border is 25 px from the centre.
		{"rotated rect", rotated(sharp(shape(Rectangle, "r", 0, 0, 100, 50)), math.Pi/2), Point{500, 25}, 0, Point{75, 25}},
		{"centre itself", r100, Point{50, 50}, 5, Point{50, 50}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := EdgePoint(tt.e, tt.toward, tt.gap)
			if !nearPt(got, tt.want, 1e-6) {
				t.Errorf("got %v, want %v", got, tt.want)
			}
		})
	}
}

// TestEdgePointOnBorder checks, for every shape kind, rounded or not, rotated or not, and rays all
// around, that the edge point lies on the drawn border (within the polygon approximation used by
// DistanceToBorder) and that the gap is applied along the ray.
func TestEdgePointOnBorder(t *testing.T) {
	var shapes []Element
	for _, typ := range []Type{Rectangle, Diamond, Ellipse} {
		for _, round := range []bool{false, true} {
			for _, ang := range []float64{0, 0.3, math.Pi / 2, 2.5} {
				for _, size := range [][2]float64{{100, 60}, {300, 80}, {40, 200}} {
					e := shape(typ, "s", 10, 20, size[0], size[1])
					if !round {
						e.Roundness = nil
					} else if typ == Ellipse {
						continue
					}
					e.Angle = ang
					shapes = append(shapes, e)
				}
			}
		}
	}
	for _, e := range shapes {
		c := e.Center()
		for k := range 72 {
			a := float64(k) * math.Pi / 36
			dir := Point{math.Cos(a), math.Sin(a)}
			to := Point{c.X + 1000*dir.X, c.Y + 1000*dir.Y}
			p := EdgePoint(e, to, 0)
			if d := DistanceToBorder(e, p); d > 0.05 {
				t.Fatalf("%s %gx%g angle %g round %v, ray %d°: edge point %v is %g px off the border",
					e.Type, e.Width, e.Height, e.Angle, e.Roundness != nil, k*5, p, d)
			}
			q := EdgePoint(e, to, 7)
			if got := math.Hypot(q.X-p.X, q.Y-p.Y); math.Abs(got-7) > 1e-9 {
				t.Fatalf("gap moved the point %g px, want 7", got)
			}
			if (q.X-p.X)*dir.X+(q.Y-p.Y)*dir.Y < 0 {
				t.Fatalf("gap points inwards")
			}
		}
	}
}

func TestBoundingBox(t *testing.T) {
	line := NewElement(Line)
	line.X, line.Y = 10, 10
	line.Points = []Point{{0, 0}, {50, -20}, {80, 30}}
	tests := []struct {
		name string
		e    Element
		want Rect
	}{
		{"plain", shape(Rectangle, "r", 10, 20, 100, 50), Rect{10, 20, 100, 50}},
		{"sharp rect rotated 90", rotated(sharp(shape(Rectangle, "r", 0, 0, 100, 50)), math.Pi/2), Rect{25, -25, 50, 100}},
		{"ellipse rotated 90", rotated(shape(Ellipse, "e", 0, 0, 100, 50), math.Pi/2), Rect{25, -25, 50, 100}},
		{"line", line, Rect{10, -10, 80, 50}},
	}
	for _, tt := range tests {
		got := BoundingBox(tt.e)
		if !nearPt(Point{got.X, got.Y}, Point{tt.want.X, tt.want.Y}, 1e-6) || !nearPt(Point{got.Width, got.Height}, Point{tt.want.Width, tt.want.Height}, 1e-6) {
			t.Errorf("%s: got %+v, want %+v", tt.name, got, tt.want)
		}
	}
}

func TestSegmentIntersects(t *testing.T) {
	r := shape(Rectangle, "r", 0, 0, 100, 100) // corner radius 25
	e := shape(Ellipse, "e", 0, 0, 100, 100)
	tests := []struct {
		name string
		e    Element
		a, b Point
		want bool
	}{
		{"through", r, Point{-50, 50}, Point{150, 50}, true},
		{"beside", r, Point{-50, 150}, Point{150, 150}, false},
		{"inside", r, Point{40, 40}, Point{60, 60}, true},
		{"ends on border", r, Point{-50, 50}, Point{0, 50}, true},
		// Cuts the sharp corner's box but passes outside the rounded corner.
		{"misses rounded corner", r, Point{90, -10}, Point{110, 10}, false},
		{"misses sharp diagonal of ellipse box", e, Point{85, -5}, Point{105, 15}, false},
		{"hits ellipse", e, Point{50, -10}, Point{50, 10}, true},
	}
	for _, tt := range tests {
		if got := SegmentIntersects(tt.e, tt.a, tt.b); got != tt.want {
			t.Errorf("%s: got %v, want %v", tt.name, got, tt.want)
		}
	}
}

func TestOverlap(t *testing.T) {
	tests := []struct {
		a, b Element
		want bool
	}{
		{shape(Rectangle, "a", 0, 0, 100, 100), shape(Rectangle, "b", 50, 50, 100, 100), true},
		{shape(Rectangle, "a", 0, 0, 100, 100), shape(Rectangle, "b", 150, 0, 100, 100), false},
		{shape(Rectangle, "a", 0, 0, 100, 100), shape(Rectangle, "b", 25, 25, 50, 50), true}, // contained
		// Boxes overlap at the corner, the ellipses do not.
		{shape(Ellipse, "a", 0, 0, 100, 100), shape(Ellipse, "b", 90, 90, 100, 100), false},
		{shape(Diamond, "a", 0, 0, 100, 100), shape(Diamond, "b", 80, 80, 100, 100), false},
		{shape(Diamond, "a", 0, 0, 100, 100), shape(Diamond, "b", 60, 0, 100, 100), true},
	}
	for i, tt := range tests {
		if got := Overlap(tt.a, tt.b); got != tt.want {
			t.Errorf("case %d (%s/%s): got %v, want %v", i, tt.a.Type, tt.b.Type, got, tt.want)
		}
		if got := Overlap(tt.b, tt.a); got != tt.want {
			t.Errorf("case %d reversed: got %v, want %v", i, got, tt.want)
		}
	}
}

func TestOnBorderAndContains(t *testing.T) {
	r := shape(Rectangle, "r", 0, 0, 200, 100)
	tests := []struct {
		p            Point
		onBorder, in bool
	}{
		{Point{100, 0}, true, true},
		{Point{100, 3}, true, true},
		{Point{100, 50}, false, true},
		{Point{0, 0}, false, false}, // the sharp corner is cut off by the rounding
		{Point{300, 50}, false, false},
	}
	for _, tt := range tests {
		if got := OnBorder(r, tt.p, 4); got != tt.onBorder {
			t.Errorf("OnBorder(%v) = %v, want %v", tt.p, got, tt.onBorder)
		}
		if got := ContainsPoint(r, tt.p, 0); got != tt.in {
			t.Errorf("ContainsPoint(%v) = %v, want %v", tt.p, got, tt.in)
		}
	}
	_ = fmt.Sprint()
}
