package layout

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
)

// randomGraph is a connected graph of n nodes and m edges with mixed sizes, fixed by seed.
func randomGraph(n, m int, seed uint64) Graph {
	r := rand.New(rand.NewPCG(seed, 1))
	g := Graph{Direction: TopDown}
	for i := range n {
		g.Nodes = append(g.Nodes, Node{ID: fmt.Sprintf("v%d", i), Width: 120 + float64(r.IntN(80)), Height: 60 + float64(r.IntN(40))})
	}
	seen := map[[2]int]bool{}
	for i := 1; i < n && len(g.Edges) < m; i++ {
		j := r.IntN(i)
		seen[[2]int{j, i}] = true
		g.Edges = append(g.Edges, Edge{From: g.Nodes[j].ID, To: g.Nodes[i].ID})
	}
	for len(g.Edges) < m {
		a, b := r.IntN(n), r.IntN(n)
		if a >= b || seen[[2]int{a, b}] {
			continue
		}
		seen[[2]int{a, b}] = true
		g.Edges = append(g.Edges, Edge{From: g.Nodes[a].ID, To: g.Nodes[b].ID})
	}
	return g
}

func overlaps(a, b Rect) bool {
	return a.X < b.X+b.Width && b.X < a.X+a.Width && a.Y < b.Y+b.Height && b.Y < a.Y+a.Height
}

func TestLayoutPlacesWithoutOverlap(t *testing.T) {
	ctx := context.Background()
	for _, tc := range []struct {
		name string
		g    Graph
	}{
		{"chain TB", Graph{Direction: TopDown, Nodes: []Node{{"a", 160, 80, ""}, {"b", 160, 80, ""}, {"c", 160, 80, ""}}, Edges: []Edge{{From: "a", To: "b"}, {From: "b", To: "c"}}}},
		{"chain LR", Graph{Direction: LeftRight, Nodes: []Node{{"a", 160, 80, ""}, {"b", 160, 80, ""}}, Edges: []Edge{{From: "a", To: "b"}}}},
		{"random 10", randomGraph(10, 12, 1)},
		{"random 30", randomGraph(30, 45, 2)},
		{"random 60", randomGraph(60, 100, 3)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r, err := Layout(ctx, tc.g)
			if err != nil {
				t.Fatal(err)
			}
			if got, want := len(r.Nodes), len(tc.g.Nodes); got != want {
				t.Fatalf("placed %d nodes, want %d", got, want)
			}
			for i, a := range tc.g.Nodes {
				ra := r.Nodes[a.ID]
				if ra.X < -0.5 || ra.Y < -0.5 {
					t.Errorf("%s at %v: negative", a.ID, ra)
				}
				if ra.Width != a.Width || ra.Height != a.Height {
					t.Errorf("%s size %gx%g, want %gx%g", a.ID, ra.Width, ra.Height, a.Width, a.Height)
				}
				for _, b := range tc.g.Nodes[i+1:] {
					if overlaps(ra, r.Nodes[b.ID]) {
						t.Errorf("%s %v overlaps %s %v", a.ID, ra, b.ID, r.Nodes[b.ID])
					}
				}
			}
			// Every edge goes forwards along the direction (no cycles in these graphs).
			for _, e := range tc.g.Edges {
				a, b := r.Nodes[e.From], r.Nodes[e.To]
				if tc.g.Direction == TopDown && !(b.Y > a.Y) || tc.g.Direction == LeftRight && !(b.X > a.X) {
					t.Errorf("edge %s->%s goes backwards: %v -> %v", e.From, e.To, a, b)
				}
			}
			t.Logf("%d nodes, %d edges: %d crossings", len(tc.g.Nodes), len(tc.g.Edges), r.Crossings)
		})
	}
}

func TestLayoutClusters(t *testing.T) {
	g := Graph{Direction: TopDown,
		Nodes:    []Node{{"web", 160, 80, "front"}, {"api", 160, 80, "back"}, {"db", 160, 80, "back"}, {"user", 140, 70, ""}},
		Edges:    []Edge{{From: "user", To: "web"}, {From: "web", To: "api"}, {From: "api", To: "db"}},
		Clusters: []Cluster{{"front", 30, ""}, {"back", 30, ""}},
	}
	r, err := Layout(context.Background(), g)
	if err != nil {
		t.Fatal(err)
	}
	inside := func(in, out Rect) bool {
		return in.X >= out.X && in.Y >= out.Y && in.X+in.Width <= out.X+out.Width && in.Y+in.Height <= out.Y+out.Height
	}
	for _, n := range g.Nodes {
		for _, c := range g.Clusters {
			in := inside(r.Nodes[n.ID], r.Clusters[c.ID])
			if want := n.Cluster == c.ID; in != want {
				t.Errorf("%s inside %s = %v, want %v (%v in %v)", n.ID, c.ID, in, want, r.Nodes[n.ID], r.Clusters[c.ID])
			}
		}
	}
	if overlaps(r.Clusters["front"], r.Clusters["back"]) {
		t.Errorf("clusters overlap: %v %v", r.Clusters["front"], r.Clusters["back"])
	}
	// The title strip: the first node sits at least TitleHeight below its cluster's top.
	if got := r.Nodes["api"].Y - r.Clusters["back"].Y; got < 30 {
		t.Errorf("api is %g px below its cluster's top, want ≥ 30 for the title", got)
	}
}

// TestLayoutNestedClusters: a cluster inside a cluster lies inside it with room for its title, and
// holds exactly its own nodes; the outer one holds the inner one's nodes too.
func TestLayoutNestedClusters(t *testing.T) {
	for _, dir := range []Direction{TopDown, LeftRight} {
		g := Graph{Direction: dir,
			Nodes: []Node{{"lb", 160, 80, "cloud"}, {"api", 160, 80, "svc"}, {"auth", 160, 80, "svc"}, {"db", 160, 80, "data"},
				{"cache", 140, 70, "data"}, {"user", 140, 70, ""}, {"mon", 160, 80, "svc"}},
			Edges:    []Edge{{From: "user", To: "lb"}, {From: "lb", To: "api"}, {From: "api", To: "auth"}, {From: "api", To: "db"}, {From: "api", To: "cache"}},
			Clusters: []Cluster{{"cloud", 30, ""}, {"svc", 30, "cloud"}, {"data", 30, "cloud"}},
		}
		r, err := Layout(context.Background(), g)
		if err != nil {
			t.Fatal(err)
		}
		inside := func(in, out Rect, pad float64) bool {
			return in.X >= out.X+pad && in.Y >= out.Y+pad && in.X+in.Width <= out.X+out.Width-pad && in.Y+in.Height <= out.Y+out.Height-pad
		}
		want := map[string][]string{"cloud": {"lb", "api", "auth", "db", "cache", "mon"}, "svc": {"api", "auth", "mon"}, "data": {"db", "cache"}}
		for c, members := range want {
			for _, n := range g.Nodes {
				in := inside(r.Nodes[n.ID], r.Clusters[c], 1)
				if w := slices.Contains(members, n.ID); in != w {
					t.Errorf("%s: %s inside %s = %v, want %v", dir, n.ID, c, in, w)
				}
			}
		}
		for _, c := range []string{"svc", "data"} {
			if !inside(r.Clusters[c], r.Clusters["cloud"], 1) {
				t.Errorf("%s: %s %v not inside cloud %v", dir, c, r.Clusters[c], r.Clusters["cloud"])
			}
			if top := r.Clusters[c].Y - r.Clusters["cloud"].Y; top < 30 {
				t.Errorf("%s: %s starts %g px below cloud's top, want ≥ 30 for cloud's title", dir, c, top)
			}
		}
		// mon has no edges: it shares api's rank instead of stretching svc up to the first rank.
		mon, api := r.Nodes["mon"], r.Nodes["api"]
		if c, d := mon.Y+mon.Height/2, api.Y+api.Height/2; dir == LeftRight {
			c, d = mon.X+mon.Width/2, api.X+api.Width/2
			if c != d {
				t.Errorf("%s: mon at x %g, api at %g: want the same rank", dir, c, d)
			}
		} else if c != d {
			t.Errorf("%s: mon at y %g, api at %g: want the same rank", dir, c, d)
		}
		if overlaps(r.Clusters["svc"], r.Clusters["data"]) {
			t.Errorf("%s: svc %v and data %v overlap", dir, r.Clusters["svc"], r.Clusters["data"])
		}
	}
}

func TestLayoutDeterministic(t *testing.T) {
	g := randomGraph(30, 45, 7)
	a, err := Layout(context.Background(), g)
	if err != nil {
		t.Fatal(err)
	}
	b, err := Layout(context.Background(), g)
	if err != nil {
		t.Fatal(err)
	}
	for id, ra := range a.Nodes {
		if rb := b.Nodes[id]; ra != rb {
			t.Errorf("%s: %v then %v", id, ra, rb)
		}
	}
}

func TestLayoutRefusesBadGraphs(t *testing.T) {
	for _, tc := range []struct {
		name string
		g    Graph
	}{
		{"direction", Graph{Direction: "XY"}},
		{"duplicate", Graph{Direction: TopDown, Nodes: []Node{{"a", 1, 1, ""}, {"a", 1, 1, ""}}}},
		{"size", Graph{Direction: TopDown, Nodes: []Node{{"a", 0, 1, ""}}}},
		{"edge", Graph{Direction: TopDown, Nodes: []Node{{"a", 1, 1, ""}}, Edges: []Edge{{From: "a", To: "b"}}}},
		{"cluster", Graph{Direction: TopDown, Nodes: []Node{{"a", 1, 1, "x"}}}},
		{"parent", Graph{Direction: TopDown, Nodes: []Node{{"a", 1, 1, "x"}}, Clusters: []Cluster{{"x", 30, "y"}}}},
		{"parent cycle", Graph{Direction: TopDown, Nodes: []Node{{"a", 1, 1, "x"}}, Clusters: []Cluster{{"x", 30, "y"}, {"y", 30, "x"}}}},
		{"cluster twice", Graph{Direction: TopDown, Nodes: []Node{{"a", 1, 1, "x"}}, Clusters: []Cluster{{"x", 30, ""}, {"x", 30, ""}}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Layout(context.Background(), tc.g)
			if !errors.Is(err, ErrInvalid) {
				t.Fatalf("err = %v, want ErrInvalid", err)
			}
		})
	}
}

func TestPolylinesCross(t *testing.T) {
	for _, tc := range []struct {
		a, b []Point
		want bool
	}{
		{[]Point{{0, 0}, {10, 10}}, []Point{{0, 10}, {10, 0}}, true},
		{[]Point{{0, 0}, {10, 0}}, []Point{{0, 5}, {10, 5}}, false},
		{[]Point{{0, 0}, {10, 0}}, []Point{{10, 0}, {20, 5}}, false}, // touching ends
		{[]Point{{0, 0}, {5, 5}, {10, 0}}, []Point{{4, 0}, {4, 10}}, true},
	} {
		if got := PolylinesCross(tc.a, tc.b); got != tc.want {
			t.Errorf("PolylinesCross(%v, %v) = %v, want %v", tc.a, tc.b, got, tc.want)
		}
	}
}

// naiveLayers is the baseline of the benchmark: longest-path layers in input order, no crossing
// reduction — what a home-made layout does in a few lines.
func naiveLayers(g Graph) Result {
	rank := map[string]int{}
	for changed := true; changed; {
		changed = false
		for _, e := range g.Edges {
			if rank[e.To] < rank[e.From]+1 && rank[e.From] < len(g.Nodes) {
				rank[e.To] = rank[e.From] + 1
				changed = true
			}
		}
	}
	res := Result{Nodes: map[string]Rect{}}
	next := map[int]float64{}
	for _, n := range g.Nodes {
		r := rank[n.ID]
		res.Nodes[n.ID] = Rect{next[r], float64(r) * 200, n.Width, n.Height}
		next[r] += n.Width + 60
	}
	res.Crossings = countCrossings(g, res)
	return res
}

// BenchmarkLayout times dot on 10/30/60-node graphs against the naive baseline on the same graph
// in the same run, and reports both crossing counts.
func BenchmarkLayout(b *testing.B) {
	ctx := context.Background()
	for _, size := range []struct{ n, m int }{{10, 12}, {30, 45}, {60, 100}} {
		g := randomGraph(size.n, size.m, uint64(size.n))
		var base Result
		var baseNs float64
		b.Run(fmt.Sprintf("naive/%d", size.n), func(b *testing.B) {
			for b.Loop() {
				base = naiveLayers(g)
			}
			baseNs = float64(b.Elapsed().Nanoseconds()) / float64(b.N)
			b.ReportMetric(float64(base.Crossings), "crossings")
		})
		b.Run(fmt.Sprintf("dot/%d", size.n), func(b *testing.B) {
			var r Result
			for b.Loop() {
				var err error
				if r, err = Layout(ctx, g); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(r.Crossings), "crossings")
			if baseNs > 0 {
				b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/baseNs, "x-naive-time")
			}
			if base.Crossings > 0 {
				b.ReportMetric(float64(r.Crossings)/float64(base.Crossings), "x-naive-crossings")
			}
		})
	}
}

func TestMindMap(t *testing.T) {
	g := Graph{Direction: MindMap, Nodes: []Node{{"root", 160, 80, ""}, {"a", 120, 60, ""}, {"b", 120, 60, ""}, {"c", 120, 60, ""}, {"d", 120, 60, ""},
		{"a1", 100, 50, ""}, {"a2", 100, 50, ""}, {"b1", 100, 50, ""}, {"c1", 100, 50, ""}}}
	for _, e := range [][2]string{{"root", "a"}, {"root", "b"}, {"root", "c"}, {"root", "d"}, {"a", "a1"}, {"a", "a2"}, {"b", "b1"}, {"c", "c1"}} {
		g.Edges = append(g.Edges, Edge{From: e[0], To: e[1]})
	}
	r, err := Layout(context.Background(), g)
	if err != nil {
		t.Fatal(err)
	}
	root := r.Nodes["root"]
	rc := root.X + root.Width/2
	sideOf := func(id string) int {
		n := r.Nodes[id]
		switch {
		case n.X >= root.X+root.Width:
			return 1
		case n.X+n.Width <= root.X:
			return -1
		}
		return 0
	}
	// Each branch sits beside the root, both sides are used, children stay on their branch's side.
	sides := map[int]int{}
	for _, b := range []string{"a", "b", "c", "d"} {
		s := sideOf(b)
		if s == 0 {
			t.Fatalf("%s %v is not beside the root %v", b, r.Nodes[b], root)
		}
		sides[s]++
	}
	if sides[1] == 0 || sides[-1] == 0 {
		t.Errorf("one-sided mind map: %v", sides)
	}
	for kid, parent := range map[string]string{"a1": "a", "a2": "a", "b1": "b", "c1": "c"} {
		if sideOf(kid) != sideOf(parent) {
			t.Errorf("%s on side %d, its parent %s on %d", kid, sideOf(kid), parent, sideOf(parent))
		}
		// Further out than its parent.
		pk, pp := r.Nodes[kid].X+r.Nodes[kid].Width/2-rc, r.Nodes[parent].X+r.Nodes[parent].Width/2-rc
		if pk*pk <= pp*pp {
			t.Errorf("%s (%.0f from the root) not further out than %s (%.0f)", kid, pk, parent, pp)
		}
	}
	for i, a := range g.Nodes {
		for _, b := range g.Nodes[i+1:] {
			if overlaps(r.Nodes[a.ID], r.Nodes[b.ID]) {
				t.Errorf("%s overlaps %s", a.ID, b.ID)
			}
		}
	}
	if r.Crossings != 0 {
		t.Errorf("%d crossings", r.Crossings)
	}
}
