package tools

import (
	"context"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/excalibot/excalibot/diagram/graph"
	"github.com/excalibot/excalibot/scene"
)

func TestParseEdge(t *testing.T) {
	nodes := map[string]bool{"api": true, "pe: iot hub": true, "step: 2": true}
	isNode := func(s string) bool { return nodes[strings.ToLower(s)] }
	for _, tt := range []struct {
		in   string
		want EdgeText
		bad  bool
	}{
		{in: "API -> DB", want: EdgeText{From: "API", To: "DB", Style: "solid", Arrow: "end"}},
		{in: "API -> DB: reads", want: EdgeText{From: "API", To: "DB", Label: "reads", Style: "solid", Arrow: "end"}},
		{in: "API -.-> DB", want: EdgeText{From: "API", To: "DB", Style: "dashed", Arrow: "end", Reply: true}},
		{in: "API ..> DB", want: EdgeText{From: "API", To: "DB", Style: "dotted", Arrow: "end", Reply: true}},
		{in: "API <-> DB", want: EdgeText{From: "API", To: "DB", Style: "solid", Arrow: "both"}},
		{in: "API <-.-> DB", want: EdgeText{From: "API", To: "DB", Style: "dashed", Arrow: "both", Reply: true}},
		{in: "API <..> DB", want: EdgeText{From: "API", To: "DB", Style: "dotted", Arrow: "both", Reply: true}},
		{in: "API --- DB", want: EdgeText{From: "API", To: "DB", Style: "solid", Arrow: "none"}},
		{in: "API -.- DB", want: EdgeText{From: "API", To: "DB", Style: "dashed", Arrow: "none"}},
		{in: "API ... DB", want: EdgeText{From: "API", To: "DB", Style: "dotted", Arrow: "none"}},
		{in: "API->DB", want: EdgeText{From: "API", To: "DB", Style: "solid", Arrow: "end"}},
		{in: "API → DB", want: EdgeText{From: "API", To: "DB", Style: "solid", Arrow: "end"}},
		// Mermaid's forms
		{in: "API -->|SQL| DB", want: EdgeText{From: "API", To: "DB", Label: "SQL", Style: "solid", Arrow: "end", Reply: true}},
		{in: "Client ->> API: GET /", want: EdgeText{From: "Client", To: "API", Label: "GET /", Style: "solid", Arrow: "end"}},
		{in: "API -->> Client: 200", want: EdgeText{From: "API", To: "Client", Label: "200", Style: "solid", Arrow: "end", Reply: true}},
		// names with the form's own marks in them
		{in: "Loading... -> Done", want: EdgeText{From: "Loading...", To: "Done", Style: "solid", Arrow: "end"}},
		{in: "Gateway -> PE: IoT Hub", want: EdgeText{From: "Gateway", To: "PE: IoT Hub", Style: "solid", Arrow: "end"}},
		{in: "Gateway -> Step: 2: next", want: EdgeText{From: "Gateway", To: "Step: 2", Label: "next", Style: "solid", Arrow: "end"}},
		{in: "PE: IoT Hub -> API: private link", want: EdgeText{From: "PE: IoT Hub", To: "API", Label: "private link", Style: "solid", Arrow: "end"}},
		{in: "Web -> API: GET /a->b", want: EdgeText{From: "Web", To: "API", Label: "GET /a->b", Style: "solid", Arrow: "end"}},
		{in: "API and DB", bad: true},
		{in: " -> DB", bad: true},
		{in: "API -> ", bad: true},
	} {
		t.Run(tt.in, func(t *testing.T) {
			got, err := ParseEdge(tt.in, isNode)
			if tt.bad {
				if err == nil {
					t.Fatalf("got %+v, want an error", got)
				}
				return
			}
			if err != nil || got != tt.want {
				t.Errorf("got %+v, %v; want %+v", got, err, tt.want)
			}
		})
	}
}

// Every arrow the pattern allows is one ParseEdge reads, with the style and head it stands for.
func TestEdgePatternArrows(t *testing.T) {
	re := regexp.MustCompile(EdgePattern)
	alts := regexp.MustCompile(`\(([^)]*)\)`).FindStringSubmatch(EdgePattern)[1]
	seen := map[[2]string]bool{}
	for _, tok := range strings.Split(strings.ReplaceAll(alts, `\.`, "."), "|") {
		s := "A " + tok + " B"
		if !re.MatchString(s) {
			t.Errorf("%q does not match the pattern", s)
		}
		e, err := ParseEdge(s, nil)
		if err != nil || e.From != "A" || e.To != "B" {
			t.Errorf("%q read as %+v, %v", s, e, err)
		}
		seen[[2]string{e.Style, e.Arrow}] = true
	}
	if len(seen) != 9 {
		t.Errorf("the pattern's arrows give %d of the 9 styles and heads: %v", len(seen), seen)
	}
}

// The graph tools take the short forms a plan is written in, and draw the same diagram as the
// long form.
func TestGraphShortForms(t *testing.T) {
	long := `{"direction":"LR","groups":[{"id":"cloud","title":"Cloud"},{"id":"be","title":"Backend","parent":"cloud"}],
		"nodes":[{"id":"web","label":"Web"},{"id":"api","label":"API","group":"be"},{"id":"db","label":"Orders DB","shape":"ellipse","group":"be"}],
		"edges":[{"from":"web","to":"api","label":"HTTPS"},{"from":"api","to":"db","style":"dashed"},{"from":"db","to":"web","arrow":"none","style":"dotted"}]}`
	short := `{"direction":"LR","groups":[{"title":"Cloud"},{"title":"Backend","parent":"Cloud","nodes":["API",{"label":"Orders DB","shape":"ellipse"}]}],
		"nodes":["Web"],"edges":["Web -> API: HTTPS","API -.-> Orders DB","Orders DB ... Web"]}`
	draw := func(args string) *IndexedScene {
		t.Helper()
		set := New(scene.New(), Limits{})
		if r := set.Call(context.Background(), CreateGraph, []byte(args)); r.IsError {
			t.Fatalf("create_graph %s: %s", args, r.Text)
		}
		return indexScene(set.Scene())
	}
	if got, want := draw(short), draw(long); !got.equal(want) {
		t.Errorf("short form drew\n%v\nlong form\n%v", got, want)
	}

	set := New(scene.New(), Limits{})
	for _, c := range [][2]string{
		{CreateGraph, `{"nodes":["Web","API"],"edges":["Web -> API"]}`},
		{AddToGraph, `{"groups":[{"title":"Data","nodes":["Cache"]}],"edges":["API -> Cache: reads"]}`},
		{RemoveFromGraph, `{"edges":["Web -> API"]}`},
	} {
		if r := set.Call(context.Background(), c[0], []byte(c[1])); r.IsError {
			t.Fatalf("%s %s: %s", c[0], c[1], r.Text)
		}
	}
	got := indexScene(set.Scene())
	want := &IndexedScene{nodes: map[string]string{"Web": "", "API": "", "Cache": "Data"}, edges: map[string]string{"API->Cache": "reads solid end"}}
	if !got.equal(want) {
		t.Errorf("after create, add and remove:\n%v\nwant\n%v", got, want)
	}

	// A group and the node it holds may share a name: the group's id keeps clear of the node's.
	same := New(scene.New(), Limits{})
	if r := same.Call(context.Background(), CreateGraph, []byte(`{"groups":[{"title":"Prometheus","nodes":["Prometheus","Alertmanager"]}],"edges":["Prometheus -> Alertmanager"]}`)); r.IsError {
		t.Errorf("a group named like its node: %s", r.Text)
	}

	r := set.Call(context.Background(), AddToGraph, []byte(`{"edges":["Web to Cache"]}`))
	if !r.IsError || !strings.Contains(r.Text, `edges[0]: "Web to Cache": write an edge as "A -> B"`) {
		t.Errorf("an edge without an arrow: %s", r.Text)
	}
}

// IndexedScene is a graph as a person reads it: each node's label with its group's title, each
// edge by its ends' labels with its label, style and head.
type IndexedScene struct {
	nodes map[string]string // label → group title path
	edges map[string]string // "from->to" → "label style arrow"
}

func (a *IndexedScene) equal(b *IndexedScene) bool {
	return strings.TrimSpace(a.String()) == strings.TrimSpace(b.String())
}

func (a *IndexedScene) String() string {
	var lines []string
	for l, g := range a.nodes {
		lines = append(lines, "node "+l+" in "+g)
	}
	for e, v := range a.edges {
		lines = append(lines, "edge "+e+" "+v)
	}
	slices.Sort(lines)
	return strings.Join(lines, "\n")
}

func indexScene(sc *scene.Scene) *IndexedScene {
	v := graph.Read(sc)
	out := &IndexedScene{nodes: map[string]string{}, edges: map[string]string{}}
	title := func(g string) string {
		var path []string
		for ; g != ""; g = v.Parent(g) {
			name := sc.LabelText(g)
			if e, ok := sc.Get(g); ok && e.Name != "" {
				name = e.Name
			}
			path = append([]string{name}, path...)
		}
		return strings.Join(path, "/")
	}
	for _, id := range v.Nodes() {
		out.nodes[sc.LabelText(id)] = title(v.GroupOf(id))
	}
	for _, id := range v.Edges() {
		e, _ := sc.Get(id)
		head := "end"
		switch {
		case e.StartArrowhead != "" && e.EndArrowhead != "":
			head = "both"
		case e.EndArrowhead == "":
			head = "none"
		}
		out.edges[sc.LabelText(e.StartBinding.ElementID)+"->"+sc.LabelText(e.EndBinding.ElementID)] = sc.LabelText(id) + " " + e.StrokeStyle + " " + head
	}
	return out
}

// create_sequence takes messages as strings, in blocks too, and actors as labels.
func TestSequenceShortForm(t *testing.T) {
	set := New(scene.New(), Limits{})
	args := `{"actors":["Browser","Cart API"],"messages":["Browser -> Cart API: GET /cart",
		{"block":"alt","label":"cached","messages":["Cart API --> Browser: 200 OK: 3 items"]},"Browser -> Cart API"]}`
	r := set.Call(context.Background(), CreateSequence, []byte(args))
	if r.IsError {
		t.Fatalf("create_sequence: %s", r.Text)
	}
	var labels []string
	dashed := 0
	for _, e := range set.Scene().Elements() {
		if e.Type == scene.Arrow && e.StartBinding == nil {
			labels = append(labels, set.Scene().LabelText(e.ID))
			if e.StrokeStyle == "dashed" {
				dashed++
			}
		}
	}
	slices.Sort(labels)
	if want := []string{"", "200 OK: 3 items", "GET /cart"}; !slices.Equal(labels, want) || dashed != 1 {
		t.Errorf("messages %q with %d dashed, want %q with the reply dashed", labels, dashed, want)
	}
	r = set.Call(context.Background(), CreateSequence, []byte(`{"messages":["Browser asks the API"]}`))
	if !r.IsError || !strings.Contains(r.Text, `messages[0]: "Browser asks the API": write a message as "A -> B: label"`) {
		t.Errorf("a message without an arrow: %s", r.Text)
	}
}
