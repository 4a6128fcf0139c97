package tools

import (
	"strconv"
	"strings"
	"testing"

	"github.com/excalibot/excalibot/scene"
)

const smallGraph = `{"nodes":[{"id":"web","label":"Web"},{"id":"api","label":"API","group":"Backend"},{"id":"db","label":"Database","shape":"ellipse","group":"Backend"}],
 "edges":[{"from":"web","to":"api","label":"REST"},{"from":"API","to":"Database"}]}`

var withGraph = []step{{"create_graph", smallGraph}}

// cleanGraph asserts what every graph call must leave: no lint warnings (overlaps, overflowing
// labels, loose arrows) and every arrow bound at both ends on the borders.
func cleanGraph(t *testing.T, sc *scene.Scene) {
	t.Helper()
	if w := Warnings(sc); len(w) > 0 {
		t.Errorf("warnings:\n%s", strings.Join(w, "\n"))
	}
	for _, e := range sc.Elements() {
		if e.Type == scene.Arrow {
			onBorder(t, sc, e.ID)
		}
	}
	if q := measureGraph(t, sc); q.overlaps != 0 || q.unbound != 0 || q.groupFaults != 0 {
		t.Errorf("quality: %s", q)
	}
}

// samePlace asserts the shapes kept their positions from the setup.
func samePlace(want map[string][2]float64) func(t *testing.T, sc *scene.Scene) {
	return func(t *testing.T, sc *scene.Scene) {
		t.Helper()
		for id, p := range want {
			if e := get(t, sc, id); e.X != p[0] || e.Y != p[1] {
				t.Errorf("%s moved to %v,%v, want %v,%v", id, e.X, e.Y, p[0], p[1])
			}
		}
	}
}

func checks(fs ...func(*testing.T, *scene.Scene)) func(*testing.T, *scene.Scene) {
	return func(t *testing.T, sc *scene.Scene) {
		t.Helper()
		for _, f := range fs {
			f(t, sc)
		}
	}
}

func TestCreateGraph(t *testing.T) {
	runCases(t, []toolCase{
		{name: "small graph with a group", tool: "create_graph", args: smallGraph,
			want: []string{"graph laid out TB: 3 nodes, 2 edges, 1 group, 0 edge crossings", "created"},
			check: checks(cleanGraph, func(t *testing.T, sc *scene.Scene) {
				web, api, db := get(t, sc, "web"), get(t, sc, "api"), get(t, sc, "db")
				if !(web.Y < api.Y && api.Y < db.Y) {
					t.Errorf("not top-down: web y %v, api y %v, db y %v", web.Y, api.Y, db.Y)
				}
				if api.FrameID != "backend" || db.FrameID != "backend" || web.FrameID != "" {
					t.Errorf("frames: web %q api %q db %q", web.FrameID, api.FrameID, db.FrameID)
				}
				if f := get(t, sc, "backend"); f.Name != "Backend" || !within(api.Bounds(), f.Bounds()) || !within(db.Bounds(), f.Bounds()) || within(web.Bounds(), f.Bounds()) {
					t.Errorf("frame %q %v does not hold exactly api %v and db %v", f.Name, f.Bounds(), api.Bounds(), db.Bounds())
				}
				if got := labelText(t, sc, "e-web-api"); got != "REST" {
					t.Errorf("edge label %q", got)
				}
				if a := get(t, sc, "e-api-db"); a.StartBinding.ElementID != "api" || a.EndBinding.ElementID != "db" || a.EndArrowhead != "arrow" {
					t.Errorf("edge by labels bound %s→%s head %q", a.StartBinding.ElementID, a.EndBinding.ElementID, a.EndArrowhead)
				}
			})},
		{name: "left to right, styles and heads", tool: "create_graph",
			args: `{"direction":"left-right","nodes":[{"id":"a","label":"A"},{"id":"b","label":"B","shape":"diamond","color":"green"}],"edges":[{"from":"a","to":"b","style":"dashed","arrow":"both"}]}`,
			check: checks(cleanGraph, func(t *testing.T, sc *scene.Scene) {
				a, b, e := get(t, sc, "a"), get(t, sc, "b"), get(t, sc, "e-a-b")
				if !(a.X+a.Width < b.X) {
					t.Errorf("not left-right: a %v b %v", a.Bounds(), b.Bounds())
				}
				if b.Type != scene.Diamond || b.BackgroundColor != "#b2f2bb" {
					t.Errorf("b is %s filled %s", b.Type, b.BackgroundColor)
				}
				if e.StrokeStyle != "dashed" || e.StartArrowhead != "arrow" || e.EndArrowhead != "arrow" {
					t.Errorf("edge style %s heads %q %q", e.StrokeStyle, e.StartArrowhead, e.EndArrowhead)
				}
			})},
		{name: "ids from labels in any script, kept unique", tool: "create_graph",
			args: `{"nodes":[{"label":"База данных"},{"label":"Кэш","group":"Хранилище"},{"id":"node","label":"Mine"},{"label":"API"},{"label":"api"}],"edges":[{"from":"База данных","to":"Кэш"}]}`,
			check: func(t *testing.T, sc *scene.Scene) {
				for id, label := range map[string]string{"node": "Mine", "node-2": "База данных", "node-3": "Кэш", "api": "API", "api-2": "api"} {
					if got := labelText(t, sc, id); got != label {
						t.Errorf("%s labelled %q, want %q", id, got, label)
					}
				}
				if f := get(t, sc, "group"); f.Name != "Хранилище" {
					t.Errorf("frame named %q", f.Name)
				}
				onBorder(t, sc, "e-node-2-node-3")
			}},
		{name: "ids from labels; long label widens the node", tool: "create_graph",
			args: `{"nodes":[{"label":"Load Balancer"},{"label":"PostgreSQLDatabase","shape":"ellipse"}],"edges":[{"from":"Load Balancer","to":"postgresqldatabase"}]}`,
			check: checks(cleanGraph, func(t *testing.T, sc *scene.Scene) {
				get(t, sc, "load-balancer")
				if e := get(t, sc, "postgresqldatabase"); e.Width <= 140 {
					t.Errorf("ellipse width %v: not widened for its label", e.Width)
				}
			})},
		{name: "beside what is on the canvas", setup: []step{{"create_element", `{"id":"note","type":"rectangle","x":0,"y":0,"width":300,"height":300}`}},
			tool: "create_graph", args: smallGraph,
			check: checks(cleanGraph, func(t *testing.T, sc *scene.Scene) {
				if w := get(t, sc, "web"); w.X < 300 {
					t.Errorf("web at x %v, on top of the note", w.X)
				}
			})},
		{name: "cycle, isolated node, edge across groups", tool: "create_graph",
			args: `{"nodes":[{"id":"a","label":"A","group":"G1"},{"id":"b","label":"B","group":"G2"},{"id":"c","label":"C"},{"id":"lone","label":"Alone"}],"edges":[{"from":"a","to":"b"},{"from":"b","to":"c"},{"from":"c","to":"a","label":"retry"}]}`,
			want: []string{"4 nodes, 3 edges, 2 groups"}, check: cleanGraph},
		{name: "mind map with groups", tool: "create_graph", args: `{"direction":"mindmap","nodes":[{"id":"a","label":"A","group":"G"}]}`, wantErr: true,
			want: []string{"a mind map has no groups"}},
		{name: "no nodes", tool: "create_graph", args: `{"edges":[]}`, wantErr: true, want: []string{"nodes: missing"}},
		{name: "empty nodes", tool: "create_graph", args: `{"nodes":[]}`, wantErr: true, want: []string{"the list is empty"}},
		{name: "bad direction", tool: "create_graph", args: `{"direction":"BT","nodes":[{"id":"a","label":"A"}]}`, wantErr: true,
			want: []string{`direction: "BT" is not allowed; use one of "TB", "LR"`}},
		{name: "bad shape and colour", tool: "create_graph", args: `{"nodes":[{"id":"a","label":"A","shape":"star","color":"mauve"}]}`, wantErr: true,
			want: []string{`nodes[0].shape: "star" is not allowed`, "nodes[0].color"}},
		{name: "unknown field ignored with a hint", tool: "create_graph", args: `{"nodes":[{"id":"a","label":"A","colour":"red"}]}`,
			want: []string{"created 1: a", `Ignored unknown field nodes[0].colour (did you mean "color"?).`}},
		{name: "only unknown fields", tool: "create_graph", args: `{"vertices":[{"id":"a","label":"A"}]}`, wantErr: true,
			want: []string{"nodes: missing", "vertices: unknown field; known fields: direction, nodes, edges, groups"}},
		{name: "duplicate id", tool: "create_graph", args: `{"nodes":[{"id":"a","label":"A"},{"id":"a","label":"B"}]}`, wantErr: true,
			want: []string{`nodes[1].id: "a" is already used by nodes[0]`}},
		{name: "id on canvas", setup: withGraph, tool: "create_graph", args: `{"nodes":[{"id":"web","label":"W"}]}`, wantErr: true,
			want: []string{`"web" is already on the canvas`}},
		{name: "edge to unknown node", tool: "create_graph", args: `{"nodes":[{"id":"a","label":"A"}],"edges":[{"from":"a","to":"zz"}]}`, wantErr: true,
			want: []string{`edges[0]: to: no node with id or label "zz"; nodes: a ("A")`}},
		{name: "edge without ends", tool: "create_graph", args: `{"nodes":[{"id":"a","label":"A"}],"edges":[{"from":"a"}]}`, wantErr: true,
			want: []string{"edges[0]: give from and to"}},
		{name: "self loop", tool: "create_graph", args: `{"nodes":[{"id":"a","label":"A"}],"edges":[{"from":"a","to":"A","label":"retry"}]}`,
			want: []string{"1 node, 1 edge", "created 2: a, e-a-a"}},
		{name: "ambiguous label", tool: "create_graph", args: `{"nodes":[{"id":"a","label":"X"},{"id":"b","label":"x"},{"id":"c","label":"C"}],"edges":[{"from":"X","to":"c"}]}`, wantErr: true,
			want: []string{`2 nodes are labelled "X" (a, b); use the id`}},
		{name: "too many for the canvas", setup: []step{{"batch_create_elements", manyRects("a", 123)}, {"batch_create_elements", manyRects("b", 123)}, {"batch_create_elements", manyRects("c", 123)}, {"batch_create_elements", manyRects("d", 123)}}, tool: "create_graph", args: smallGraph, wantErr: true,
			want: []string{"the limit is 500"}},
	})
}

func manyRects(prefix string, n int) string {
	var b strings.Builder
	b.WriteString(`{"elements":[`)
	for i := range n {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(`{"id":"` + prefix + itoa(i) + `","type":"rectangle","x":` + itoa(i*200) + `,"y":-1000}`)
	}
	b.WriteString(`]}`)
	return b.String()
}

func itoa(i int) string { return strconv.Itoa(i) }

func TestAddToGraph(t *testing.T) {
	runCases(t, []toolCase{
		{name: "new node near its neighbour, others stay", setup: withGraph, tool: "add_to_graph",
			args: `{"nodes":[{"id":"cache","label":"Cache","group":"Backend"}],"edges":[{"from":"API","to":"cache","style":"dashed"}]}`,
			want: []string{"created 2: cache, e-api-cache"},
			check: checks(cleanGraph, samePlaceAfter(withGraph, "web", "api", "db"), func(t *testing.T, sc *scene.Scene) {
				c, api, f := get(t, sc, "cache"), get(t, sc, "api"), get(t, sc, "backend")
				if c.FrameID != "backend" || !within(c.Bounds(), f.Bounds()) {
					t.Errorf("cache in frame %q at %v, frame %v", c.FrameID, c.Bounds(), f.Bounds())
				}
				if d := c.Center().Y - api.Center().Y; d <= 0 || d > 400 {
					t.Errorf("cache %v px below api, want in a layer under it", d)
				}
			})},
		{name: "edge between existing nodes", setup: withGraph, tool: "add_to_graph", args: `{"edges":[{"from":"web","to":"Database","label":"reads"}]}`,
			check: checks(samePlaceAfter(withGraph, "web", "api", "db"), func(t *testing.T, sc *scene.Scene) { onBorder(t, sc, "e-web-db") })},
		{name: "new group", setup: withGraph, tool: "add_to_graph", args: `{"nodes":[{"id":"s3","label":"S3","group":"Storage"}],"edges":[{"from":"api","to":"s3"}]}`,
			check: checks(cleanGraph, samePlaceAfter(withGraph, "web", "api", "db"), func(t *testing.T, sc *scene.Scene) {
				if e := get(t, sc, "s3"); e.FrameID != "storage" {
					t.Errorf("s3 frame %q", e.FrameID)
				}
			})},
		{name: "unconnected node goes beside", setup: withGraph, tool: "add_to_graph", args: `{"nodes":[{"id":"note","label":"Note"}]}`,
			check: checks(cleanGraph, samePlaceAfter(withGraph, "web", "api", "db"))},
		{name: "human edit kept", setup: append(withGraph, step{"update_element", `{"id":"web","x":-600}`}), tool: "add_to_graph",
			args: `{"nodes":[{"id":"cdn","label":"CDN"}],"edges":[{"from":"cdn","to":"web"}]}`,
			check: checks(cleanGraph, func(t *testing.T, sc *scene.Scene) {
				if e := get(t, sc, "web"); e.X != -600 {
					t.Errorf("web moved back to %v", e.X)
				}
				if c, w := get(t, sc, "cdn"), get(t, sc, "web"); c.Center().X > w.Center().X+300 {
					t.Errorf("cdn %v far from web %v", c.Bounds(), w.Bounds())
				}
			})},
		{name: "nothing to add", setup: withGraph, tool: "add_to_graph", args: `{}`, wantErr: true, want: []string{"give nodes or edges"}},
		{name: "unknown node in edge", setup: withGraph, tool: "add_to_graph", args: `{"edges":[{"from":"web","to":"queue"}]}`, wantErr: true,
			want: []string{`to: no node with id or label "queue"; nodes: web ("Web"), api ("API"), db ("Database")`}},
		{name: "existing id", setup: withGraph, tool: "add_to_graph", args: `{"nodes":[{"id":"api","label":"API 2"}]}`, wantErr: true,
			want: []string{`"api" is already on the canvas`}},
	})
}

// samePlaceAfter asserts the named shapes sit where the setup steps alone put them.
func samePlaceAfter(setup []step, ids ...string) func(*testing.T, *scene.Scene) {
	return func(t *testing.T, sc *scene.Scene) {
		t.Helper()
		s := New(newTestScene(), DefaultLimits())
		for _, st := range setup {
			mustCall(t, s, st.tool, st.args)
		}
		want := map[string][2]float64{}
		for _, id := range ids {
			e := get(t, s.Scene(), id)
			want[id] = [2]float64{e.X, e.Y}
		}
		samePlace(want)(t, sc)
	}
}

func TestUpdateGraph(t *testing.T) {
	runCases(t, []toolCase{
		{name: "label, colour, group by label", setup: withGraph, tool: "update_graph",
			args: `{"nodes":[{"node":"Web","label":"Web app","color":"blue","group":"Frontend"},{"node":"db","group":""}]}`,
			want: []string{"changed 2: web, db"},
			check: checks(func(t *testing.T, sc *scene.Scene) {
				w := get(t, sc, "web")
				if labelText(t, sc, "web") != "Web app" || w.BackgroundColor != "#a5d8ff" || w.FrameID != "frontend" {
					t.Errorf("web: label %q bg %s frame %q", labelText(t, sc, "web"), w.BackgroundColor, w.FrameID)
				}
				if f := get(t, sc, "frontend"); f.Name != "Frontend" || !within(w.Bounds(), f.Bounds()) {
					t.Errorf("frontend frame %v does not hold web %v", f.Bounds(), w.Bounds())
				}
				if d := get(t, sc, "db"); d.FrameID != "" {
					t.Errorf("db still in %q", d.FrameID)
				}
			})},
		{name: "shape change keeps id, label, frame and arrows", setup: withGraph, tool: "update_graph",
			args: `{"nodes":[{"node":"api","shape":"diamond","label":"API gateway?"}]}`,
			check: checks(func(t *testing.T, sc *scene.Scene) {
				a := get(t, sc, "api")
				if a.Type != scene.Diamond || a.FrameID != "backend" || labelText(t, sc, "api") != "API gateway?" {
					t.Errorf("api is %s in %q labelled %q", a.Type, a.FrameID, labelText(t, sc, "api"))
				}
				for _, id := range []string{"e-web-api", "e-api-db"} {
					onBorder(t, sc, id)
				}
				if got := labelText(t, sc, "e-web-api"); got != "REST" {
					t.Errorf("edge label %q", got)
				}
			})},
		{name: "bad shape", setup: withGraph, tool: "update_graph", args: `{"nodes":[{"node":"api","shape":"hexagon"}]}`, wantErr: true,
			want: []string{`nodes[0].shape: "hexagon" is not allowed`}},
		{name: "edge style and label", setup: withGraph, tool: "update_graph",
			args: `{"edges":[{"from":"api","to":"db","style":"dotted","label":"SQL","arrow":"none"}]}`,
			check: func(t *testing.T, sc *scene.Scene) {
				e := get(t, sc, "e-api-db")
				if e.StrokeStyle != "dotted" || e.EndArrowhead != "" || labelText(t, sc, "e-api-db") != "SQL" {
					t.Errorf("edge %s head %q label %q", e.StrokeStyle, e.EndArrowhead, labelText(t, sc, "e-api-db"))
				}
			}},
		{name: "edge found the other way round", setup: withGraph, tool: "update_graph", args: `{"edges":[{"from":"db","to":"api","style":"dashed"}]}`,
			check: func(t *testing.T, sc *scene.Scene) {
				if e := get(t, sc, "e-api-db"); e.StrokeStyle != "dashed" {
					t.Errorf("style %s", e.StrokeStyle)
				}
			}},
		{name: "unknown node", setup: withGraph, tool: "update_graph", args: `{"nodes":[{"node":"cache","label":"C"}]}`, wantErr: true,
			want: []string{`nodes[0].node: no node with id or label "cache"`}},
		{name: "missing node field", setup: withGraph, tool: "update_graph", args: `{"nodes":[{"label":"C"}]}`, wantErr: true,
			want: []string{"nodes[0].node: missing"}},
		{name: "no such edge", setup: withGraph, tool: "update_graph", args: `{"edges":[{"from":"web","to":"db","label":"x"}]}`, wantErr: true,
			want: []string{`no edge from "web" to "db"; edges of web: web→api`}},
		{name: "nothing", setup: withGraph, tool: "update_graph", args: `{}`, wantErr: true, want: []string{"give nodes or edges to change"}},
	})
}

func TestRemoveFromGraph(t *testing.T) {
	runCases(t, []toolCase{
		{name: "node by label takes its edges", setup: withGraph, tool: "remove_from_graph", args: `{"nodes":["Database"]}`,
			want: []string{"removed"},
			check: func(t *testing.T, sc *scene.Scene) {
				for _, id := range []string{"db", "e-api-db"} {
					if sc.Has(id) {
						t.Errorf("%s still there", id)
					}
				}
				get(t, sc, "e-web-api")
			}},
		{name: "edge", setup: withGraph, tool: "remove_from_graph", args: `{"edges":[{"from":"web","to":"api"}]}`,
			check: func(t *testing.T, sc *scene.Scene) {
				if sc.Has("e-web-api") || sc.Has(scene.LabelID("e-web-api")) {
					t.Errorf("edge or its label still there")
				}
			}},
		{name: "unknown", setup: withGraph, tool: "remove_from_graph", args: `{"nodes":["web","nope"]}`, wantErr: true,
			want: []string{`nodes[1]: no node with id or label "nope"`}},
		{name: "nothing", setup: withGraph, tool: "remove_from_graph", args: `{}`, wantErr: true, want: []string{"give nodes"}},
	})
}

func TestRelayoutGraph(t *testing.T) {
	runCases(t, []toolCase{
		{name: "turn left-right", setup: withGraph, tool: "relayout_graph", args: `{"direction":"LR"}`,
			want: []string{"laid out LR again: 3 nodes, 2 edges, 1 group"},
			check: checks(cleanGraph, func(t *testing.T, sc *scene.Scene) {
				web, api := get(t, sc, "web"), get(t, sc, "api")
				if !(web.X+web.Width < api.X) {
					t.Errorf("not left-right: web %v api %v", web.Bounds(), api.Bounds())
				}
				if f := get(t, sc, "backend"); !within(api.Bounds(), f.Bounds()) {
					t.Errorf("frame %v lost api %v", f.Bounds(), api.Bounds())
				}
			})},
		{name: "tidies a human's mess", setup: append(withGraph, step{"update_element", `{"id":"db","x":0,"y":0}`}), tool: "relayout_graph", args: `{}`,
			want: []string{"laid out TB again"}, check: cleanGraph},
		{name: "leaves a sequence diagram alone", setup: []step{{"create_sequence", sequenceCall}, {"create_graph", `{"nodes":[{"id":"x","label":"X"},{"id":"y","label":"Y"}],"edges":[{"from":"x","to":"y"}]}`}},
			tool: "relayout_graph", args: `{"direction":"LR"}`, want: []string{"2 nodes"},
			check: checks(samePlaceAfter([]step{{"create_sequence", sequenceCall}}, "browser", "api", "auth", "db"), func(t *testing.T, sc *scene.Scene) {
				if w := Warnings(sc); len(w) > 0 {
					t.Errorf("warnings:\n%s", strings.Join(w, "\n"))
				}
			})},
		{name: "empty canvas", tool: "relayout_graph", args: `{}`, wantErr: true, want: []string{"no nodes to lay out"}},
		{name: "locked node", setup: append(withGraph, step{"lock_elements", `{"ids":["api"]}`}), tool: "relayout_graph", args: `{}`, wantErr: true,
			want: []string{"nodes api are locked"}},
		{name: "bad direction", setup: withGraph, tool: "relayout_graph", args: `{"direction":"diagonal"}`, wantErr: true, want: []string{"direction"}},
	})
}

// TestGraphTree checks what an org chart needs from create_graph: one row per level, siblings in
// the order given, no crossings, and each parent over the span of its children.
func TestGraphTree(t *testing.T) {
	s := New(newTestScene(), DefaultLimits())
	mustCall(t, s, "create_graph", `{"nodes":[{"id":"ceo","label":"CEO"},{"id":"a","label":"VP A"},{"id":"b","label":"VP B"},{"id":"c","label":"VP C"},
	 {"id":"a1","label":"Team A1"},{"id":"a2","label":"Team A2"},{"id":"a3","label":"Team A3"},{"id":"c1","label":"Team C1"},{"id":"c2","label":"Team C2"}],
	 "edges":[{"from":"ceo","to":"a"},{"from":"ceo","to":"b"},{"from":"ceo","to":"c"},{"from":"a","to":"a1"},{"from":"a","to":"a2"},{"from":"a","to":"a3"},{"from":"c","to":"c1"},{"from":"c","to":"c2"}]}`)
	sc := s.Scene()
	cleanGraph(t, sc)
	rows := [][]string{{"ceo"}, {"a", "b", "c"}, {"a1", "a2", "a3", "c1", "c2"}}
	for _, row := range rows {
		y := get(t, sc, row[0]).Y
		for i, id := range row {
			e := get(t, sc, id)
			if e.Y != y {
				t.Errorf("%s at y %v, want %v like %s", id, e.Y, y, row[0])
			}
			if i > 0 && !(get(t, sc, row[i-1]).X < e.X) {
				t.Errorf("%s is not right of %s: siblings out of order", id, row[i-1])
			}
		}
	}
	for parent, kids := range map[string][]string{"ceo": {"a", "b", "c"}, "a": {"a1", "a2", "a3"}, "c": {"c1", "c2"}} {
		centre := func(id string) float64 { e := get(t, sc, id); return e.Center().X }
		p, lo, hi := centre(parent), centre(kids[0]), centre(kids[len(kids)-1])
		if p < lo-1 || p > hi+1 {
			t.Errorf("%s centre x %v outside its children's span %v..%v", parent, p, lo, hi)
		}
	}
	if q := measureGraph(t, sc); q.crossings != 0 {
		t.Errorf("%d crossings in a tree", q.crossings)
	}
}

// TestGraphMindMap: branches on both sides of the root, and a node added to a left branch goes
// further left, not across the root.
func TestGraphMindMap(t *testing.T) {
	s := New(newTestScene(), DefaultLimits())
	mustCall(t, s, "create_graph", mindMapCall)
	r := mustCall(t, s, "add_to_graph", `{"nodes":[{"id":"l3","label":"Third idea"}],"edges":[{"from":"left","to":"l3","arrow":"none"}]}`)
	sc := s.Scene()
	cleanGraph(t, sc)
	root, left, right, l3 := get(t, sc, "root"), get(t, sc, "left"), get(t, sc, "right"), get(t, sc, "l3")
	if !(right.X > root.X+root.Width && left.X+left.Width < root.X) {
		t.Errorf("not two-sided: left %v root %v right %v", left.Bounds(), root.Bounds(), right.Bounds())
	}
	if !(l3.X+l3.Width < left.X) {
		t.Errorf("l3 %v not left of its parent %v; result:\n%s", l3.Bounds(), left.Bounds(), r.Text)
	}
}

const mindMapCall = `{"direction":"mindmap","nodes":[{"id":"root","label":"Product launch","shape":"ellipse","color":"yellow"},
 {"id":"right","label":"Marketing","color":"blue"},{"id":"left","label":"Engineering","color":"green"},{"id":"ops","label":"Support","color":"violet"},
 {"id":"r1","label":"Blog post"},{"id":"r2","label":"Press kit"},{"id":"l1","label":"Feature freeze"},{"id":"l2","label":"Load test"},{"id":"o1","label":"FAQ"}],
 "edges":[{"from":"root","to":"right","arrow":"none"},{"from":"root","to":"left","arrow":"none"},{"from":"root","to":"ops","arrow":"none"},
 {"from":"right","to":"r1","arrow":"none"},{"from":"right","to":"r2","arrow":"none"},{"from":"left","to":"l1","arrow":"none"},{"from":"left","to":"l2","arrow":"none"},{"from":"ops","to":"o1","arrow":"none"}]}`

const sequenceCall = `{"messages":[{"from":"Browser","to":"API","label":"GET /cart"},{"from":"API","to":"Auth","label":"check token"},
 {"from":"Auth","to":"API","label":"ok","style":"dashed"},{"from":"API","to":"API","label":"load cart"},
 {"from":"API","to":"DB","label":"SELECT items"},{"from":"DB","to":"API","label":"rows","style":"dashed"},{"from":"API","to":"Browser","label":"200 OK","style":"dashed"}]}`

func TestCreateSequence(t *testing.T) {
	runCases(t, []toolCase{
		{name: "actors from messages", tool: "create_sequence", args: sequenceCall,
			want: []string{"sequence drawn: 4 actors, 7 messages"},
			check: checks(func(t *testing.T, sc *scene.Scene) {
				if w := Warnings(sc); len(w) > 0 {
					t.Errorf("warnings:\n%s", strings.Join(w, "\n"))
				}
				cols := []string{"browser", "api", "auth", "db"}
				for i := 1; i < len(cols); i++ {
					a, b := get(t, sc, cols[i-1]), get(t, sc, cols[i])
					if !(a.X+a.Width < b.X) || a.Y+a.Height != b.Y+b.Height {
						t.Errorf("%s %v and %s %v not side by side", a.ID, a.Bounds(), b.ID, b.Bounds())
					}
				}
				prevY := 0.0
				for k := 1; k <= 7; k++ {
					m := get(t, sc, "msg"+strconv.Itoa(k))
					if m.Y <= prevY {
						t.Errorf("msg%d at y %v, not below the previous message (%v)", k, m.Y, prevY)
					}
					prevY = m.Y
				}
				m1, api, browser := get(t, sc, "msg1"), get(t, sc, "api"), get(t, sc, "browser")
				pts := m1.AbsPoints()
				if pts[0].X != browser.Center().X || pts[len(pts)-1].X != api.Center().X {
					t.Errorf("msg1 runs %v..%v, want browser's lifeline %v to api's %v", pts[0].X, pts[len(pts)-1].X, browser.Center().X, api.Center().X)
				}
				if l := get(t, sc, "life-api"); l.Type != scene.Line || l.StrokeStyle != "dashed" || len(l.GroupIDs) == 0 || !api.InGroup(l.GroupIDs[0]) {
					t.Errorf("lifeline %s %s groups %v, api groups %v", l.Type, l.StrokeStyle, l.GroupIDs, api.GroupIDs)
				}
				if got := labelText(t, sc, "msg5"); got != "SELECT items" {
					t.Errorf("msg5 label %q", got)
				}
			})},
		{name: "declared actors by label", tool: "create_sequence",
			args: `{"actors":[{"id":"u","label":"User"},{"id":"s","label":"Server"}],"messages":[{"from":"User","to":"s","label":"hi"}]}`,
			want: []string{"2 actors, 1 message"}},
		{name: "unknown actor", tool: "create_sequence", args: `{"actors":[{"id":"u","label":"User"}],"messages":[{"from":"u","to":"db"}]}`, wantErr: true,
			want: []string{`messages[0].to: no actor "db"; actors: u ("User")`}},
		{name: "no messages", tool: "create_sequence", args: `{"actors":[]}`, wantErr: true, want: []string{"messages: missing"}},
		{name: "bad style", tool: "create_sequence", args: `{"messages":[{"from":"a","to":"b","style":"wavy"}]}`, wantErr: true,
			want: []string{`messages[0].style: "wavy" is not allowed`}},
		{name: "id on canvas", setup: withGraph, tool: "create_sequence", args: `{"actors":[{"id":"web","label":"W"}],"messages":[{"from":"web","to":"web"}]}`, wantErr: true,
			want: []string{`"web" is already on the canvas`}},
		{name: "actor from a message takes a free id", setup: withGraph, tool: "create_sequence", args: `{"messages":[{"from":"Web","to":"Сервер","label":"ping"}]}`,
			want: []string{"2 actors"}, check: func(t *testing.T, sc *scene.Scene) {
				if got := labelText(t, sc, "web-2"); got != "Web" {
					t.Errorf("web-2 labelled %q", got)
				}
				if got := labelText(t, sc, "actor"); got != "Сервер" {
					t.Errorf("actor labelled %q", got)
				}
			}},
	})
}

// TestLintArrowOnLine: an arrow end resting on a line (a lifeline) is meant; a free end elsewhere
// is still reported.
func TestLintArrowOnLine(t *testing.T) {
	for _, tc := range []struct {
		name, batch string
		want        bool // a "not attached" warning
	}{
		{"resting on lines", `{"elements":[{"id":"l1","type":"line","x":0,"y":0,"points":[[0,0],[0,300]]},{"id":"l2","type":"line","x":300,"y":0,"points":[[0,0],[0,300]]},
		 {"id":"m","type":"arrow","x":0,"y":100,"points":[[0,0],[300,0]]}]}`, false},
		{"one end in the air", `{"elements":[{"id":"l1","type":"line","x":0,"y":0,"points":[[0,0],[0,300]]},
		 {"id":"m","type":"arrow","x":0,"y":100,"points":[[0,0],[250,0]]}]}`, true},
		{"no lines", `{"elements":[{"id":"m","type":"arrow","x":0,"y":100,"points":[[0,0],[250,0]]}]}`, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := New(newTestScene(), DefaultLimits())
			mustCall(t, s, "batch_create_elements", tc.batch)
			got := strings.Contains(strings.Join(Warnings(s.Scene()), "\n"), "not attached")
			if got != tc.want {
				t.Errorf("not-attached warning = %v, want %v: %q", got, tc.want, Warnings(s.Scene()))
			}
		})
	}
}
