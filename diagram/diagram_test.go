package diagram

import (
	"testing"

	"github.com/excalibot/excalibot/scene"
)

func TestBeside(t *testing.T) {
	sc := scene.New()
	if got := Beside(sc); got != (scene.Point{}) {
		t.Errorf("empty canvas: %+v, want the origin", got)
	}
	box := scene.NewElement(scene.Rectangle)
	box.ID, box.X, box.Y, box.Width, box.Height = "b", 10, 20, 100, 50
	arrow := scene.NewElement(scene.Arrow)
	arrow.ID, arrow.X, arrow.Y, arrow.Points = "a", 0, 0, []scene.Point{{}, {X: 900, Y: 0}}
	for _, e := range []scene.Element{box, arrow} {
		if _, err := sc.Add(e); err != nil {
			t.Fatal(err)
		}
	}
	if got, want := Beside(sc), (scene.Point{X: 110 + 3*Gap, Y: 20}); got != want {
		t.Errorf("got %+v, want %+v (arrows do not count)", got, want)
	}
}

func TestFitLabel(t *testing.T) {
	sc := scene.New()
	w, h, ok := DefaultSize(scene.Ellipse)
	if !ok {
		t.Fatal("no default size for an ellipse")
	}
	e := scene.NewElement(scene.Ellipse)
	e.ID, e.Width, e.Height = "n", w, h
	if _, err := sc.Add(e); err != nil {
		t.Fatal(err)
	}
	if _, err := sc.SetLabel("n", "Authentication service"); err != nil {
		t.Fatal(err)
	}
	if err := FitLabel(sc, "n"); err != nil {
		t.Fatal(err)
	}
	got, _ := sc.Get("n")
	if got.Width <= w {
		t.Errorf("width %v, want it grown from %v so the label is not broken", got.Width, w)
	}
	if l, _ := sc.Get(got.Label()); l.Text != l.OriginalText {
		t.Errorf("label wraps as %q, want %q on one line", l.Text, l.OriginalText)
	}
	if _, _, ok := DefaultSize(scene.Arrow); ok {
		t.Error("an arrow has a default node size")
	}
}

// TestBounds: the box is the one scene.Bounds gives (rotation included) for what is left once
// lines, arrows and the skipped elements with their labels are taken out.
func TestBounds(t *testing.T) {
	add := func(t *testing.T, sc *scene.Scene, typ scene.Type, id string, x, y, w, h, angle float64) {
		t.Helper()
		e := scene.NewElement(typ)
		e.ID, e.X, e.Y, e.Width, e.Height, e.Angle = id, x, y, w, h, angle
		if typ.IsLinear() {
			e.Points = []scene.Point{{}, {X: w, Y: h}}
		}
		if _, err := sc.Add(e); err != nil {
			t.Fatal(err)
		}
	}
	kept := scene.New() // what Bounds should measure, alone on a canvas
	add(t, kept, scene.Rectangle, "tilted", 0, 0, 200, 40, 0.5)
	add(t, kept, scene.Ellipse, "e", 300, 100, 80, 60, 0)
	want, _ := kept.Bounds()

	sc := scene.New()
	add(t, sc, scene.Rectangle, "tilted", 0, 0, 200, 40, 0.5)
	add(t, sc, scene.Ellipse, "e", 300, 100, 80, 60, 0)
	add(t, sc, scene.Arrow, "arrow", -500, -500, 2000, 2000, 0)
	add(t, sc, scene.Line, "line", -400, 0, 100, 0, 0)
	add(t, sc, scene.Rectangle, "pending", 900, 900, 160, 80, 0)
	if _, err := sc.SetLabel("pending", "Not placed yet"); err != nil { // skipped with its box
		t.Fatal(err)
	}
	got, ok := Bounds(sc, map[string]bool{"pending": true})
	if !ok || got != want {
		t.Errorf("got %+v (ok %v), want %+v", got, ok, want)
	}
	if _, ok := Bounds(sc, map[string]bool{"tilted": true, "e": true, "pending": true}); ok {
		t.Error("ok with only lines and arrows left, want false")
	}
}
