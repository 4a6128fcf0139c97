package scene

import (
	"math"
	"testing"
)

func TestFocusOf(t *testing.T) {
	box := Element{Type: Rectangle, X: 0, Y: 0, Width: 100, Height: 50}
	for _, tc := range []struct {
		name     string
		adj, end Point
		want     float64
	}{
		{"aimed at the centre", Point{50, 200}, Point{50, 55}, 0},
		{"along the left edge", Point{0, 200}, Point{0, 55}, -1},
		{"halfway to the right edge", Point{75, 200}, Point{75, 55}, 0.5},
	} {
		if got := FocusOf(box, tc.adj, tc.end); math.Abs(math.Abs(got)-math.Abs(tc.want)) > 1e-9 {
			t.Errorf("%s: FocusOf = %v, want ±%v", tc.name, got, tc.want)
		}
	}
	// Seen from the other side, the same line has the opposite focus.
	if a, b := FocusOf(box, Point{75, 200}, Point{75, 55}), FocusOf(box, Point{75, -200}, Point{75, -5}); a != -b {
		t.Errorf("focus from below %v and from above %v, want opposite signs", a, b)
	}
}
