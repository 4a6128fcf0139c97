package tools

import (
	"fmt"
	"math"
	"path/filepath"
	"strings"
	"testing"

	"github.com/excalibot/excalibot/diagram/graph"
	"github.com/excalibot/excalibot/layout"
	"github.com/excalibot/excalibot/scene"
)

// graphScripts are graph-tool sessions whose results are kept as testdata/graph-<name>.golden.excalidraw
// with their quality figures in testdata/graph-<name>.metrics.golden.
var graphScripts = []struct {
	name  string
	steps []step
}{
	{"flowchart", []step{{"create_graph", `{"direction":"TB","nodes":[
	 {"id":"start","label":"Start","shape":"ellipse","color":"gray"},
	 {"id":"read","label":"Read order"},
	 {"id":"valid","label":"Valid?","shape":"diamond","color":"yellow"},
	 {"id":"stock","label":"In stock?","shape":"diamond","color":"yellow"},
	 {"id":"ship","label":"Ship it","color":"green"},
	 {"id":"back","label":"Back-order","color":"orange"},
	 {"id":"reject","label":"Reject order","color":"red"},
	 {"id":"notify","label":"Email the customer"},
	 {"id":"end","label":"End","shape":"ellipse","color":"gray"}],
	 "edges":[{"from":"start","to":"read"},{"from":"read","to":"valid"},
	 {"from":"valid","to":"stock","label":"yes"},{"from":"valid","to":"reject","label":"no"},
	 {"from":"stock","to":"ship","label":"yes"},{"from":"stock","to":"back","label":"no"},
	 {"from":"back","to":"notify","style":"dashed"},{"from":"reject","to":"notify"},
	 {"from":"ship","to":"end"},{"from":"notify","to":"end"}]}`}}},
	{"architecture", []step{{"create_graph", `{"direction":"LR","nodes":[
	 {"id":"user","label":"User","shape":"ellipse"},
	 {"id":"cdn","label":"CDN","group":"Edge"},
	 {"id":"lb","label":"Load balancer","group":"Edge"},
	 {"id":"web","label":"Web app","group":"Frontend","color":"blue"},
	 {"id":"api","label":"API","group":"Backend","color":"green"},
	 {"id":"auth","label":"Auth service","group":"Backend","color":"green"},
	 {"id":"worker","label":"Worker","group":"Backend","color":"green"},
	 {"id":"db","label":"PostgreSQL","shape":"ellipse","group":"Data","color":"violet"},
	 {"id":"cache","label":"Redis","shape":"ellipse","group":"Data","color":"violet"},
	 {"id":"queue","label":"Queue","group":"Data","color":"violet"}],
	 "edges":[{"from":"user","to":"cdn"},{"from":"cdn","to":"lb"},{"from":"lb","to":"web"},
	 {"from":"web","to":"api","label":"REST"},{"from":"api","to":"auth"},{"from":"api","to":"db","label":"SQL"},
	 {"from":"api","to":"cache"},{"from":"api","to":"queue","style":"dashed"},{"from":"queue","to":"worker","style":"dashed"},
	 {"from":"worker","to":"db"}]}`},
		{"add_to_graph", `{"nodes":[{"id":"search","label":"Search index","group":"Data","color":"violet"}],"edges":[{"from":"Worker","to":"search"}]}`}}},
	{"orgchart", []step{{"create_graph", `{"nodes":[
	 {"id":"ceo","label":"Ada Lovelace\nCEO","color":"blue"},
	 {"id":"cto","label":"CTO","color":"green"},{"id":"cfo","label":"CFO","color":"green"},{"id":"coo","label":"COO","color":"green"},
	 {"id":"web","label":"Web team"},{"id":"mobile","label":"Mobile team"},{"id":"infra","label":"Infrastructure"},
	 {"id":"acct","label":"Accounting"},{"id":"ops","label":"Operations"},{"id":"support","label":"Support"}],
	 "edges":[{"from":"ceo","to":"cto","arrow":"none"},{"from":"ceo","to":"cfo","arrow":"none"},{"from":"ceo","to":"coo","arrow":"none"},
	 {"from":"cto","to":"web","arrow":"none"},{"from":"cto","to":"mobile","arrow":"none"},{"from":"cto","to":"infra","arrow":"none"},
	 {"from":"cfo","to":"acct","arrow":"none"},{"from":"coo","to":"ops","arrow":"none"},{"from":"coo","to":"support","arrow":"none"}]}`},
		{"add_to_graph", `{"nodes":[{"id":"data","label":"Data team"}],"edges":[{"from":"CTO","to":"data","arrow":"none"}]}`}}},
	{"architecture-nested", []step{{"create_graph", nestedGraph},
		{"add_to_graph", `{"nodes":[{"id":"queue","label":"Queue","group":"Data"}],"edges":[{"from":"api","to":"queue","style":"dashed"}]}`},
		{"create_graph", `{"nodes":[{"id":"mon","label":"Monitoring"}]}`},
		{"update_graph", `{"nodes":[{"node":"Monitoring","group":"Services"}]}`}}},
	{"mindmap", []step{{"create_graph", mindMapCall}}},
	{"sequence", []step{{"create_sequence", sequenceCall}}},
	{"sequence-full", []step{{"create_sequence", fullSequenceCall}}},
}

func TestGraphGoldens(t *testing.T) {
	for _, sc := range graphScripts {
		t.Run(sc.name, func(t *testing.T) {
			s := New(newTestScene(), DefaultLimits())
			for _, st := range sc.steps {
				mustCall(t, s, st.tool, st.args)
			}
			m := measureGraph(t, s.Scene())
			// Sequence messages are free arrows resting on lifelines (Excalidraw binds only to shapes).
			if m.overlaps != 0 || m.groupFaults != 0 || m.unbound != 0 && !strings.HasPrefix(sc.name, "sequence") {
				t.Errorf("quality: %s", m)
			}
			if w := Warnings(s.Scene()); len(w) > 0 {
				t.Errorf("warnings:\n%s", strings.Join(w, "\n"))
			}
			golden(t, filepath.Join("testdata", "graph-"+sc.name+".golden.excalidraw"), encode(t, s.Scene()))
			golden(t, filepath.Join("testdata", "graph-"+sc.name+".metrics.golden"), []byte(m.String()+"\n"))
		})
	}
}

// quality holds the figures of quality-and-layout.md section 6 for a graph drawing.
type quality struct {
	nodes, edges, overlaps, crossings, unbound int
	groups, groupFaults                        int
	meanEdge                                   float64
}

func (q quality) String() string {
	return fmt.Sprintf("nodes %d, edges %d, overlapping node pairs %d, edge crossings %d, arrows not bound at both ends on borders %d, mean edge length %.0f px, groups %d, group faults %d",
		q.nodes, q.edges, q.overlaps, q.crossings, q.unbound, q.meanEdge, q.groups, q.groupFaults)
}

// groupFaults counts, for every group (frame or box), members not enclosed with at least pad px
// to spare (and below the title strip), and other nodes or groups that overlap the group's area
// without being inside it.
func groupFaults(sc *scene.Scene) (groups int, faults []string) {
	const pad = 10.0
	var all []scene.Element
	for _, e := range sc.Elements() {
		if graph.IsNode(e.Type) || e.Type == scene.Frame {
			all = append(all, e)
		}
	}
	for _, g := range all {
		if g.Type != scene.Frame && !graph.IsBox(&g) {
			continue
		}
		groups++
		area := g.Bounds()
		inner := scene.Rect{X: area.X + pad, Y: area.Y + pad, Width: area.Width - 2*pad, Height: area.Height - 2*pad}
		if g.Type == scene.Frame {
			area.Y -= graph.FrameTitle // the name above the frame is part of the group's area
			area.Height += graph.FrameTitle
		} else {
			inner.Y += graph.FrameTitle - pad // the title strip inside the box
			inner.Height -= graph.FrameTitle - pad
		}
		members := map[string]bool{}
		for _, m := range graph.Members(sc, g.ID) {
			members[m] = true
		}
		for _, e := range all {
			if e.ID == g.ID {
				continue
			}
			b := e.Bounds()
			in := b.X >= inner.X && b.Y >= inner.Y && b.X+b.Width <= inner.X+inner.Width && b.Y+b.Height <= inner.Y+inner.Height
			touches := b.X < area.X+area.Width && area.X < b.X+b.Width && b.Y < area.Y+area.Height && area.Y < b.Y+b.Height
			// A group around this one (it lies inside e) is fine.
			around := (e.Type == scene.Frame || graph.IsBox(&e)) && area.X >= b.X && area.Y >= b.Y && area.X+area.Width <= b.X+b.Width && area.Y+area.Height <= b.Y+b.Height
			switch {
			case members[e.ID] && !in:
				faults = append(faults, fmt.Sprintf("%s %v not inside its group %s %v with %g px to spare", e.ID, b, g.ID, inner, pad))
			case !members[e.ID] && touches && !around:
				faults = append(faults, fmt.Sprintf("%s %v overlaps group %s %v", e.ID, b, g.ID, area))
			}
		}
	}
	return groups, faults
}

// measure computes the figures from the scene alone, as a later reader of the file would.
func measureGraph(t *testing.T, sc *scene.Scene) quality {
	t.Helper()
	var q quality
	var nodes, arrows []scene.Element
	for _, e := range sc.Elements() {
		switch {
		case graph.IsNode(e.Type) && !graph.IsBox(&e):
			nodes = append(nodes, e)
		case e.Type == scene.Arrow:
			arrows = append(arrows, e)
		}
	}
	q.nodes, q.edges = len(nodes), len(arrows)
	for i := range nodes {
		for j := i + 1; j < len(nodes); j++ {
			if scene.Overlap(nodes[i], nodes[j]) {
				q.overlaps++
			}
		}
	}
	lines := make([][]layout.Point, len(arrows))
	var total float64
	for i, a := range arrows {
		pts := a.AbsPoints()
		for k, p := range pts {
			lines[i] = append(lines[i], layout.Point{X: p.X, Y: p.Y})
			if k > 0 {
				total += math.Hypot(p.X-pts[k-1].X, p.Y-pts[k-1].Y)
			}
		}
		bound := a.StartBinding != nil && a.EndBinding != nil
		if bound {
			for _, end := range []struct {
				id string
				p  scene.Point
			}{{a.StartBinding.ElementID, pts[0]}, {a.EndBinding.ElementID, pts[len(pts)-1]}} {
				target, ok := sc.Get(end.id)
				if !ok || scene.DistanceToBorder(target, end.p) > scene.DefaultGap+1 {
					bound = false
				}
			}
		}
		if !bound {
			q.unbound++
		}
	}
	if len(arrows) > 0 {
		q.meanEdge = total / float64(len(arrows))
	}
	var faults []string
	q.groups, faults = groupFaults(sc)
	q.groupFaults = len(faults)
	for i, f := range faults {
		if i == 5 {
			t.Logf("… %d more group faults", len(faults)-5)
			break
		}
		t.Logf("group fault: %s", f)
	}
	for i := range arrows {
		for j := i + 1; j < len(arrows); j++ {
			a, b := arrows[i], arrows[j]
			if a.StartBinding != nil && b.StartBinding != nil && a.EndBinding != nil && b.EndBinding != nil {
				ends := map[string]bool{a.StartBinding.ElementID: true, a.EndBinding.ElementID: true}
				if ends[b.StartBinding.ElementID] || ends[b.EndBinding.ElementID] {
					continue
				}
			}
			if layout.PolylinesCross(lines[i], lines[j]) {
				q.crossings++
			}
		}
	}
	return q
}
