package eval

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/excalibot/excalibot/agent"
)

var update = flag.Bool("update", false, "rewrite golden files")

func TestShippedSuite(t *testing.T) {
	s, err := Load(filepath.Join("testdata", "suite.json"))
	if err != nil {
		t.Fatal(err)
	}
	if len(s.Cases) < 20 {
		t.Errorf("suite has %d cases, want at least 20", len(s.Cases))
	}
	kinds := map[string]int{}
	for _, c := range s.Cases {
		kinds[c.Kind]++
	}
	for _, k := range []string{"org-chart", "flowchart", "architecture", "sequence", "follow-up"} {
		if kinds[k] < 2 {
			t.Errorf("kind %s has %d cases, want at least 2", k, kinds[k])
		}
	}
	// Routing: the suite checks that new diagrams go to the graph tools, structural changes to
	// the graph-editing tools and fine edits to the element tools.
	routed := map[string]bool{}
	for _, c := range s.Cases {
		for i, r := range c.Route {
			for _, name := range r {
				routed[fmt.Sprintf("%s@%d", name, min(i, 1))] = true
			}
		}
	}
	for _, want := range []string{"create_graph@0", "create_sequence@0", "add_to_graph@1", "update_graph@1", "remove_from_graph@1",
		"update_element@1", "batch_create_elements@1"} {
		if !routed[want] {
			t.Errorf("no case routes %s (tool@0: first prompt, @1: a follow-up)", want)
		}
	}
}

func TestParseRejects(t *testing.T) {
	tests := []struct{ in, want string }{
		{`{"cases":[]}`, "no cases"},
		{`{"cases":[{"name":"A b","kind":"x","prompts":["p"]}]}`, `name "A b"`},
		{`{"cases":[{"name":"a","kind":"x","prompts":["p"]},{"name":"a","kind":"x","prompts":["p"]}]}`, "used twice"},
		{`{"cases":[{"name":"a","kind":"x","prompts":[]}]}`, "no prompts"},
		{`{"cases":[{"name":"a","prompts":["p"]}]}`, "no kind"},
		{`{"cases":[{"name":"a","kind":"x","prompts":[" "]}]}`, "prompt 0 is empty"},
		{`{"cases":[{"name":"a","kind":"x","prompts":["p"],"lables":["x"]}]}`, `unknown field "lables"`},
		{`{"cases":[{"name":"a","kind":"x","prompts":["p"],"route":[["create_graph"],["update_element"]]}]}`, "2 routes for 1 prompts"},
		{`{"cases":[{"name":"a","kind":"x","prompts":["p"],"route":[["create_grahp"]]}]}`, `route 0: no tool "create_grahp"`},
	}
	for _, tt := range tests {
		_, err := Parse([]byte(tt.in))
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("Parse(%s): err %v, want %q", tt.in, err, tt.want)
		}
	}
}

func TestSelect(t *testing.T) {
	s := Suite{Cases: []Case{{Name: "org-a", Kind: "org-chart"}, {Name: "flow-b", Kind: "flowchart"}, {Name: "edit-c", Kind: "follow-up"}}}
	tests := []struct {
		filter string
		want   int
	}{{"", 3}, {"org", 1}, {"flow", 1}, {"follow", 1}, {"-", 3}, {"zzz", 0}}
	for _, tt := range tests {
		if got := len(s.Select(tt.filter).Cases); got != tt.want {
			t.Errorf("Select(%q) = %d cases, want %d", tt.filter, got, tt.want)
		}
	}
}

const doc = `{"type":"excalidraw","elements":[
 {"id":"a","type":"rectangle","x":0,"y":0,"width":10,"height":10},
 {"id":"t","type":"text","text":"Head of Finance","containerId":"a"},
 {"id":"b","type":"rectangle","x":50,"y":0,"width":10,"height":10},
 {"id":"u","type":"text","text":"CEO","containerId":"b"}]}`

// state is doc as the agent remembers it: two labelled boxes.
var state = []agent.ElementState{{ID: "a", Type: "rectangle", W: 10, H: 10, Label: "Head of Finance"},
	{ID: "b", Type: "rectangle", X: 50, W: 10, H: 10, Label: "CEO"}}

func TestCheckLabels(t *testing.T) {
	got := CheckLabels(state, []string{"ceo", "finance", "CTO"}, []string{"Lint", "head"})
	want := []string{"missing CTO", "unexpected head"}
	if strings.Join(got, "|") != strings.Join(want, "|") {
		t.Errorf("got %q, want %q", got, want)
	}
}

func TestRunCase(t *testing.T) {
	c := Case{Name: "edit-rename", Kind: "follow-up", Prompts: []string{"draw", "rename"}, Labels: []string{"CEO", "Finance"}}
	var seen []string
	th := func(_ context.Context, p string, mem agent.Memory) (agent.Result, error) {
		seen = append(seen, p+":"+string(rune('0'+len(mem.Exchanges))))
		return agent.Result{State: state, Finished: true, Reason: agent.StopDone, Turns: 2, ToolCalls: 3, ToolErrors: 1,
			PromptTokens: 100, OutputTokens: 10, Duration: time.Second, Memory: mem.Add(agent.Exchange{Request: p}),
			Corrections: agent.Corrections{Nudges: 2, PlanFallbacks: len(mem.Exchanges)}}, nil
	}
	o := RunCase(context.Background(), c, th)
	if strings.Join(seen, ",") != "draw:0,rename:1" {
		t.Errorf("prompts ran as %v, want each with the memory of the one before", seen)
	}
	if !o.Finished || o.Runs != 2 || o.Turns != 4 || o.FirstTurns != 2 || o.ToolCalls != 6 || o.ToolErrors != 2 || o.PromptTokens != 200 || o.Duration != 2*time.Second {
		t.Errorf("outcome %+v", o)
	}
	if want := (agent.Corrections{Nudges: 4, PlanFallbacks: 1}); o.Corrections != want {
		t.Errorf("corrections %+v, want %+v summed over the runs", o.Corrections, want)
	}
	if want := (agent.Corrections{Nudges: 2, PlanFallbacks: 1}); o.Corrected != want {
		t.Errorf("runs corrected %+v, want %+v", o.Corrected, want)
	}

	failing := func(_ context.Context, p string, mem agent.Memory) (agent.Result, error) {
		return agent.Result{Reason: agent.StopError, Turns: 1}, errors.New("model m is not pulled")
	}
	o = RunCase(context.Background(), c, failing)
	if o.Finished || o.Runs != 1 || o.Err != "model m is not pulled" {
		t.Errorf("failing case %+v: want one run and the error", o)
	}

	routed := Case{Name: "route-colour", Kind: "follow-up", Prompts: []string{"draw", "colour it"},
		Route: [][]string{{"create_graph"}, {"update_element"}}}
	calls := map[string][]agent.Step{
		"draw":      {{Kind: agent.StepTool, Tool: "create_graph"}},
		"colour it": {{Kind: agent.StepTool, Tool: "update_element", IsError: true}, {Kind: agent.StepTool, Tool: "create_graph"}},
	}
	routing := func(_ context.Context, p string, mem agent.Memory) (agent.Result, error) {
		return agent.Result{State: state, Finished: true, Steps: calls[p]}, nil
	}
	o = RunCase(context.Background(), routed, routing)
	if o.Finished || strings.Join(o.Missing, "|") != "prompt 2 called none of update_element" {
		t.Errorf("a failed update_element and a redraw must miss the route: finished %v, missing %q", o.Finished, o.Missing)
	}
	calls["colour it"] = []agent.Step{{Kind: agent.StepTool, Tool: "update_element"}}
	if o = RunCase(context.Background(), routed, routing); !o.Finished || len(o.Missing) != 0 {
		t.Errorf("routed as asked: finished %v, missing %q", o.Finished, o.Missing)
	}

	limited := func(_ context.Context, p string, mem agent.Memory) (agent.Result, error) {
		return agent.Result{State: state, Reason: agent.StopTurnLimit, Warnings: []string{"a overlaps b"}}, nil
	}
	if o = RunCase(context.Background(), c, limited); o.Finished || len(o.Warnings) != 1 {
		t.Errorf("a run on a limit must not count as finished: %+v", o)
	}
}

func TestReportGolden(t *testing.T) {
	outs := []Outcome{
		{Case: "org-small", Kind: "org-chart", Model: "qwen3:8b", Protocol: "tools", Finished: true, Reason: agent.StopDone, Runs: 1,
			Turns: 3, FirstTurns: 3, ToolCalls: 3, PromptTokens: 9000, OutputTokens: 400, Duration: 12300 * time.Millisecond,
			Corrections: agent.Corrections{Retries: 1, PlanFallbacks: 1}, Corrected: agent.Corrections{Retries: 1, PlanFallbacks: 1}},
		{Case: "edit-remove", Kind: "follow-up", Model: "qwen3:8b", Protocol: "tools", Reason: agent.StopTurnLimit, Runs: 2, Turns: 20,
			FirstTurns: 4, ToolCalls: 31, ToolErrors: 4, PromptTokens: 80000, OutputTokens: 2000, Duration: 95 * time.Second,
			Warnings: []string{"r2 overlaps r3: move r3 to x=300"}, Missing: []string{"unexpected Lint"},
			Corrections: agent.Corrections{Nudges: 3, PlanFallbacks: 1, PlanFallbacksFailed: 1},
			Corrected:   agent.Corrections{Nudges: 2, PlanFallbacks: 1, PlanFallbacksFailed: 1}},
		{Case: "seq-login", Kind: "sequence", Model: "qwen3:8b", Protocol: "tools", Reason: agent.StopError, Runs: 1,
			Err: "model did not answer in time"},
		{Case: "org-small", Kind: "org-chart", Model: "qwen3:8b", Protocol: "plan", Finished: true, Reason: agent.StopDone, Runs: 1,
			Turns: 1, FirstTurns: 1, ToolCalls: 1, PromptTokens: 1500, OutputTokens: 300, Duration: 4 * time.Second},
		{Case: "edit-remove", Kind: "follow-up", Model: "qwen3:8b", Protocol: "plan", Finished: true, Reason: agent.StopDone, Runs: 2,
			Turns: 3, FirstTurns: 1, ToolCalls: 3, PromptTokens: 4000, OutputTokens: 700, Duration: 9 * time.Second},
		{Case: "org-small", Kind: "org-chart", Model: "gemma3:4b", Protocol: "plan", Reason: agent.StopInvalidPlan, Runs: 1,
			Turns: 3, FirstTurns: 3, Missing: []string{"missing CEO"},
			Corrections: agent.Corrections{Retries: 1, WithoutSchema: 1}, Corrected: agent.Corrections{Retries: 1, WithoutSchema: 1}},
	}
	var b bytes.Buffer
	if err := Report(&b, outs); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join("testdata", "report.golden")
	if *update {
		if err := os.WriteFile(path, b.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (go test ./agent/eval -update creates it)", err)
	}
	if !bytes.Equal(b.Bytes(), want) {
		t.Errorf("report differs from %s:\n%s", path, b.String())
	}
}

func TestWriteScene(t *testing.T) {
	dir := t.TempDir()
	p, err := WriteScene(dir, Outcome{Case: "org-small", Scene: []byte(doc)})
	if err != nil || filepath.Base(p) != "org-small.excalidraw" {
		t.Fatalf("path %q err %v", p, err)
	}
	if b, _ := os.ReadFile(p); string(b) != doc {
		t.Error("scene not written as given")
	}
	if p, err := WriteScene(dir, Outcome{Case: "empty"}); p != "" || err != nil {
		t.Errorf("no scene: %q %v, want nothing written", p, err)
	}
}
