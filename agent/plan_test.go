package agent

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/excalibot/excalibot/agent/ollama"
	"github.com/excalibot/excalibot/agent/plan"
	"github.com/excalibot/excalibot/scene"
	"github.com/excalibot/excalibot/tools"
)

const flowPlan = `{"kind":"flowchart","direction":"TB","title":"Orders","nodes":[
 {"id":"start","label":"Start","shape":"ellipse"},{"id":"check","label":"In stock?","shape":"diamond","color":"yellow"},
 {"id":"ship","label":"Ship it","color":"green"},{"id":"back","label":"Back-order","color":"red"},{"id":"end","label":"End","shape":"ellipse"}],
 "edges":[{"from":"start","to":"check"},{"from":"check","to":"ship","label":"yes"},{"from":"check","to":"back","label":"no"},
 {"from":"ship","to":"end"},{"from":"back","to":"end","style":"dashed"}],"summary":"An order flow with a stock check."}`

const archPlan = `{"kind":"architecture","nodes":[{"id":"web","label":"Web app","group":"fe"},{"id":"api","label":"API","color":"blue","group":"be"},
 {"id":"db","label":"Database","shape":"ellipse","group":"be"}],"edges":[{"from":"web","to":"api","label":"REST"},{"from":"api","to":"db"}],
 "groups":[{"id":"fe","title":"Frontend"},{"id":"be","title":"Backend"}],"summary":"Web app, API and database."}`

// labelsOf maps node ids to their labels in a scene.
func planLabels(t *testing.T, st []ElementState) map[string]string {
	t.Helper()
	out := map[string]string{}
	for _, e := range st {
		if e.Label != "" {
			out[e.ID] = e.Label
		}
	}
	return out
}

func TestPlanNewFlowchart(t *testing.T) {
	m := &scriptedPlanner{answers: []string{flowPlan}}
	set := newRecordingSet(nil)
	var steps []Step
	req := set.request("flowchart of an order: check stock, ship or back-order", Memory{})
	req.OnStep = func(s Step) { steps = append(steps, s) }
	res := runPlanned(t, planAgent(m, ProtocolPlan), req)

	if got := m.requests(); got != 1 {
		t.Fatalf("model requests = %d, want 1", got)
	}
	if !bytes.Equal(m.formats[0], plan.Schema()) {
		t.Errorf("format of the request is not the plan schema: %s", m.formats[0])
	}
	if u := m.lastUser(t, 0); !strings.Contains(u, "<request>\nflowchart of an order") || !strings.Contains(u, "<scene>\nscene: empty") {
		t.Errorf("opening message does not fence the scene and request as data:\n%s", u)
	}
	if m.chats != 0 {
		t.Errorf("the tool loop was asked %d times", m.chats)
	}
	if got, want := set.names(), []string{"create_graph"}; !reflect.DeepEqual(got, want) {
		t.Fatalf("calls %v, want %v", got, want)
	}
	if res.Reason != StopDone || !res.Finished || res.Turns != 1 || res.ToolCalls != 1 || res.ToolErrors != 0 {
		t.Fatalf("result: reason %s finished %v turns %d calls %d errors %d warnings %q", res.Reason, res.Finished, res.Turns,
			res.ToolCalls, res.ToolErrors, res.Warnings)
	}
	if res.Summary != "An order flow with a stock check." {
		t.Errorf("summary %q", res.Summary)
	}
	if len(steps) != 2 || steps[0].Kind != StepModel || steps[1].Kind != StepTool || steps[1].Tool != "create_graph" {
		t.Errorf("steps %+v, want a model step then a create_graph step", steps)
	}
	labels := planLabels(t, res.State)
	for id, want := range map[string]string{"start": "Start", "check": "In stock?", "ship": "Ship it", "end": "End"} {
		if labels[id] != want {
			t.Errorf("node %s label %q, want %q", id, labels[id], want)
		}
	}
	if len(res.Memory.Exchanges) != 1 || !res.Memory.HasScene {
		t.Errorf("memory not updated: %+v", res.Memory)
	}
	if c, _ := set.Scene().Get("check"); c.Type != scene.Diamond {
		t.Errorf("check is a %s, want a diamond", c.Type)
	}
}

func TestPlanOrgChartAndMindmap(t *testing.T) {
	cases := []struct {
		name, plan, dir string
	}{
		{"orgchart", `{"kind":"orgchart","nodes":[{"id":"ceo","label":"CEO"},{"id":"cto","label":"CTO"},{"id":"cfo","label":"CFO"},
			{"id":"dev","label":"Platform team"},{"id":"ops","label":"Ops team"}],"edges":[{"from":"ceo","to":"cto"},{"from":"ceo","to":"cfo"},
			{"from":"cto","to":"dev"},{"from":"cto","to":"ops"}],"summary":"Org chart."}`, "TB"},
		{"mindmap", `{"kind":"mindmap","nodes":[{"id":"root","label":"Launch"},{"id":"a","label":"Marketing"},{"id":"b","label":"Product"},
			{"id":"c","label":"Sales"}],"edges":[{"from":"root","to":"a"},{"from":"root","to":"b"},{"from":"root","to":"c"}],"summary":"Mind map."}`, "mindmap"},
		{"architecture", archPlan, "LR"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			m := &scriptedPlanner{answers: []string{tc.plan}}
			set := newRecordingSet(nil)
			res := runPlanned(t, planAgent(m, ProtocolPlan), set.request("draw it", Memory{}))
			if res.Reason != StopDone || res.ToolErrors != 0 || m.requests() != 1 {
				t.Fatalf("reason %s, tool errors %d, requests %d: %+v", res.Reason, res.ToolErrors, m.requests(), res.Steps)
			}
			if got := set.calls[0].args["direction"]; got != tc.dir {
				t.Errorf("direction %v, want %s", got, tc.dir)
			}
			if tc.name == "orgchart" {
				ceo, _ := set.Scene().Get("ceo")
				cto, _ := set.Scene().Get("cto")
				if !(ceo.Y+ceo.Height <= cto.Y) {
					t.Errorf("the CEO (y %v) is not above the CTO (y %v)", ceo.Y, cto.Y)
				}
			}
			if tc.name == "architecture" {
				if _, ok := set.Scene().Get("be"); !ok {
					t.Errorf("group frame be not drawn")
				}
			}
		})
	}
}

// TestPlanFollowUp draws an architecture, moves a node as a person would in the editor, then
// plays a follow-up plan that renames and recolours the API by id, adds a cache and re-lists a
// node unchanged: only update_graph and add_to_graph run, the moved node stays put and the
// untouched elements keep their ids and positions.
func TestPlanFollowUp(t *testing.T) {
	m := &scriptedPlanner{answers: []string{archPlan}}
	set := newRecordingSet(nil)
	a := planAgent(m, ProtocolPlan)
	first := runPlanned(t, a, set.request("architecture: web app, API, database", Memory{}))
	if first.Reason != StopDone {
		t.Fatalf("first run: %s %+v", first.Reason, first.Steps)
	}
	edited := set.Scene().Clone()
	if err := edited.MoveBy([]string{"db"}, 0, 140); err != nil {
		t.Fatal(err)
	}
	before := map[string]scene.Element{}
	for _, e := range edited.Elements() {
		before[e.ID] = e
	}
	set2 := newRecordingSet(edited)
	m.answers = []string{`Here is the plan:
{"kind":"architecture","nodes":[{"id":"api","label":"API v2","color":"green"},{"id":"web","label":"Web app"},
 {"id":"cache","label":"Cache","shape":"ellipse","group":"be"}],"edges":[{"from":"api","to":"cache","style":"dashed"},{"from":"web","to":"api","label":"REST"}],
 "summary":"Renamed the API, made it green and added a cache."}`}
	second := runPlanned(t, a, set2.request("rename the API to API v2, make it green and add a cache", first.Memory))
	if m.requests() != 2 {
		t.Fatalf("requests %d, want 2 (one per run)", m.requests())
	}
	if got, want := set2.names(), []string{"update_graph", "add_to_graph"}; !reflect.DeepEqual(got, want) {
		t.Fatalf("calls %v, want %v", got, want)
	}
	up := set2.calls[0].args["nodes"].([]any)
	if len(up) != 1 || up[0].(map[string]any)["node"] != "api" || up[0].(map[string]any)["label"] != "API v2" {
		t.Errorf("update_graph nodes %v, want only api renamed and recoloured", up)
	}
	if _, ok := set2.calls[0].args["edges"]; ok {
		t.Errorf("an unchanged edge was updated: %v", set2.calls[0].args)
	}
	if second.Reason != StopDone || second.ToolErrors != 0 {
		t.Fatalf("second run: %s, %d errors: %+v", second.Reason, second.ToolErrors, second.Steps)
	}
	sc := set2.Scene()
	if db, _ := sc.Get("db"); db.X != before["db"].X || db.Y != before["db"].Y {
		t.Errorf("the moved node went back: db at %v,%v, want %v,%v", db.X, db.Y, before["db"].X, before["db"].Y)
	}
	for _, id := range []string{"web", "api"} {
		e, ok := sc.Get(id)
		if !ok || e.X != before[id].X || e.Y != before[id].Y {
			t.Errorf("%s moved or is gone: %v,%v, want %v,%v", id, e.X, e.Y, before[id].X, before[id].Y)
		}
	}
	for id, old := range before {
		if old.Type == scene.Arrow || old.Type == scene.Text || old.Type == scene.Frame {
			continue
		}
		if _, ok := sc.Get(id); !ok {
			t.Errorf("%s was removed", id)
		}
	}
	if got := planLabels(t, second.State)["api"]; got != "API v2" {
		t.Errorf("api label %q", got)
	}
	if api, _ := sc.Get("api"); api.BackgroundColor != "#b2f2bb" {
		t.Errorf("api fill %s, want green", api.BackgroundColor)
	}
	cache, ok := sc.Get("cache")
	if !ok || cache.Type != scene.Ellipse || cache.FrameID != "be" {
		t.Errorf("cache %+v: want an ellipse in the Backend frame", cache)
	}

	// A follow-up that removes the cache (by label) and the web→api arrow.
	set3 := newRecordingSet(sc)
	m.answers = []string{`{"kind":"architecture","nodes":[],"edges":[],"remove":["Cache","web->api"],"summary":"Removed the cache."}`}
	third := runPlanned(t, a, set3.request("remove the cache and the arrow from web to api", second.Memory))
	if got, want := set3.names(), []string{"remove_from_graph"}; !reflect.DeepEqual(got, want) {
		t.Fatalf("calls %v, want %v", got, want)
	}
	if third.Reason != StopDone || third.ToolErrors != 0 {
		t.Fatalf("third run: %s: %+v", third.Reason, third.Steps)
	}
	if _, ok := set3.Scene().Get("cache"); ok {
		t.Error("cache still there")
	}
	if db, _ := set3.Scene().Get("db"); db.Y != before["db"].Y {
		t.Errorf("db moved on removal")
	}
	if labels := planLabels(t, third.State); labels["web"] != "Web app" || labels["api"] != "API v2" {
		t.Errorf("labels after removal %v", labels)
	}
}

// TestPlanInvalidRetried: each invalid plan gets one retry whose message names the problem
// precisely; the corrected plan is drawn.
func TestPlanInvalidRetried(t *testing.T) {
	long := strings.Repeat("x", 501)
	many := `{"kind":"flowchart","nodes":[` + strings.TrimSuffix(strings.Repeat(`{"id":"n","label":"N"},`, 201), ",") + `],"edges":[]}`
	cases := []struct {
		name, plan, want string
	}{
		{"not json", `I would draw a box for the API and one for the DB.`, "holds no JSON object"},
		{"broken json", `{"kind":"flowchart","nodes":[{"id":"a","label":"A"}`, "the JSON object is cut off"},
		{"invalid json", `{"kind":"flowchart","nodes":[{"id":"a","label":"A",}]}`, "the answer is not valid JSON (invalid character"},
		{"nodes not a list", `{"kind":"flowchart","nodes":{"id":"a"},"edges":[]}`, "nodes: want a list [...], got an object"},
		{"label not a string", `{"kind":"flowchart","nodes":[{"id":"a","label":{"text":"A"}}],"edges":[]}`, "nodes[0].label: want a string, got an object"},
		{"empty label", `{"kind":"flowchart","nodes":[{"id":"a","label":""}],"edges":[]}`, `nodes[0].label: node "a" is new and has no label`},
		{"long label", `{"kind":"flowchart","nodes":[{"id":"a","label":"` + long + `"}],"edges":[]}`, "nodes[0].label: the text is 501 characters long; the limit is 500"},
		{"too many", many, "the plan has 201 nodes, edges and messages; the limit is 200"},
		{"duplicate id", `{"kind":"flowchart","nodes":[{"id":"a","label":"A"},{"id":"a","label":"B"}],"edges":[]}`, `nodes[1].id: "a" is used twice (also nodes[0])`},
		{"unknown edge end", `{"kind":"flowchart","nodes":[{"id":"a","label":"A"},{"id":"b","label":"B"}],"edges":[{"from":"a","to":"c"}]}`, `edges[0].to: "c" is not the id of a node; the nodes are a, b`},
		{"self edge", `{"kind":"flowchart","nodes":[{"id":"a","label":"A"}],"edges":[{"from":"a","to":"A"}]}`, `edges[0]: goes from "a" to itself`},
		{"unknown shape", `{"kind":"flowchart","nodes":[{"id":"a","label":"A","shape":"hexagon"}],"edges":[]}`, `nodes[0].shape: "hexagon" is not a shape; use rectangle, ellipse or diamond`},
		{"unknown colour", `{"kind":"flowchart","nodes":[{"id":"a","label":"A","color":"blurple"}],"edges":[]}`, `nodes[0].color: "blurple" is not a colour`},
		{"unknown kind", `{"kind":"gantt","nodes":[{"id":"a","label":"A"}],"edges":[]}`, `kind: "gantt" is not a kind; use one of flowchart, architecture, orgchart, mindmap, sequence`},
		{"unknown direction", `{"kind":"flowchart","direction":"diagonal","nodes":[{"id":"a","label":"A"}],"edges":[]}`, `direction: "diagonal" is not a direction`},
		{"unknown style", `{"kind":"flowchart","nodes":[{"id":"a","label":"A"},{"id":"b","label":"B"}],"edges":[{"from":"a","to":"b","style":"wavy"}]}`, `edges[0].style: "wavy" is not a line style`},
		{"remove on empty canvas", `{"kind":"flowchart","nodes":[{"id":"a","label":"A"}],"edges":[],"remove":["x"]}`, `remove[0]: "x" is not on the canvas, which has no nodes`},
		{"empty plan", `{"kind":"flowchart","nodes":[],"edges":[]}`, "nodes: the plan is empty"},
		{"sequence without messages", `{"kind":"sequence","nodes":[{"id":"a","label":"A"}],"edges":[]}`, "messages: a sequence diagram needs messages"},
		{"not an object", `["a","b"]`, "holds no JSON object"},
	}
	good := `{"kind":"flowchart","nodes":[{"id":"a","label":"A"},{"id":"b","label":"B"}],"edges":[{"from":"a","to":"b"}],"summary":"A to B."}`
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			m := &scriptedPlanner{answers: []string{tc.plan, good}}
			set := newRecordingSet(nil)
			res := runPlanned(t, planAgent(m, ProtocolPlan), set.request("a to b", Memory{}))
			if m.requests() != 2 {
				t.Fatalf("requests %d, want 2", m.requests())
			}
			retry := m.lastUser(t, 1)
			if !strings.Contains(retry, "Your answer was not a valid diagram plan:") || !strings.Contains(retry, tc.want) {
				t.Errorf("retry message does not say %q:\n%s", tc.want, retry)
			}
			if m.formats[1] == nil {
				t.Error("the retry was sent without the schema")
			}
			if ms := m.sent[1]; ms[len(ms)-2].Role != ollama.RoleAssistant || ms[len(ms)-2].Content == "" {
				t.Errorf("the retry does not show the model its answer: %+v", ms[len(ms)-2])
			}
			if res.Reason != StopDone || res.Summary != "A to B." || !res.Finished {
				t.Fatalf("after the retry: %s %q %+v", res.Reason, res.Summary, res.Steps)
			}
			if got := set.names(); !reflect.DeepEqual(got, []string{"create_graph"}) {
				t.Errorf("calls %v", got)
			}
		})
	}
}

// TestPlanForgiving: answers a small model writes that mean a valid plan are drawn at once.
func TestPlanForgiving(t *testing.T) {
	cases := []struct {
		name, answer string
		check        func(t *testing.T, sc *scene.Scene)
	}{
		{"fenced in prose", "Sure! Here is the plan:\n```json\n" + `{"kind":"flowchart","nodes":[{"id":"a","label":"A"},{"id":"b","label":"B"}],"edges":[{"from":"a","to":"b"}]}` + "\n```\nLet me know.", nil},
		{"think block and prose", "<think>\n</think>\n\nThe plan is " + `{"kind":"flowchart","nodes":[{"id":"a","label":"A {1}"},{"id":"b","label":"B"}],"edges":[{"from":"a","to":"b"}]}` + " as asked.", nil},
		{"synonyms", `{"type":"Flow Chart","direction":"top-down","nodes":[{"id":"a","text":"Start","shape":"circle","colour":"purple"},{"id":"b","name":"Step","shape":"box"},{"id":"c","label":"OK?","shape":"decision"}],
			"links":[{"source":"Start","target":"Step","style":"dash"},{"from":"b","to":"OK?"}]}`,
			func(t *testing.T, sc *scene.Scene) {
				if a, _ := sc.Get("a"); a.Type != scene.Ellipse || a.BackgroundColor != "#d0bfff" {
					t.Errorf("a: %s %s, want a violet ellipse", a.Type, a.BackgroundColor)
				}
				if c, _ := sc.Get("c"); c.Type != scene.Diamond {
					t.Errorf("c: %s, want diamond", c.Type)
				}
			}},
		{"names as ids", `{"kind":"architecture","nodes":[{"id":"Load Balancer","label":"Load Balancer"},{"id":"App Server","label":"App Server"}],"edges":[{"from":"Load Balancer","to":"App Server"}]}`,
			func(t *testing.T, sc *scene.Scene) {
				if _, ok := sc.Get("load-balancer"); !ok {
					t.Error("no node load-balancer")
				}
			}},
		{"numbers as labels", `{"kind":"flowchart","nodes":[{"id":"y1","label":2024},{"id":"y2","label":2025}],"edges":[{"from":"y1","to":"y2"}]}`, nil},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			m := &scriptedPlanner{answers: []string{tc.answer}}
			set := newRecordingSet(nil)
			res := runPlanned(t, planAgent(m, ProtocolPlan), set.request("draw", Memory{}))
			if m.requests() != 1 || res.Reason != StopDone || res.ToolErrors != 0 {
				t.Fatalf("requests %d, reason %s, errors %d: %+v", m.requests(), res.Reason, res.ToolErrors, res.Steps)
			}
			if tc.check != nil {
				tc.check(t, set.Scene())
			}
		})
	}
}

func TestPlanSequence(t *testing.T) {
	plan := `{"kind":"sequence","nodes":[{"id":"browser","label":"Browser"},{"id":"api","label":"API"}],"edges":[],
	 "messages":[{"from":"browser","to":"api","label":"GET /cart"},{"from":"API","to":"browser","label":"200 OK","reply":true}],"summary":"Cart request."}`
	m := &scriptedPlanner{answers: []string{plan, plan}}
	set := newRecordingSet(nil)
	a := planAgent(m, ProtocolPlan)
	res := runPlanned(t, a, set.request("sequence: browser gets the cart from the API", Memory{}))
	if got := set.names(); !reflect.DeepEqual(got, []string{"create_sequence"}) || res.Reason != StopDone || res.ToolErrors != 0 {
		t.Fatalf("calls %v, %s: %+v", got, res.Reason, res.Steps)
	}
	msgs := set.calls[0].args["messages"].([]any)
	if msgs[1].(map[string]any)["return"] != true || msgs[1].(map[string]any)["from"] != "api" {
		t.Errorf("reply message %v", msgs[1])
	}
	n := set.Scene().Len()
	// A follow-up on a sequence redraws it from the whole message list.
	set2 := newRecordingSet(set.Scene())
	res2 := runPlanned(t, a, set2.request("same again", res.Memory))
	if got := set2.names(); !reflect.DeepEqual(got, []string{"clear_canvas", "create_sequence"}) || res2.ToolErrors != 0 {
		t.Fatalf("follow-up calls %v: %+v", got, res2.Steps)
	}
	if set2.Scene().Len() != n {
		t.Errorf("redrawn sequence has %d elements, want %d", set2.Scene().Len(), n)
	}
}

// TestPlanMermaidFallback: two answers that are not plans, then Mermaid without the schema.
func TestPlanMermaidFallback(t *testing.T) {
	m := &scriptedPlanner{answers: []string{"A box for A, then B.", `{"nodes":"A, B"}`,
		"Here it is:\n```mermaid\nflowchart TD\n  A[Start] --> B[End]\n```"}}
	set := newRecordingSet(nil)
	conv := &fixtureMermaid{}
	set.SetMermaid(conv)
	res := runPlanned(t, planAgent(m, ProtocolPlan), set.request("start to end", Memory{}))
	if m.requests() != 3 || m.formats[2] != nil {
		t.Fatalf("requests %d (want 3), last format %s (want none)", m.requests(), m.formats[2])
	}
	fb := m.lastUser(t, 2)
	if !strings.Contains(fb, "```mermaid") || !strings.Contains(fb, "nodes: want a list [...], got the string") {
		t.Errorf("fallback message:\n%s", fb)
	}
	if got := set.names(); !reflect.DeepEqual(got, []string{"create_from_mermaid"}) || res.Reason != StopDone || res.ToolErrors != 0 {
		t.Fatalf("calls %v, %s: %+v", got, res.Reason, res.Steps)
	}
	if len(conv.calls) != 1 || !strings.HasPrefix(conv.calls[0], "flowchart TD\n  A[Start]") {
		t.Errorf("converter got %q", conv.calls)
	}
	if set.Scene().Len() == 0 {
		t.Error("nothing imported")
	}
	if !strings.Contains(res.Summary, "Mermaid") {
		t.Errorf("summary %q", res.Summary)
	}
	if want := (Corrections{Retries: 1, WithoutSchema: 1}); res.Corrections != want {
		t.Errorf("corrections %+v, want %+v", res.Corrections, want)
	}
}

// TestPlanFallbackJSON: the fallback may answer with the plan in a fence instead.
func TestPlanFallbackJSON(t *testing.T) {
	m := &scriptedPlanner{answers: []string{"no", "still no", "```json\n" + flowPlan + "\n```"}}
	set := newRecordingSet(nil)
	res := runPlanned(t, planAgent(m, ProtocolPlan), set.request("flow", Memory{}))
	if res.Reason != StopDone || res.Turns != 3 || !reflect.DeepEqual(set.names(), []string{"create_graph"}) {
		t.Fatalf("%s after %d turns, calls %v", res.Reason, res.Turns, set.names())
	}
}

// TestPlanAllFail: nothing the model says can be drawn: a clear summary, the scene untouched,
// nothing remembered.
func TestPlanAllFail(t *testing.T) {
	set := newRecordingSet(nil)
	if r := set.Set.Call(t.Context(), "create_graph", json.RawMessage(`{"nodes":[{"id":"x","label":"Kept"}]}`)); r.IsError {
		t.Fatal(r.Text)
	}
	before, _ := set.Scene().Encode()
	mem := Memory{}.Add(Exchange{Request: "draw x", Summary: "Drew x."})
	m := &scriptedPlanner{answers: []string{`{"kind":"flowchart","nodes":[{"id":"a","label":"A"}],"edges":[{"from":"a","to":"zz"}]}`,
		"sorry", "```mermaid\nnot mermaid at all\n```"}}
	res := runPlanned(t, planAgent(m, ProtocolPlan), set.request("add a", mem))
	if res.Reason != StopInvalidPlan || res.Finished || m.requests() != 3 {
		t.Fatalf("reason %s finished %v requests %d", res.Reason, res.Finished, m.requests())
	}
	if !strings.HasPrefix(res.Summary, "The model's answer was not a diagram plan: ") || !strings.Contains(res.Summary, "holds no JSON object") {
		t.Errorf("summary %q", res.Summary)
	}
	if after, _ := set.Scene().Encode(); !bytes.Equal(before, after) || res.Changed {
		t.Error("the scene changed")
	}
	if len(set.calls) != 0 {
		t.Errorf("tools called: %v (no Mermaid converter, nothing valid)", set.names())
	}
	if !reflect.DeepEqual(res.Memory, mem) {
		t.Errorf("memory changed: %+v", res.Memory)
	}
}

// TestPlanRefusedByTool: a plan the tool refuses (here: a group id taken by a node) counts as
// invalid; the retry carries the tool's message.
func TestPlanRefusedByTool(t *testing.T) {
	bad := `{"kind":"flowchart","nodes":[{"id":"a","label":"A","group":"a"}],"edges":[],"groups":[{"id":"a","title":"Team"}]}`
	m := &scriptedPlanner{answers: []string{bad, `{"kind":"flowchart","nodes":[{"id":"a","label":"A"}],"edges":[]}`}}
	set := newRecordingSet(nil)
	res := runPlanned(t, planAgent(m, ProtocolPlan), set.request("a", Memory{}))
	if m.requests() != 2 || !strings.Contains(m.lastUser(t, 1), "create_graph refused the plan") {
		t.Fatalf("requests %d, retry %q", m.requests(), m.lastUser(t, 1))
	}
	if res.Reason != StopDone {
		t.Fatalf("%s: %+v", res.Reason, res.Steps)
	}
}

func TestPlanProtocolChoice(t *testing.T) {
	good := `{"kind":"flowchart","nodes":[{"id":"a","label":"A"}],"edges":[],"summary":"A."}`
	t.Run("auto picks plans for a model without tools", func(t *testing.T) {
		m := &scriptedPlanner{answers: []string{good}}
		d := describedPlanner{m, ollama.ModelInfo{Name: "gemma3:4b", Capabilities: []string{ollama.CapCompletion, ollama.CapVision}}}
		set := newRecordingSet(nil)
		res := runPlanned(t, New(d, Config{}, nil), set.request("a", Memory{}))
		if m.chats != 0 || m.requests() != 1 || res.Reason != StopDone {
			t.Fatalf("chats %d, plan requests %d, %s", m.chats, m.requests(), res.Reason)
		}
	})
	t.Run("auto keeps tools for a model with them", func(t *testing.T) {
		m := &scriptedPlanner{}
		d := describedPlanner{m, ollama.ModelInfo{Capabilities: []string{ollama.CapCompletion, ollama.CapTools}}}
		runPlanned(t, New(d, Config{}, nil), newRecordingSet(nil).request("a", Memory{}))
		if m.chats == 0 || m.requests() != 0 { // the loop may ask again after an answer that draws nothing
			t.Fatalf("chats %d, plan requests %d", m.chats, m.requests())
		}
	})
	t.Run("auto keeps tools when capabilities are unknown", func(t *testing.T) {
		m := &scriptedPlanner{}
		d := describedPlanner{m, ollama.ModelInfo{}}
		runPlanned(t, New(d, Config{}, nil), newRecordingSet(nil).request("a", Memory{}))
		if m.chats == 0 || m.requests() != 0 { // the loop may ask again after an answer that draws nothing
			t.Fatalf("chats %d, plan requests %d", m.chats, m.requests())
		}
	})
	t.Run("auto switches after the server refuses tools, and stays", func(t *testing.T) {
		m := &scriptedPlanner{answers: []string{good, good},
			chatErr: fmt.Errorf("model x cannot call tools: %w", ollama.ErrNoToolSupport)}
		a := New(m, Config{}, nil)
		res := runPlanned(t, a, newRecordingSet(nil).request("a", Memory{}))
		if m.chats != 1 || m.requests() != 1 || res.Reason != StopDone || res.Summary != "A." {
			t.Fatalf("first run: chats %d, plan requests %d, %s %q", m.chats, m.requests(), res.Reason, res.Summary)
		}
		runPlanned(t, a, newRecordingSet(nil).request("a", Memory{}))
		if m.chats != 1 || m.requests() != 2 {
			t.Fatalf("second run: chats %d (want still 1), plan requests %d", m.chats, m.requests())
		}
	})
	t.Run("tools never plans", func(t *testing.T) {
		m := &scriptedPlanner{chatErr: fmt.Errorf("model x cannot call tools: %w", ollama.ErrNoToolSupport)}
		_, err := New(m, Config{Protocol: ProtocolTools}, nil).Run(t.Context(), newRecordingSet(nil).request("a", Memory{}))
		if !errors.Is(err, ollama.ErrNoToolSupport) || m.requests() != 0 {
			t.Fatalf("err %v, plan requests %d", err, m.requests())
		}
	})
	t.Run("plan needs a formatter", func(t *testing.T) {
		_, err := New(toolsOnlyModel{}, Config{Protocol: ProtocolPlan}, nil).Run(t.Context(), newRecordingSet(nil).request("a", Memory{}))
		if err == nil || !strings.Contains(err.Error(), "plan protocol needs a model that can answer in a JSON format") {
			t.Fatalf("err %v", err)
		}
	})
	t.Run("unknown protocol", func(t *testing.T) {
		_, err := New(toolsOnlyModel{}, Config{Protocol: "telepathy"}, nil).Run(t.Context(), newRecordingSet(nil).request("a", Memory{}))
		if err == nil || !strings.Contains(err.Error(), `protocol "telepathy" is not one of auto, tools, plan`) {
			t.Fatalf("err %v", err)
		}
	})
}

// TestPlanFallbackWithoutMermaid: a toolbox without create_from_mermaid is not offered Mermaid.
func TestPlanFallbackWithoutMermaid(t *testing.T) {
	m := &scriptedPlanner{answers: []string{"x", "y", "```mermaid\nflowchart TD\n A --> B\n```"}}
	b := newBoard()
	res := runPlanned(t, planAgent(m, ProtocolPlan), Request{Prompt: "a to b", Tools: b, Scene: b})
	if fb := m.lastUser(t, 2); strings.Contains(fb, "ermaid") || !strings.Contains(fb, "```json fence") {
		t.Errorf("fallback message:\n%s", fb)
	}
	if res.Reason != StopInvalidPlan || len(b.calls) != 1 || !strings.HasPrefix(b.calls[0], "get_scene") {
		t.Errorf("reason %s, calls %q", res.Reason, b.calls)
	}
}

// TestPlanSummaryFromScene: a plan without a summary is summed up from what changed in the scene.
func TestPlanSummaryFromScene(t *testing.T) {
	m := &scriptedPlanner{answers: []string{`{"kind":"flowchart","nodes":[{"id":"a","label":"Deploy"},{"id":"b","label":"Monitoring"}],"edges":[{"from":"a","to":"b"}]}`}}
	res := runPlanned(t, planAgent(m, ProtocolPlan), newRecordingSet(nil).request("deploy then monitoring", Memory{}))
	if res.Reason != StopDone || !strings.Contains(res.Summary, "Monitoring") || !strings.Contains(res.Summary, "Deploy") {
		t.Errorf("summary %q (%s), want the scene's change in words", res.Summary, res.Reason)
	}
}

// TestPlanHeldToTheToolsLimits: a plan is checked against the limits the toolbox was made with,
// so a plan its tools would refuse gets a retry that names the limit, not a wasted tool call.
func TestPlanHeldToTheToolsLimits(t *testing.T) {
	m := &scriptedPlanner{answers: []string{flowPlan, `{"kind":"flowchart","nodes":[{"id":"a","label":"A"},{"id":"b","label":"B"}],"edges":[{"from":"a","to":"b"}]}`}}
	set := &recordingSet{Set: tools.New(nil, tools.Limits{MaxBatch: 3})}
	res := runPlanned(t, planAgent(m, ProtocolPlan), set.request("a flow", Memory{}))
	if retry := m.lastUser(t, 1); !strings.Contains(retry, "the limit is 3") {
		t.Errorf("retry says %q, want the toolbox's limit of 3", retry)
	}
	if res.Reason != StopDone || set.Scene().Len() == 0 {
		t.Errorf("reason %s, %d elements; want the smaller plan drawn", res.Reason, set.Scene().Len())
	}
}
