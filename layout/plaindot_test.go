package layout

import (
	"context"
	"testing"
)

func inside(in, out Rect) bool {
	return in.X >= out.X-0.5 && in.Y >= out.Y-0.5 && in.X+in.Width <= out.X+out.Width+0.5 && in.Y+in.Height <= out.Y+out.Height+0.5
}

func TestPlainDot(t *testing.T) {
	g := Graph{Direction: TopDown, Engine: EnginePlainDot,
		Clusters: []Cluster{{ID: "outer", TitleHeight: 30}, {ID: "inner", TitleHeight: 30, Parent: "outer"}},
		Nodes:    []Node{{"a", 160, 80, ""}, {"b", 120, 60, "outer"}, {"c", 140, 70, "inner"}, {"d", 100, 50, "inner"}, {"e", 160, 80, ""}},
		Edges: []Edge{{From: "a", To: "b", LabelWidth: 90, LabelHeight: 25}, {From: "b", To: "c"}, {From: "c", To: "d"},
			{From: "d", To: "e", LabelWidth: 60, LabelHeight: 25}, {From: "e", To: "a"}, {From: "a", To: "e"}}}
	for _, dir := range []Direction{TopDown, LeftRight} {
		t.Run(string(dir), func(t *testing.T) {
			g.Direction = dir
			r, err := Layout(context.Background(), g)
			if err != nil {
				t.Fatal(err)
			}
			if r.Direction != dir || r.Arrangement != "" {
				t.Errorf("direction %q arrangement %q, want %q and none", r.Direction, r.Arrangement, dir)
			}
			for i, n := range g.Nodes {
				got := r.Nodes[n.ID]
				if got.Width != n.Width || got.Height != n.Height || got.X < -0.5 || got.Y < -0.5 {
					t.Errorf("node %s at %+v, want size %gx%g at x, y ≥ 0", n.ID, got, n.Width, n.Height)
				}
				if n.Cluster != "" && !inside(got, r.Clusters[n.Cluster]) {
					t.Errorf("node %s %+v is not in its cluster %+v", n.ID, got, r.Clusters[n.Cluster])
				}
				for _, m := range g.Nodes[i+1:] {
					if overlaps(got, r.Nodes[m.ID]) {
						t.Errorf("nodes %s and %s overlap", n.ID, m.ID)
					}
				}
			}
			if in, out := r.Clusters["inner"], r.Clusters["outer"]; !inside(in, out) {
				t.Errorf("cluster inner %+v is not inside outer %+v", in, out)
			}
			if top, c := r.Clusters["outer"].Y, r.Nodes["b"].Y; c-top < 30 {
				t.Errorf("node b %v px below its cluster's top, want room for the 30 px title", c-top)
			}
			for k, e := range g.Edges {
				route := r.Routes[k]
				if e.LabelWidth == 0 {
					continue
				}
				if len(route)%2 != 1 || route[len(route)/2] != nearestOnRoute(route, r.Labels[k]) {
					t.Errorf("edge %d route %v: want an odd number of points, the middle one nearest the label %v", k, route, r.Labels[k])
				}
				if r.Labels[k] == (Point{}) {
					t.Errorf("edge %d has no label place", k)
				}
			}
			// Routes run from tail to head, also for an edge dot turned round to break the cycle.
			for k, e := range g.Edges {
				route := r.Routes[k]
				if len(route) < 2 {
					continue
				}
				from, to := centre(r.Nodes[e.From]), centre(r.Nodes[e.To])
				if dist(route[0], from)+dist(route[len(route)-1], to) > dist(route[0], to)+dist(route[len(route)-1], from) {
					t.Errorf("edge %s->%s: route %v runs backwards", e.From, e.To, route)
				}
			}
		})
	}
}

func centre(r Rect) Point { return Point{r.X + r.Width/2, r.Y + r.Height/2} }

// nearestOnRoute is the route's point nearest p.
func nearestOnRoute(route []Point, p Point) Point {
	best := route[0]
	for _, q := range route {
		if dist(q, p) < dist(best, p) {
			best = q
		}
	}
	return best
}

func TestSplitNearest(t *testing.T) {
	spline := []Point{{0, 0}, {0, 100}, {100, 100}, {100, 0}, {100, -100}, {200, -100}, {200, 0}}
	first, at, second := splitNearest(spline, Point{50, 100})
	if len(first)%3 != 1 || len(second)%3 != 1 || first[len(first)-1] != at || second[0] != at {
		t.Fatalf("split %v | %v | %v: want two splines meeting at the point", first, at, second)
	}
	if want := (Point{50, 75}); dist(at, want) > 1e-9 {
		t.Errorf("split at %v, want %v (the first piece's middle)", at, want)
	}
}
