package layout

import (
	"context"
	"testing"
)

// TestHooked: a route that runs along the layers past both of its ends and turns back is a hook;
// one that stays between them, or only rounds off a border, is not.
func TestHooked(t *testing.T) {
	tail, head := Rect{X: 100, Y: 400, Width: 160, Height: 80}, Rect{X: 100, Y: 0, Width: 160, Height: 80}
	for _, tc := range []struct {
		name  string
		dir   Direction
		route []Point
		want  bool
	}{
		{"straight up", TopDown, []Point{{180, 440}, {180, 40}}, false},
		{"round the side", TopDown, []Point{{180, 440}, {400, 300}, {400, 100}, {180, 40}}, false},
		{"rounding off a border", TopDown, []Point{{180, 440}, {200, 495}, {300, 300}, {180, 40}}, false},
		{"down past the tail and back up", TopDown, []Point{{180, 440}, {220, 540}, {400, 300}, {180, 40}}, true},
		{"up past the head and back down", TopDown, []Point{{180, 440}, {300, -60}, {180, 40}}, true},
		{"left to right, straight", LeftRight, []Point{{180, 440}, {180, 40}}, false},
		{"left to right, out past the right", LeftRight, []Point{{180, 440}, {320, 240}, {180, 40}}, true},
	} {
		if got := hooked(tc.dir, tc.route, tail, head); got != tc.want {
			t.Errorf("%s: hooked %v, want %v", tc.name, got, tc.want)
		}
	}
}

// TestDepthFirstTurnsWholeEdgesBack: the depth-first second opinion on a state machine whose
// every edge is labelled, with two edges back to the start, draws no arrow that hooks. Left to
// dot's own cycle breaking, which turns back one half of a labelled edge and not the other, the
// same plan hooks (checked, so the test cannot pass for want of a cycle).
func TestDepthFirstTurnsWholeEdgesBack(t *testing.T) {
	g := Graph{Direction: TopDown}
	for _, id := range []string{"closed", "listen", "synrcvd", "estab", "finw1", "finw2", "timewait", "closewait", "lastack"} {
		g.Nodes = append(g.Nodes, Node{ID: id, Width: 160, Height: 80})
	}
	for _, e := range [][2]string{
		{"closed", "listen"}, {"listen", "synrcvd"}, {"synrcvd", "estab"}, {"estab", "finw1"}, {"finw1", "finw2"},
		{"finw2", "timewait"}, {"estab", "closewait"}, {"closewait", "lastack"}, {"lastack", "closed"}, {"timewait", "closed"},
	} {
		g.Edges = append(g.Edges, Edge{From: e[0], To: e[1], LabelWidth: 120, LabelHeight: 24})
	}
	g = g.withSpacing()
	hooks := func(p *plan) int {
		t.Helper()
		c, ok, err := runCandidate(context.Background(), p, 1)
		if err != nil || !ok {
			t.Fatalf("lay out: ok %v, %v", ok, err)
		}
		return c.d.hooks
	}
	p := newPlan(g, TopDown, false)
	if !p.depthFirst() {
		t.Fatal("depth first changed no edge against the flow's choice; the graph does not test it")
	}
	if got := hooks(p); got != 0 {
		t.Errorf("depth first: %d arrows hook, want 0", got)
	}
	left := newPlan(g, TopDown, false)
	for k := range left.edges {
		left.edges[k].back = false // dot breaks the cycles
	}
	if got := hooks(left); got == 0 {
		t.Errorf("left to dot: no arrow hooks; the test no longer shows what depthFirst avoids")
	}
}
