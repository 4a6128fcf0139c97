package agent

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/excalibot/excalibot/agent/ollama"
	"github.com/excalibot/excalibot/scene"
	"github.com/excalibot/excalibot/tools"
)

// realRequest wires a run over the real toolset and scene, as cmd and bot do.
func realRequest(set *tools.Set, prompt string, mem Memory) Request {
	return SetRequest(set, prompt, mem, nil)
}

const realOrgChart = `{"elements":[
 {"id":"ceo","type":"rectangle","x":240,"y":0,"text":"CEO"},
 {"id":"cto","type":"rectangle","x":0,"y":200,"text":"CTO"},
 {"id":"cfo","type":"rectangle","x":480,"y":200,"text":"CFO"},
 {"id":"a1","type":"arrow","startElementId":"ceo","endElementId":"cto"},
 {"id":"a2","type":"arrow","startElementId":"ceo","endElementId":"cfo"}]}`

// TestEndToEndWithRealTools plays a draw, a human edit and a follow-up through the real tools,
// the real scene and the Ollama client against the fake server.
func TestEndToEndWithRealTools(t *testing.T) {
	f, srv := newFakeOllama(t,
		calls(call("batch_create_elements", realOrgChart)),
		calls(call("get_scene", `{}`)),
		calls(call("done", `{"summary":"Org chart: CEO over CTO and CFO."}`)),
		// follow-up: rename by id, with a bad call first
		calls(call("update_element", `{"id":"cf0","text":"Finance"}`)),
		calls(call("update_element", `{"id":"cfo","text":"Finance"}`)),
		calls(call("done", `{"summary":"Renamed CFO to Finance."}`)),
	)
	set := tools.New(scene.New(), tools.Limits{})
	a := newAgent(t, srv.URL, Limits{})
	ctx := context.Background()
	first, err := a.Run(ctx, realRequest(set, "org chart: CEO, CTO, CFO", Memory{}))
	if err != nil {
		t.Fatal(err)
	}
	if first.Reason != StopDone || first.ToolErrors != 0 {
		t.Fatalf("first run: %s, %d tool errors: %+v", first.Reason, first.ToolErrors, first.Steps)
	}
	gs := set.Call(ctx, "get_scene", json.RawMessage("{}"))
	if got, viaText := first.Warnings, WarningsIn(gs.Text); len(got) != len(viaText) {
		t.Errorf("tools.Warnings %q and get_scene's warnings %q disagree", got, viaText)
	}
	if !first.Finished || len(first.Warnings) != 0 {
		t.Errorf("first run not clean: warnings %q", first.Warnings)
	}
	st := first.State
	labels := map[string]string{}
	for _, e := range st {
		labels[e.ID] = e.Label
	}
	if labels["ceo"] != "CEO" || labels["cfo"] != "CFO" || len(st) != 5 {
		t.Fatalf("final scene %+v", st)
	}
	if got := len(f.request(0).Tools); got != len(CoreTools) {
		t.Errorf("offered %d tools, want the %d core tools", got, len(CoreTools))
	}
	if tm := toolMessages(f.request(2)); !strings.Contains(tm[1].Content, "ceo -> cto") {
		t.Errorf("get_scene result sent back lacks connections: %q", tm[1].Content)
	}

	// A person moves the CEO box in the editor; the thread's scene is the edited file.
	edited := set.Scene().Clone()
	if err := edited.MoveBy([]string{"ceo"}, 40, 0); err != nil {
		t.Fatal(err)
	}
	set = tools.New(edited, tools.Limits{})
	second, err := a.Run(ctx, realRequest(set, "rename CFO to Finance", first.Memory))
	if err != nil {
		t.Fatal(err)
	}
	opening := f.request(3).Messages[3].Content
	if !strings.Contains(opening, `moved rectangle ceo "CEO" from (240,0) to (280,0)`) {
		t.Errorf("follow-up was not told about the human edit:\n%s", opening)
	}
	if second.Reason != StopDone || second.ToolErrors != 1 || second.Summary != "Renamed CFO to Finance." {
		t.Errorf("second run %s errors %d summary %q", second.Reason, second.ToolErrors, second.Summary)
	}
	if tm := toolMessages(f.request(4)); !strings.Contains(tm[0].Content, "cfo") {
		t.Errorf("unknown id error should suggest cfo: %q", tm[0].Content)
	}
	if txt := set.Scene().LabelText("cfo"); txt != "Finance" {
		t.Errorf("cfo label %q, want Finance", txt)
	}
}

// BenchmarkPromptSize reports the bytes of the system prompt plus the real tool schemas as sent:
// the core tools offered by default, and every tool (Config.AllTools).
func BenchmarkPromptSize(b *testing.B) {
	specs := tools.New(scene.New(), tools.Limits{}).Specs()
	b.Run("core", func(b *testing.B) { reportPromptSize(b, specs, false) })
	b.Run("all", func(b *testing.B) { reportPromptSize(b, specs, true) })
}

func TestWarningsIn(t *testing.T) {
	text := "scene: 2 elements\nr1 rect 0,0 10x10\nwarnings:\n- r1 overlaps r2: move r2\n- arrow a3 is not attached\n"
	got := WarningsIn(text)
	if len(got) != 2 || got[0] != "r1 overlaps r2: move r2" || got[1] != "arrow a3 is not attached" {
		t.Errorf("got %q", got)
	}
	if WarningsIn("scene: 0 elements\n") != nil {
		t.Error("no warnings section must give nil")
	}
}

// TestEndToEndWarningsLeft: a model that stops with overlapping shapes does not get to claim success.
func TestEndToEndWarningsLeft(t *testing.T) {
	_, srv := newFakeOllama(t,
		calls(call("batch_create_elements", `{"elements":[{"id":"r1","type":"rectangle","x":0,"y":0,"text":"A"},{"id":"r2","type":"rectangle","x":20,"y":10,"text":"B"}]}`)),
		calls(call("done", `{"summary":"Perfect diagram."}`)),
	)
	set := tools.New(scene.New(), tools.Limits{})
	res, err := newAgent(t, srv.URL, Limits{}).Run(context.Background(), realRequest(set, "two boxes", Memory{}))
	if err != nil {
		t.Fatal(err)
	}
	if res.Finished || len(res.Warnings) == 0 {
		t.Fatalf("finished %v warnings %q: overlapping boxes must leave a warning", res.Finished, res.Warnings)
	}
	if !strings.HasPrefix(res.Summary, "Perfect diagram. ") || !strings.Contains(res.Summary, "1 problem remains in the drawing: r1 overlaps r2") {
		t.Errorf("summary %q", res.Summary)
	}
}

// TestAllToolsAndToolsNotOffered: AllTools offers every tool; a call to a tool of the toolbox that
// was not offered still runs.
func TestAllToolsAndToolsNotOffered(t *testing.T) {
	_, srv := newFakeOllama(t,
		calls(call("create_element", `{"id":"r1","type":"rectangle","x":0,"y":0,"text":"A"}`)),
		calls(call("done", `{}`)),
	)
	set := tools.New(scene.New(), tools.Limits{})
	res, err := newAgent(t, srv.URL, Limits{}).Run(context.Background(), realRequest(set, "a box", Memory{}))
	if err != nil {
		t.Fatal(err)
	}
	if res.ToolErrors != 0 || set.Scene().LabelText("r1") != "A" {
		t.Errorf("create_element (not offered) did not run: %+v", res.Steps)
	}
	f2, srv2 := newFakeOllama(t, calls(call("done", `{}`)))
	m, err := ollama.New(ollama.Config{Host: srv2.URL, Model: "qwen3:8b"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := New(m, Config{AllTools: true}, nil).Run(context.Background(), realRequest(set, "what is there?", Memory{})); err != nil {
		t.Fatal(err)
	}
	if got, want := len(f2.request(0).Tools), len(set.Specs()); got != want {
		t.Errorf("AllTools offered %d tools, want %d", got, want)
	}
}
