package outline

import (
	"fmt"
	"strings"
	"testing"

	"github.com/excalibot/excalibot/scene"
)

// doc decodes elements written as Excalidraw writes them into a scene.
func doc(t *testing.T, els ...string) *scene.Scene {
	t.Helper()
	sc, err := scene.Decode([]byte(`{"type":"excalidraw","version":2,"elements":[` + strings.Join(els, ",") + `]}`))
	if err != nil {
		t.Fatalf("decode test scene: %v", err)
	}
	return sc
}

// rect is a box with extra fields (`"x":40`) and, when label is not "", a bound label.
func rect(id, label string, fields ...string) []string {
	f := `"id":"` + id + `","type":"rectangle","x":0,"y":0,"width":160,"height":80,"strokeColor":"#1e1e1e","backgroundColor":"transparent"`
	for _, x := range fields {
		f += "," + x
	}
	out := []string{"{" + f + "}"}
	if label != "" {
		out = append(out, fmt.Sprintf(`{"id":"%s-t","type":"text","x":10,"y":30,"width":140,"height":25,"text":%q,"originalText":%q,"containerId":"%s","fontSize":20,"strokeColor":"#1e1e1e"}`,
			id, label, label, id))
	}
	return out
}

// arw is an arrow from one element to another ("" for a free end).
func arw(id, from, to string, fields ...string) []string {
	f := `"id":"` + id + `","type":"arrow","x":160,"y":40,"width":40,"height":0,"points":[[0,0],[40,0]],"strokeColor":"#1e1e1e"`
	if from != "" {
		f += `,"startBinding":{"elementId":"` + from + `","focus":0,"gap":1}`
	}
	if to != "" {
		f += `,"endBinding":{"elementId":"` + to + `","focus":0,"gap":1}`
	}
	for _, x := range fields {
		f += "," + x
	}
	return []string{"{" + f + "}"}
}

func join(groups ...[]string) []string {
	var out []string
	for _, g := range groups {
		out = append(out, g...)
	}
	return out
}

// said is a change as one line: "renamed b ‘DB’→‘Postgres’", "reconnected x a→c".
func said(c Change) string {
	s := c.Kind.String() + " " + c.ID()
	switch c.Kind {
	case Renamed:
		s += fmt.Sprintf(" ‘%s’→‘%s’", c.Before.Label, c.After.Label)
	case Reconnected:
		s += fmt.Sprintf(" %s→%s", c.After.From.ID, c.After.To.ID)
	}
	return s
}

func TestDiff(t *testing.T) {
	pipeline := join(rect("a", "API"), rect("b", "DB", `"x":200`), arw("ab", "a", "b"))
	tests := []struct {
		name          string
		before, after []string
		want          string
	}{
		{"nothing", pipeline, pipeline, ""},
		{"added to nothing", nil, pipeline, "added a|added b|added ab"},
		{"removed", pipeline, rect("a", "API"), "removed b|removed ab"},
		{"deleted is removed", pipeline, join(rect("a", "API"), []string{rect("b", "", `"x":200`, `"isDeleted":true`)[0],
			`{"id":"b-t","type":"text","text":"DB","containerId":"b","isDeleted":true}`}, arw("ab", "a", "b", `"isDeleted":true`)),
			"removed b|removed ab"},
		{"a label is its box's", pipeline, join(rect("a", "API"), rect("b", "Postgres", `"x":200`), arw("ab", "a", "b")), "renamed b ‘DB’→‘Postgres’"},
		{"a label on an arrow", pipeline, join(rect("a", "API"), rect("b", "DB", `"x":200`), arw("ab", "a", "b"),
			[]string{`{"id":"l","type":"text","text":"reads","containerId":"ab"}`}), "renamed ab ‘’→‘reads’"},
		{"label taken off", pipeline, join(rect("a", ""), rect("b", "DB", `"x":200`), arw("ab", "a", "b")), "renamed a ‘API’→‘’"},
		{"wrapping is not a rename", rect("a", "Head of Finance"), []string{rect("a", "")[0],
			`{"id":"a-t","type":"text","text":"Head of\nFinance","originalText":"Head of Finance","containerId":"a","fontSize":20,"strokeColor":"#1e1e1e"}`}, ""},
		{"free text rewritten", []string{`{"id":"n","type":"text","text":"draft"}`}, []string{`{"id":"n","type":"text","text":"final"}`}, "renamed n ‘draft’→‘final’"},
		{"moved", pipeline, join(rect("a", "API", `"y":300`), rect("b", "DB", `"x":200`), arw("ab", "a", "b")), "moved a"},
		{"a pixel is a move", rect("a", ""), rect("a", "", `"x":1`), "moved a"},
		{"less is rounding", rect("a", ""), rect("a", "", `"x":0.99`, `"width":160.9`), ""},
		{"resized", rect("a", ""), rect("a", "", `"height":81`), "resized a"},
		{"moved and resized", rect("a", ""), rect("a", "", `"x":50`, `"width":100`), "moved a|resized a"},
		{"arrows follow their ends", pipeline, join(rect("a", "API"), rect("b", "DB", `"x":200`), arw("ab", "a", "b", `"y":90`, `"width":400`)), ""},
		{"stroke colour", rect("a", ""), rect("a", "", `"strokeColor":"#e03131"`), "recoloured a"},
		{"background colour", rect("a", ""), rect("a", "", `"backgroundColor":"#ffc9c9"`), "recoloured a"},
		{"colour case", rect("a", ""), rect("a", "", `"strokeColor":"#1E1E1E"`), ""},
		{"label colour is the box's", rect("a", "API"), []string{rect("a", "")[0],
			`{"id":"a-t","type":"text","text":"API","containerId":"a","fontSize":20,"strokeColor":"#e03131"}`}, "recoloured a"},
		{"label font is the box's style", rect("a", "API"), []string{rect("a", "")[0],
			`{"id":"a-t","type":"text","text":"API","containerId":"a","fontSize":28,"strokeColor":"#1e1e1e"}`}, "restyled a"},
		{"dashed", pipeline, join(rect("a", "API"), rect("b", "DB", `"x":200`), arw("ab", "a", "b", `"strokeStyle":"dashed"`)), "restyled ab"},
		{"colour and style", rect("a", ""), rect("a", "", `"strokeColor":"#e03131"`, `"fillStyle":"hachure"`), "recoloured a|restyled a"},
		{"shape changed", rect("a", ""), []string{strings.Replace(rect("a", "")[0], "rectangle", "ellipse", 1)}, "restyled a"},
		{"rebound end", join(rect("a", ""), rect("b", ""), rect("c", ""), arw("x", "a", "b")),
			join(rect("a", ""), rect("b", ""), rect("c", ""), arw("x", "a", "c")), "reconnected x a→c"},
		{"end let go", join(rect("a", ""), rect("b", ""), arw("x", "a", "b")), join(rect("a", ""), rect("b", ""), arw("x", "a", "")), "reconnected x a→"},
		{"into a frame", join([]string{`{"id":"f","type":"frame","x":-10,"y":-10,"width":400,"height":200,"name":"Backend"}`}, rect("a", "")),
			join([]string{`{"id":"f","type":"frame","x":-10,"y":-10,"width":400,"height":200,"name":"Backend"}`}, rect("a", "", `"frameId":"f"`)), "regrouped a"},
		{"grouped", rect("a", ""), rect("a", "", `"groupIds":["g1"]`), "regrouped a"},
		{"frame renamed", []string{`{"id":"f","type":"frame","width":400,"height":200,"name":"Backend"}`},
			[]string{`{"id":"f","type":"frame","width":400,"height":200,"name":"Services"}`}, "renamed f ‘Backend’→‘Services’"},
		// A box whose label's id is reused by a free text: the box lost its label, the text is new.
		{"ids matched once", rect("a", "API"), join(rect("a", ""), []string{`{"id":"a-t","type":"text","x":0,"y":200,"text":"API"}`}),
			"renamed a ‘API’→‘’|added a-t"},
		{"everything at once", pipeline, join(rect("a", "Gateway", `"x":50`), rect("c", "Cache", `"x":400`)),
			"renamed a ‘API’→‘Gateway’|moved a|added c|removed b|removed ab"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var before *scene.Scene
			if tt.before != nil {
				before = doc(t, tt.before...)
			}
			var got []string
			for _, c := range Diff(before, doc(t, tt.after...)) {
				got = append(got, said(c))
			}
			if g := strings.Join(got, "|"); g != tt.want {
				t.Errorf("got  %s\nwant %s", g, tt.want)
			}
		})
	}
}

func TestDiffParts(t *testing.T) {
	before := doc(t, join(rect("a", "API"), rect("b", "DB", `"x":200`), rect("c", "Cache", `"x":400`), arw("x", "a", "b"))...)
	after := doc(t, join(rect("a", "API"), rect("b", "DB", `"x":200`), rect("c", "Cache", `"x":400`), arw("x", "a", "c"), arw("y", "c", ""))...)
	got := Diff(before, after)
	if len(got) != 2 {
		t.Fatalf("got %d changes, want 2: %v", len(got), got)
	}
	re, add := got[0], got[1]
	if re.Kind != Reconnected || re.Before.To != (End{ID: "b", Label: "DB"}) || re.After.To != (End{ID: "c", Label: "Cache"}) ||
		re.After.From != (End{ID: "a", Label: "API"}) || re.Part().Noun != NounArrow {
		t.Errorf("reconnection = %+v", re)
	}
	if add.Kind != Added || add.ID() != "y" || add.After.From.Label != "Cache" || add.After.To != (End{}) || add.Before.El.ID != "" {
		t.Errorf("addition = %+v", add)
	}
	gone := Diff(after, before)
	if last := gone[len(gone)-1]; last.Kind != Removed || last.ID() != "y" || last.Part().From.ID != "c" || last.After.El.ID != "" {
		t.Errorf("removal = %+v", last)
	}
}

func TestNounOf(t *testing.T) {
	for _, tt := range []struct {
		t      scene.Type
		want   Noun
		linear bool
	}{
		{scene.Rectangle, NounBox, false}, {scene.Ellipse, NounBox, false}, {scene.Diamond, NounBox, false},
		{scene.Arrow, NounArrow, true}, {scene.Line, NounLine, true}, {scene.Text, NounText, false},
		{scene.Frame, NounFrame, false}, {scene.Image, NounPicture, false}, {scene.Freedraw, NounSketch, false},
		{"embeddable", NounOther, false},
	} {
		if got := NounOf(tt.t); got != tt.want || got.Linear() != tt.linear {
			t.Errorf("NounOf(%s) = %v (linear %v), want %v (linear %v)", tt.t, got, got.Linear(), tt.want, tt.linear)
		}
	}
	if got := ChangeKind(0).String(); got != "changed" {
		t.Errorf("ChangeKind(0) = %q", got)
	}
}
