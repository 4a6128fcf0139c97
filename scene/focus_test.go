package scene

import (
	"fmt"
	"math"
	"testing"
)

// TestFocusRoundTrip: placing an end with focus f (determineFocusPoint + border crossing) and
// measuring the focus of the resulting line (determineFocusDistance) gives f back, for every shape
// kind, rotated or not, from several neighbour points; the end lies on the drawn border.
func TestFocusRoundTrip(t *testing.T) {
	shapes := []Element{
		sharp(shape(Rectangle, "r", 100, 100, 200, 100)),
		shape(Rectangle, "r", 100, 100, 200, 100),
		shape(Diamond, "d", 100, 100, 200, 120),
		shape(Ellipse, "e", 100, 100, 220, 100),
		rotated(shape(Rectangle, "r", 100, 100, 200, 100), 0.5),
		rotated(shape(Ellipse, "e", 100, 100, 220, 100), 1.1),
	}
	adjs := []Point{{-300, 150}, {700, 40}, {200, -400}, {260, 600}}
	for _, e := range shapes {
		for _, adj := range adjs {
			for _, f := range []float64{-0.8, -0.3, 0, 0.25, 0.7} {
				name := fmt.Sprintf("%s angle %g from %v focus %g", e.Type, e.Angle, adj, f)
				end := boundEnd(&e, adj, f, 0)
				if d := DistanceToBorder(e, end); d > 0.05 {
					t.Errorf("%s: end %v is %g px off the border", name, end, d)
				}
				if got := focusOf(&e, adj, end); math.Abs(got-f) > 1e-6 {
					t.Errorf("%s: focus of the placed line is %g", name, got)
				}
				// The gap backs off along the line towards the neighbour point.
				g := boundEnd(&e, adj, f, 5)
				if dd := math.Hypot(g.X-end.X, g.Y-end.Y); math.Abs(dd-5) > 1e-6 {
					t.Errorf("%s: gap moved the end %g px", name, dd)
				}
			}
		}
	}
}

// TestFocusKeptWhenShapeMoves: an arrow drawn in Excalidraw with an off-centre aim (focus 0.5)
// keeps that aim when its target moves, and is written back in the v1 form with the same focus.
func TestFocusKeptWhenShapeMoves(t *testing.T) {
	doc := `{"type":"excalidraw","version":2,"elements":[
	 {"id":"a","type":"rectangle","x":0,"y":0,"width":200,"height":100,"boundElements":[{"id":"ar","type":"arrow"}]},
	 {"id":"b","type":"rectangle","x":0,"y":300,"width":200,"height":100,"boundElements":[{"id":"ar","type":"arrow"}]},
	 {"id":"ar","type":"arrow","x":150,"y":105,"width":0,"height":190,"points":[[0,0],[0,190]],
	  "startBinding":{"elementId":"a","focus":-0.5,"gap":5},"endBinding":{"elementId":"b","focus":0.5,"gap":5}}]}`
	s, err := Decode([]byte(doc))
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Update("b", func(e *Element) error { e.X += 40; return nil }); err != nil {
		t.Fatal(err)
	}
	ar, _ := s.Get("ar")
	if ar.StartBinding.Focus != -0.5 || ar.EndBinding.Focus != 0.5 {
		t.Errorf("focus %g/%g, want -0.5/0.5 kept", ar.StartBinding.Focus, ar.EndBinding.Focus)
	}
	pts := ar.AbsPoints()
	a, _ := s.Get("a")
	b, _ := s.Get("b")
	if got := focusOf(&b, pts[0], pts[1]); math.Abs(got-0.5) > 1e-6 {
		t.Errorf("end aim has focus %g, want 0.5", got)
	}
	if got := focusOf(&a, pts[1], pts[0]); math.Abs(got+0.5) > 1e-6 {
		t.Errorf("start aim has focus %g, want -0.5", got)
	}
	assertArrowsOnBorders(t, s)
	assertConsistent(t, s)
}

// TestElbowArrowEndsFollowFixedPoints: an elbow arrow keeps its route; its bound ends go to their
// fixed points on the moved targets, and its bindings stay in the v2 form.
func TestElbowArrowEndsFollowFixedPoints(t *testing.T) {
	doc := `{"type":"excalidraw","version":2,"elements":[
	 {"id":"a","type":"rectangle","x":0,"y":0,"width":100,"height":100,"boundElements":[{"id":"el","type":"arrow"}]},
	 {"id":"b","type":"rectangle","x":300,"y":200,"width":100,"height":100,"boundElements":[{"id":"el","type":"arrow"}]},
	 {"id":"el","type":"arrow","elbowed":true,"x":100,"y":50,"width":200,"height":200,
	  "points":[[0,0],[100,0],[100,200],[200,200]],
	  "startBinding":{"elementId":"a","fixedPoint":[1,0.5],"mode":"orbit"},
	  "endBinding":{"elementId":"b","fixedPoint":[0,0.5],"mode":"orbit"}}]}`
	s, err := Decode([]byte(doc))
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Update("b", func(e *Element) error { e.Y += 40; return nil }); err != nil {
		t.Fatal(err)
	}
	el, _ := s.Get("el")
	pts := el.AbsPoints()
	want := []Point{{100, 50}, {200, 50}, {200, 250}, {300, 290}}
	for i := range want {
		if !nearPt(pts[i], want[i], 1e-9) {
			t.Errorf("point %d: got %v, want %v", i, pts[i], want[i])
		}
	}
	if el.EndBinding.FixedPoint == nil || el.EndBinding.Mode != "orbit" {
		t.Errorf("elbow binding rewritten: %+v", el.EndBinding)
	}
	assertConsistent(t, s)
}
