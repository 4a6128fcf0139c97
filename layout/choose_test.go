package layout

import "testing"

// TestChooseKeepsArrowsApart: a rearrangement that fits the screen better but crosses arrows the
// plain layout keeps apart loses to the plain layout; one that adds a crossing or two may win.
func TestChooseKeepsArrowsApart(t *testing.T) {
	g := chain(10, LeftRight, nil)
	p := newPlan(g, LeftRight, false)
	f := Fit{MaxAspect: 2.5, Small: 1000}
	plain := candidate{p: p, prefer: 1, w: 2276, h: 537, d: defects{crossings: 3}, start: true}
	for _, tc := range []struct {
		crossings int
		wantWrap  bool
	}{{4, true}, {5, true}, {6, false}, {12, false}} {
		wrapped := candidate{p: p, prefer: preferFold * preferFold, w: 1418, h: 730, d: defects{crossings: tc.crossings}}
		got := choose([]candidate{plain, wrapped}, f)
		if gotWrap := got.w == wrapped.w; gotWrap != tc.wantWrap {
			t.Errorf("a wrap with %d crossings against the plain layout's 3: chosen %v, want %v", tc.crossings, gotWrap, tc.wantWrap)
		}
	}
}
