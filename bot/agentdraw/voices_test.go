package agentdraw

import (
	"fmt"
	"strings"
	"testing"

	"github.com/excalibot/excalibot/agent"
	"github.com/excalibot/excalibot/bot"
	"github.com/excalibot/excalibot/scene"
)

// voiceBox is a box at x with a bound label and extra fields (`"y":40`).
func voiceBox(id, label string, x float64, fields ...string) []string {
	f := fmt.Sprintf(`"id":%q,"type":"rectangle","x":%g,"y":0,"width":160,"height":80,"strokeColor":"#1e1e1e","backgroundColor":"transparent"`, id, x)
	for _, x := range fields {
		f += "," + x
	}
	return []string{"{" + f + "}", fmt.Sprintf(`{"id":"%s-t","type":"text","x":%g,"y":30,"width":140,"height":25,"text":%q,"originalText":%q,"containerId":%q,"fontSize":20}`,
		id, x+10, label, label, id)}
}

func voiceArrow(id, from, to string, fields ...string) []string {
	f := fmt.Sprintf(`"id":%q,"type":"arrow","x":160,"y":40,"width":40,"height":0,"points":[[0,0],[40,0]],"strokeColor":"#1e1e1e",`+
		`"startBinding":{"elementId":%q,"focus":0,"gap":1},"endBinding":{"elementId":%q,"focus":0,"gap":1}`, id, from, to)
	for _, x := range fields {
		f += "," + x
	}
	return []string{"{" + f + "}"}
}

func voiceScene(t *testing.T, groups ...[]string) *scene.Scene {
	t.Helper()
	var els []string
	for _, g := range groups {
		els = append(els, g...)
	}
	sc, err := scene.Decode([]byte(`{"type":"excalidraw","version":2,"elements":[` + strings.Join(els, ",") + `]}`))
	if err != nil {
		t.Fatal(err)
	}
	return sc
}

// TestVoicesAgree gives the same pair of scenes to the three places that say what changed: the
// history line (bot.Changes), the run's reply (agent.ChangeSummary) and the note to the model
// (agent.DiffScenes), the agent's two from what it remembers of a scene (agent.StateOf), as a run
// does. Each says the change in its own words, or all three say nothing. Style and grouping are
// left out: the agent remembers neither, so only the history line tells them.
func TestVoicesAgree(t *testing.T) {
	a, b, c := voiceBox("a", "API", 0), voiceBox("b", "DB", 200), voiceBox("c", "Cache", 400)
	ab := voiceArrow("x", "a", "b")
	base := [][]string{a, b, c, ab}
	tests := []struct {
		name                 string
		after                [][]string
		history, reply, note string // what each says; all "" for no change
	}{
		{"nothing", base, "", "", ""},
		{"added", append(base, voiceBox("d", "Queue", 600)), "added 1 box", "Added Queue", `added rectangle d "Queue"`},
		{"removed", [][]string{a, b, ab}, "removed 1 box", "Removed Cache", `removed rectangle c "Cache"`},
		{"renamed", [][]string{a, voiceBox("b", "Postgres", 200), c, ab}, "renamed ‘DB’ to ‘Postgres’", "Renamed DB to Postgres",
			`relabelled rectangle b: "DB" -> "Postgres"`},
		{"moved a pixel", [][]string{a, voiceBox("b", "DB", 201), c, ab}, "moved 1 box", "Moved DB", `moved rectangle b "DB" from (200,0) to (201,0)`},
		{"under a pixel", [][]string{a, voiceBox("b", "DB", 200.9), c, ab}, "", "", ""},
		{"resized", [][]string{a, b, voiceBox("c", "Cache", 400, `"width":200`), ab}, "resized 1 box", "Resized Cache",
			`resized rectangle c "Cache" from 160x80 to 200x80`},
		{"stroke recoloured", [][]string{voiceBox("a", "API", 0, `"strokeColor":"#e03131"`), b, c, ab}, "recoloured 1 box", "Recoloured API",
			`recoloured rectangle a "API"`},
		{"background recoloured", [][]string{a, b, voiceBox("c", "Cache", 400, `"backgroundColor":"#ffc9c9"`), ab}, "recoloured 1 box", "Recoloured Cache",
			`recoloured rectangle c "Cache"`},
		{"arrow recoloured", [][]string{a, b, c, voiceArrow("x", "a", "b", `"strokeColor":"#e03131"`)}, "recoloured 1 arrow",
			"Recoloured the arrow from API to DB", "recoloured arrow x"},
		{"reconnected", [][]string{a, b, c, voiceArrow("x", "a", "c")}, "reconnected 1 arrow", "Reconnected the arrow from API to Cache",
			"reconnected arrow x: was a -> b, now a -> c"},
		{"an arrow follows its boxes", [][]string{a, b, c, voiceArrow("x", "a", "b", `"y":90`, `"width":80`)}, "", "", ""},
	}
	before := voiceScene(t, base...)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			after := voiceScene(t, tt.after...)
			history := bot.Changes(before, after)
			reply := agent.ChangeSummary(agent.StateOf(before), agent.StateOf(after))
			note := agent.DiffScenes(agent.StateOf(before), agent.StateOf(after))
			for _, v := range []struct{ voice, got, want string }{
				{"history", history, tt.history}, {"reply", reply, tt.reply}, {"note", note, tt.note},
			} {
				if (v.got == "") != (v.want == "") || !strings.Contains(v.got, v.want) {
					t.Errorf("%s says %q, want %q in it\n(history %q, reply %q, note %q)", v.voice, v.got, v.want, history, reply, note)
				}
			}
		})
	}
}
