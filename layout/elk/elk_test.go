package elk

import (
	"context"
	"errors"
	"math"
	"testing"

	"github.com/excalibot/excalibot/diagram/graph"
	"github.com/excalibot/excalibot/layout"
	"github.com/excalibot/excalibot/scene"
)

// nested is a small architecture: a client outside, an API and a worker in a backend group, a
// database in a storage group inside the backend, with a labelled edge across both borders.
func nested(dir layout.Direction) layout.Graph {
	return layout.Graph{
		Direction: dir,
		Nodes: []layout.Node{
			{ID: "client", Width: 120, Height: 60},
			{ID: "api", Width: 140, Height: 70, Cluster: "backend"},
			{ID: "worker", Width: 120, Height: 60, Cluster: "backend"},
			{ID: "db", Width: 130, Height: 80, Cluster: "storage"},
		},
		Edges: []layout.Edge{
			{From: "client", To: "api", LabelWidth: 70, LabelHeight: 25},
			{From: "api", To: "worker"},
			{From: "api", To: "db", LabelWidth: 50, LabelHeight: 25},
			{From: "worker", To: "db"},
			{From: "client", To: "db", LabelWidth: 90, LabelHeight: 25},
			{From: "worker", To: "worker"},
		},
		Clusters: []layout.Cluster{{ID: "backend", TitleHeight: 30}, {ID: "storage", TitleHeight: 30, Parent: "backend"}},
	}
}

func inside(in, out layout.Rect) bool {
	return in.X >= out.X && in.Y >= out.Y && in.X+in.Width <= out.X+out.Width && in.Y+in.Height <= out.Y+out.Height
}

func onBorder(r layout.Rect, p layout.Point) bool {
	const tol = 0.5
	within := p.X >= r.X-tol && p.X <= r.X+r.Width+tol && p.Y >= r.Y-tol && p.Y <= r.Y+r.Height+tol
	near := math.Abs(p.X-r.X) < tol || math.Abs(p.X-r.X-r.Width) < tol || math.Abs(p.Y-r.Y) < tol || math.Abs(p.Y-r.Y-r.Height) < tol
	return within && near
}

// ELK places every node inside its groups (nested ones inside their parent, below the title
// strip), keeps nodes apart, runs the layers the way asked, and routes each edge orthogonally
// from its tail's border to its head's, a labelled one through its label's place.
func TestLayoutNested(t *testing.T) {
	ctx := context.Background()
	for _, dir := range []layout.Direction{layout.TopDown, layout.LeftRight} {
		t.Run(string(dir), func(t *testing.T) {
			g := nested(dir)
			res, err := Layout(ctx, g)
			if err != nil {
				t.Fatal(err)
			}
			if len(res.Nodes) != 4 || len(res.Clusters) != 2 {
				t.Fatalf("placed %d nodes and %d groups, want 4 and 2", len(res.Nodes), len(res.Clusters))
			}
			for _, n := range g.Nodes {
				r := res.Nodes[n.ID]
				if r.Width != n.Width || r.Height != n.Height || r.X < 0 || r.Y < 0 {
					t.Errorf("%s at %+v, want its size %gx%g at x, y ≥ 0", n.ID, r, n.Width, n.Height)
				}
			}
			for _, c := range []struct{ node, group string }{{"api", "backend"}, {"worker", "backend"}, {"db", "storage"}, {"db", "backend"}} {
				n, grp := res.Nodes[c.node], res.Clusters[c.group]
				strip := layout.Rect{X: grp.X, Y: grp.Y + 30, Width: grp.Width, Height: grp.Height - 30}
				if !inside(n, strip) {
					t.Errorf("%s %+v is not inside %s %+v below its title", c.node, n, c.group, grp)
				}
			}
			if !inside(res.Clusters["storage"], res.Clusters["backend"]) {
				t.Errorf("storage %+v is not inside backend %+v", res.Clusters["storage"], res.Clusters["backend"])
			}
			if c := res.Nodes["client"]; inside(c, res.Clusters["backend"]) {
				t.Errorf("client %+v lies inside backend %+v", c, res.Clusters["backend"])
			}
			client, api := res.Nodes["client"], res.Nodes["api"]
			if dir == layout.TopDown && !(client.Y+client.Height <= api.Y) || dir == layout.LeftRight && !(client.X+client.Width <= api.X) {
				t.Errorf("client %+v, api %+v: want the client's layer before the api's (%s)", client, api, dir)
			}
			for k, e := range g.Edges {
				if e.From == e.To {
					if len(res.Routes[k]) != 0 {
						t.Errorf("self-loop %d has a route %v; the caller draws it", k, res.Routes[k])
					}
					continue
				}
				ends := res.Ends[k]
				if !onBorder(res.Nodes[e.From], ends[0]) || !onBorder(res.Nodes[e.To], ends[1]) {
					t.Errorf("edge %s->%s runs from %v to %v, want the borders of %+v and %+v", e.From, e.To, ends[0], ends[1], res.Nodes[e.From], res.Nodes[e.To])
				}
				line := append(append([]layout.Point{ends[0]}, res.Routes[k]...), ends[1])
				for i := 0; i+1 < len(line); i++ {
					if a, b := line[i], line[i+1]; math.Abs(a.X-b.X) > 0.01 && math.Abs(a.Y-b.Y) > 0.01 {
						t.Errorf("edge %s->%s: segment %v–%v is not orthogonal", e.From, e.To, a, b)
					}
				}
				if !res.Sharp[k] {
					t.Errorf("edge %s->%s is not sharp", e.From, e.To)
				}
				if e.LabelWidth == 0 {
					continue
				}
				if len(res.Routes[k])%2 != 1 {
					t.Fatalf("labelled edge %s->%s has %d points between its ends, want an odd number", e.From, e.To, len(res.Routes[k]))
				}
				mid, l := res.Routes[k][len(res.Routes[k])/2], res.Labels[k]
				if math.Abs(mid.X-l.X) > e.LabelWidth/2 || math.Abs(mid.Y-l.Y) > e.LabelHeight/2 {
					t.Errorf("edge %s->%s: the route's middle %v is outside its label at %v", e.From, e.To, mid, l)
				}
			}
		})
	}
}

// A graph layout refuses is refused here too, with the same error.
func TestLayoutRefuses(t *testing.T) {
	g := nested(layout.TopDown)
	g.Edges = append(g.Edges, layout.Edge{From: "api", To: "nowhere"})
	if _, err := Layout(context.Background(), g); !errors.Is(err, layout.ErrInvalid) {
		t.Errorf("got %v, want an error wrapping layout.ErrInvalid", err)
	}
}

// A context cancelled before a layout or while the script runs stops it, and the next layout
// still runs (in a new runtime after an interrupted one).
func TestLayoutCancelled(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := Layout(ctx, nested(layout.TopDown)); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled before: got %v, want context.Canceled", err)
	}
	ctx, cancel = context.WithCancel(context.Background())
	defer cancel()
	startedHook = cancel
	_, err := Layout(ctx, nested(layout.TopDown))
	startedHook = nil
	if !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled while running: got %v, want context.Canceled", err)
	}
	mu.Lock()
	dropped := run == nil
	mu.Unlock()
	if !dropped {
		t.Error("the interrupted runtime was kept")
	}
	if _, err := Layout(context.Background(), nested(layout.TopDown)); err != nil {
		t.Errorf("after a cancelled layout: %v", err)
	}
}

// Drawn through graph.Options.Layout, every arrow of an ELK layout keeps ELK's route: sharp,
// each segment horizontal or vertical from the gap off its tail's border to the gap off its
// head's, and a labelled arrow's label on the route.
func TestDrawnArrowsAreOrthogonal(t *testing.T) {
	g := graph.Graph{
		Nodes: []graph.Node{{ID: "web", Label: "Web"}, {ID: "api", Label: "API", Group: "core"}, {ID: "jobs", Label: "Jobs", Group: "core"},
			{ID: "db", Label: "Database", Group: "store"}, {ID: "cache", Label: "Cache", Group: "store"}},
		Edges: []graph.Edge{{From: "web", To: "api", Label: "HTTPS"}, {From: "api", To: "db", Label: "SQL"}, {From: "api", To: "cache"},
			{From: "jobs", To: "db"}, {From: "web", To: "cache", Label: "reads"}, {From: "api", To: "jobs"}},
		Groups: []graph.Group{{ID: "core", Title: "Backend"}, {ID: "store", Title: "Storage", Parent: "core"}},
	}
	for _, dir := range []graph.Direction{graph.TopDown, graph.LeftRight} {
		t.Run(string(dir), func(t *testing.T) {
			g.Direction = dir
			sc := scene.New()
			if _, err := graph.Draw(context.Background(), sc, g, graph.Options{Layout: Layout}); err != nil {
				t.Fatal(err)
			}
			arrows := 0
			sc.Each(func(a *scene.Element) bool {
				if a.Type != scene.Arrow {
					return true
				}
				arrows++
				pts := a.AbsPoints()
				if a.Roundness != nil {
					t.Errorf("arrow %s is rounded, want sharp", a.ID)
				}
				for i := 0; i+1 < len(pts); i++ {
					if p, q := pts[i], pts[i+1]; math.Abs(p.X-q.X) > 0.5 && math.Abs(p.Y-q.Y) > 0.5 {
						t.Errorf("arrow %s: segment %d %v–%v is not orthogonal (points %v)", a.ID, i, p, q, pts)
					}
				}
				for _, end := range []struct {
					b *scene.Binding
					p scene.Point
				}{{a.StartBinding, pts[0]}, {a.EndBinding, pts[len(pts)-1]}} {
					n, _ := sc.Get(end.b.ElementID)
					if d := scene.DistanceToBorder(n, end.p); math.Abs(d-scene.DefaultGap) > 0.5 {
						t.Errorf("arrow %s ends %.1f px off %s's border, want %v", a.ID, d, n.ID, scene.DefaultGap)
					}
				}
				return true
			})
			if arrows != len(g.Edges) {
				t.Errorf("%d arrows, want %d", arrows, len(g.Edges))
			}
		})
	}
}
