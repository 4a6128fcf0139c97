package tools

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"strings"
	"testing"

	"github.com/excalibot/excalibot/diagram/mermaid"
	"github.com/excalibot/excalibot/scene"
)

// fakeMermaid answers with a diagram the real converter produced (diagram/mermaid/testdata/mermaid-*.converted.json,
// written by render's converter for the same text), or with an error.
type fakeMermaid struct {
	diagrams map[string]string // first word of the source → fixture file
	err      error
	calls    []string
}

func (f *fakeMermaid) Mermaid(_ context.Context, src string) (mermaid.Diagram, error) {
	f.calls = append(f.calls, src)
	if f.err != nil {
		return mermaid.Diagram{}, f.err
	}
	word, _, _ := strings.Cut(strings.TrimSpace(src), " ")
	file, ok := f.diagrams[word]
	if !ok {
		return mermaid.Diagram{}, fmt.Errorf("fake: no fixture for %q", word)
	}
	b, err := os.ReadFile(file)
	if err != nil {
		return mermaid.Diagram{}, err
	}
	var fx struct {
		Type     string                     `json:"type"`
		Image    bool                       `json:"image"`
		Elements []json.RawMessage          `json:"elements"`
		Files    map[string]json.RawMessage `json:"files"`
	}
	if err := json.Unmarshal(b, &fx); err != nil {
		return mermaid.Diagram{}, err
	}
	return mermaid.Diagram{Elements: fx.Elements, Files: fx.Files, Type: fx.Type, Image: fx.Image}, nil
}

func newFake() *fakeMermaid {
	return &fakeMermaid{diagrams: map[string]string{
		"flowchart": "../diagram/mermaid/testdata/mermaid-flow.converted.json",
		"pie":       "../diagram/mermaid/testdata/mermaid-pie.converted.json",
	}}
}

func mermaidArgs(src string, replace bool) string {
	b, _ := json.Marshal(map[string]any{"mermaid": src, "replace": replace})
	return string(b)
}

// checkBindings checks both sides of every label and arrow binding of sc.
func checkBindings(t *testing.T, sc *scene.Scene) {
	t.Helper()
	lists := func(c scene.Element, id string) bool {
		for _, b := range c.BoundElements {
			if b.ID == id {
				return true
			}
		}
		return false
	}
	for _, e := range sc.Elements() {
		if e.ContainerID != "" {
			if c, ok := sc.Get(e.ContainerID); !ok || !lists(c, e.ID) {
				t.Errorf("label %q: container %q missing or does not list it", e.Text, e.ContainerID)
			}
		}
		for _, b := range []*scene.Binding{e.StartBinding, e.EndBinding} {
			if b == nil {
				continue
			}
			if c, ok := sc.Get(b.ElementID); !ok || !lists(c, e.ID) {
				t.Errorf("arrow %q: shape %q missing or does not list it", e.ID, b.ElementID)
			}
		}
	}
}

// TestNewDiagramsStartTogether: on a canvas that holds a drawing, a Mermaid import, a graph and a
// sequence start at the same x, right of the drawing: every builder puts a new diagram in one place.
func TestNewDiagramsStartTogether(t *testing.T) {
	calls := []struct{ tool, args string }{
		{"create_from_mermaid", mermaidArgs("flowchart TD\n  A[Start] --> B{Is it?}", false)},
		{"create_graph", `{"nodes":[{"id":"a","label":"A"},{"id":"b","label":"B"}],"edges":[{"from":"a","to":"b"}]}`},
		{"create_sequence", `{"messages":[{"from":"Browser","to":"API","label":"GET /"}]}`},
	}
	var firstX float64
	for i, c := range calls {
		s := New(newTestScene(), Limits{})
		s.SetMermaid(newFake())
		mustCall(t, s, "batch_create_elements", orgChart)
		old := map[string]bool{}
		for _, id := range s.Scene().IDs() {
			old[id] = true
		}
		before, _ := s.Scene().Bounds()
		mustCall(t, s, c.tool, c.args)
		left := math.Inf(1)
		for _, e := range s.Scene().Elements() {
			if !old[e.ID] {
				left = math.Min(left, scene.BoundingBox(e).X)
			}
		}
		if left <= before.X+before.Width {
			t.Errorf("%s starts at x %v, on the drawing (right edge %v)", c.tool, left, before.X+before.Width)
		}
		if i == 0 {
			firstX = left
		} else if math.Abs(left-firstX) > 0.01 { // the layout's coordinates carry a little float noise
			t.Errorf("%s starts at x %v, %s at %v: want one place for a new diagram", c.tool, left, calls[0].tool, firstX)
		}
	}
}

func TestCreateFromMermaid(t *testing.T) {
	fake := newFake()
	s := New(newTestScene(), Limits{})
	s.SetMermaid(fake)
	mustCall(t, s, "batch_create_elements", orgChart)
	before, _ := s.Scene().Bounds()

	r := mustCall(t, s, "create_from_mermaid", mermaidArgs("flowchart TD\n  A[Start] --> B{Is it?}", false))
	if !r.Changed {
		t.Error("Changed = false, want true")
	}
	for _, want := range []string{"flowchart diagram", "6 shapes", "5 arrows", `A "Start"`, `B "Is it?"`} {
		if !strings.Contains(r.Text, want) {
			t.Errorf("result %q does not contain %q", r.Text, want)
		}
	}
	sc := s.Scene()
	for _, id := range []string{"ceo", "cto", "a1", "A", "B", "A_B", "one"} {
		get(t, sc, id)
	}
	checkBindings(t, sc)
	a := get(t, sc, "A")
	if a.X <= before.X+before.Width || a.Y < before.Y {
		t.Errorf("node A at %.0f,%.0f overlaps the old drawing (right edge %.0f)", a.X, a.Y, before.X+before.Width)
	}
	ab := get(t, sc, "A_B")
	if ab.StartBinding == nil || ab.StartBinding.ElementID != "A" || ab.EndBinding == nil || ab.EndBinding.ElementID != "B" {
		t.Errorf("arrow A_B bindings %+v %+v, want A → B", ab.StartBinding, ab.EndBinding)
	}
	if got := sc.LabelText("B"); got != "Is it?" {
		t.Errorf("label of B = %q, want %q", got, "Is it?")
	}

	// The converted shapes are ordinary scene elements: the other tools edit them.
	mustCall(t, s, "update_element", `{"id":"B","backgroundColor":"yellow"}`)
	mustCall(t, s, "delete_elements", `{"ids":["E"]}`)
	if _, ok := s.Scene().Get("B_E"); ok {
		t.Error("arrow B_E outlived its end E")
	}

	// The same diagram again: its ids are taken, so they get a suffix and references follow.
	r = mustCall(t, s, "create_from_mermaid", mermaidArgs("flowchart TD\n  A --> B", false))
	if !strings.Contains(r.Text, "ids were already used") {
		t.Errorf("result %q does not mention renamed ids", r.Text)
	}
	ab2 := get(t, s.Scene(), "A_B_2")
	if ab2.StartBinding == nil || ab2.StartBinding.ElementID != "A_2" {
		t.Errorf("A_B_2 starts at %+v, want A_2", ab2.StartBinding)
	}
	checkBindings(t, s.Scene())
}

func TestCreateFromMermaidReplace(t *testing.T) {
	s := New(newTestScene(), Limits{})
	s.SetMermaid(newFake())
	mustCall(t, s, "batch_create_elements", orgChart)
	r := mustCall(t, s, "create_from_mermaid", mermaidArgs("flowchart TD\n  A --> B", true))
	if _, ok := s.Scene().Get("ceo"); ok {
		t.Error("replace kept the old drawing")
	}
	if !strings.Contains(r.Text, beforeMermaid) {
		t.Errorf("result %q does not say how to get the old drawing back", r.Text)
	}
	mustCall(t, s, "restore_snapshot", `{"name":"before-mermaid"}`)
	get(t, s.Scene(), "ceo")
}

func TestCreateFromMermaidImage(t *testing.T) {
	s := New(newTestScene(), Limits{})
	s.SetMermaid(newFake())
	r := mustCall(t, s, "create_from_mermaid", mermaidArgs("pie title Pets", false))
	if !strings.Contains(r.Text, "one picture") || !strings.Contains(r.Text, "cannot be edited shape by shape") {
		t.Errorf("result %q does not say the diagram is a picture", r.Text)
	}
	es := s.Scene().Elements()
	if len(es) != 1 || es[0].Type != "image" {
		t.Fatalf("scene has %d elements, want one image", len(es))
	}
	var doc struct {
		Elements []struct {
			FileID string `json:"fileId"`
		} `json:"elements"`
		Files map[string]struct {
			MimeType string `json:"mimeType"`
		} `json:"files"`
	}
	if err := json.Unmarshal(encode(t, s.Scene()), &doc); err != nil {
		t.Fatal(err)
	}
	id := doc.Elements[0].FileID
	if f, ok := doc.Files[id]; id == "" || !ok || f.MimeType != "image/svg+xml" {
		t.Errorf("image file %q: %+v, want the SVG in the scene's files", id, doc.Files)
	}
}

func TestCreateFromMermaidRefusals(t *testing.T) {
	syntax := &mermaid.Error{Line: 2, LineText: "  A[Start --> B", Message: "found the end of the diagram where Mermaid expected ']'", Hint: "a bracket is not closed on this line"}
	for _, tc := range []struct {
		name string
		conv mermaid.Converter
		args string
		want []string
	}{
		{"syntax error", &fakeMermaid{err: fmt.Errorf("render: %w", syntax)}, mermaidArgs("flowchart TD\n  A[Start --> B", false),
			[]string{"line 2: A[Start --> B", "expected ']'", "Hint: a bracket is not closed", "call create_from_mermaid again"}},
		{"conversion failed", &fakeMermaid{err: errors.New("render: chromium is restarting")}, mermaidArgs("flowchart TD", false),
			[]string{"could not be converted", "chromium is restarting"}},
		{"no converter", nil, mermaidArgs("flowchart TD\n A --> B", false), []string{"not available", "create_graph"}},
		{"empty", newFake(), `{"mermaid":"  "}`, []string{"mermaid: missing"}},
		{"only an unknown field", newFake(), `{"diagram":"flowchart TD"}`, []string{"diagram: unknown field; known fields: mermaid, replace"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := New(newTestScene(), Limits{})
			if tc.conv != nil {
				s.SetMermaid(tc.conv)
			}
			mustCall(t, s, "batch_create_elements", orgChart)
			before := encode(t, s.Scene())
			r := s.Call(context.Background(), "create_from_mermaid", json.RawMessage(tc.args))
			if !r.IsError || r.Changed {
				t.Fatalf("IsError %v Changed %v, want a refusal: %s", r.IsError, r.Changed, r.Text)
			}
			for _, w := range tc.want {
				if !strings.Contains(r.Text, w) {
					t.Errorf("refusal %q does not contain %q", r.Text, w)
				}
			}
			if after := encode(t, s.Scene()); string(after) != string(before) {
				t.Error("a refused call changed the scene")
			}
		})
	}
}

func TestCreateFromMermaidElementLimit(t *testing.T) {
	s := New(newTestScene(), Limits{MaxElements: 10})
	s.SetMermaid(newFake())
	r := s.Call(context.Background(), "create_from_mermaid", json.RawMessage(mermaidArgs("flowchart TD", false)))
	if !r.IsError || !strings.Contains(r.Text, "over the limit of 10") {
		t.Fatalf("got %q, want a refusal over the limit", r.Text)
	}
	if s.Scene().Len() != 0 {
		t.Error("the refused diagram reached the scene")
	}
}
