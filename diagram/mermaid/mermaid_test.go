package mermaid

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/excalibot/excalibot/diagram"
	"github.com/excalibot/excalibot/scene"
)

// flow is the converter's real output for a six-shape flowchart (written by render's converter).
func flow(t *testing.T) Diagram {
	t.Helper()
	b, err := os.ReadFile("testdata/mermaid-flow.converted.json")
	if err != nil {
		t.Fatal(err)
	}
	var d Diagram
	if err := json.Unmarshal(b, &d); err != nil {
		t.Fatal(err)
	}
	return d
}

// drawing is a scene with one box at the origin.
func drawing(t *testing.T, id string) *scene.Scene {
	t.Helper()
	sc := scene.New()
	e := scene.NewElement(scene.Rectangle)
	e.ID, e.Width, e.Height = id, 200, 100
	if _, err := sc.Add(e); err != nil {
		t.Fatal(err)
	}
	return sc
}

func TestImportBesideTheDrawing(t *testing.T) {
	sc := drawing(t, "old")
	next, info, err := Import(sc, flow(t), false)
	if err != nil {
		t.Fatal(err)
	}
	if sc.Len() != 1 {
		t.Errorf("the scene given has %d elements after Import, want it unchanged (1)", sc.Len())
	}
	if _, ok := next.Get("old"); !ok {
		t.Error("the old box is gone")
	}
	if got, want := info.At, diagram.Beside(sc); got != want || got.X <= 200 || got.Y != 0 {
		t.Errorf("diagram at %+v, want %+v (where every builder puts a new diagram: right of the drawing, tops aligned)", got, want)
	}
	if got, want := len(info.Shapes), 6; got != want {
		t.Errorf("%d shapes, want %d: %v", got, want, info.Shapes)
	}
	if info.Arrows != 5 || info.Renamed != 0 {
		t.Errorf("arrows %d renamed %d, want 5 and 0", info.Arrows, info.Renamed)
	}
	a, ok := next.Get("A")
	if !ok || a.X < info.At.X {
		t.Errorf("node A %+v, want it right of the old box", a)
	}
	ab, _ := next.Get("A_B")
	if ab.StartBinding == nil || ab.StartBinding.ElementID != "A" || ab.EndBinding == nil || ab.EndBinding.ElementID != "B" {
		t.Errorf("arrow A_B binds %+v → %+v, want A → B", ab.StartBinding, ab.EndBinding)
	}
	if !strings.Contains(info.String(), `A "Start"`) {
		t.Errorf("summary %q does not name shape A with its label", info.String())
	}
}

func TestImportRenamesTakenIDs(t *testing.T) {
	sc := drawing(t, "A")
	next, info, err := Import(sc, flow(t), false)
	if err != nil {
		t.Fatal(err)
	}
	if info.Renamed != 1 {
		t.Errorf("renamed %d ids, want 1 (A)", info.Renamed)
	}
	ab, _ := next.Get("A_B")
	if ab.StartBinding == nil || ab.StartBinding.ElementID != "A_2" {
		t.Errorf("arrow A_B starts at %+v, want the renamed A_2", ab.StartBinding)
	}
	if old, _ := next.Get("A"); old.Width != 200 {
		t.Errorf("the scene's own A changed: %+v", old)
	}
}

func TestImportReplace(t *testing.T) {
	next, info, err := Import(drawing(t, "old"), flow(t), true)
	if err != nil {
		t.Fatal(err)
	}
	if next.Has("old") {
		t.Error("replace kept the old drawing")
	}
	if info.Renamed != 0 {
		t.Errorf("renamed %d ids on an emptied canvas, want 0", info.Renamed)
	}
}

func TestImportRefusesAnEmptyDiagram(t *testing.T) {
	sc := drawing(t, "old")
	next, _, err := Import(sc, Diagram{Type: "flowchart-v2"}, false)
	if err == nil || next != nil {
		t.Fatalf("got %v, %v; want an error and no scene", next, err)
	}
	if got, want := err.Error(), "the Mermaid diagram has nothing to draw"; got != want {
		t.Errorf("err = %q, want %q", got, want)
	}
	bad := Diagram{Elements: []json.RawMessage{json.RawMessage(`[1]`)}}
	if _, _, err := Import(sc, bad, false); err == nil || !strings.Contains(err.Error(), "element 0 is not an object") {
		t.Errorf("err = %v, want element 0 named", err)
	}
}

func TestErrorCarriesTheLine(t *testing.T) {
	for _, tc := range []struct {
		name string
		err  *Error
		want string
	}{
		{"line and hint", &Error{Line: 2, LineText: "  A[Start --> B", Message: "found the end of the diagram where Mermaid expected ']'", Hint: "a bracket is not closed on this line"},
			"Mermaid syntax error on line 2: A[Start --> B — found the end of the diagram where Mermaid expected ']'. Hint: a bracket is not closed on this line"},
		{"no line", &Error{Message: "the diagram is empty"}, "Mermaid syntax error — the diagram is empty"},
		{"line without its text", &Error{Line: 4, Message: "unexpected ':'"}, "Mermaid syntax error on line 4 — unexpected ':'"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := tc.err.Error(); got != tc.want {
				t.Errorf("got  %q\nwant %q", got, tc.want)
			}
			var me *Error
			if wrapped := fmt.Errorf("render: %w", tc.err); !errors.As(wrapped, &me) || me.Line != tc.err.Line {
				t.Errorf("a wrapped *Error is not found with its line: %v", me)
			}
		})
	}
}

// TestErrorUserMessage: the refusal in a person's words names the line (its text shortened to 80
// characters) and says what to write, without a final period for the reply to end.
func TestErrorUserMessage(t *testing.T) {
	long := strings.Repeat("x", 100)
	for _, tc := range []struct {
		name string
		err  *Error
		want string
	}{
		{"line and hint", &Error{Line: 2, LineText: "  A[Start --> B", Message: "expected ']'", Hint: "a bracket is not closed on this line"},
			"I could not read that Mermaid diagram (line 2: `A[Start --> B`): expected ']'. Hint: a bracket is not closed on this line"},
		{"no line", &Error{Message: "the diagram is empty"}, "I could not read that Mermaid diagram: the diagram is empty"},
		{"line without its text", &Error{Line: 4, Message: "unexpected ':'"}, "I could not read that Mermaid diagram (line 4): unexpected ':'"},
		{"a long line", &Error{Line: 1, LineText: long}, "I could not read that Mermaid diagram (line 1: `" + long[:79] + "…`)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := tc.err.UserMessage(); got != tc.want {
				t.Errorf("got  %q\nwant %q", got, tc.want)
			}
		})
	}
}
