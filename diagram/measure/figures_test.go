package measure

import (
	"math"
	"testing"

	"github.com/excalibot/excalibot/scene"
)

// curved makes an arrow rounded, drawn by Excalidraw as a curve through its points.
func curved(e scene.Element) scene.Element {
	e.Roundness = &scene.Roundness{Type: scene.RoundnessProportional}
	return e
}

func frame(id string, x, y, w, h float64) scene.Element {
	return scene.Element{ID: id, Type: scene.Frame, X: x, Y: y, Width: w, Height: h}
}

// grouped builds the scene, then puts members into frames (frames) and boxes (boxes: the box's
// id to its members, the box itself left out).
func grouped(t *testing.T, els []scene.Element, frames, boxes map[string][]string) *scene.Scene {
	t.Helper()
	sc := build(t, els, nil)
	for f, ids := range frames {
		if err := sc.SetFrame(f, ids...); err != nil {
			t.Fatalf("frame %s: %v", f, err)
		}
	}
	for b, ids := range boxes {
		if _, err := sc.Group(scene.BoxGroup(b), append([]string{b}, ids...)...); err != nil {
			t.Fatalf("box %s: %v", b, err)
		}
	}
	return sc
}

func TestFigures(t *testing.T) {
	// A curve through (0,0), (100,100), (200,0) ends its first piece flat at the apex, so it
	// bulges below the polyline: at x≈67 the curve is at y≈82, the polyline at y≈67.
	vee := []scene.Point{pt(0, 0), pt(100, 100), pt(200, 0)}
	tests := []struct {
		name string
		sc   func(t *testing.T) *scene.Scene
		get  func(r Report) float64
		want float64
		opt  Options
	}{
		{"a curve through a node its polyline misses",
			func(t *testing.T) *scene.Scene {
				return build(t, []scene.Element{curved(arrow("e", vee...)), rect("n", 55, 72, 24, 20)}, nil)
			}, func(r Report) float64 { return float64(r.ArrowsThroughNodes) }, 1, Options{}},
		{"the same arrow sharp is its polyline",
			func(t *testing.T) *scene.Scene {
				return build(t, []scene.Element{arrow("e", vee...), rect("n", 55, 72, 24, 20)}, nil)
			}, func(r Report) float64 { return float64(r.ArrowsThroughNodes) }, 0, Options{}},
		{"a curve crossing an arrow its polyline misses",
			func(t *testing.T) *scene.Scene {
				return build(t, []scene.Element{curved(arrow("e", vee...)), arrow("f", pt(52, 92), pt(72, 77))}, nil)
			}, func(r Report) float64 { return float64(r.Crossings) }, 1, Options{}},
		{"edge length over the diagonal, sharp",
			func(t *testing.T) *scene.Scene {
				return build(t, []scene.Element{arrow("e", pt(0, 0), pt(300, 0), pt(300, 400))}, nil)
			}, func(r Report) float64 { return r.EdgeLengthRatio }, 1.4, Options{}},
		{"arrows sharing an end node are not compared",
			func(t *testing.T) *scene.Scene {
				return build(t, []scene.Element{rect("a", 0, 0, 100, 100), arrow("e", pt(90, 10), pt(300, 300)), arrow("f", pt(90, 90), pt(300, 0))}, nil)
			}, func(r Report) float64 { return float64(r.Crossings) }, 0, Options{}},
		{"the same arrows from no node cross",
			func(t *testing.T) *scene.Scene {
				return build(t, []scene.Element{arrow("e", pt(90, 10), pt(300, 300)), arrow("f", pt(90, 90), pt(300, 0))}, nil)
			}, func(r Report) float64 { return float64(r.Crossings) }, 1, Options{}},
		{"two boxes overlapping",
			func(t *testing.T) *scene.Scene {
				return grouped(t, []scene.Element{rect("g", 0, 0, 200, 200), rect("a", 20, 20, 40, 40), rect("h", 150, 150, 200, 200), rect("b", 250, 250, 40, 40)},
					nil, map[string][]string{"g": {"a"}, "h": {"b"}})
			}, func(r Report) float64 { return float64(r.FrameOverlaps) }, 1, Options{}},
		{"a box inside its parent box is no overlap",
			func(t *testing.T) *scene.Scene {
				return grouped(t, []scene.Element{rect("g", 0, 0, 300, 300), rect("h", 50, 50, 200, 200), rect("b", 100, 100, 40, 40)},
					nil, map[string][]string{"h": {"b"}, "g": {"h", "b"}})
			}, func(r Report) float64 { return float64(r.FrameOverlaps) }, 0, Options{}},
		{"a box sticking out of its parent frame",
			func(t *testing.T) *scene.Scene {
				return grouped(t, []scene.Element{frame("f", 0, 0, 300, 300), rect("h", 250, 50, 200, 200), rect("b", 300, 100, 40, 40)},
					map[string][]string{"f": {"h", "b"}}, map[string][]string{"h": {"b"}})
			}, func(r Report) float64 { return float64(r.FrameOverlaps) }, 1, Options{}},
		{"a node inside a frame it is not in",
			func(t *testing.T) *scene.Scene {
				return grouped(t, []scene.Element{frame("f", 0, 0, 300, 300), rect("a", 20, 20, 40, 40), rect("b", 100, 100, 40, 40), rect("c", 400, 0, 40, 40)},
					map[string][]string{"f": {"a"}}, nil)
			}, func(r Report) float64 { return float64(r.Intruders) }, 1, Options{}},
		{"a node in a box inside a frame belongs to the frame",
			func(t *testing.T) *scene.Scene {
				return grouped(t, []scene.Element{frame("f", 0, 0, 300, 300), rect("h", 50, 50, 200, 200), rect("b", 100, 100, 40, 40)},
					map[string][]string{"f": {"h"}}, map[string][]string{"h": {"b"}})
			}, func(r Report) float64 { return float64(r.Intruders) }, 0, Options{}},
		// Box g holds a and c, b is outside: a→b must cross g's border once; a→c leaves g and
		// comes back (2 needless); x→y outside runs through g (2 needless).
		{"border crossings",
			func(t *testing.T) *scene.Scene {
				return grouped(t, groupScene(), nil, map[string][]string{"g": {"a", "c"}})
			}, func(r Report) float64 { return float64(r.BorderCrossings) }, 5, Options{}},
		{"needless border crossings",
			func(t *testing.T) *scene.Scene {
				return grouped(t, groupScene(), nil, map[string][]string{"g": {"a", "c"}})
			}, func(r Report) float64 { return float64(r.NeedlessBorderCrossings) }, 4, Options{}},
		// Box g's title at its top-left corner; an arrow runs down across it, or beside it.
		{"an arrow across a box's title",
			func(t *testing.T) *scene.Scene {
				return grouped(t, []scene.Element{rect("g", 0, 0, 300, 200), text("ttl", "Title", 12, 6), rect("a", 100, 100, 60, 40), arrow("e", pt(30, -100), pt(30, 150))},
					nil, map[string][]string{"g": {"ttl", "a"}})
			}, func(r Report) float64 { return float64(r.OverTitles) }, 1, Options{}},
		{"an arrow beside a box's title",
			func(t *testing.T) *scene.Scene {
				return grouped(t, []scene.Element{rect("g", 0, 0, 300, 200), text("ttl", "Title", 12, 6), rect("a", 100, 100, 60, 40), arrow("e", pt(250, -100), pt(250, 150))},
					nil, map[string][]string{"g": {"ttl", "a"}})
			}, func(r Report) float64 { return float64(r.OverTitles) }, 0, Options{}},
		// An arrow's label across box g's right border, and one inside it.
		{"a label on a group's border",
			func(t *testing.T) *scene.Scene {
				sc := grouped(t, []scene.Element{rect("g", 0, 0, 300, 200), rect("a", 40, 80, 60, 40), rect("b", 500, 80, 60, 40),
					arrow("e", pt(100, 100), pt(500, 100)), arrow("f", pt(40, 100), pt(40, 100.5))},
					nil, map[string][]string{"g": {"a"}})
				for _, l := range [][2]string{{"e", "across the border"}, {"f", "in"}} {
					if _, err := sc.SetLabel(l[0], l[1]); err != nil {
						t.Fatal(err)
					}
				}
				return sc
			}, func(r Report) float64 { return float64(r.LabelsOnBorders) }, 1, Options{}},
		{"node area leaves groups out",
			func(t *testing.T) *scene.Scene {
				return grouped(t, []scene.Element{rect("g", 0, 0, 400, 100), rect("a", 0, 0, 100, 100), rect("b", 300, 0, 100, 100)},
					nil, map[string][]string{"g": {"a", "b"}})
			}, func(r Report) float64 { return r.NodeArea }, 0.5, Options{}},
		// 1560×100 with 20 px padding is 1600×140: it fills 1600 px wide (scale 1), and on a
		// phone 390/1600 of that.
		{"label px at 1600×1200",
			func(t *testing.T) *scene.Scene {
				return build(t, []scene.Element{rect("a", 0, 0, 1560, 100)}, map[string]string{"a": "hello"})
			}, func(r Report) float64 { return r.LabelPx1600 }, 20, Options{Padding: 20}},
		{"label px on a phone",
			func(t *testing.T) *scene.Scene {
				return build(t, []scene.Element{rect("a", 0, 0, 1560, 100)}, map[string]string{"a": "hello"})
			}, func(r Report) float64 { return r.LabelPxPhone }, 4.9, Options{Padding: 20}},
		// A tall picture is bounded by the height: 100×1160 + padding is 140×1200.
		{"label px of a tall picture",
			func(t *testing.T) *scene.Scene {
				return build(t, []scene.Element{rect("a", 0, 0, 100, 1160)}, map[string]string{"a": "hello"})
			}, func(r Report) float64 { return r.LabelPx1600 }, 20, Options{Padding: 20}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := Measure(tc.sc(t), tc.opt)
			if got := tc.get(r); math.Abs(got-tc.want) > 1e-9 {
				t.Errorf("got %v, want %v (report %+v)", got, tc.want, r)
			}
		})
	}
}

func groupScene() []scene.Element {
	return []scene.Element{
		rect("g", 0, 0, 300, 200), rect("a", 20, 50, 60, 60), rect("c", 200, 50, 60, 60), rect("b", 400, 50, 60, 60),
		rect("x", -200, 300, 40, 40), rect("y", 500, 300, 40, 40),
		arrow("ab", pt(70, 80), pt(410, 80)),
		arrow("ac", pt(50, 100), pt(50, 400), pt(230, 400), pt(230, 100)),
		arrow("xy", pt(-170, 320), pt(150, 150), pt(510, 320)),
	}
}
