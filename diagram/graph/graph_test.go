package graph

import (
	"context"
	"errors"
	"fmt"
	"math"
	"strings"
	"testing"

	"github.com/excalibot/excalibot/diagram"
	"github.com/excalibot/excalibot/scene"
)

func get(t *testing.T, sc *scene.Scene, id string) scene.Element {
	t.Helper()
	e, ok := sc.Get(id)
	if !ok {
		t.Fatalf("no element %q", id)
	}
	return e
}

// threeTier is web → api → db, the api and db in a Backend frame.
var threeTier = Graph{
	Nodes: []Node{
		{ID: "web", Label: "Web"},
		{ID: "api", Label: "API", Group: "Backend"},
		{ID: "db", Label: "Database", Shape: scene.Ellipse, Fill: "#a5d8ff", Group: "Backend"},
	},
	Edges: []Edge{{From: "web", To: "api", Label: "HTTPS"}, {From: "API", To: "database", Style: "dashed"}},
}

func drawn(t *testing.T, g Graph) *scene.Scene {
	t.Helper()
	sc := scene.New()
	if _, err := Draw(context.Background(), sc, g, Options{}); err != nil {
		t.Fatal(err)
	}
	return sc
}

func TestDraw(t *testing.T) {
	sc := scene.New()
	res, err := Draw(context.Background(), sc, threeTier, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if res.Direction != TopDown || res.Nodes != 3 || res.Edges != 2 || res.Groups != 1 || res.Crossings != 0 {
		t.Errorf("result %+v, want top-down, 3 nodes, 2 edges, 1 group, no crossings", res)
	}
	web, api, db := get(t, sc, "web"), get(t, sc, "api"), get(t, sc, "db")
	if !(web.Y+web.Height < api.Y && api.Y+api.Height < db.Y) {
		t.Errorf("web y %v, api y %v, db y %v: want the layers top-down", web.Y, api.Y, db.Y)
	}
	if db.Type != scene.Ellipse || db.BackgroundColor != "#a5d8ff" || sc.LabelText("db") != "Database" {
		t.Errorf("db is a %s filled %q labelled %q", db.Type, db.BackgroundColor, sc.LabelText("db"))
	}
	if api.FrameID == "" || api.FrameID != db.FrameID || web.FrameID != "" {
		t.Errorf("frames: web %q, api %q, db %q; want api and db in one new frame", web.FrameID, api.FrameID, db.FrameID)
	}
	if f := get(t, sc, api.FrameID); f.Name != "Backend" {
		t.Errorf("frame named %q, want Backend", f.Name)
	}
	e := get(t, sc, "e-api-db") // found by label, either case
	if e.StartBinding == nil || e.StartBinding.ElementID != "api" || e.EndBinding.ElementID != "db" || e.StrokeStyle != "dashed" {
		t.Errorf("edge api → db: %+v → %+v, style %q", e.StartBinding, e.EndBinding, e.StrokeStyle)
	}
	if got := sc.LabelText("e-web-api"); got != "HTTPS" {
		t.Errorf("edge label %q, want HTTPS", got)
	}
}

func TestDrawBesideWhatIsThere(t *testing.T) {
	sc := drawn(t, Graph{Nodes: []Node{{ID: "a", Label: "A"}}})
	a := get(t, sc, "a")
	if _, err := Draw(context.Background(), sc, Graph{Nodes: []Node{{ID: "b", Label: "B"}}, Direction: LeftRight}, Options{}); err != nil {
		t.Fatal(err)
	}
	if b := get(t, sc, "b"); b.X < a.X+a.Width {
		t.Errorf("b at x %v overlaps a (right edge %v)", b.X, a.X+a.Width)
	}
}

func TestDrawProblems(t *testing.T) {
	sc := drawn(t, Graph{Nodes: []Node{{ID: "taken", Label: "T"}}})
	_, err := Draw(context.Background(), sc, Graph{
		Nodes: []Node{{ID: "taken", Label: "X", Ref: "nodes[0]"}, {ID: "n", Label: "N", Ref: "nodes[1]"}, {ID: "n", Label: "M", Ref: "nodes[2]"}},
		Edges: []Edge{{From: "n", To: "nowhere", Ref: "edges[0]"}},
	}, Options{})
	var ps Problems
	if !errors.As(err, &ps) {
		t.Fatalf("err = %v, want Problems", err)
	}
	var where []string
	for _, p := range ps {
		where = append(where, p.Where)
	}
	if got, want := strings.Join(where, " "), "nodes[0].id nodes[2].id"; got != want {
		t.Errorf("problems at %q, want %q: %v", got, want, err)
	}
	var taken *TakenError
	if !errors.As(ps[0].Err, &taken) || taken.ID != "taken" || taken.Type != scene.Rectangle {
		t.Errorf("first problem %v, want a TakenError for the rectangle", ps[0].Err)
	}
	// The ends are checked once the nodes are good.
	_, err = Draw(context.Background(), scene.New(), Graph{Nodes: []Node{{ID: "n", Label: "N"}}, Edges: []Edge{{From: "n", To: "nowhere", Ref: "edges[0]"}}}, Options{})
	if !errors.As(err, &ps) || ps[0].Where != "edges[0]" || !strings.Contains(ps[0].Err.Error(), `to: no node with id or label "nowhere"`) {
		t.Errorf("err = %v, want edges[0] naming the missing end", err)
	}
	var many *TooManyError
	if _, err := Draw(context.Background(), scene.New(), threeTier, Options{MaxElements: 4}); !errors.As(err, &many) || many.Limit != 4 {
		t.Errorf("err = %v, want a TooManyError at the limit of 4", err)
	}
	if _, err := Draw(context.Background(), scene.New(), Graph{Nodes: threeTier.Nodes, Direction: MindMap}, Options{}); err == nil || !strings.Contains(err.Error(), "mind map has no groups") {
		t.Errorf("err = %v, want a mind map with groups refused", err)
	}
}

func TestAddBesideItsNeighbour(t *testing.T) {
	sc := drawn(t, threeTier)
	before := map[string]scene.Element{}
	for _, id := range []string{"web", "api", "db"} {
		before[id] = get(t, sc, id)
	}
	res, err := Add(context.Background(), sc, []Node{{ID: "cache", Label: "Cache"}}, []Edge{{From: "api", To: "cache"}}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.IDs) != 2 || res.Direction != TopDown {
		t.Errorf("result %+v, want the node and its edge, top-down", res)
	}
	for id, b := range before {
		if a := get(t, sc, id); a.X != b.X || a.Y != b.Y {
			t.Errorf("%s moved from %v,%v to %v,%v", id, b.X, b.Y, a.X, a.Y)
		}
	}
	c, api := get(t, sc, "cache"), get(t, sc, "api")
	if c.Y <= api.Y+api.Height {
		t.Errorf("cache at y %v, want it below api (bottom %v) in a top-down graph", c.Y, api.Y+api.Height)
	}
	for _, e := range sc.Elements() {
		if e.ID != "cache" && IsNode(e.Type) && !IsBox(&e) && e.ContainerID == "" && scene.Overlap(e, c) {
			t.Errorf("cache overlaps %s", e.ID)
		}
	}
}

func TestEdits(t *testing.T) {
	sc := drawn(t, threeTier)
	v := Read(sc)
	if got := v.Nodes(); strings.Join(got, ",") != "web,api,db" {
		t.Errorf("nodes %v", got)
	}
	if id, err := v.Node("  database "); id != "db" || err != nil {
		t.Errorf("Node(database) = %q, %v", id, err)
	}
	if id, err := v.Edge("db", "api"); id != "e-api-db" || err != nil {
		t.Errorf("Edge(db, api) = %q, %v: want the edge the other way round", id, err)
	}
	if _, err := v.Edge("web", "db"); err == nil || !strings.Contains(err.Error(), "edges of web: web→api") {
		t.Errorf("Edge(web, db) error %v, want the edges web has", err)
	}

	// Reshape keeps the id, the label and the arrows.
	if err := Reshape(sc, "api", scene.Diamond); err != nil {
		t.Fatal(err)
	}
	if api := get(t, sc, "api"); api.Type != scene.Diamond || sc.LabelText("api") != "API" {
		t.Errorf("api is a %s labelled %q", api.Type, sc.LabelText("api"))
	}
	if e := get(t, sc, "e-web-api"); e.EndBinding == nil || e.EndBinding.ElementID != "api" {
		t.Errorf("the arrow to api lost its end: %+v", e.EndBinding)
	}
	// Into a new group, then out of every group.
	if err := MoveToGroup(sc, "web", "Clients", Options{}); err != nil {
		t.Fatal(err)
	}
	if web := get(t, sc, "web"); web.FrameID == "" || get(t, sc, web.FrameID).Name != "Clients" {
		t.Errorf("web in frame %q, want a new frame Clients", web.FrameID)
	}
	if err := MoveToGroup(sc, "db", "", Options{}); err != nil {
		t.Fatal(err)
	}
	if db := get(t, sc, "db"); db.FrameID != "" {
		t.Errorf("db still in %q", db.FrameID)
	}

	// Relayout left-right.
	res, err := Relayout(context.Background(), sc, LeftRight)
	if err != nil {
		t.Fatal(err)
	}
	if web, api := get(t, sc, "web"), get(t, sc, "api"); res.Direction != LeftRight || api.X <= web.X+web.Width {
		t.Errorf("after a left-right relayout web x %v, api x %v", web.X, api.X)
	}
	if got := Read(sc).Direction(); got != LeftRight {
		t.Errorf("read back as %s, want LR", got)
	}

	// Remove a node: its label and edges go with it.
	gone, err := Remove(sc, []string{"Database"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if sc.Has("db") || sc.Has("e-api-db") || len(gone) < 3 {
		t.Errorf("removed %v; db or its edge still there", gone)
	}
	_, err = Remove(sc, []string{"nope"}, []Edge{{From: "web", To: "api", Ref: "edges[0]"}, {From: "api", To: "web-2", Ref: "edges[1]"}})
	var ps Problems
	if !errors.As(err, &ps) || len(ps) != 2 || ps[0].Where != "nodes[0]" || ps[1].Where != "edges[1]" {
		t.Errorf("err = %v, want problems at nodes[0] and edges[1]", err)
	}
	if !sc.Has("e-web-api") {
		t.Error("a refused Remove deleted the edge it found")
	}
}

func TestRelayoutRefusals(t *testing.T) {
	if _, err := Relayout(context.Background(), scene.New(), ""); !errors.Is(err, ErrNoNodes) {
		t.Errorf("empty canvas: err = %v, want ErrNoNodes", err)
	}
	sc := drawn(t, threeTier)
	if err := sc.Update("api", func(e *scene.Element) error { e.Locked = true; return nil }); err != nil {
		t.Fatal(err)
	}
	var locked *LockedError
	if _, err := Relayout(context.Background(), sc, ""); !errors.As(err, &locked) || strings.Join(locked.IDs, ",") != "api" {
		t.Errorf("err = %v, want api locked", err)
	}
	if err := Reshape(sc, "api", scene.Ellipse); !errors.As(err, &locked) {
		t.Errorf("reshape of a locked node: err = %v, want a LockedError", err)
	}
}

// pipeline is a chain of n stages, the third edge labelled.
func pipeline(n int, dir Direction) Graph {
	g := Graph{Direction: dir}
	for i := range n {
		g.Nodes = append(g.Nodes, Node{ID: fmt.Sprintf("s%d", i), Label: fmt.Sprintf("Stage %d", i)})
		if i > 0 {
			e := Edge{From: fmt.Sprintf("s%d", i-1), To: fmt.Sprintf("s%d", i)}
			if i == 3 {
				e.Label = "on merge"
			}
			g.Edges = append(g.Edges, e)
		}
	}
	return g
}

// TestDrawFitsTheScreen: a pipeline of 12 stages comes out within MaxAspect, wrapped when its
// direction was asked for (the direction kept), and every edge label sits on its arrow's middle
// point, where Excalidraw puts it.
func TestDrawFitsTheScreen(t *testing.T) {
	for _, dir := range []Direction{LeftRight, TopDown, ""} {
		sc := scene.New()
		res, err := Draw(context.Background(), sc, pipeline(12, dir), Options{})
		if err != nil {
			t.Fatal(err)
		}
		box, _ := diagram.Bounds(sc, nil)
		if a := math.Max(box.Width/box.Height, box.Height/box.Width); a > MaxAspect+0.1 {
			t.Errorf("%q: %s %q is %gx%g, want within %g:1", dir, res.Direction, res.Arrangement, box.Width, box.Height, MaxAspect)
		}
		if dir != "" && (res.Direction != dir || !strings.Contains(res.Arrangement, "wrapped")) {
			t.Errorf("%q: laid out %s %q, want %s kept and wrapped", dir, res.Direction, res.Arrangement, dir)
		}
		a := get(t, sc, "e-s2-s3")
		pts := a.AbsPoints()
		l := get(t, sc, a.Label())
		if len(pts)%2 != 1 || math.Hypot(l.Center().X-pts[len(pts)/2].X, l.Center().Y-pts[len(pts)/2].Y) > 0.5 {
			t.Errorf("%q: label at %v, arrow points %v: want the label on the middle point", dir, l.Center(), pts)
		}
	}
}

// TestFitGroupWithNothingPlaced: a group still the 1×1 placeholder it is created as, whose members
// are all skipped (not placed yet) or gone, is left as it is, with finite geometry everywhere; once
// its members count it grows around them.
func TestFitGroupWithNothingPlaced(t *testing.T) {
	for _, style := range []string{"frame", "box"} {
		t.Run(style, func(t *testing.T) {
			sc := drawn(t, Graph{
				Nodes:  []Node{{ID: "a", Label: "A", Group: "g"}, {ID: "b", Label: "B", Group: "g"}},
				Edges:  []Edge{{From: "a", To: "b"}},
				Groups: []Group{{ID: "g", Style: style}},
			})
			members := Members(sc, "g")
			if len(members) < 2 {
				t.Fatalf("group g holds %v, want a and b", members)
			}
			placeholder := func(t *testing.T) {
				t.Helper()
				if err := sc.Update("g", func(e *scene.Element) error { e.X, e.Y, e.Width, e.Height = 5, 5, 1, 1; return nil }); err != nil {
					t.Fatal(err)
				}
			}
			unchanged := func(t *testing.T, when string) {
				t.Helper()
				if g := get(t, sc, "g"); g.X != 5 || g.Y != 5 || g.Width != 1 || g.Height != 1 {
					t.Errorf("%s: group at %v,%v %vx%v, want the placeholder left at 5,5 1x1", when, g.X, g.Y, g.Width, g.Height)
				}
				for _, e := range sc.Elements() {
					if b := e.Bounds(); !finite(b.X, b.Y, b.Width, b.Height) {
						t.Errorf("%s: %s has geometry %+v", when, e.ID, b)
					}
				}
			}

			placeholder(t)
			skip := map[string]bool{}
			for _, m := range members {
				skip[m] = true
			}
			if err := fitGroup(sc, "g", skip); err != nil {
				t.Fatalf("all members skipped: %v", err)
			}
			unchanged(t, "all members skipped")

			if err := fitGroup(sc, "g", nil); err != nil {
				t.Fatal(err)
			}
			g, a, b := get(t, sc, "g"), get(t, sc, "a"), get(t, sc, "b")
			for _, n := range []scene.Element{a, b} {
				if n.X < g.X || n.Y < g.Y || n.X+n.Width > g.X+g.Width || n.Y+n.Height > g.Y+g.Height {
					t.Errorf("members counted: %s at %v,%v %vx%v is not inside the group %v,%v %vx%v", n.ID, n.X, n.Y, n.Width, n.Height, g.X, g.Y, g.Width, g.Height)
				}
			}

			if _, err := sc.Delete(members...); err != nil {
				t.Fatal(err)
			}
			placeholder(t)
			if err := fitGroup(sc, "g", nil); err != nil {
				t.Fatalf("no members left: %v", err)
			}
			unchanged(t, "no members left")
		})
	}
}

func finite(fs ...float64) bool {
	for _, f := range fs {
		if math.IsInf(f, 0) || math.IsNaN(f) {
			return false
		}
	}
	return true
}

// TestSelfLoop: an edge from a node back to itself is a short loop out of the node's right side,
// bound at both ends to the node, its label on the loop's far side clear of every node; the
// layout keeps that room free, so the loop touches no other node.
func TestSelfLoop(t *testing.T) {
	for _, dir := range []Direction{TopDown, LeftRight} {
		w := scene.New()
		gr := Graph{Direction: dir, Nodes: []Node{{ID: "pending", Label: "Pending"}, {ID: "paid", Label: "Paid"}, {ID: "failed", Label: "Failed"}},
			Edges: []Edge{{From: "pending", To: "pending", Label: "retry payment"}, {From: "pending", To: "paid"}, {From: "pending", To: "failed"}, {From: "failed", To: "failed"}}}
		if _, err := Draw(context.Background(), w, gr, Options{}); err != nil {
			t.Fatalf("%s: %v", dir, err)
		}
		for _, id := range []string{"e-pending-pending", "e-failed-failed"} {
			a, ok := w.Get(id)
			if !ok {
				t.Fatalf("%s: no arrow %s", dir, id)
			}
			n, _ := w.Get(a.StartBinding.ElementID)
			if a.EndBinding.ElementID != n.ID || len(a.Points) < 3 {
				t.Errorf("%s: %s is bound %s → %s with %d points, want a loop on one node", dir, id, a.StartBinding.ElementID, a.EndBinding.ElementID, len(a.Points))
			}
			box := scene.BoundingBox(a)
			if box.X+box.Width <= n.X+n.Width || box.X < n.X+n.Width-scene.DefaultGap-1 {
				t.Errorf("%s: %s spans %v, want it beside %s's right side %v", dir, id, box, n.ID, n.Bounds())
			}
			w.Each(func(o *scene.Element) bool {
				if IsNode(o.Type) && o.ID != n.ID && box.Intersects(o.Bounds()) {
					t.Errorf("%s: %s %v touches %s %v", dir, id, box, o.ID, o.Bounds())
				}
				if l, ok := w.Get(a.Label()); ok && a.Label() != "" && IsNode(o.Type) && l.Bounds().Intersects(o.Bounds()) {
					t.Errorf("%s: %s's label %v lies on %s %v", dir, id, l.Bounds(), o.ID, o.Bounds())
				}
				return true
			})
		}
	}
}
