package tools

import (
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/excalibot/excalibot/diagram/graph"
	"github.com/excalibot/excalibot/scene"
)

// nestedGraph has a box inside a box, a box inside a frame, and a frame: every way groups nest.
const nestedGraph = `{"direction":"LR","groups":[{"id":"cloud","title":"AWS eu-west-1","style":"box"},
 {"id":"svc","title":"Services","parent":"cloud"},{"id":"data","title":"Data","parent":"cloud","style":"box"},
 {"id":"edge","title":"Edge","style":"frame"},{"id":"pop","title":"PoP","parent":"edge"}],
 "nodes":[{"id":"user","label":"User","shape":"ellipse"},{"id":"cdn","label":"CDN","group":"pop"},{"id":"waf","label":"WAF","group":"edge"},
 {"id":"lb","label":"Load balancer","group":"cloud"},{"id":"api","label":"API","group":"svc"},{"id":"auth","label":"Auth service","group":"Services"},
 {"id":"db","label":"PostgreSQL","shape":"ellipse","group":"data"},{"id":"cache","label":"Redis","shape":"ellipse","group":"Data"}],
 "edges":[{"from":"user","to":"cdn"},{"from":"cdn","to":"waf"},{"from":"waf","to":"lb"},{"from":"lb","to":"api"},{"from":"api","to":"auth"},
 {"from":"api","to":"db","label":"SQL"},{"from":"api","to":"cache"}]}`

var withNested = []step{{"create_graph", nestedGraph}}

// groupsOf is an element's groupIds.
func groupsOf(t *testing.T, sc *scene.Scene, id string) []string {
	t.Helper()
	return get(t, sc, id).GroupIDs
}

func TestGraphGroups(t *testing.T) {
	runCases(t, []toolCase{
		{name: "boxes nest in boxes and frames", tool: "create_graph", args: nestedGraph,
			want: []string{"8 nodes, 7 edges, 5 groups"},
			check: checks(cleanGraph, func(t *testing.T, sc *scene.Scene) {
				for _, tc := range []struct {
					id   string
					want []string
				}{
					{"api", []string{"grp-svc", "grp-cloud"}},
					{"svc", []string{"grp-svc", "grp-cloud"}},
					{"lb", []string{"grp-cloud"}},
					{"db", []string{"grp-data", "grp-cloud"}},
					{"cdn", []string{"grp-pop"}},
					{"waf", nil},
				} {
					if got := groupsOf(t, sc, tc.id); !slices.Equal(got, tc.want) && len(got)+len(tc.want) > 0 {
						t.Errorf("%s groupIds %v, want %v (innermost first)", tc.id, got, tc.want)
					}
				}
				for _, id := range []string{"cdn", "pop", "waf"} {
					if f := get(t, sc, id).FrameID; f != "edge" {
						t.Errorf("%s in frame %q, want edge (a box in a frame is the frame's child)", id, f)
					}
				}
				if e := get(t, sc, "pop"); e.Type != scene.Rectangle || !graph.IsBox(&e) {
					t.Errorf("pop is a %s, want a box: a group inside a frame cannot be a frame", e.Type)
				}
				if title := graph.TitleOf(sc, "svc"); title == "" || get(t, sc, title).Text != "Services" {
					t.Errorf("svc's title %q", title)
				}
				// The graph read back knows every group and its parent.
				g := graph.Read(sc)
				if g.GroupOf("api") != "svc" || g.Parent("svc") != "cloud" || g.Parent("pop") != "edge" || g.GroupOf("waf") != "edge" {
					t.Errorf("read back: api in %q, svc in %q, pop in %q, waf in %q", g.GroupOf("api"), g.Parent("svc"), g.Parent("pop"), g.GroupOf("waf"))
				}
			})},
		{name: "grouping a group in a group by title", tool: "create_graph",
			args: `{"groups":[{"id":"a","title":"Outer","style":"box"},{"id":"b","title":"Inner","parent":"Outer","style":"frame"}],"nodes":[{"id":"n","label":"N","group":"Inner"}]}`,
			check: checks(cleanGraph, func(t *testing.T, sc *scene.Scene) {
				if b := get(t, sc, "b"); !graph.IsBox(&b) {
					t.Errorf("b is a %s; a frame inside a group must become a box", b.Type)
				}
			})},
		{name: "a group without nodes is not drawn", tool: "create_graph",
			args: `{"groups":[{"id":"a","title":"A","style":"box"},{"id":"b","title":"B"},{"id":"c","title":"C","style":"box","parent":"a"}],"nodes":[{"id":"n","label":"N","group":"c"}]}`,
			want: []string{"groups without nodes were not drawn: b."}, check: checks(cleanGraph, func(t *testing.T, sc *scene.Scene) {
				if sc.Has("b") || !sc.Has("a") || !sc.Has("c") {
					t.Errorf("b drawn %v, a %v, c %v; want only the groups holding nodes (a through c)", sc.Has("b"), sc.Has("a"), sc.Has("c"))
				}
				for _, e := range sc.Elements() {
					if e.Type == scene.Text && e.ContainerID == "" && e.Text == "B" {
						t.Errorf("b's title %s left behind", e.ID)
					}
				}
			})},
		{name: "unknown parent", tool: "create_graph", args: `{"groups":[{"id":"a","parent":"zz"}],"nodes":[{"id":"n","label":"N","group":"a"}]}`, wantErr: true,
			want: []string{`groups[0].parent: no group "zz"`}},
		{name: "own parent", tool: "create_graph", args: `{"groups":[{"id":"a","parent":"a"}],"nodes":[{"id":"n","label":"N","group":"a"}]}`, wantErr: true,
			want: []string{`groups[0].parent: a group cannot be inside itself`}},
		{name: "parents in a loop", tool: "create_graph", args: `{"groups":[{"id":"a","parent":"b"},{"id":"b","parent":"a"}],"nodes":[{"id":"n","label":"N","group":"a"}]}`, wantErr: true,
			want: []string{`are inside each other`}},
		{name: "bad style", tool: "create_graph", args: `{"groups":[{"id":"a","style":"cloud"}],"nodes":[{"id":"n","label":"N","group":"a"}]}`, wantErr: true,
			want: []string{`groups[0].style: "cloud" is not allowed; use one of "frame", "box"`}},
		{name: "add into a nested box grows it and its parent", setup: withNested, tool: "add_to_graph",
			args: `{"nodes":[{"id":"queue","label":"Queue","group":"Data"},{"id":"search","label":"Search index","group":"data"}],"edges":[{"from":"api","to":"queue"},{"from":"queue","to":"search"}]}`,
			check: checks(cleanGraph, samePlaceAfter(withNested, "user", "cdn", "lb", "api", "auth", "db", "cache"), func(t *testing.T, sc *scene.Scene) {
				if got := groupsOf(t, sc, "search"); !slices.Equal(got, []string{"grp-data", "grp-cloud"}) {
					t.Errorf("search groupIds %v", got)
				}
			})},
		{name: "move a node into a box by update", setup: append(withNested, step{"create_graph", `{"nodes":[{"id":"mon","label":"Monitoring"}]}`}), tool: "update_graph",
			args: `{"nodes":[{"node":"Monitoring","group":"Services"}]}`,
			check: checks(cleanGraph, samePlaceAfter(withNested, "user", "cdn", "lb", "api", "auth", "db", "cache"), func(t *testing.T, sc *scene.Scene) {
				if got := groupsOf(t, sc, "mon"); !slices.Equal(got, []string{"grp-svc", "grp-cloud"}) {
					t.Errorf("mon groupIds %v", got)
				}
			})},
		{name: "move out of a box and into a frame", setup: withNested, tool: "update_graph",
			args: `{"nodes":[{"node":"api","group":""},{"node":"lb","group":"Edge"}]}`,
			check: checks(cleanGraph, func(t *testing.T, sc *scene.Scene) {
				if got := groupsOf(t, sc, "api"); len(got) != 0 {
					t.Errorf("api still in %v", got)
				}
				if lb := get(t, sc, "lb"); len(lb.GroupIDs) != 0 || lb.FrameID != "edge" {
					t.Errorf("lb groups %v frame %q, want frame edge only", lb.GroupIDs, lb.FrameID)
				}
				if got := groupsOf(t, sc, "auth"); !slices.Equal(got, []string{"grp-svc", "grp-cloud"}) {
					t.Errorf("auth groupIds %v: the others stay", got)
				}
			})},
		{name: "relayout keeps the nesting", setup: withNested, tool: "relayout_graph", args: `{"direction":"TB"}`,
			want: []string{"5 groups"}, check: checks(cleanGraph)},
		{name: "a person's colour inside a box is kept", setup: append(withNested, step{"update_element", `{"id":"auth","backgroundColor":"#b2f2bb"}`}),
			tool: "add_to_graph", args: `{"nodes":[{"id":"mail","label":"Mailer","group":"Services"}],"edges":[{"from":"Auth service","to":"Mailer"}]}`,
			check: checks(cleanGraph, samePlaceAfter(append(withNested, step{"update_element", `{"id":"auth","backgroundColor":"#b2f2bb"}`}), "auth", "api"),
				func(t *testing.T, sc *scene.Scene) {
					if c := get(t, sc, "auth").BackgroundColor; c != "#b2f2bb" {
						t.Errorf("auth colour %s, want the person's #b2f2bb", c)
					}
				})},
	})
}

// TestHumanEditsKept: what a person changed through the link (moved a node, recoloured it, added a
// free note) survives the graph tools' later calls, which re-read the scene rather than keep a
// model of their own.
func TestHumanEditsKept(t *testing.T) {
	edits := append(append([]step(nil), withGraph...),
		step{"update_element", `{"id":"web","x":-500,"y":40,"backgroundColor":"#ffc9c9"}`},
		step{"create_element", `{"id":"memo","type":"text","x":-500,"y":-120,"text":"ask Ops"}`})
	for _, tc := range []struct{ tool, args string }{
		{"add_to_graph", `{"nodes":[{"id":"cdn","label":"CDN"}],"edges":[{"from":"cdn","to":"Web"}]}`},
		{"update_graph", `{"nodes":[{"node":"API","label":"API v2"}],"edges":[{"from":"Web","to":"API","style":"dashed"}]}`},
		{"remove_from_graph", `{"nodes":["Database"]}`},
		{"create_graph", `{"nodes":[{"id":"x","label":"X"},{"id":"y","label":"Y"}],"edges":[{"from":"x","to":"y"}]}`},
	} {
		t.Run(tc.tool, func(t *testing.T) {
			s := New(newTestScene(), DefaultLimits())
			for _, st := range edits {
				mustCall(t, s, st.tool, st.args)
			}
			mustCall(t, s, tc.tool, tc.args)
			sc := s.Scene()
			samePlaceAfter(edits, "web", "api", "memo")(t, sc)
			if c := get(t, sc, "web").BackgroundColor; c != "#ffc9c9" {
				t.Errorf("web colour %s, want the person's #ffc9c9", c)
			}
			cleanGraph(t, sc)
		})
	}
}

// TestGroupOfRefs: nodes name their group by id or title in any case, groups are found the same way.
func TestGroupOfRefs(t *testing.T) {
	s := New(newTestScene(), DefaultLimits())
	mustCall(t, s, "create_graph", nestedGraph)
	for ref, want := range map[string]string{"svc": "svc", "services": "svc", "  aws EU-west-1 ": "cloud", "Edge": "edge", "nope": ""} {
		if got := graph.FindGroup(s.Scene(), ref); got != want {
			t.Errorf("graph.FindGroup(%q) = %q, want %q", ref, got, want)
		}
	}
	if w := strings.Join(Warnings(s.Scene()), "\n"); w != "" {
		t.Errorf("warnings:\n%s", w)
	}
}

// TestBendsFollowOffset: a graph drawn beside what is on the canvas, or laid out again at its own
// corner, has its arrows' bends shifted with its nodes (every arrow point stays within the box of
// the graph's nodes, grown a little).
func TestBendsFollowOffset(t *testing.T) {
	old := step{"create_element", `{"id":"old","type":"rectangle","x":0,"y":0,"width":400,"height":300}`}
	// Edges that skip layers get bends.
	const skipGraph = `{"nodes":[{"id":"a","label":"A"},{"id":"b","label":"B"},{"id":"c","label":"C"},{"id":"d","label":"D"},{"id":"e","label":"E"}],
	 "edges":[{"from":"a","to":"b"},{"from":"b","to":"c"},{"from":"c","to":"d"},{"from":"a","to":"d"},{"from":"a","to":"e"},{"from":"b","to":"e"},{"from":"e","to":"d"}]}`
	for _, tc := range []struct {
		name  string
		steps []step
	}{
		{"beside other content", []step{old, {"create_graph", skipGraph}}},
		{"relayout beside other content", []step{old, {"create_graph", skipGraph}, {"relayout_graph", `{"direction":"LR"}`}}},
		{"nested relayout", []step{old, {"create_graph", nestedGraph}, {"relayout_graph", `{"direction":"TB"}`}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := New(newTestScene(), DefaultLimits())
			for _, st := range tc.steps {
				mustCall(t, s, st.tool, st.args)
			}
			sc := s.Scene()
			g := graph.Read(sc)
			box := scene.Rect{X: math.Inf(1), Y: math.Inf(1)}
			maxX, maxY := math.Inf(-1), math.Inf(-1)
			for _, id := range g.Nodes() {
				if id == "old" { // the shape that was there before, not part of the graph's box
					continue
				}
				e := get(t, sc, id)
				box.X, box.Y = min(box.X, e.X), min(box.Y, e.Y)
				maxX, maxY = max(maxX, e.X+e.Width), max(maxY, e.Y+e.Height)
			}
			const slack = 150.0 // dot keeps a node gap between a long edge and the nodes it passes; a bend left unshifted would be 500 px off
			for _, id := range g.Edges() {
				for _, p := range pointsOf(t, sc, id) {
					if p.X < box.X-slack || p.Y < box.Y-slack || p.X > maxX+slack || p.Y > maxY+slack {
						t.Errorf("%s has a point %v outside the graph's box %v..%v", id, p, box, scene.Point{X: maxX, Y: maxY})
						break
					}
				}
			}
			cleanGraph(t, sc)
		})
	}
}
