package measure

import (
	"math"
	"testing"

	"github.com/excalibot/excalibot/scene"
)

// build adds the elements to a new scene; labels maps an element's id to the label it gets.
func build(t *testing.T, els []scene.Element, labels map[string]string) *scene.Scene {
	t.Helper()
	sc := scene.New()
	for _, e := range els {
		base := scene.NewElement(e.Type)
		base.ID, base.X, base.Y, base.Width, base.Height = e.ID, e.X, e.Y, e.Width, e.Height
		if e.Type.IsLinear() {
			base.Points, base.Roundness = e.Points, e.Roundness
		}
		if e.Type == scene.Text {
			base.Text, base.OriginalText, base.FontSize = e.Text, e.Text, e.FontSize
		}
		if _, err := sc.Add(base); err != nil {
			t.Fatalf("add %s: %v", e.ID, err)
		}
	}
	for id, text := range labels {
		if _, err := sc.SetLabel(id, text); err != nil {
			t.Fatalf("label %s: %v", id, err)
		}
	}
	return sc
}

func rect(id string, x, y, w, h float64) scene.Element {
	return scene.Element{ID: id, Type: scene.Rectangle, X: x, Y: y, Width: w, Height: h}
}

func arrow(id string, pts ...scene.Point) scene.Element {
	rel := make([]scene.Point, len(pts))
	for i, p := range pts {
		rel[i] = scene.Point{X: p.X - pts[0].X, Y: p.Y - pts[0].Y}
	}
	return scene.Element{ID: id, Type: scene.Arrow, X: pts[0].X, Y: pts[0].Y, Points: rel}
}

func text(id, s string, x, y float64) scene.Element {
	return scene.Element{ID: id, Type: scene.Text, X: x, Y: y, Text: s, FontSize: 20}
}

func pt(x, y float64) scene.Point { return scene.Point{X: x, Y: y} }

func TestMeasure(t *testing.T) {
	tests := []struct {
		name   string
		els    []scene.Element
		labels map[string]string
		check  func(t *testing.T, r Report)
	}{
		{"overlapping nodes", []scene.Element{rect("a", 0, 0, 100, 60), rect("b", 50, 30, 100, 60)}, nil,
			func(t *testing.T, r Report) {
				if r.ShapeOverlaps != 1 || r.Nodes != 2 || r.Containers != 0 {
					t.Errorf("overlaps %d nodes %d containers %d, want 1, 2, 0", r.ShapeOverlaps, r.Nodes, r.Containers)
				}
			}},
		{"a node inside its subgraph is no overlap", []scene.Element{rect("group", 0, 0, 300, 200), rect("n", 50, 50, 100, 60)}, nil,
			func(t *testing.T, r Report) {
				if r.ShapeOverlaps != 0 || r.Nodes != 1 || r.Containers != 1 {
					t.Errorf("overlaps %d nodes %d containers %d, want 0, 1, 1", r.ShapeOverlaps, r.Nodes, r.Containers)
				}
			}},
		{"a node sticking out of its subgraph", []scene.Element{rect("group", 0, 0, 300, 200), rect("inner", 20, 20, 40, 40), rect("n", 250, 50, 100, 60)}, nil,
			func(t *testing.T, r Report) {
				if r.ShapeOverlaps != 1 {
					t.Errorf("overlaps %d, want 1", r.ShapeOverlaps)
				}
			}},
		// The label goes to the middle point, which sits next to the tail: the converted-Mermaid case.
		{"label at the tail", []scene.Element{arrow("e", pt(0, 0), pt(10, 0), pt(200, 0))}, map[string]string{"e": "yes"},
			func(t *testing.T, r Report) {
				if len(r.Labels) != 1 {
					t.Fatalf("labels %v, want one", r.Labels)
				}
				if l := r.Labels[0]; math.Abs(l.Along-0.05) > 0.001 || !l.AtEnd() || l.Middle() {
					t.Errorf("label %+v, want along 0.05, at an end", l)
				}
			}},
		{"label in the middle, on a node", []scene.Element{arrow("e", pt(0, 0), pt(200, 0)), rect("n", 80, -20, 40, 40)}, map[string]string{"e": "no"},
			func(t *testing.T, r Report) {
				if l := r.Labels[0]; l.Along != 0.5 || !l.Middle() || l.Off != 0 {
					t.Errorf("label %+v, want along 0.5, off 0", l)
				}
				if r.LabelsOnNodes != 1 {
					t.Errorf("labels on nodes %d, want 1", r.LabelsOnNodes)
				}
			}},
		{"markup", []scene.Element{text("a", "Web UI<br/>Next.js", 0, 0), text("b", "List<Book>", 0, 100), text("c", "a &lt; b", 0, 200), text("d", "<a href='x'>docs</a>", 0, 300)}, nil,
			func(t *testing.T, r Report) {
				if r.Markup != 3 {
					t.Errorf("markup %d (%q), want 3: generics are no markup", r.Markup, r.MarkupSamples)
				}
			}},
		{"an arrow through a node", []scene.Element{rect("b", 150, 0, 100, 100), arrow("e", pt(0, 50), pt(400, 50))}, nil,
			func(t *testing.T, r Report) {
				if r.ArrowsThroughNodes != 1 {
					t.Errorf("through %d, want 1", r.ArrowsThroughNodes)
				}
			}},
		{"an unbound arrow leaving the node it starts in", []scene.Element{rect("b", 0, 0, 100, 100), arrow("e", pt(50, 50), pt(400, 50))}, nil,
			func(t *testing.T, r Report) {
				if r.ArrowsThroughNodes != 0 {
					t.Errorf("through %d, want 0", r.ArrowsThroughNodes)
				}
			}},
		{"crossing arrows", []scene.Element{arrow("a", pt(0, 0), pt(100, 100)), arrow("b", pt(0, 100), pt(100, 0)), arrow("c", pt(100, 100), pt(200, 100))}, nil,
			func(t *testing.T, r Report) {
				if r.Crossings != 1 {
					t.Errorf("crossings %d, want 1: arrows meeting at an end do not cross", r.Crossings)
				}
			}},
		{"aspect and text size", []scene.Element{rect("a", 0, 0, 1560, 100), text("t", "hello", 10, 10)}, nil,
			func(t *testing.T, r Report) {
				if r.Width != 1560 || r.Height != 100 || r.Elongation() != 15.6 {
					t.Errorf("size %vx%v elongation %v, want 1560x100, 15.6", r.Width, r.Height, r.Elongation())
				}
				// 1560 + 2×20 padding shown 1600 px wide: scale 1, so 20 px text stays 20 px.
				if r.MinTextPx != 20 || r.MedianTextPx != 20 {
					t.Errorf("text %v / %v px, want 20", r.MinTextPx, r.MedianTextPx)
				}
			}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			tc.check(t, Measure(build(t, tc.els, tc.labels), Options{DisplayWidth: 1600, Padding: 20}))
		})
	}
}

func TestMoved(t *testing.T) {
	before := build(t, []scene.Element{rect("a", 0, 0, 100, 60), rect("b", 200, 0, 100, 60)}, nil)
	after := before.Clone()
	if err := after.MoveBy([]string{"b"}, 30, 0); err != nil {
		t.Fatal(err)
	}
	if got := Moved(before, after, 1); got != 1 {
		t.Errorf("Moved = %d, want 1", got)
	}
	if got := Moved(before, before.Clone(), 1); got != 0 {
		t.Errorf("Moved of an unchanged scene = %d, want 0", got)
	}
}

func TestProject(t *testing.T) {
	tests := []struct {
		pts         []scene.Point
		p           scene.Point
		along, dist float64
	}{
		{[]scene.Point{pt(0, 0), pt(100, 0), pt(100, 100)}, pt(100, 50), 0.75, 0},
		{[]scene.Point{pt(0, 0), pt(100, 0)}, pt(25, 10), 0.25, 10},
		{[]scene.Point{pt(5, 5), pt(5, 5)}, pt(8, 9), 0.5, 5},
	}
	for _, tc := range tests {
		along, dist := project(tc.pts, tc.p)
		if math.Abs(along-tc.along) > 1e-9 || math.Abs(dist-tc.dist) > 1e-9 {
			t.Errorf("project(%v, %v) = %v, %v; want %v, %v", tc.pts, tc.p, along, dist, tc.along, tc.dist)
		}
	}
}

// TestNumberBadges: a message's number badge, grouped with its arrow, sits on the lifeline's bar
// by design: it is no node and no overlap.
func TestNumberBadges(t *testing.T) {
	sc := scene.New()
	bar := scene.NewElement(scene.Rectangle)
	bar.ID, bar.X, bar.Y, bar.Width, bar.Height = "bar", 94, 80, 12, 200
	msg := scene.NewElement(scene.Arrow)
	msg.ID, msg.X, msg.Y, msg.Points, msg.GroupIDs = "m1", 100, 100, []scene.Point{{}, {X: 200}}, []string{"message-1"}
	badge := scene.NewElement(scene.Ellipse)
	badge.ID, badge.X, badge.Y, badge.Width, badge.Height, badge.GroupIDs = "m1-badge", 89, 89, 22, 22, []string{"message-1"}
	for _, e := range []scene.Element{bar, msg, badge} {
		if _, err := sc.Add(e); err != nil {
			t.Fatal(err)
		}
	}
	if r := Measure(sc, Options{}); r.Nodes != 1 || r.ShapeOverlaps != 0 {
		t.Errorf("nodes %d, shape overlaps %d; want 1 and 0 (the badge is part of its message)", r.Nodes, r.ShapeOverlaps)
	}
}
