package mermaid

import (
	"fmt"
	"math"
	"strings"
	"testing"

	"github.com/excalibot/excalibot/scene"
)

func TestParsePath(t *testing.T) {
	for _, tc := range []struct {
		name, d string
		want    [][]scene.Point // nil: only the ends are checked (curves)
		ends    [2]scene.Point
	}{
		{name: "lines", d: "M0,0L10,0L10,5", want: [][]scene.Point{ps(0, 0, 10, 0, 10, 5)}},
		{name: "relative and H/V", d: "m1 1 h10 v5 l-2-2", want: [][]scene.Point{ps(1, 1, 11, 1, 11, 6, 9, 4)}},
		{name: "pairs after M are lines", d: "M0,0 5,0 5,5", want: [][]scene.Point{ps(0, 0, 5, 0, 5, 5)}},
		{name: "exponents and joined signs", d: "M1e1-.5L2E1,.5", want: [][]scene.Point{ps(10, -0.5, 20, 0.5)}},
		{name: "close", d: "M0,0 L4,0 L4,4 Z", want: [][]scene.Point{ps(0, 0, 4, 0, 4, 4, 0, 0)}},
		{name: "two subpaths", d: "M0,0 L1,0 M5,5 L6,5", want: [][]scene.Point{ps(0, 0, 1, 0), ps(5, 5, 6, 5)}},
		{name: "cubic", d: "M0,0 C0,40 100,40 100,0", ends: [2]scene.Point{pt(0, 0), pt(100, 0)}},
		{name: "smooth cubic", d: "M0,0 C0,20 20,20 20,0 S40,-20 40,0", ends: [2]scene.Point{pt(0, 0), pt(40, 0)}},
		{name: "quadratic", d: "M0,0 Q50,50 100,0 T200,0", ends: [2]scene.Point{pt(0, 0), pt(200, 0)}},
		{name: "arc as its chord", d: "M0,0 A5,5 0 0 1 10,0", want: [][]scene.Point{ps(0, 0, 10, 0)}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := parsePath(tc.d)
			if err != nil {
				t.Fatal(err)
			}
			if tc.want != nil {
				if describe(got) != describe(tc.want) {
					t.Errorf("got %s, want %s", describe(got), describe(tc.want))
				}
				return
			}
			if len(got) != 1 || dist(got[0][0], tc.ends[0]) > 1e-9 || dist(got[0][len(got[0])-1], tc.ends[1]) > 1e-9 {
				t.Errorf("got %s, want one polyline from %v to %v", describe(got), tc.ends[0], tc.ends[1])
			}
		})
	}
}

// TestParsePathFlattening: the polyline of a cubic stays within flattenTol of the curve.
func TestParsePathFlattening(t *testing.T) {
	p0, c1, c2, p3 := scene.Point{X: 0, Y: 0}, scene.Point{X: 0, Y: 120}, scene.Point{X: 300, Y: -80}, scene.Point{X: 300, Y: 40}
	got, err := parsePath("M0,0 C0,120 300,-80 300,40")
	if err != nil {
		t.Fatal(err)
	}
	worst := 0.0
	for k := 0; k <= 1000; k++ {
		u := float64(k) / 1000
		v := 1 - u
		q := scene.Point{
			X: v*v*v*p0.X + 3*v*v*u*c1.X + 3*v*u*u*c2.X + u*u*u*p3.X,
			Y: v*v*v*p0.Y + 3*v*v*u*c1.Y + 3*v*u*u*c2.Y + u*u*u*p3.Y,
		}
		best := math.Inf(1)
		for i := 1; i < len(got[0]); i++ {
			best = math.Min(best, distToSegment(q, got[0][i-1], got[0][i]))
		}
		worst = math.Max(worst, best)
	}
	if worst > flattenTol {
		t.Errorf("the polyline strays %.3f px from the curve, want at most %.2f", worst, flattenTol)
	}
	if len(got[0]) > 65 {
		t.Errorf("%d points for one curve, want at most 65", len(got[0]))
	}
}

func TestParsePathErrors(t *testing.T) {
	for _, d := range []string{"L0,0", "M0,0 L5", "M0,0 X1,1", "M0,0 L1,,", "M0,0 C1,1 2,2"} {
		if got, err := parsePath(d); err == nil {
			t.Errorf("parsePath(%q) = %s, want an error", d, describe(got))
		} else if !strings.Contains(err.Error(), "path data") {
			t.Errorf("parsePath(%q): error %q does not say it is the path data", d, err)
		}
	}
}

func TestSimplify(t *testing.T) {
	for _, tc := range []struct {
		name string
		pts  []scene.Point
		want []int
	}{
		{"a straight line keeps its ends", ps(0, 0, 1, 0.2, 2, -0.2, 3, 0, 10, 0), []int{0, 4}},
		{"a corner stays", ps(0, 0, 5, 0, 10, 0, 10, 5, 10, 10), []int{0, 2, 4}},
		{"two points", ps(0, 0, 1, 1), []int{0, 1}},
	} {
		if got := simplify(tc.pts, routeTol); !equalInts(got, tc.want) {
			t.Errorf("%s: simplify = %v, want %v", tc.name, got, tc.want)
		}
	}
}

// TestArrowPoints: a labelled route becomes an odd number of points whose middle one is the
// point at the label's arc length; the points stay on the route.
func TestArrowPoints(t *testing.T) {
	// An L: 100 px down, then 300 px right.
	route := ps(0, 0, 0, 50, 0, 100, 100, 100, 200, 100, 300, 100)
	s := arcLengths(route)
	for _, mid := range []float64{200, 50, 350} {
		got := arrowPoints(route, mid)
		if len(got)%2 == 0 {
			t.Fatalf("mid %.0f: %d points, want an odd number", mid, len(got))
		}
		if want := pointAt(route, s, mid); dist(got[len(got)/2], want) > 1e-9 {
			t.Errorf("mid %.0f: middle point %v, want %v (points %v)", mid, got[len(got)/2], want, got)
		}
		for _, p := range got {
			if offRoute(route, p) > 1e-9 {
				t.Errorf("mid %.0f: point %v is off the route", mid, p)
			}
		}
		if dist(got[0], route[0]) > 1e-9 || dist(got[len(got)-1], route[len(route)-1]) > 1e-9 {
			t.Errorf("mid %.0f: ends %v %v, want the route's", mid, got[0], got[len(got)-1])
		}
	}
	if got := arrowPoints(route, -1); len(got) != 3 {
		t.Errorf("without a label: %v, want the ends and the corner", got)
	}
}

// offRoute is the distance from p to the polyline.
func offRoute(pts []scene.Point, p scene.Point) float64 {
	best := math.Inf(1)
	for i := 1; i < len(pts); i++ {
		best = math.Min(best, distToSegment(p, pts[i-1], pts[i]))
	}
	return best
}

func TestFromBorder(t *testing.T) {
	box := &scene.Element{ID: "A", Type: scene.Rectangle, X: 0, Y: 0, Width: 100, Height: 50}
	for _, tc := range []struct {
		name  string
		route []scene.Point
	}{
		{"starts inside", ps(50, 25, 50, 200)},
		{"starts on the border", ps(50, 50, 50, 200)},
		{"starts short of the border", ps(50, 60, 50, 200)},
		{"leaves through a side", ps(90, 25, 120, 25, 200, 100)},
	} {
		got := fromBorder(tc.route, box)
		if d := scene.DistanceToBorder(*box, got[0]); math.Abs(d-scene.DefaultGap) > 0.5 || inside(box, got[0]) {
			t.Errorf("%s: starts at %v, %.2f px from the border, want %d px outside", tc.name, got[0], d, scene.DefaultGap)
		}
		if dist(got[len(got)-1], tc.route[len(tc.route)-1]) > 1e-9 {
			t.Errorf("%s: the far end moved to %v", tc.name, got[len(got)-1])
		}
	}
}

func TestWidenSelfMessage(t *testing.T) {
	loop := ps(100, 0, 130, 0, 130, 20, 100, 20)
	got := widenSelfMessage(loop, 200)
	if far := got[1].X; far < 100+100+8 {
		t.Errorf("far side at %.0f, want at least %d so a 200 px label clears the lifeline", far, 208)
	}
	if got[0] != loop[0] || got[3] != loop[3] {
		t.Errorf("the ends moved: %v", got)
	}
	straight := ps(0, 0, 50, 0, 100, 0)
	if got := widenSelfMessage(straight, 200); describe([][]scene.Point{got}) != describe([][]scene.Point{straight}) {
		t.Errorf("a message between two lifelines changed: %v", got)
	}
}

func describe(ps [][]scene.Point) string {
	var b strings.Builder
	for _, p := range ps {
		b.WriteString("[")
		for i, q := range p {
			if i > 0 {
				b.WriteString(" ")
			}
			fmt.Fprintf(&b, "%.3f,%.3f", q.X+0, q.Y+0)
		}
		b.WriteString("]")
	}
	return strings.ReplaceAll(b.String(), "-0.000", "0.000")
}

func equalInts(a, b []int) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

func pt(x, y float64) scene.Point { return scene.Point{X: x, Y: y} }

// ps makes points of x, y pairs.
func ps(xy ...float64) []scene.Point {
	out := make([]scene.Point, len(xy)/2)
	for i := range out {
		out[i] = pt(xy[2*i], xy[2*i+1])
	}
	return out
}
