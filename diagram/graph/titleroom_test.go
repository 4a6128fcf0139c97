package graph

import (
	"testing"

	"github.com/excalibot/excalibot/scene"
)

// TestTitlesClearOfArrows: a box's title an arrow is drawn across slides along the box's top to
// where none is, and stays inside the box; one no arrow crosses stays where it is, and so does a
// title with no clear place.
func TestTitlesClearOfArrows(t *testing.T) {
	for _, tc := range []struct {
		name   string
		arrowX func(title, box scene.Element) []float64 // where arrows run down across the box's top
		moved  bool
	}{
		{"crossed", func(title, _ scene.Element) []float64 { return []float64{title.X + title.Width/2} }, true},
		{"clear", func(_, box scene.Element) []float64 { return []float64{box.X + box.Width - 20} }, false},
		{"crossed everywhere", func(title, box scene.Element) []float64 {
			var xs []float64
			for x := box.X + 4; x < box.X+box.Width; x += title.Width / 2 {
				xs = append(xs, x)
			}
			return xs
		}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			sc := drawn(t, Graph{Direction: "LR",
				Groups: []Group{{ID: "g", Title: "Workers", Style: "box"}},
				Nodes: []Node{{ID: "a", Label: "Scheduler", Group: "g"}, {ID: "b", Label: "Worker one", Group: "g"},
					{ID: "c", Label: "Worker two", Group: "g"}, {ID: "d", Label: "Worker three", Group: "g"}},
				Edges: []Edge{{From: "a", To: "b"}, {From: "b", To: "c"}, {From: "c", To: "d"}}})
			box, _ := sc.Get("g")
			title, ok := sc.Get(TitleOf(sc, "g"))
			if !ok {
				t.Fatal("the box has no title")
			}
			for i, x := range tc.arrowX(title, box) {
				a := scene.NewElement(scene.Arrow)
				a.ID, a.X, a.Y = "down"+string(rune('a'+i)), x, box.Y-80
				a.Points = []scene.Point{{X: 0, Y: 0}, {X: 0, Y: 120}}
				if _, err := sc.Add(a); err != nil {
					t.Fatal(err)
				}
			}
			if err := clearTitles(sc, []string{"g"}); err != nil {
				t.Fatal(err)
			}
			got, _ := sc.Get(title.ID)
			if moved := got.X != title.X; moved != tc.moved {
				t.Fatalf("title at x %.0f, was %.0f: moved %v, want %v", got.X, title.X, moved, tc.moved)
			}
			if got.Y != title.Y || got.X < box.X || got.X+got.Width > box.X+box.Width {
				t.Errorf("title at %.0f,%.0f (%.0f wide), want on the top strip of the box %+v", got.X, got.Y, got.Width, box.Bounds())
			}
			if !tc.moved {
				return
			}
			sc.Each(func(e *scene.Element) bool {
				if e.Type == scene.Arrow {
					p := e.DrawnPath()
					for i := 0; i+1 < len(p); i++ {
						if scene.SegmentIntersects(got, p[i], p[i+1]) {
							t.Errorf("arrow %s still crosses the title at %.0f,%.0f", e.ID, got.X, got.Y)
							break
						}
					}
				}
				return true
			})
		})
	}
}
