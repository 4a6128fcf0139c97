package agent

import (
	"os"
	"reflect"
	"testing"

	"github.com/excalibot/excalibot/scene"
	"github.com/excalibot/excalibot/tools"
)

// TestIndexScene reads get_scene's text as the tools write it (their golden file).
func TestIndexScene(t *testing.T) {
	b, err := os.ReadFile("../tools/testdata/groups-frame.scene.golden")
	if err != nil {
		t.Fatal(err)
	}
	ix := indexScene(string(b))
	if got, want := ix.order, []string{"web", "mob", "api", "db", "cache"}; !reflect.DeepEqual(got, want) {
		t.Fatalf("nodes %v, want %v", got, want)
	}
	want := map[string]sceneNode{
		"web":   {id: "web", typ: "rectangle", label: "Web app", bg: "violet", group: "fe"},
		"db":    {id: "db", typ: "ellipse", label: "Postgres", bg: "teal"},
		"cache": {id: "cache", typ: "ellipse", label: "Redis", bg: "red-lightest"},
	}
	for id, w := range want {
		if got := *ix.nodes[id]; got != w {
			t.Errorf("%s: got %+v, want %+v", id, got, w)
		}
	}
	if ix.groups["fe"] != "Frontend" || ix.group("frontend") != "fe" {
		t.Errorf("groups %v", ix.groups)
	}
	if got := len(ix.edges); got != 4 {
		t.Errorf("%d edges, want 4", got)
	}
	if e, ok := ix.edge("db", "api"); !ok || e.label != "SQL" {
		t.Errorf("edge api-db: %+v %v", e, ok)
	}
	if ix.byLabel("https") != "" || ix.byLabel("  web   APP ") != "web" {
		t.Error("byLabel")
	}
	if !ix.content || ix.sequence {
		t.Errorf("content %v sequence %v", ix.content, ix.sequence)
	}
}

// TestIndexSceneFromTools indexes what the real tools print for a graph with a box group, a
// sequence and an id that must be quoted.
func TestIndexSceneFromTools(t *testing.T) {
	set := tools.New(scene.New(), tools.Limits{})
	mustCall := func(name, args string) {
		t.Helper()
		if r := set.Call(t.Context(), name, []byte(args)); r.IsError {
			t.Fatalf("%s: %s", name, r.Text)
		}
	}
	mustCall("create_graph", `{"nodes":[{"id":"a","label":"A \"quoted\"","group":"g"},{"id":"b","label":"B","group":"g"}],
		"edges":[{"from":"a","to":"b","label":"x","style":"dashed"}],"groups":[{"id":"g","title":"Team","style":"box"}]}`)
	text := set.Call(t.Context(), "get_scene", []byte("{}")).Text
	ix := indexScene(text)
	if got := ix.order; !reflect.DeepEqual(got, []string{"a", "b"}) {
		t.Fatalf("nodes %v in\n%s", got, text)
	}
	if ix.nodes["a"].label != `A "quoted"` || ix.nodes["a"].group != "g" || ix.groups["g"] != "Team" {
		t.Errorf("node a %+v, groups %v\n%s", *ix.nodes["a"], ix.groups, text)
	}
	if e, ok := ix.edge("a", "b"); !ok || e.style != "dashed" || e.label != "x" {
		t.Errorf("edge %+v\n%s", e, text)
	}
	mustCall("create_sequence", `{"messages":[{"from":"u","to":"s","label":"hi"}]}`)
	ix = indexScene(set.Call(t.Context(), "get_scene", []byte("{}")).Text)
	if !ix.sequence || len(ix.order) != 2 {
		t.Errorf("after a sequence: sequence %v, nodes %v", ix.sequence, ix.order)
	}
}

func TestPlanColor(t *testing.T) {
	for in, want := range map[string]string{"Blue": "blue", "light blue": "blue-light", "dark-red": "red-dark",
		"grey": "gray", "purple": "violet", "#ABC": "#abc", "#1971c2": "#1971c2", "white": "white", "none": "transparent",
		"magenta": "pink", "blue_lightest": "blue-lightest"} {
		if got, ok := planColor(in); !ok || got != want {
			t.Errorf("planColor(%q) = %q, %v; want %q", in, got, ok, want)
		}
	}
	for _, bad := range []string{"blurple", "#12345", "#ggg", "white-dark", "", "light"} {
		if got, ok := planColor(bad); ok {
			t.Errorf("planColor(%q) = %q, want refused", bad, got)
		}
	}
}

// TestPlanPromptSize prints what the plan protocol sends besides the request; the schema and
// prompt are kept short for small models.
func TestPlanPromptSize(t *testing.T) {
	sys, schema := len(PlanPrompt()), len(PlanSchema())
	t.Logf("plan prompt %d bytes, schema %d bytes", sys, schema)
	if sys+schema > 4096 {
		t.Errorf("plan prompt and schema take %d bytes; keep them under 4 KB", sys+schema)
	}
}
