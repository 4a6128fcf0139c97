package plan

import (
	"fmt"
	"os"
	"reflect"
	"testing"

	"github.com/excalibot/excalibot/scene"
	"github.com/excalibot/excalibot/tools"
)

// TestIndexScene reads get_scene's text as the tools write it (their golden file).
func TestIndexScene(t *testing.T) {
	b, err := os.ReadFile("../../tools/testdata/groups-frame.scene.golden")
	if err != nil {
		t.Fatal(err)
	}
	ix := IndexScene(string(b))
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
	ix := IndexScene(text)
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
	ix = IndexScene(set.Call(t.Context(), "get_scene", []byte("{}")).Text)
	if !ix.sequence || len(ix.order) != 2 {
		t.Errorf("after a sequence: sequence %v, nodes %v", ix.sequence, ix.order)
	}
}

// A colour word reaches the canvas the same way through a plan and through a tool call of the
// model's own: a word outside the palette ("magenta"), a shade of an alias ("light grey"), hex
// and the other spellings, and a word one path refuses the other refuses too.
func TestColorWordsBothPaths(t *testing.T) {
	empty := IndexScene(tools.New(scene.New(), tools.Limits{}).Call(t.Context(), "get_scene", []byte("{}")).Text)
	bgOf := func(t *testing.T, set *tools.Set) string {
		t.Helper()
		ix := IndexScene(set.Call(t.Context(), "get_scene", []byte("{}")).Text)
		if ix.nodes["a"] == nil {
			t.Fatalf("no node a on the canvas")
		}
		return ix.nodes["a"].bg
	}
	viaPlan := func(t *testing.T, word string) (string, bool) {
		cp, probs := Check(Plan{Nodes: []Node{{ID: "a", Label: "A", Color: word}}}, empty, tools.Limits{})
		if len(probs) > 0 {
			return probs.Error(), false
		}
		set := tools.New(scene.New(), tools.Limits{})
		for _, c := range Expand(cp, empty) {
			if r := set.Call(t.Context(), c.Name, c.Args); r.IsError {
				t.Fatalf("%s %s: %s", c.Name, c.Args, r.Text)
			}
		}
		return bgOf(t, set), true
	}
	viaTool := func(t *testing.T, word string) (string, bool) {
		set := tools.New(scene.New(), tools.Limits{})
		args := fmt.Sprintf(`{"nodes":[{"id":"a","label":"A","color":%q}]}`, word)
		if r := set.Call(t.Context(), tools.CreateGraph, []byte(args)); r.IsError {
			return r.Text, false
		}
		return bgOf(t, set), true
	}
	for _, tt := range []struct {
		word, bg string // bg is get_scene's name of the fill; "" for none
	}{
		{"magenta", "pink"},
		{"light grey", "gray"}, // the light shade is a bare hue's fill
		{"Dark Red", "red-dark"},
		{"blue_lightest", "blue-lightest"},
		{"purple", "violet"},
		{"#ABC", "#aabbcc"},
		{"#1971c2", "blue-dark"},
		{"white", "white"},
		{"none", ""},
		{"blurple", "!"}, // "!" marks a word both paths refuse
		{"white-dark", "!"},
		{"light", "!"},
		{"#12345", "!"},
		{"#ggg", "!"},
	} {
		for _, path := range []struct {
			name string
			draw func(*testing.T, string) (string, bool)
		}{{"plan", viaPlan}, {"tool", viaTool}} {
			t.Run(path.name+"/"+tt.word, func(t *testing.T) {
				got, ok := path.draw(t, tt.word)
				switch {
				case tt.bg == "!" && ok:
					t.Errorf("got fill %q, want %q refused", got, tt.word)
				case tt.bg != "!" && !ok:
					t.Errorf("refused: %s; want fill %q", got, tt.bg)
				case ok && got != tt.bg:
					t.Errorf("got fill %q, want %q", got, tt.bg)
				}
			})
		}
	}
}

// The plan schema's colour enum offers only names the tools read back unchanged.
func TestPlanColorsAreToolColors(t *testing.T) {
	for _, c := range colors {
		if got, err := tools.NormalizeColor(c); err != nil || got != c {
			t.Errorf("tools.NormalizeColor(%q) = %q, %v; want it unchanged", c, got, err)
		}
	}
}

// TestPlanPromptSize prints what the plan protocol sends besides the request; the schema and
// prompt are kept short for small models.
func TestPlanPromptSize(t *testing.T) {
	sys, schema := len(Prompt()), len(Schema())
	t.Logf("plan prompt %d bytes, schema %d bytes", sys, schema)
	if sys+schema > 4096 {
		t.Errorf("plan prompt and schema take %d bytes; keep them under 4 KB", sys+schema)
	}
}

// TestRemoveANodeWhoseLabelHoldsAnArrow: an item of remove that names a node on the canvas is that
// node, even when its label reads like an arrow; an item naming no node is read as an arrow.
func TestRemoveANodeWhoseLabelHoldsAnArrow(t *testing.T) {
	set := tools.New(scene.New(), tools.Limits{})
	if r := set.Call(t.Context(), "create_graph", []byte(`{"nodes":[{"id":"q","label":"Q1 → Q2"},{"id":"login","label":"Login->Home"},{"id":"done","label":"Done"}],"edges":["q -> done"]}`)); r.IsError {
		t.Fatalf("create_graph: %s", r.Text)
	}
	ix := IndexScene(set.Call(t.Context(), "get_scene", []byte(`{}`)).Text)
	for _, tt := range []struct {
		remove    string
		wantNodes int
		wantEdges int
	}{
		{"Q1 → Q2", 1, 0},
		{"Login->Home", 1, 0},
		{"q -> done", 0, 1},
	} {
		c, probs := Check(Plan{Kind: "flowchart", Remove: []string{tt.remove}}, ix, tools.Limits{})
		if len(probs) != 0 || len(c.removeNodes) != tt.wantNodes || len(c.removeEdges) != tt.wantEdges {
			t.Errorf("remove %q: %d nodes, %d edges, problems %v; want %d, %d, none", tt.remove, len(c.removeNodes), len(c.removeEdges), probs, tt.wantNodes, tt.wantEdges)
		}
	}
}
