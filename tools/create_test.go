package tools

import (
	"fmt"
	"strings"
	"testing"

	"github.com/excalibot/excalibot/scene"
)

// onBorder asserts that both ends of arrow id lie on their targets' borders (within the gap).
func onBorder(t *testing.T, sc *scene.Scene, id string) {
	t.Helper()
	a := get(t, sc, id)
	pts := a.AbsPoints()
	for _, end := range []struct {
		b *scene.Binding
		p scene.Point
	}{{a.StartBinding, pts[0]}, {a.EndBinding, pts[len(pts)-1]}} {
		if end.b == nil {
			t.Errorf("arrow %s: an end is not bound", id)
			continue
		}
		target := get(t, sc, end.b.ElementID)
		if d := scene.DistanceToBorder(target, end.p); d > end.b.Gap+1 {
			t.Errorf("arrow %s ends %.1f px from %s's border, want ≤ gap %.0f", id, d, target.ID, end.b.Gap)
		}
	}
}

func labelText(t *testing.T, sc *scene.Scene, id string) string {
	t.Helper()
	e := get(t, sc, id)
	if e.Label() == "" {
		return ""
	}
	return get(t, sc, e.Label()).OriginalText
}

func TestBatchCreate(t *testing.T) {
	runCases(t, []toolCase{
		{name: "org chart", tool: "batch_create_elements", args: orgChart,
			want: []string{"created 5: ceo, cto, cfo, a1, a2", "has 9 elements"},
			check: func(t *testing.T, sc *scene.Scene) {
				wantLen(9)(t, sc)
				if got := labelText(t, sc, "ceo"); got != "CEO" {
					t.Errorf("ceo label = %q, want CEO", got)
				}
				if got := get(t, sc, "ceo").BackgroundColor; got != "#a5d8ff" {
					t.Errorf("ceo background = %s, want blue fill #a5d8ff", got)
				}
				if got := labelText(t, sc, "a2"); got != "reports" {
					t.Errorf("a2 label = %q, want reports", got)
				}
				onBorder(t, sc, "a1")
				onBorder(t, sc, "a2")
			}},
		{name: "arrow before its shapes in the same batch", tool: "batch_create_elements",
			args: `{"elements":[{"id":"a1","type":"arrow","startElementId":"x","endElementId":"y"},
				{"id":"x","type":"ellipse","x":0,"y":0,"text":"Start"},{"id":"y","type":"diamond","x":0,"y":200,"text":"OK?"}]}`,
			check: func(t *testing.T, sc *scene.Scene) { wantLen(5)(t, sc); onBorder(t, sc, "a1") }},
		{name: "arrow to a shape created earlier", setup: []step{{"batch_create_elements", orgChart}}, tool: "batch_create_elements",
			args:  `{"elements":[{"id":"coo","type":"rectangle","x":800,"y":200,"text":"COO"},{"id":"a3","type":"arrow","startElementId":"ceo","endElementId":"coo"}]}`,
			check: func(t *testing.T, sc *scene.Scene) { wantLen(12)(t, sc); onBorder(t, sc, "a3") }},
		{name: "elements as a JSON string", tool: "batch_create_elements",
			args:  `{"elements":"[{\"id\":\"r1\",\"type\":\"rect\",\"x\":0,\"y\":0}]"}`,
			check: func(t *testing.T, sc *scene.Scene) { wantLen(1)(t, sc); _ = get(t, sc, "r1") }},
		{name: "numbers as strings", tool: "batch_create_elements",
			args: `{"elements":[{"id":"r1","type":"rectangle","x":"10","y":"20","width":"200"}]}`,
			check: func(t *testing.T, sc *scene.Scene) {
				if e := get(t, sc, "r1"); e.X != 10 || e.Y != 20 || e.Width != 200 {
					t.Errorf("r1 at %v,%v width %v; want 10,20 width 200", e.X, e.Y, e.Width)
				}
			}},
		{name: "free arrow with points", tool: "batch_create_elements",
			args: `{"elements":[{"id":"l1","type":"line","x":0,"y":0,"points":[[0,0],[100,0],[100,50]],"strokeStyle":"dashed"}]}`,
			check: func(t *testing.T, sc *scene.Scene) {
				if e := get(t, sc, "l1"); len(e.Points) != 3 || e.StrokeStyle != "dashed" {
					t.Errorf("l1 points %v style %s", e.Points, e.StrokeStyle)
				}
			}},
		{name: "frame with children", tool: "batch_create_elements",
			args: `{"elements":[{"id":"r1","type":"rectangle","x":20,"y":40,"frameId":"f1"},{"id":"f1","type":"frame","x":0,"y":0,"width":400,"height":300,"text":"Backend"}]}`,
			check: func(t *testing.T, sc *scene.Scene) {
				if e := get(t, sc, "r1"); e.FrameID != "f1" {
					t.Errorf("r1 frameId = %q, want f1", e.FrameID)
				}
				if f := get(t, sc, "f1"); f.Name != "Backend" {
					t.Errorf("frame name = %q", f.Name)
				}
			}},
		{name: "text element with font", tool: "batch_create_elements",
			args: `{"elements":[{"id":"t1","type":"text","x":0,"y":-80,"text":"Title","fontSize":36,"fontFamily":"nunito"}]}`,
			check: func(t *testing.T, sc *scene.Scene) {
				if e := get(t, sc, "t1"); e.FontSize != 36 || e.FontFamily != 6 || e.Text != "Title" {
					t.Errorf("t1 = size %v family %v text %q", e.FontSize, e.FontFamily, e.Text)
				}
			}},
		{name: "label font", tool: "batch_create_elements",
			args: `{"elements":[{"id":"r1","type":"rectangle","x":0,"y":0,"text":"Big","fontSize":36}]}`,
			check: func(t *testing.T, sc *scene.Scene) {
				r1 := get(t, sc, "r1")
				if l := get(t, sc, r1.Label()); l.FontSize != 36 {
					t.Errorf("label font size %v, want 36", l.FontSize)
				}
			}},
		{name: "locked at creation", tool: "batch_create_elements",
			args: `{"elements":[{"id":"r1","type":"rectangle","x":0,"y":0,"locked":true}]}`,
			check: func(t *testing.T, sc *scene.Scene) {
				if !get(t, sc, "r1").Locked {
					t.Error("r1 not locked")
				}
			}},

		// Refusals: nothing changes, and the text says which field, what, and what would be right.
		{name: "missing elements", tool: "batch_create_elements", args: `{}`, wantErr: true, want: []string{"elements: missing"}},
		{name: "items not objects", tool: "batch_create_elements", args: `{"elements":[null,3]}`, wantErr: true,
			want: []string{"elements[0]: want a JSON object {…}, got null", "elements[1]: want a JSON object {…}, got a number 3"}},
		{name: "empty list", tool: "batch_create_elements", args: `{"elements":[]}`, wantErr: true, want: []string{"empty"}},
		{name: "duplicate id in batch", tool: "batch_create_elements",
			args:    `{"elements":[{"id":"r1","type":"rectangle","x":0,"y":0},{"id":"r1","type":"ellipse","x":0,"y":200}]}`,
			wantErr: true, want: []string{`elements[1].id: "r1" is already used by elements[0]`}},
		{name: "id already on canvas", setup: []step{{"batch_create_elements", orgChart}}, tool: "batch_create_elements",
			args:    `{"elements":[{"id":"ceo","type":"rectangle","x":0,"y":0}]}`,
			wantErr: true, want: []string{`"ceo" is already on the canvas`, "update_element"}},
		{name: "unknown end id lists closest", setup: []step{{"batch_create_elements", orgChart}}, tool: "batch_create_elements",
			args:    `{"elements":[{"id":"a9","type":"arrow","startElementId":"ceo","endElementId":"ctoo"}]}`,
			wantErr: true, want: []string{`elements[0].endElementId: no element with id "ctoo"`, `closest ids: "cto"`}},
		{name: "late failure undoes the whole batch", setup: withOrg, tool: "batch_create_elements",
			args: `{"elements":[{"id":"n1","type":"rectangle","x":0,"y":600,"text":"new"},{"id":"n2","type":"ellipse","x":300,"y":600},
				{"id":"n3","type":"arrow","startElementId":"n1","endElementId":"nope"}]}`,
			wantErr: true, want: []string{`elements[2].endElementId: no element with id "nope"`},
			check: func(t *testing.T, sc *scene.Scene) {
				if sc.Has("n1") || sc.Has("n2") {
					t.Error("shapes of a refused batch were kept")
				}
			}},
		{name: "bad colour lists names", tool: "batch_create_elements",
			args:    `{"elements":[{"id":"r1","type":"rectangle","x":0,"y":0,"backgroundColor":"cerulean"}]}`,
			wantErr: true, want: []string{"elements[0].backgroundColor", `unknown colour "cerulean"`, "blue-light"}},
		{name: "every problem at once", tool: "batch_create_elements",
			args:    `{"elements":[{"id":"r1","type":"rectangel","x":0,"y":0},{"id":"r2","type":"rectangle","y":0},{"id":"r3","type":"rectangle","x":0,"y":0,"width":-5}]}`,
			wantErr: true, want: []string{`elements[0].type: "rectangel" is not allowed`, `did you mean "rectangle"`, "elements[1].x: missing", "elements[2].width: -5 is not a positive size"}},
		{name: "label too long", tool: "batch_create_elements",
			args:    fmt.Sprintf(`{"elements":[{"id":"r1","type":"rectangle","x":0,"y":0,"text":%q}]}`, strings.Repeat("x", 501)),
			wantErr: true, want: []string{"text is 501 characters long; the limit is 500"}},
		{name: "coordinate out of range", tool: "batch_create_elements",
			args:    `{"elements":[{"id":"r1","type":"rectangle","x":100001,"y":0}]}`,
			wantErr: true, want: []string{"elements[0].x: 100001 is outside the canvas"}},
		{name: "NaN refused", tool: "batch_create_elements",
			args:    `{"elements":[{"id":"r1","type":"rectangle","x":"NaN","y":0}]}`,
			wantErr: true, want: []string{"elements[0].x: want a number"}},
		{name: "huge number refused", tool: "batch_create_elements",
			args:    `{"elements":[{"id":"r1","type":"rectangle","x":1e999,"y":0}]}`,
			wantErr: true, want: []string{"elements[0].x: want a number"}},
		{name: "line cannot attach", tool: "batch_create_elements", setup: []step{{"batch_create_elements", orgChart}},
			args:    `{"elements":[{"id":"l1","type":"line","startElementId":"ceo","endElementId":"cto"}]}`,
			wantErr: true, want: []string{"lines do not attach", `use type "arrow"`}},
		{name: "arrow to itself", setup: []step{{"batch_create_elements", orgChart}}, tool: "batch_create_elements",
			args:    `{"elements":[{"id":"a9","type":"arrow","startElementId":"ceo","endElementId":"ceo"}]}`,
			wantErr: true, want: []string{"start and end are both"}},
		{name: "arrow to an arrow", setup: []step{{"batch_create_elements", orgChart}}, tool: "batch_create_elements",
			args:    `{"elements":[{"id":"a9","type":"arrow","startElementId":"ceo","endElementId":"a1"}]}`,
			wantErr: true, want: []string{`"a1" is an arrow; arrows attach to rectangles`}},
		{name: "arrow to a label", setup: []step{{"batch_create_elements", orgChart}}, tool: "batch_create_elements",
			args:    `{"elements":[{"id":"a9","type":"arrow","startElementId":"ceo","endElementId":"cto-label"}]}`,
			wantErr: true, want: []string{`"cto-label" is the label of "cto"; attach the arrow to "cto"`}},
		{name: "free arrow without points", tool: "batch_create_elements",
			args:    `{"elements":[{"id":"a1","type":"arrow","x":0,"y":0}]}`,
			wantErr: true, want: []string{"needs startElementId and endElementId", "points"}},
		{name: "half-bound arrow without points", setup: []step{{"batch_create_elements", orgChart}}, tool: "batch_create_elements",
			args:    `{"elements":[{"id":"a9","type":"arrow","startElementId":"ceo"}]}`,
			wantErr: true, want: []string{"free end needs x, y and points"}},
		{name: "arrow fields on a shape", tool: "batch_create_elements",
			args:    `{"elements":[{"id":"r1","type":"rectangle","x":0,"y":0,"endElementId":"r2"}]}`,
			wantErr: true, want: []string{"only arrows and lines have endElementId"}},
		{name: "unknown frame", tool: "batch_create_elements",
			args:    `{"elements":[{"id":"r1","type":"rectangle","x":0,"y":0,"frameId":"f9"}]}`,
			wantErr: true, want: []string{`frameId: no element with id "f9"`}},
		{name: "frame without size", tool: "batch_create_elements",
			args:    `{"elements":[{"id":"f1","type":"frame","x":0,"y":0}]}`,
			wantErr: true, want: []string{"a frame needs width and height"}},
		{name: "unknown field ignored with a hint", tool: "batch_create_elements",
			args:  `{"elements":[{"id":"r1","type":"rectangle","x":0,"y":0,"label":"API"}]}`,
			want:  []string{"created 1: r1", `Ignored unknown field elements[0].label (did you mean "text"?).`},
			check: wantLen(1)},
		{name: "unknown field listed in a refusal", tool: "batch_create_elements",
			args:    `{"elements":[{"id":"r1","type":"rectangle","x":0,"label":"API"}]}`,
			wantErr: true, want: []string{"elements[0].y: missing", `elements[0].label: unknown field (did you mean "text"?)`}},
		{name: "bad id characters", tool: "batch_create_elements",
			args:    `{"elements":[{"id":"my box","type":"rectangle","x":0,"y":0}]}`,
			wantErr: true, want: []string{`contains ' '`}},
		{name: "missing id", tool: "batch_create_elements",
			args:    `{"elements":[{"type":"rectangle","x":0,"y":0}]}`,
			wantErr: true, want: []string{"elements[0].id: missing"}},
		{name: "bad font", tool: "batch_create_elements",
			args:    `{"elements":[{"id":"t1","type":"text","x":0,"y":0,"text":"T","fontFamily":"arial"}]}`,
			wantErr: true, want: []string{`unknown font "arial"`, "excalifont"}},
	})
}

func TestBatchLimits(t *testing.T) {
	lim := DefaultLimits()
	lim.MaxBatch = 3
	lim.MaxElements = 5
	s := New(newTestScene(), lim)
	many := `{"elements":[` + strings.Repeat(`{"id":"x","type":"rectangle","x":0,"y":0},`, 3) + `{"id":"y","type":"rectangle","x":0,"y":0}]}`
	r := s.Call(t.Context(), "batch_create_elements", []byte(many))
	if !r.IsError || !strings.Contains(r.Text, "4 elements in one call; the limit is 3") {
		t.Errorf("batch limit: got %q", r.Text)
	}
	mustCall(t, s, "batch_create_elements", `{"elements":[{"id":"r1","type":"rectangle","x":0,"y":0,"text":"a"},{"id":"r2","type":"rectangle","x":0,"y":200,"text":"b"}]}`)
	r = s.Call(t.Context(), "create_element", []byte(`{"id":"r3","type":"rectangle","x":0,"y":400,"text":"c"}`))
	if !r.IsError || !strings.Contains(r.Text, "would hold 6 elements (labels count); the limit is 5") {
		t.Errorf("scene limit: got %q", r.Text)
	}
	if got := s.Scene().Len(); got != 4 {
		t.Errorf("scene has %d elements after refusal, want 4", got)
	}
}

func TestCreateElement(t *testing.T) {
	runCases(t, []toolCase{
		{name: "ellipse", tool: "create_element", args: `{"id":"e1","type":"ellipse","x":0,"y":0,"text":"User","backgroundColor":"#ABC"}`,
			want: []string{"created 1: e1"},
			check: func(t *testing.T, sc *scene.Scene) {
				if e := get(t, sc, "e1"); e.Type != scene.Ellipse || e.BackgroundColor != "#aabbcc" {
					t.Errorf("e1 = %s bg %s", e.Type, e.BackgroundColor)
				}
			}},
		{name: "overlap warned at once", setup: []step{{"batch_create_elements", orgChart}}, tool: "create_element",
			args: `{"id":"r9","type":"rectangle","x":220,"y":20}`, want: []string{"created 1: r9", "warnings:", "overlaps"}},
		{name: "type alias", tool: "create_element", args: `{"id":"c1","type":"circle","x":0,"y":0}`,
			check: func(t *testing.T, sc *scene.Scene) {
				if get(t, sc, "c1").Type != scene.Ellipse {
					t.Error("circle did not become an ellipse")
				}
			}},
		{name: "a list sent to create_element", tool: "create_element",
			args:  `{"elements":[{"id":"r1","type":"rectangle","x":0,"y":0},{"id":"r2","type":"rectangle","x":0,"y":200}]}`,
			want:  []string{"created 2: r1, r2"},
			check: wantLen(2)},
		{name: "one element sent to batch", tool: "batch_create_elements",
			args:  `{"id":"r1","type":"rectangle","x":0,"y":0}`,
			want:  []string{"created 1: r1"},
			check: wantLen(1)},
		{name: "missing type", tool: "create_element", args: `{"id":"r1","x":0,"y":0}`, wantErr: true, want: []string{"type: missing"}},
		{name: "id taken", setup: []step{{"batch_create_elements", orgChart}}, tool: "create_element",
			args: `{"id":"cto","type":"rectangle","x":0,"y":0}`, wantErr: true, want: []string{`"cto" is already on the canvas`}},
	})
}
