package graph

import (
	"testing"

	"github.com/excalibot/excalibot/diagram"
	"github.com/excalibot/excalibot/scene"
)

// TestMakeRoomBackKeepsFramesWhole: opening a band on a group's near side (a right-to-left layer)
// moves what lies before the band and grows the frames the band runs through at their near side;
// a grown frame's members stay inside it, those before the band moved once, the others not at all.
func TestMakeRoomBackKeepsFramesWhole(t *testing.T) {
	sc := scene.New()
	add := func(id string, typ scene.Type, x, y, w, h float64) {
		e := scene.NewElement(typ)
		e.ID, e.X, e.Y, e.Width, e.Height = id, x, y, w, h
		if _, err := sc.Add(e); err != nil {
			t.Fatal(err)
		}
	}
	// Finance spans the near edge of Operations (x 700); its member near lies before it, far
	// beyond it. Operations holds ops, and new is the node that fits nowhere in it.
	add("finance", scene.Frame, 100, 0, 900, 200)
	add("near", scene.Rectangle, 150, 60, 160, 80)
	add("far", scene.Rectangle, 800, 60, 160, 80)
	add("operations", scene.Frame, 700, 300, 400, 200)
	add("ops", scene.Rectangle, 750, 360, 160, 80)
	add("new", scene.Rectangle, 0, 600, 160, 80)
	for frame, ids := range map[string][]string{"finance": {"near", "far"}, "operations": {"ops", "new"}} {
		if err := sc.SetFrame(frame, ids...); err != nil {
			t.Fatal(err)
		}
	}
	before := map[string]scene.Element{}
	for _, id := range []string{"near", "far", "ops", "finance"} {
		before[id] = get(t, sc, id)
	}
	if _, err := makeRoom(sc, "new", "operations", "LR", true, scene.Point{X: 700, Y: 360}); err != nil {
		t.Fatal(err)
	}
	shift := get(t, sc, "new").Width + diagram.Gap
	for _, tc := range []struct {
		id string
		dx float64
	}{{"near", -shift}, {"far", 0}, {"ops", 0}, {"finance", -shift}} {
		if got := get(t, sc, tc.id).X - before[tc.id].X; got != tc.dx {
			t.Errorf("%s moved by %v, want %v", tc.id, got, tc.dx)
		}
	}
	f := get(t, sc, "finance")
	for _, id := range []string{"near", "far"} {
		if e := get(t, sc, id); e.X < f.X || e.X+e.Width > f.X+f.Width {
			t.Errorf("%s x %v–%v outside its frame x %v–%v", id, e.X, e.X+e.Width, f.X, f.X+f.Width)
		}
	}
}
