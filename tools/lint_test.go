package tools

import (
	"strings"
	"testing"

	"github.com/excalibot/excalibot/scene"
)

// Files edited elsewhere can hold what the tools never make: an arrow drawn centre to centre and a
// label larger than its shape. get_scene must warn about both.
func TestLintLoadedFile(t *testing.T) {
	file := `{"type":"excalidraw","version":2,"elements":[
	 {"id":"r1","type":"rectangle","x":0,"y":0,"width":100,"height":60,"boundElements":[{"id":"a1","type":"arrow"},{"id":"t1","type":"text"}]},
	 {"id":"r2","type":"rectangle","x":300,"y":0,"width":100,"height":60,"boundElements":[{"id":"a1","type":"arrow"}]},
	 {"id":"t1","type":"text","x":-50,"y":10,"width":200,"height":25,"text":"a label far too wide","originalText":"a label far too wide","fontSize":20,"fontFamily":5,"containerId":"r1","textAlign":"center","verticalAlign":"middle","lineHeight":1.25,"autoResize":true},
	 {"id":"a1","type":"arrow","x":50,"y":30,"width":300,"height":0,"points":[[0,0],[300,0]],
	  "startBinding":{"elementId":"r1","focus":0,"gap":5},"endBinding":{"elementId":"r2","focus":0,"gap":5}}]}`
	sc, err := scene.Decode([]byte(file))
	if err != nil {
		t.Fatal(err)
	}
	ws := lint(newView(sc))
	text := strings.Join(ws, "\n")
	for _, want := range []string{"text of r1 overflows it", "arrow a1 start is", "px from r1's border", "arrow a1 end is"} {
		if !strings.Contains(text, want) {
			t.Errorf("warnings lack %q; got:\n%s", want, text)
		}
	}
	// The scene-made version of the same diagram has none of these.
	s := New(newTestScene(), DefaultLimits())
	mustCall(t, s, "batch_create_elements", `{"elements":[{"id":"r1","type":"rectangle","x":0,"y":0,"width":100,"height":60,"text":"a label far too wide"},
		{"id":"r2","type":"rectangle","x":300,"y":0,"width":100,"height":60},{"id":"a1","type":"arrow","startElementId":"r1","endElementId":"r2"}]}`)
	if ws := lint(newView(s.Scene())); len(ws) != 0 {
		t.Errorf("tool-made scene has warnings: %v", ws)
	}
}

func TestLintFocus(t *testing.T) {
	s := New(newTestScene(), DefaultLimits())
	mustCall(t, s, "batch_create_elements", `{"elements":[{"id":"r1","type":"rectangle","x":0,"y":0},{"id":"r2","type":"rectangle","x":50,"y":20}]}`)
	r := mustCall(t, s, "create_element", `{"id":"r3","type":"rectangle","x":1000,"y":0}`)
	if strings.Contains(r.Text, "overlaps") {
		t.Errorf("creating r3 reported an old overlap of r1 and r2:\n%s", r.Text)
	}
	r = mustCall(t, s, "update_element", `{"id":"r3","x":60}`)
	if !strings.Contains(r.Text, "overlaps r3") {
		t.Errorf("moving r3 onto r2 did not warn:\n%s", r.Text)
	}
}

func TestArrowToTextAndFrameMoves(t *testing.T) {
	runCases(t, []toolCase{
		{name: "arrow to a text", tool: "batch_create_elements",
			args: `{"elements":[{"id":"r1","type":"rectangle","x":0,"y":0},{"id":"t1","type":"text","x":300,"y":20,"text":"note"},{"id":"a1","type":"arrow","startElementId":"r1","endElementId":"t1"}]}`,
			check: func(t *testing.T, sc *scene.Scene) {
				if b := get(t, sc, "a1").EndBinding; b == nil || b.ElementID != "t1" {
					t.Errorf("a1 end %+v, want bound to t1", b)
				}
			}},
		{name: "into a frame with its label", tool: "update_element",
			setup: []step{{"batch_create_elements", `{"elements":[{"id":"f1","type":"frame","x":0,"y":0,"width":500,"height":400},{"id":"r1","type":"rectangle","x":20,"y":20,"text":"in"}]}`}},
			args:  `{"id":"r1","frameId":"f1"}`,
			check: func(t *testing.T, sc *scene.Scene) {
				r1 := get(t, sc, "r1")
				if r1.FrameID != "f1" || get(t, sc, r1.Label()).FrameID != "f1" {
					t.Errorf("r1 frame %q, label frame %q; want f1 for both", r1.FrameID, get(t, sc, r1.Label()).FrameID)
				}
			}},
		{name: "out of a frame", tool: "update_element",
			setup: []step{{"batch_create_elements", `{"elements":[{"id":"f1","type":"frame","x":0,"y":0,"width":500,"height":400},{"id":"r1","type":"rectangle","x":20,"y":20,"frameId":"f1"}]}`}},
			args:  `{"id":"r1","frameId":""}`,
			check: func(t *testing.T, sc *scene.Scene) {
				if get(t, sc, "r1").FrameID != "" {
					t.Error("r1 still in the frame")
				}
			}},
		{name: "frame moves its children", tool: "update_element",
			setup: []step{{"batch_create_elements", `{"elements":[{"id":"f1","type":"frame","x":0,"y":0,"width":500,"height":400,"text":"Zone"},{"id":"r1","type":"rectangle","x":20,"y":20,"frameId":"f1"}]}`}},
			args:  `{"id":"f1","x":100,"text":"Renamed"}`,
			check: func(t *testing.T, sc *scene.Scene) {
				if r1 := get(t, sc, "r1"); r1.X != 120 {
					t.Errorf("r1 x = %v, want 120", r1.X)
				}
				if f := get(t, sc, "f1"); f.Name != "Renamed" {
					t.Errorf("frame name %q", f.Name)
				}
			}},
		{name: "text element edit", tool: "update_element",
			setup: []step{{"create_element", `{"id":"t1","type":"text","x":0,"y":0,"text":"old"}`}},
			args:  `{"id":"t1","text":"new text","fontSize":28}`,
			check: func(t *testing.T, sc *scene.Scene) {
				if e := get(t, sc, "t1"); e.Text != "new text" || e.FontSize != 28 {
					t.Errorf("t1 %q size %v", e.Text, e.FontSize)
				}
			}},
		{name: "free arrow reshaped", tool: "update_element",
			setup: []step{{"create_element", `{"id":"a1","type":"arrow","x":0,"y":0,"points":[[0,0],[100,0]]}`}},
			args:  `{"id":"a1","points":[[0,0],[0,200]]}`,
			check: func(t *testing.T, sc *scene.Scene) {
				if e := get(t, sc, "a1"); e.Height != 200 || e.Width != 0 {
					t.Errorf("a1 %vx%v, want 0x200", e.Width, e.Height)
				}
			}},
		{name: "empty text element refused", tool: "update_element",
			setup: []step{{"create_element", `{"id":"t1","type":"text","x":0,"y":0,"text":"old"}`}},
			args:  `{"id":"t1","text":"  "}`, wantErr: true, want: []string{"delete_elements"}},
	})
}

func TestWarningsMatchGetScene(t *testing.T) {
	s := New(newTestScene(), DefaultLimits())
	for _, st := range scripts[len(scripts)-1].steps { // the lint script
		mustCall(t, s, st.tool, st.args)
	}
	ws := Warnings(s.Scene())
	text := mustCall(t, s, "get_scene", "").Text
	if len(ws) < 5 {
		t.Fatalf("Warnings = %q, want the lint script's warnings", ws)
	}
	for _, w := range ws {
		if !strings.Contains(text, "- "+w+"\n") {
			t.Errorf("warning %q not in get_scene:\n%s", w, text)
		}
	}
}

// The inner boxes used to skip the exact crossing test must lie inside the shape.
func TestInnerBoxesInside(t *testing.T) {
	for _, typ := range []scene.Type{scene.Rectangle, scene.Ellipse, scene.Diamond} {
		e := scene.NewElement(typ)
		e.X, e.Y, e.Width, e.Height = 10, 20, 200, 90
		for _, b := range innerBoxes(&e) {
			for _, p := range []scene.Point{{X: b.X, Y: b.Y}, {X: b.X + b.Width, Y: b.Y}, {X: b.X, Y: b.Y + b.Height}, {X: b.X + b.Width, Y: b.Y + b.Height}} {
				if !scene.ContainsPoint(e, p, 0) {
					t.Errorf("%s: corner %v of inner box %v is outside the shape", typ, p, b)
				}
			}
		}
	}
}
