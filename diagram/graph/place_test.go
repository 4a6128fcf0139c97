package graph

import (
	"math"
	"testing"

	"github.com/excalibot/excalibot/diagram"
	"github.com/excalibot/excalibot/layout"
	"github.com/excalibot/excalibot/scene"
)

// TestFreeSpotWeighsGrowth: of the spots a new node may take, the one that costs least wins —
// its distance from where the layout wants it (along the layers counting double) plus what
// growing its group costs — not the first one found on the wanted layer. A left-to-right
// group whose room next to the wanted spot is taken: the old search went down the wanted
// layer until a spot was free, stretching the group far down; one layer further, beside it,
// the group hardly grows.
func TestFreeSpotWeighsGrowth(t *testing.T) {
	const w, h = 160.0, 80.0
	want := scene.Point{X: 1000, Y: 1000}
	stepAcross, stepAlong := h+diagram.Gap, w+diagram.Gap // left to right: across is y
	at := func(i, j int) scene.Point {
		return scene.Point{X: want.X + float64(j)*stepAlong, Y: want.Y + float64(i)*stepAcross}
	}
	group := scene.Rect{X: 0, Y: 0, Width: 1400, Height: 1100} // the wanted spot sticks out at its bottom
	grow := func(r scene.Rect) float64 {
		dx := math.Max(0, r.X+r.Width+20-(group.X+group.Width))
		dy := math.Max(0, r.Y+r.Height+20-(group.Y+group.Height))
		return growthWeight * (dx + dy)
	}
	taken := func(spots ...scene.Point) func(scene.Rect) bool {
		return func(r scene.Rect) bool {
			for _, s := range spots {
				if math.Abs(r.X-s.X) < 1 && math.Abs(r.Y-s.Y) < 1 {
					return false
				}
			}
			return true
		}
	}
	for _, tc := range []struct {
		name string
		ok   func(scene.Rect) bool
		grow func(scene.Rect) float64
		want scene.Point
	}{
		{"free where wanted", taken(), grow, at(0, 0)},
		{"no growth counted: the nearest on the layer", taken(at(0, 0), at(-1, 0)), nil, at(1, 0)},
		{"growth counted: above it on the layer, inside the group", taken(at(0, 0)), grow, at(-1, 0)},
		{"layer full inside the group: one layer on, inside it, not far down the layer", taken(at(0, 0), at(1, 0), at(-1, 0), at(-2, 0), at(-3, 0), at(-4, 0), at(-5, 0), at(-6, 0), at(-7, 0), at(-8, 0), at(-9, 0), at(-10, 0), at(-11, 0)), grow, at(0, 1)},
	} {
		got, found := freeSpot(want, w, h, layout.LeftRight, false, tc.ok, tc.grow)
		if !found || got != tc.want {
			t.Errorf("%s: spot %v (found %v), want %v", tc.name, got, found, tc.want)
		}
	}
}

// TestArrowCrossingsWeighsSpots: a spot for a new node costs a crossing for each arrow already
// drawn that its arrow to a placed neighbour would cross; arrows that end at that neighbour meet
// it there and cost nothing. (A follow-up adding Thanos Query, fed by Grafana, put it below the
// whole Prometheus server, its arrow across three others; weighed, it goes beside Grafana.)
func TestArrowCrossingsWeighsSpots(t *testing.T) {
	sc := drawn(t, Graph{
		Nodes: []Node{{ID: "a", Label: "Grafana"}, {ID: "x", Label: "Retrieval"}, {ID: "y", Label: "TSDB"}, {ID: "z", Label: "HTTP server"}, {ID: "new", Label: "Thanos Query"}},
		Edges: []Edge{{From: "x", To: "y"}, {From: "a", To: "z"}},
	})
	centreAt(t, sc, "a", 0, 0)
	centreAt(t, sc, "x", 400, -400)
	centreAt(t, sc, "y", 400, 400) // x → y runs down at x 400, between a and the far spot
	centreAt(t, sc, "z", 800, -200)
	for _, id := range []string{"e-x-y", "e-a-z"} {
		if err := sc.Update(id, func(e *scene.Element) error { setBends(sc, e, nil); return nil }); err != nil {
			t.Fatal(err)
		}
	}
	cost := arrowCrossings(sc, "new", map[string]bool{"new": true}, []string{"a"})
	if cost == nil {
		t.Fatal("no cost for a node with a placed neighbour among drawn arrows")
	}
	spot := func(x, y float64) scene.Rect { return scene.Rect{X: x - 80, Y: y - 40, Width: 160, Height: 80} }
	for _, tc := range []struct {
		name string
		at   scene.Rect
		want float64
	}{
		{"beyond x → y", spot(800, 200), crossingWeight},
		{"on a's side of it", spot(200, 250), 0},
		{"beside a → z, which ends at a too", spot(500, -700), 0},
	} {
		if got := cost(tc.at); got != tc.want {
			t.Errorf("%s: cost %v, want %v", tc.name, got, tc.want)
		}
	}
}

// centreAt moves node id of sc so that its centre is at x, y.
func centreAt(t *testing.T, sc *scene.Scene, id string, x, y float64) {
	t.Helper()
	e := get(t, sc, id)
	if err := sc.MoveBy([]string{id}, x-e.X-e.Width/2, y-e.Y-e.Height/2); err != nil {
		t.Fatal(err)
	}
}
