package layout

import (
	"context"
	"fmt"
	"maps"
	"math"
	"math/rand/v2"
	"slices"
	"sort"
	"strings"
	"testing"
)

// partsGraph is a graph of parts no edge joins: a big one (a group holding a chain of big
// nodes), then small groups of a two-node chain each, then loose nodes, then, when nested, a
// group holding a row of such small groups (a cluster of machines, each on its own).
func partsGraph(dir Direction, big, small, loose, nested int) Graph {
	g := Graph{Direction: dir, Fit: screenFit}
	node := func(id, c string) { g.Nodes = append(g.Nodes, Node{ID: id, Width: 170, Height: 80, Cluster: c}) }
	if big > 0 {
		g.Clusters = append(g.Clusters, Cluster{ID: "core", TitleHeight: 30})
		for i := range big {
			node(fmt.Sprintf("core-%d", i), "core")
			if i > 0 {
				g.Edges = append(g.Edges, Edge{From: fmt.Sprintf("core-%d", i-1), To: fmt.Sprintf("core-%d", i)})
			}
		}
	}
	pair := func(c, parent string) {
		g.Clusters = append(g.Clusters, Cluster{ID: c, TitleHeight: 30, Parent: parent})
		node(c+"-a", c)
		node(c+"-b", c)
		g.Edges = append(g.Edges, Edge{From: c + "-a", To: c + "-b", LabelWidth: 60, LabelHeight: 20})
	}
	for i := range small {
		pair(fmt.Sprintf("small-%d", i), "")
	}
	for i := range loose {
		node(fmt.Sprintf("loose-%d", i), "")
	}
	if nested > 0 {
		g.Clusters = append(g.Clusters, Cluster{ID: "machines", TitleHeight: 30})
		for i := range nested {
			pair(fmt.Sprintf("machine-%02d", i), "machines")
		}
	}
	return g
}

// TestUnconnectedPartsPacked: parts of a graph that no edge joins fill the room beside each
// other instead of lying side by side across the layers around empty space: the nodes cover a
// fair share of the picture, it reads at a larger scale, the parts read in the order given, and
// every group is whole and holds its members.
func TestUnconnectedPartsPacked(t *testing.T) {
	for _, tc := range []struct {
		name                      string
		g                         Graph
		wantShare, wantScaleAbove float64
	}{
		{"a long part and small groups, top-down", partsGraph(TopDown, 8, 5, 0, 0), 0.2, 0.85},
		{"a long part, small groups and loose nodes", partsGraph(TopDown, 8, 3, 4, 0), 0.2, 0.85},
		{"a row of machines in a group beside a long part", partsGraph(TopDown, 8, 0, 0, 10), 0.18, 0.85},
		{"a row of machines in a group beside a long part, left-right", partsGraph(LeftRight, 8, 0, 0, 10), 0.15, 0.7},
		{"a big graph: machines, small groups and loose nodes", partsGraph(TopDown, 10, 4, 3, 12), 0.18, 0.65},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r, err := Layout(context.Background(), tc.g)
			if err != nil {
				t.Fatal(err)
			}
			b := extent(r)
			var area float64
			for _, n := range tc.g.Nodes {
				area += n.Width * n.Height
			}
			share := area / (b.Width * b.Height)
			scale := math.Min(screenW/b.Width, screenH/b.Height)
			t.Logf("%s: %.0f×%.0f, nodes %.0f %%, scale %.2f", r.Arrangement, b.Width, b.Height, 100*share, scale)
			if share < tc.wantShare {
				t.Errorf("nodes cover %.0f %% of %.0f×%.0f (%s), want at least %.0f %%", 100*share, b.Width, b.Height, r.Arrangement, 100*tc.wantShare)
			}
			if scale < tc.wantScaleAbove {
				t.Errorf("%.0f×%.0f fits the preview at %.2f, want at least %.2f", b.Width, b.Height, scale, tc.wantScaleAbove)
			}
			noOverlaps(t, tc.g, r)
			groupsWhole(t, tc.g, r)
			partsInOrder(t, tc.g, r)
		})
	}
}

// groupsWhole fails the test for a node outside its group, a group outside its parent, or two
// sibling groups that overlap.
func groupsWhole(t *testing.T, g Graph, r Result) {
	t.Helper()
	inside := func(a, b Rect) bool {
		return a.X >= b.X-0.5 && a.Y >= b.Y-0.5 && a.X+a.Width <= b.X+b.Width+0.5 && a.Y+a.Height <= b.Y+b.Height+0.5
	}
	for _, n := range g.Nodes {
		if n.Cluster != "" && !inside(r.Nodes[n.ID], r.Clusters[n.Cluster]) {
			t.Errorf("%s %v lies outside its group %s %v", n.ID, r.Nodes[n.ID], n.Cluster, r.Clusters[n.Cluster])
		}
	}
	for i, c := range g.Clusters {
		if c.Parent != "" && !inside(r.Clusters[c.ID], r.Clusters[c.Parent]) {
			t.Errorf("group %s %v lies outside its group %s %v", c.ID, r.Clusters[c.ID], c.Parent, r.Clusters[c.Parent])
		}
		for _, d := range g.Clusters[i+1:] {
			if d.Parent == c.Parent && overlaps(r.Clusters[c.ID], r.Clusters[d.ID]) {
				t.Errorf("groups %s %v and %s %v overlap", c.ID, r.Clusters[c.ID], d.ID, r.Clusters[d.ID])
			}
		}
	}
}

// partsInOrder fails the test when the top-level parts (groups and loose nodes) do not read in
// the order given: along the layers first (top to bottom, or left to right), then across them.
func partsInOrder(t *testing.T, g Graph, r Result) {
	t.Helper()
	type part struct {
		name string
		box  Rect
	}
	var parts []part
	for _, c := range g.Clusters {
		if c.Parent == "" {
			parts = append(parts, part{c.ID, r.Clusters[c.ID]})
		}
	}
	for _, n := range g.Nodes {
		if n.Cluster == "" {
			parts = append(parts, part{n.ID, r.Nodes[n.ID]})
		}
	}
	// The order given: by each part's first node.
	first := map[string]int{}
	for i, n := range g.Nodes {
		top := n.Cluster
		for _, c := range g.Clusters {
			if c.ID == top && c.Parent != "" {
				top = c.Parent
			}
		}
		if top == "" {
			top = n.ID
		}
		if _, ok := first[top]; !ok {
			first[top] = i
		}
	}
	given := append([]part(nil), parts...)
	sort.SliceStable(given, func(i, j int) bool { return first[given[i].name] < first[given[j].name] })
	read := append([]part(nil), parts...)
	sort.SliceStable(read, func(i, j int) bool {
		a, b := read[i].box, read[j].box
		if r.Direction == LeftRight {
			a.X, a.Y, b.X, b.Y = a.Y, a.X, b.Y, b.X
		}
		if math.Abs(a.Y-b.Y) > 1 {
			return a.Y < b.Y
		}
		return a.X < b.X
	})
	for i := range given {
		if given[i].name != read[i].name {
			var names []string
			for _, p := range read {
				names = append(names, p.name)
			}
			t.Errorf("the parts read %v, want the order given", names)
			return
		}
	}
}

// TestLooseMembersBeside: the members of a group that have no edge (a directory's variables and
// configuration beside the state files a driver writes) lie beside its connected members, not in
// one line with them that stretches every such group, and in the order given.
func TestLooseMembersBeside(t *testing.T) {
	build := func(dir Direction) Graph {
		g := Graph{Direction: dir, Fit: screenFit}
		node := func(id, c string) { g.Nodes = append(g.Nodes, Node{ID: id, Width: 170, Height: 80, Cluster: c}) }
		node("package", "")
		node("driver", "")
		g.Edges = append(g.Edges, Edge{From: "package", To: "driver", LabelWidth: 70, LabelHeight: 20})
		for _, d := range []string{"a", "b", "c"} {
			c := "dir-" + d
			g.Clusters = append(g.Clusters, Cluster{ID: c, TitleHeight: 30})
			for _, m := range []string{"state", "lock", "variables", "configuration"} {
				node(m+"-"+d, c)
			}
			for _, m := range []string{"state", "lock"} {
				g.Edges = append(g.Edges, Edge{From: "driver", To: m + "-" + d, LabelWidth: 60, LabelHeight: 20})
			}
		}
		return g
	}
	for _, tc := range []struct {
		dir       Direction
		wantShare float64
	}{
		{LeftRight, 0.16},
		{TopDown, 0.16},
	} {
		t.Run(string(tc.dir), func(t *testing.T) {
			g := build(tc.dir)
			r, err := Layout(context.Background(), g)
			if err != nil {
				t.Fatal(err)
			}
			b := extent(r)
			var area float64
			for _, n := range g.Nodes {
				area += n.Width * n.Height
			}
			share := area / (b.Width * b.Height)
			t.Logf("%s: %.0f×%.0f, nodes %.0f %%", r.Arrangement, b.Width, b.Height, 100*share)
			if share < tc.wantShare {
				t.Errorf("nodes cover %.0f %% of %.0f×%.0f (%s), want at least %.0f %%", 100*share, b.Width, b.Height, r.Arrangement, 100*tc.wantShare)
			}
			noOverlaps(t, g, r)
			groupsWhole(t, g, r)
			for _, d := range []string{"a", "b", "c"} {
				v, c := r.Nodes["variables-"+d], r.Nodes["configuration-"+d]
				a, b := v, c
				if r.Direction == LeftRight {
					a.X, a.Y, b.X, b.Y = a.Y, a.X, b.Y, b.X
				}
				if a.Y > b.Y+1 || math.Abs(a.Y-b.Y) <= 1 && a.X > b.X {
					t.Errorf("directory %s: variables %v comes after configuration %v, want the order given", d, v, c)
				}
			}
		})
	}
}

// TestPackedRandomParts: graphs of several parts no edge joins, each a random tree in groups of
// its own (nested too), loose nodes and labelled edges among them, keep their invariants when
// packed: no two nodes overlap, every node lies in its group and every group in its parent, two
// groups are nested or apart, and each label is its route's middle.
func TestPackedRandomParts(t *testing.T) {
	packed := 0
	for seed := range 48 {
		r := rand.New(rand.NewPCG(uint64(seed), 17))
		g := Graph{Direction: TopDown, Fit: Fit{MaxAspect: 2.5, MaxWidth: 2800, Small: 1000, Turn: seed%3 == 0}}
		if seed%2 == 1 {
			g.Direction = LeftRight
		}
		for part := range 2 + r.IntN(5) {
			var groups []string
			for c := range r.IntN(4) {
				cl := Cluster{ID: fmt.Sprintf("p%d-c%d", part, c), TitleHeight: 30}
				if c > 0 && r.IntN(2) == 0 {
					cl.Parent = groups[r.IntN(c)]
				}
				groups = append(groups, cl.ID)
				g.Clusters = append(g.Clusters, cl)
			}
			n := 1 + r.IntN(7)
			for i := range n {
				nd := Node{ID: fmt.Sprintf("p%d-n%d", part, i), Width: 120 + float64(r.IntN(80)), Height: 60 + float64(r.IntN(40))}
				if len(groups) > 0 && r.IntN(4) > 0 {
					nd.Cluster = groups[r.IntN(len(groups))]
				}
				g.Nodes = append(g.Nodes, nd)
				if i > 0 && r.IntN(6) > 0 {
					e := Edge{From: fmt.Sprintf("p%d-n%d", part, r.IntN(i)), To: nd.ID}
					if r.IntN(3) == 0 {
						e.LabelWidth, e.LabelHeight = 40+float64(r.IntN(60)), 25
					}
					g.Edges = append(g.Edges, e)
				}
			}
		}
		// Groups left empty by the draw are not drawn.
		used := map[string]bool{}
		for _, n := range g.Nodes {
			for c := n.Cluster; c != ""; {
				used[c] = true
				parent := ""
				for _, cl := range g.Clusters {
					if cl.ID == c {
						parent = cl.Parent
					}
				}
				c = parent
			}
		}
		var kept []Cluster
		for _, c := range g.Clusters {
			if used[c.ID] {
				kept = append(kept, c)
			}
		}
		g.Clusters = kept
		res, err := Layout(context.Background(), g)
		if err != nil {
			t.Fatalf("seed %d: %v", seed, err)
		}
		if strings.Contains(res.Arrangement, "unconnected parts packed") {
			packed++
		}
		noOverlaps(t, g, res)
		groupsWhole(t, g, res)
		parent := map[string]string{}
		for _, c := range g.Clusters {
			parent[c.ID] = c.Parent
		}
		within := func(a, b string) bool {
			for ; a != ""; a = parent[a] {
				if a == b {
					return true
				}
			}
			return false
		}
		for i, a := range g.Clusters {
			for _, b := range g.Clusters[i+1:] {
				if !within(a.ID, b.ID) && !within(b.ID, a.ID) && overlaps(res.Clusters[a.ID], res.Clusters[b.ID]) {
					t.Errorf("seed %d (%s): groups %s %v and %s %v overlap", seed, res.Arrangement, a.ID, res.Clusters[a.ID], b.ID, res.Clusters[b.ID])
				}
			}
		}
		for i, e := range g.Edges {
			if e.LabelWidth > 0 && (len(res.Routes[i])%2 != 1 || res.Routes[i][len(res.Routes[i])/2] != res.Labels[i]) {
				t.Errorf("seed %d (%s): label of edge %d not the middle of %v", seed, res.Arrangement, i, res.Routes[i])
			}
		}
	}
	if packed < 8 {
		t.Errorf("%d of 48 graphs were packed, want the test to pack at least 8", packed)
	}
	t.Logf("%d of 48 graphs packed", packed)
}

// TestPackedPartsMakeAGrid: a dozen machines, each a group of two, the last ones a little wider
// (their names a digit longer), are packed in rows of one count: no row shorter than the first
// before the last.
func TestPackedPartsMakeAGrid(t *testing.T) {
	g := partsGraph(TopDown, 6, 0, 0, 12)
	for i := range g.Nodes {
		if n := &g.Nodes[i]; n.Cluster >= "machine-09" {
			n.Width = 190
		}
	}
	r, err := Layout(context.Background(), g)
	if err != nil {
		t.Fatal(err)
	}
	rows := map[float64]int{}
	for id, c := range r.Clusters {
		if strings.HasPrefix(id, "machine-") {
			rows[math.Round(c.Y)]++
		}
	}
	var counts []int
	for _, y := range slices.Sorted(maps.Keys(rows)) {
		counts = append(counts, rows[y])
	}
	if len(counts) < 2 {
		t.Fatalf("machines in rows of %v (%s), want them packed in several rows", counts, r.Arrangement)
	}
	for i, n := range counts {
		if i < len(counts)-1 && n != counts[0] || n > counts[0] {
			t.Errorf("machines in rows of %v (%s), want every row but the last as full as the first", counts, r.Arrangement)
			break
		}
	}
}
