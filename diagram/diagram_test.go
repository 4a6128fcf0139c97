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
