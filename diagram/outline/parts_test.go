package outline

import (
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/excalibot/excalibot/scene"
)

// build adds elements to a new scene; labels bind a text to the element named before the colon.
func build(t *testing.T, els []scene.Element, labels map[string]string) *scene.Scene {
	t.Helper()
	sc := scene.New()
	for _, e := range els {
		if _, err := sc.Add(e); err != nil {
			t.Fatal(err)
		}
	}
	for id, text := range labels {
		if _, err := sc.SetLabel(id, text); err != nil {
			t.Fatalf("label %s: %v", id, err)
		}
	}
	return sc
}

func box(id string, x, y, w, h float64) scene.Element {
	e := scene.NewElement(scene.Rectangle)
	e.ID, e.X, e.Y, e.Width, e.Height = id, x, y, w, h
	return e
}

func text(id, s string, x, y, size float64) scene.Element {
	e := scene.NewElement(scene.Text)
	e.ID, e.Text, e.OriginalText, e.X, e.Y, e.FontSize = id, s, s, x, y, size
	e.Width, e.Height = float64(len(s))*size/2, size*1.25
	return e
}

func arrow(id string, from, to *scene.Element) scene.Element {
	e := scene.NewElement(scene.Arrow)
	e.ID, e.X, e.Y = id, from.X+from.Width, from.Y+from.Height/2
	e.Points = []scene.Point{{}, {X: to.X - e.X, Y: to.Y + to.Height/2 - e.Y}}
	e.StartBinding, e.EndBinding = &scene.Binding{ElementID: from.ID}, &scene.Binding{ElementID: to.ID}
	return e
}

func TestOf(t *testing.T) {
	a, b, c := box("a", 0, 100, 120, 60), box("b", 300, 100, 120, 60), box("c", 600, 100, 120, 60)
	group := box("g", -20, 80, 460, 120)
	loose := scene.NewElement(scene.Arrow)
	loose.ID, loose.X, loose.Y, loose.Points = "loose", 0, 400, []scene.Point{{}, {X: 50}}
	sc := build(t, []scene.Element{
		text("title", "Deploy pipeline", 0, 0, 36), group, a, b, c,
		arrow("ab", &a, &b), arrow("bc", &b, &c), loose,
		text("onbox", "Prod", 630, 120, 20), // free text over c: c's label
		text("note", "runs nightly", 0, 300, 16),
	}, map[string]string{"a": "Build", "b": "Test", "g": "CI", "bc": "green"})

	o := Of(sc)
	if o.Title != "Deploy pipeline" || o.Kind != "diagram" {
		t.Errorf("title %q kind %q, want \"Deploy pipeline\" diagram", o.Title, o.Kind)
	}
	var nodes []string
	for _, n := range o.Nodes {
		nodes = append(nodes, n.Label)
	}
	if got, want := strings.Join(nodes, ","), "Build,Test,Prod"; got != want {
		t.Errorf("nodes %s, want %s (the enclosing box is a group, the text over c its label)", got, want)
	}
	if len(o.Groups) != 1 || o.Groups[0].Name != "CI" || strings.Join(o.Groups[0].Members, ",") != "Build,Test" {
		t.Errorf("groups %+v, want CI holding Build and Test", o.Groups)
	}
	if len(o.Edges) != 2 || o.Edges[1] != (Edge{From: "Test", To: "Prod", Label: "green"}) {
		t.Errorf("edges %+v", o.Edges)
	}
	if o.Loose != 1 || len(o.Notes) != 1 || o.Notes[0] != "runs nightly" {
		t.Errorf("loose %d notes %q, want 1 and [runs nightly]", o.Loose, o.Notes)
	}
	want := "Diagram “Deploy pipeline” with 3 boxes, 2 arrows, 1 group. Build → Test, Test → Prod (green)."
	if got := o.Summary(300); got != want {
		t.Errorf("summary\n got  %s\n want %s", got, want)
	}
}

func TestSummaryLength(t *testing.T) {
	var els []scene.Element
	labels := map[string]string{}
	for i := range 40 {
		id := string(rune('a'+i%26)) + strings.Repeat("x", i/26)
		els = append(els, box(id, float64(i%8)*200, float64(i/8)*150, 150, 60))
		labels[id] = "Сервис номер " + id // Cyrillic: lengths are counted in runes
	}
	o := Of(build(t, els, labels))
	for _, max := range []int{40, 120, 300} {
		got := o.Summary(max)
		if n := utf8.RuneCountInString(got); n > max {
			t.Errorf("Summary(%d) has %d runes: %s", max, n, got)
		}
		if max >= 120 && !strings.Contains(got, "more.") {
			t.Errorf("Summary(%d) = %q, want the boxes left out counted", max, got)
		}
	}
}

func TestEmpty(t *testing.T) {
	o := Of(scene.New())
	if got, want := o.Summary(100), "Drawing."; got != want {
		t.Errorf("summary %q, want %q", got, want)
	}
	if got, want := o.Text(), "Drawing"; got != want {
		t.Errorf("text %q, want %q", got, want)
	}
}
