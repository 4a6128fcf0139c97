package layout

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"sort"
	"strings"
	"testing"

	"github.com/excalibot/excalibot/layout/dotproc"
)

var screenFit = Fit{MaxAspect: 2.5, MaxWidth: 3500, Small: 1000}

// chain is n nodes of 170×80 in a line, labelled edges where label says so.
func chain(n int, dir Direction, label func(i int) bool) Graph {
	g := Graph{Direction: dir}
	for i := range n {
		g.Nodes = append(g.Nodes, Node{ID: fmt.Sprintf("s%d", i), Width: 170, Height: 80})
		if i > 0 {
			e := Edge{From: fmt.Sprintf("s%d", i-1), To: fmt.Sprintf("s%d", i)}
			if label != nil && label(i) {
				e.LabelWidth, e.LabelHeight = 70, 25
			}
			g.Edges = append(g.Edges, e)
		}
	}
	return g
}

// extent is the box around the result's nodes and clusters.
func extent(r Result) Rect {
	minX, minY, maxX, maxY := math.Inf(1), math.Inf(1), math.Inf(-1), math.Inf(-1)
	add := func(b Rect) {
		minX, minY = math.Min(minX, b.X), math.Min(minY, b.Y)
		maxX, maxY = math.Max(maxX, b.X+b.Width), math.Max(maxY, b.Y+b.Height)
	}
	for _, n := range r.Nodes {
		add(n)
	}
	for _, c := range r.Clusters {
		add(c)
	}
	return Rect{minX, minY, maxX - minX, maxY - minY}
}

func aspect(b Rect) float64 { return math.Max(b.Width/b.Height, b.Height/b.Width) }

func centreOf(r Rect) Point { return Point{r.X + r.Width/2, r.Y + r.Height/2} }

// noOverlaps fails the test for overlapping nodes, or labels on nodes or on each other.
func noOverlaps(t *testing.T, g Graph, r Result) {
	t.Helper()
	var boxes []Rect
	var names []string
	for _, n := range g.Nodes {
		boxes, names = append(boxes, r.Nodes[n.ID]), append(names, n.ID)
	}
	for i, e := range g.Edges {
		if e.LabelWidth > 0 {
			l := r.Labels[i]
			boxes = append(boxes, Rect{l.X - e.LabelWidth/2, l.Y - e.LabelHeight/2, e.LabelWidth, e.LabelHeight})
			names = append(names, fmt.Sprintf("label of %s→%s", e.From, e.To))
		}
	}
	for i := range boxes {
		for j := i + 1; j < len(boxes); j++ {
			if overlaps(boxes[i], boxes[j]) {
				t.Errorf("%s %v overlaps %s %v", names[i], boxes[i], names[j], boxes[j])
			}
		}
	}
}

// TestLabelsOnTheirEdges: every label is its route's middle point, between its edge's ends, clear
// of nodes and other labels, also where six labelled edges meet one node.
func TestLabelsOnTheirEdges(t *testing.T) {
	fanIn := Graph{Direction: TopDown, Nodes: []Node{{ID: "hub", Width: 170, Height: 80}}}
	for i := range 6 {
		id := fmt.Sprintf("src%d", i)
		fanIn.Nodes = append(fanIn.Nodes, Node{ID: id, Width: 160 + float64(20*i), Height: 80})
		fanIn.Edges = append(fanIn.Edges, Edge{From: id, To: "hub", LabelWidth: 60 + float64(10*i), LabelHeight: 25})
	}
	for _, tc := range []struct {
		name string
		g    Graph
	}{
		{"fan-in TB", fanIn},
		{"fan-in LR", func() Graph { g := fanIn; g.Direction = LeftRight; return g }()},
		{"chain LR", chain(5, LeftRight, func(i int) bool { return i%2 == 1 })},
		{"cycle", Graph{Direction: TopDown, Nodes: []Node{{ID: "a", Width: 160, Height: 80}, {ID: "b", Width: 160, Height: 80}, {ID: "c", Width: 160, Height: 80}},
			Edges: []Edge{{From: "a", To: "b", LabelWidth: 50, LabelHeight: 25}, {From: "b", To: "c", LabelWidth: 50, LabelHeight: 25}, {From: "c", To: "a", LabelWidth: 80, LabelHeight: 25}}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r, err := Layout(context.Background(), tc.g)
			if err != nil {
				t.Fatal(err)
			}
			for i, e := range tc.g.Edges {
				if e.LabelWidth == 0 {
					continue
				}
				route := r.Routes[i]
				if len(route)%2 != 1 || route[len(route)/2] != r.Labels[i] {
					t.Errorf("%s→%s: route %v has not its label %v as its middle point", e.From, e.To, route, r.Labels[i])
					continue
				}
				// Between the ends: the label's centre is nearer to each end than the ends are apart.
				a, b := centreOf(r.Nodes[e.From]), centreOf(r.Nodes[e.To])
				if d := dist(a, b); dist(a, r.Labels[i]) > d || dist(b, r.Labels[i]) > d {
					t.Errorf("%s→%s: label at %v is not between %v and %v", e.From, e.To, r.Labels[i], a, b)
				}
			}
			noOverlaps(t, tc.g, r)
		})
	}
}

// TestFitWrapsLongChains: a 12-stage pipeline is wrapped into bands within the aspect, the
// direction kept. A plain chain reads like text: every band runs forwards from the same side and
// one arrow goes back to the next band's start. With a second arrow across a cut the bands snake
// (the next one runs backwards from where the last ended), so no arrow makes that long way back.
func TestFitWrapsLongChains(t *testing.T) {
	for _, tc := range []struct {
		name  string
		skip  bool // an arrow from s4 to s7 as well
		snake bool
	}{
		{name: "chain", snake: false},
		{name: "chain with an arrow across a cut", skip: true, snake: true},
	} {
		for _, dir := range []Direction{LeftRight, TopDown} {
			g := chain(12, dir, func(i int) bool { return i == 5 })
			if tc.skip {
				g.Edges = append(g.Edges, Edge{From: "s4", To: "s7"})
			}
			g.Fit = screenFit
			r, err := Layout(context.Background(), g)
			if err != nil {
				t.Fatal(err)
			}
			b := extent(r)
			if r.Direction != dir || !strings.Contains(r.Arrangement, "wrapped") || aspect(b) > 2.5 {
				t.Fatalf("%s %s: laid out %s %q, %gx%g; want %s wrapped within 2.5:1", tc.name, dir, r.Direction, r.Arrangement, b.Width, b.Height, dir)
			}
			noOverlaps(t, g, r)
			// along is a node's place along the flow, across its band's place.
			along := func(n Rect) float64 {
				if dir == LeftRight {
					return n.X + n.Width/2
				}
				return n.Y + n.Height/2
			}
			across := func(n Rect) float64 {
				if dir == LeftRight {
					return n.Y + n.Height/2
				}
				return n.X + n.Width/2
			}
			var gotSnake, gotLines bool
			for i := 1; i < 12; i++ {
				a, c := r.Nodes[fmt.Sprintf("s%d", i-1)], r.Nodes[fmt.Sprintf("s%d", i)]
				switch {
				case math.Abs(across(a)-across(c)) < 1: // within a band
				case math.Abs(along(a)-along(c)) < 120: // turns, one above the other
					gotSnake = true
				case along(c) < along(a): // back to the start of the next band
					gotLines = true
				default:
					t.Errorf("%s %s: s%d %v and s%d %v neither share a band nor wrap", tc.name, dir, i-1, a, i, c)
				}
			}
			if gotSnake != tc.snake || gotLines == tc.snake {
				t.Errorf("%s %s: snake %v, lines %v; want snake %v", tc.name, dir, gotSnake, gotLines, tc.snake)
			}
			// The first band runs forwards from the corner.
			s0, s1 := r.Nodes["s0"], r.Nodes["s1"]
			if !(along(s1) > along(s0) && math.Abs(across(s1)-across(s0)) < 1) {
				t.Errorf("%s %s: s0 %v, s1 %v: want the first band to run %s", tc.name, dir, s0, s1, dir)
			}
			t.Logf("%s %s: %s, %.0fx%.0f", tc.name, dir, r.Arrangement, b.Width, b.Height)
		}
	}
}

// TestLabelsClearOfGroupBorders: over twenty random grouped graphs fitted to a screen, no more
// than one label lies across a group's border (dot keeps a label out of a group's members in its
// own layer only, and the group's box reaches as far as its members in every layer; about one
// graph in two had such a label).
func TestLabelsClearOfGroupBorders(t *testing.T) {
	var across []string
	for seed := uint64(1); seed <= 20; seed++ {
		g := groupedGraph(14, 18, seed)
		g.Fit = Fit{MaxAspect: 2.5, Small: 1000, Turn: seed%2 == 0}
		r, err := Layout(context.Background(), g)
		if err != nil {
			t.Fatal(err)
		}
		for i, e := range g.Edges {
			if e.LabelWidth <= 0 {
				continue
			}
			l := r.Labels[i]
			b := Rect{l.X - e.LabelWidth/2, l.Y - e.LabelHeight/2, e.LabelWidth, e.LabelHeight}
			for id, c := range r.Clusters {
				if straddles(b, c) {
					across = append(across, fmt.Sprintf("graph %d: the label of %s→%s %v across group %s %v", seed, e.From, e.To, b, id, c))
					break
				}
			}
		}
	}
	if len(across) > 1 {
		t.Errorf("%d labels across a group's border, want at most one:\n%s", len(across), strings.Join(across, "\n"))
	}
}

// TestFitBoundsTheHeight: a flow of wide boxes, well within the aspect, is left as it is; shown
// in a preview lower than it is tall (MaxHeight), it is wrapped to fit it.
func TestFitBoundsTheHeight(t *testing.T) {
	g := chain(7, TopDown, nil)
	for i := range g.Nodes {
		g.Nodes[i].Width = 480
	}
	g.Fit = Fit{MaxAspect: 2.5, Small: 500}
	plain, err := Layout(context.Background(), g)
	if err != nil {
		t.Fatal(err)
	}
	pb := extent(plain)
	if plain.Arrangement != "" || aspect(pb) > 2.5 {
		t.Fatalf("without a height bound: %q, %gx%g; want the plain layout within 2.5:1", plain.Arrangement, pb.Width, pb.Height)
	}
	g.Fit.MaxHeight = 0.7 * pb.Height
	r, err := Layout(context.Background(), g)
	if err != nil {
		t.Fatal(err)
	}
	if b := extent(r); b.Height > g.Fit.MaxHeight || aspect(b) > 2.5 {
		t.Errorf("bounded to %.0f px high: %q, %.0fx%.0f; want within the height and 2.5:1", g.Fit.MaxHeight, r.Arrangement, b.Width, b.Height)
	}
	noOverlaps(t, g, r)
}

// TestFitTurnsOnlyWhenAllowed: a long chain asked for top-down stays top-down (wrapped into
// columns); left free, it may turn.
func TestFitTurnsOnlyWhenAllowed(t *testing.T) {
	g := chain(9, TopDown, nil)
	g.Fit = screenFit
	r, err := Layout(context.Background(), g)
	if err != nil {
		t.Fatal(err)
	}
	if r.Direction != TopDown || strings.Contains(r.Arrangement, "turned") {
		t.Errorf("laid out %s %q without Turn; want TB kept", r.Direction, r.Arrangement)
	}
	g.Fit.Turn = true
	r, err = Layout(context.Background(), g)
	if err != nil {
		t.Fatal(err)
	}
	if b := extent(r); aspect(b) > 2.5 {
		t.Errorf("with Turn: %s %q, %gx%g: want within 2.5:1", r.Direction, r.Arrangement, b.Width, b.Height)
	}
}

// TestFitLeavesSmallAndFittingGraphs: a strip of three boxes and a graph within the bounds are
// dot's plain layout.
func TestFitLeavesSmallAndFittingGraphs(t *testing.T) {
	for _, g := range []Graph{chain(3, LeftRight, nil), randomGraph(10, 12, 1)} {
		plain, err := Layout(context.Background(), g)
		if err != nil {
			t.Fatal(err)
		}
		g.Fit = screenFit
		g.Fit.Turn = true
		r, err := Layout(context.Background(), g)
		if err != nil {
			t.Fatal(err)
		}
		if r.Arrangement != "" || r.Direction != g.Direction {
			t.Errorf("%d nodes: arranged %q %s, want the plain layout", len(g.Nodes), r.Arrangement, r.Direction)
		}
		for id, n := range plain.Nodes {
			if r.Nodes[id] != n {
				t.Errorf("%s at %v, plain %v", id, r.Nodes[id], n)
			}
		}
	}
}

// TestFitStacksWideFanOuts: a manager with twelve reports, and an org chart of 3 levels and 20
// people, have their leaves stacked in columns hanging from a bus: within the aspect, the leaves of
// one column one above the other, each routed along the bus with sharp corners.
func TestFitStacksWideFanOuts(t *testing.T) {
	wide := Graph{Direction: TopDown, Nodes: []Node{{ID: "head", Width: 180, Height: 80}}, Fit: screenFit}
	for i := range 12 {
		id := fmt.Sprintf("r%d", i)
		wide.Nodes = append(wide.Nodes, Node{ID: id, Width: 170, Height: 80})
		wide.Edges = append(wide.Edges, Edge{From: "head", To: id})
	}
	org := Graph{Direction: TopDown, Nodes: []Node{{ID: "ceo", Width: 180, Height: 80}}, Fit: screenFit}
	for v, reports := range []int{5, 4, 3, 3} {
		vp := fmt.Sprintf("vp%d", v)
		org.Nodes = append(org.Nodes, Node{ID: vp, Width: 180, Height: 80})
		org.Edges = append(org.Edges, Edge{From: "ceo", To: vp})
		for k := range reports {
			id := fmt.Sprintf("%s-%d", vp, k)
			org.Nodes = append(org.Nodes, Node{ID: id, Width: 160, Height: 80})
			org.Edges = append(org.Edges, Edge{From: vp, To: id})
		}
	}
	for name, g := range map[string]Graph{"wide": wide, "org": org} {
		r, err := Layout(context.Background(), g)
		if err != nil {
			t.Fatal(err)
		}
		b := extent(r)
		if !strings.Contains(r.Arrangement, "stacked") || aspect(b) > 2.5 {
			t.Fatalf("%s: %q %gx%g, want leaves stacked within 2.5:1", name, r.Arrangement, b.Width, b.Height)
		}
		noOverlaps(t, g, r)
		for i, e := range g.Edges {
			if !r.Sharp[i] {
				continue
			}
			p, l := r.Nodes[e.From], r.Nodes[e.To]
			route := r.Routes[i]
			last := route[len(route)-1]
			// The bus comes down beside the leaf and turns into its side, below its parent.
			if math.Abs(last.Y-(l.Y+l.Height/2)) > 0.5 || last.X >= l.X || l.Y <= p.Y+p.Height {
				t.Errorf("%s: %s→%s route %v does not end along the bus into %v", name, e.From, e.To, route, l)
			}
			for k := 1; k < len(route); k++ {
				if route[k].X != route[k-1].X && route[k].Y != route[k-1].Y {
					t.Errorf("%s: %s→%s route %v has a slanted segment", name, e.From, e.To, route)
				}
			}
		}
		t.Logf("%s: %s, %.0fx%.0f", name, r.Arrangement, b.Width, b.Height)
	}
}

// TestGroupsFollowTheirFlow: in a left-right architecture of four groups fed one from the next,
// each group lies wholly right of the one it is fed from. (With a feedback edge between two of
// them the order may give way: the layout with fewer crossings wins, TestFewerDefectsWin.)
func TestGroupsFollowTheirFlow(t *testing.T) {
	g := Graph{Direction: LeftRight, Clusters: []Cluster{{ID: "clients", TitleHeight: 30}, {ID: "edge", TitleHeight: 30}, {ID: "svc", TitleHeight: 30}, {ID: "data", TitleHeight: 30}}}
	add := func(id, c string) { g.Nodes = append(g.Nodes, Node{ID: id, Width: 160, Height: 80, Cluster: c}) }
	add("web", "clients")
	add("mobile", "clients")
	add("lb", "edge")
	add("api", "svc")
	add("auth", "svc")
	add("worker", "svc")
	add("db", "data")
	add("cache", "data")
	add("queue", "data")
	for _, e := range [][2]string{{"web", "lb"}, {"mobile", "lb"}, {"lb", "api"}, {"api", "auth"}, {"api", "db"}, {"api", "cache"}, {"api", "queue"}, {"worker", "db"}} {
		g.Edges = append(g.Edges, Edge{From: e[0], To: e[1]})
	}
	r, err := Layout(context.Background(), g)
	if err != nil {
		t.Fatal(err)
	}
	order := []string{"clients", "edge", "svc", "data"}
	for i := 1; i < len(order); i++ {
		a, b := r.Clusters[order[i-1]], r.Clusters[order[i]]
		if b.X < a.X+a.Width {
			t.Errorf("%s %v is not right of %s %v", order[i], b, order[i-1], a)
		}
	}
}

// TestFitKeepsGroupsWhole: a wrapped pipeline of groups cuts between groups, never through one.
func TestFitKeepsGroupsWhole(t *testing.T) {
	g := chain(12, LeftRight, nil)
	for i := range g.Nodes {
		c := fmt.Sprintf("stage%d", i/3)
		g.Nodes[i].Cluster = c
		if i%3 == 0 {
			g.Clusters = append(g.Clusters, Cluster{ID: c, TitleHeight: 30})
		}
	}
	g.Fit = screenFit
	r, err := Layout(context.Background(), g)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(r.Arrangement, "wrapped") {
		t.Fatalf("arranged %q, want wrapped", r.Arrangement)
	}
	for _, n := range g.Nodes {
		c, b := r.Clusters[n.Cluster], r.Nodes[n.ID]
		if b.X < c.X || b.Y < c.Y+30 || b.X+b.Width > c.X+c.Width || b.Y+b.Height > c.Y+c.Height {
			t.Errorf("%s %v not inside its group %s %v below the title", n.ID, b, n.Cluster, c)
		}
	}
	for i, a := range g.Clusters {
		for _, b := range g.Clusters[i+1:] {
			if overlaps(r.Clusters[a.ID], r.Clusters[b.ID]) {
				t.Errorf("groups %s and %s overlap", a.ID, b.ID)
			}
		}
	}
}

// TestFitWrapsChainsInsideAGroup: a pipeline's steps in one group, fed from outside it, wrap
// inside the group (cuts between groups alone leave a strip), the group whole around its
// members and the nodes outside it outside its box.
func TestFitWrapsChainsInsideAGroup(t *testing.T) {
	for _, tc := range []struct {
		name   string
		parent bool // the group inside another, which holds nothing else
	}{
		{name: "group"},
		{name: "nested group", parent: true},
	} {
		for _, dir := range []Direction{LeftRight, TopDown} {
			g := chain(12, dir, func(i int) bool { return i == 4 })
			g.Clusters = []Cluster{{ID: "pipeline", TitleHeight: 30}}
			if tc.parent {
				g.Clusters = append([]Cluster{{ID: "ci", TitleHeight: 30}}, Cluster{ID: "pipeline", TitleHeight: 30, Parent: "ci"})
			}
			for i := range g.Nodes {
				g.Nodes[i].Cluster = "pipeline"
			}
			g.Nodes = append(g.Nodes, Node{ID: "dev", Width: 160, Height: 80}, Node{ID: "registry", Width: 160, Height: 80})
			g.Edges = append(g.Edges, Edge{From: "dev", To: "s0"}, Edge{From: "s11", To: "registry"})
			g.Fit = screenFit
			r, err := Layout(context.Background(), g)
			if err != nil {
				t.Fatal(err)
			}
			b := extent(r)
			if got := r.Arrangement; !strings.Contains(got, `inside group "pipeline"`) || aspect(b) > 2.5 {
				t.Fatalf("%s %s: arranged %q, %.0fx%.0f; want wrapped inside the group within 2.5:1", tc.name, dir, got, b.Width, b.Height)
			}
			noOverlaps(t, g, r)
			box := r.Clusters["pipeline"]
			for _, n := range g.Nodes {
				nb := r.Nodes[n.ID]
				in := nb.X >= box.X && nb.Y >= box.Y+30 && nb.X+nb.Width <= box.X+box.Width && nb.Y+nb.Height <= box.Y+box.Height
				if want := n.Cluster != ""; in != want {
					t.Errorf("%s %s: %s %v inside the group %v below its title: %v, want %v", tc.name, dir, n.ID, nb, box, in, want)
				}
				if !in && overlaps(nb, box) {
					t.Errorf("%s %s: %s %v overlaps the group %v", tc.name, dir, n.ID, nb, box)
				}
			}
			if tc.parent {
				if p := r.Clusters["ci"]; !(p.X <= box.X && p.Y <= box.Y && p.X+p.Width >= box.X+box.Width && p.Y+p.Height >= box.Y+box.Height) {
					t.Errorf("%s %s: the outer group %v does not hold the pipeline %v", tc.name, dir, p, box)
				}
			}
			// The first band runs forwards from its corner: s0 before s1 along the flow.
			s0, s1 := r.Nodes["s0"], r.Nodes["s1"]
			if dir == LeftRight && !(s1.X > s0.X) || dir == TopDown && !(s1.Y > s0.Y) {
				t.Errorf("%s %s: s0 %v, s1 %v: want the first band to run %s", tc.name, dir, s0, s1, dir)
			}
		}
	}
}

// TestFitWrappedGroupsReadForwards: a pipeline through groups (a source, three receivers, three
// processors in a chain, three exporters: a collector's) wrapped into two bands reads forwards in
// both, like lines of text, where a snake would run its second band backwards, which a person
// reads as the flow going back, and cross the exporters' arrows at its turn.
func TestFitWrappedGroupsReadForwards(t *testing.T) {
	g := Graph{Direction: LeftRight, Fit: screenFit, Clusters: []Cluster{
		{ID: "receivers", TitleHeight: 30}, {ID: "processors", TitleHeight: 30}, {ID: "exporters", TitleHeight: 30}}}
	node := func(id, cluster string, w float64) {
		g.Nodes = append(g.Nodes, Node{ID: id, Width: w, Height: 80, Cluster: cluster})
	}
	edge := func(from, to string, label float64) {
		g.Edges = append(g.Edges, Edge{From: from, To: to, LabelWidth: label, LabelHeight: 24})
	}
	node("services", "", 340)
	for _, r := range []string{"otlp", "prometheus", "filelog"} {
		node(r, "receivers", 230)
	}
	for _, p := range []string{"limiter", "batch", "attributes"} {
		node(p, "processors", 160)
	}
	for _, e := range []string{"jaeger", "remote-write", "loki"} {
		node(e, "exporters", 280)
	}
	edge("services", "otlp", 180)
	for _, r := range []string{"otlp", "prometheus", "filelog"} {
		edge(r, "limiter", 0)
	}
	edge("limiter", "batch", 0)
	edge("batch", "attributes", 0)
	for _, e := range []string{"jaeger", "remote-write", "loki"} {
		edge("attributes", e, 70)
	}
	r, err := Layout(context.Background(), g)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(r.Arrangement, "wrapped") {
		t.Fatalf("arranged %q, want wrapped", r.Arrangement)
	}
	for _, e := range g.Edges {
		a, b := r.Nodes[e.From], r.Nodes[e.To]
		if overlapsAcross := a.Y < b.Y+b.Height && b.Y < a.Y+a.Height; overlapsAcross && b.X < a.X {
			t.Errorf("%s %v to %s %v runs backwards within a band", e.From, a, e.To, b)
		}
	}
	if r.Crossings > 0 {
		t.Errorf("%d crossings, want none", r.Crossings)
	}
}

func TestFitRefusesBadBounds(t *testing.T) {
	for _, f := range []Fit{{MaxAspect: -1}, {MaxAspect: 0.5}, {MaxAspect: 2, MaxWidth: math.NaN()}, {MaxAspect: 2, MaxHeight: -1}, {MaxAspect: 2, Small: math.Inf(1)}} {
		g := chain(2, TopDown, nil)
		g.Fit = f
		if _, err := Layout(context.Background(), g); !errors.Is(err, ErrInvalid) {
			t.Errorf("fit %+v: err = %v, want ErrInvalid", f, err)
		}
	}
	g := chain(2, TopDown, nil)
	g.Edges[0].LabelWidth = -3
	if _, err := Layout(context.Background(), g); !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), "label") {
		t.Errorf("negative label: err = %v, want ErrInvalid naming the label", err)
	}
}

func TestFitDeterministic(t *testing.T) {
	g := chain(14, LeftRight, func(i int) bool { return i%3 == 0 })
	g.Fit = screenFit
	a, err := Layout(context.Background(), g)
	if err != nil {
		t.Fatal(err)
	}
	b, err := Layout(context.Background(), g)
	if err != nil {
		t.Fatal(err)
	}
	for id, n := range a.Nodes {
		if b.Nodes[id] != n {
			t.Errorf("%s: %v then %v", id, n, b.Nodes[id])
		}
	}
}

// TestFitRandomGraphs: random graphs of 3–50 nodes with nested clusters, labelled edges, chains
// and fan-outs, fitted in both directions, with and without Turn: every node placed, none
// overlapping, every member inside its cluster, every label its route's middle point.
func TestFitRandomGraphs(t *testing.T) {
	for seed := range 30 {
		r := rand.New(rand.NewPCG(uint64(seed), 9))
		n := 3 + r.IntN(40)
		g := randomGraph(n, min(n-1+r.IntN(n/2+1), n*(n-1)/2), uint64(seed))
		if seed%2 == 0 {
			g.Direction = LeftRight
		}
		nc := r.IntN(4)
		for c := range nc {
			cl := Cluster{ID: fmt.Sprintf("c%d", c), TitleHeight: 30}
			if c > 0 && r.IntN(3) == 0 {
				cl.Parent = fmt.Sprintf("c%d", r.IntN(c))
			}
			g.Clusters = append(g.Clusters, cl)
		}
		for i := range g.Nodes {
			if nc > 0 && r.IntN(3) > 0 {
				g.Nodes[i].Cluster = fmt.Sprintf("c%d", r.IntN(nc))
			}
		}
		for i := range g.Edges {
			if r.IntN(3) == 0 {
				g.Edges[i].LabelWidth, g.Edges[i].LabelHeight = 40+float64(r.IntN(80)), 25
			}
		}
		// a chain tail and a fan-out
		for k := range r.IntN(10) {
			id := fmt.Sprintf("t%d", k)
			g.Nodes = append(g.Nodes, Node{ID: id, Width: 160, Height: 80})
			from := g.Nodes[r.IntN(len(g.Nodes)-1)].ID
			g.Edges = append(g.Edges, Edge{From: from, To: id})
		}
		g.Fit = Fit{MaxAspect: 2.5, MaxWidth: 2800, Small: 1000, Turn: seed%3 == 0}
		res, err := Layout(context.Background(), g)
		if err != nil {
			t.Fatalf("seed %d: %v", seed, err)
		}
		if len(res.Nodes) != len(g.Nodes) {
			t.Fatalf("seed %d: %d of %d nodes", seed, len(res.Nodes), len(g.Nodes))
		}
		for i, a := range g.Nodes {
			for _, b := range g.Nodes[i+1:] {
				if overlaps(res.Nodes[a.ID], res.Nodes[b.ID]) {
					t.Errorf("seed %d (%s): %s overlaps %s", seed, res.Arrangement, a.ID, b.ID)
				}
			}
		}
		for _, nd := range g.Nodes {
			if nd.Cluster == "" {
				continue
			}
			c, b := res.Clusters[nd.Cluster], res.Nodes[nd.ID]
			if b.X < c.X || b.Y < c.Y || b.X+b.Width > c.X+c.Width || b.Y+b.Height > c.Y+c.Height {
				t.Errorf("seed %d (%s): %s %v outside its cluster %s %v", seed, res.Arrangement, nd.ID, b, nd.Cluster, c)
			}
		}
		for i, e := range g.Edges {
			if e.LabelWidth > 0 && (len(res.Routes[i])%2 != 1 || res.Routes[i][len(res.Routes[i])/2] != res.Labels[i]) {
				t.Errorf("seed %d (%s): label of edge %d not the middle of %v", seed, res.Arrangement, i, res.Routes[i])
			}
		}
	}
}

// TestSiblingGroupsWrap: a dozen services, each a group of two fed from one gateway, are rows of
// groups (a grid), not a strip twelve groups wide; each group stays whole and the services keep
// the order they were given, row by row.
func TestSiblingGroupsWrap(t *testing.T) {
	g := Graph{Direction: TopDown, Fit: Fit{MaxAspect: 2.5, Small: 1000}}
	g.Nodes = append(g.Nodes, Node{ID: "gw", Width: 160, Height: 60})
	for i := range 12 {
		c := fmt.Sprintf("svc%02d", i)
		g.Clusters = append(g.Clusters, Cluster{ID: c, TitleHeight: 30})
		g.Nodes = append(g.Nodes, Node{ID: c + "-api", Width: 160, Height: 60, Cluster: c}, Node{ID: c + "-db", Width: 160, Height: 60, Cluster: c})
		g.Edges = append(g.Edges, Edge{From: "gw", To: c + "-api"}, Edge{From: c + "-api", To: c + "-db"})
	}
	r, err := Layout(context.Background(), g)
	if err != nil {
		t.Fatal(err)
	}
	rows := map[float64][]string{}
	for _, c := range g.Clusters {
		b := r.Clusters[c.ID]
		rows[b.Y] = append(rows[b.Y], c.ID)
		for _, m := range []string{c.ID + "-api", c.ID + "-db"} {
			n := r.Nodes[m]
			if n.X < b.X || n.Y < b.Y || n.X+n.Width > b.X+b.Width || n.Y+n.Height > b.Y+b.Height {
				t.Errorf("%s %v is outside its group %v", m, n, b)
			}
		}
	}
	if len(rows) < 2 {
		t.Errorf("the groups lie in %d row (%s), want them wrapped into rows", len(rows), r.Arrangement)
	}
	var ys []float64
	for y := range rows {
		ys = append(ys, y)
	}
	sort.Float64s(ys)
	var order []string
	for _, y := range ys {
		row := rows[y]
		sort.Slice(row, func(i, j int) bool { return r.Clusters[row[i]].X < r.Clusters[row[j]].X })
		order = append(order, row...)
	}
	for i := 1; i < len(order); i++ {
		if order[i] < order[i-1] {
			t.Errorf("groups read %v row by row, want the order given", order)
			break
		}
	}
	var w, h float64
	for _, b := range r.Nodes {
		w, h = math.Max(w, b.X+b.Width), math.Max(h, b.Y+b.Height)
	}
	if a := math.Max(w/h, h/w); a > 2.5 {
		t.Errorf("%.0f×%.0f is %.1f:1 (%s), want within 2.5:1", w, h, a, r.Arrangement)
	}
	t.Logf("%s: %d rows, %.0f×%.0f", r.Arrangement, len(rows), w, h)
}

// TestOrderKept: the children of one node lie in the order they were given, left to right (top
// to bottom in a left-right layout), whatever the fitting does.
func TestOrderKept(t *testing.T) {
	for _, dir := range []Direction{TopDown, LeftRight} {
		for _, n := range []int{4, 12} {
			g := Graph{Direction: dir, Fit: Fit{MaxAspect: 2.5, Small: 1000}}
			g.Nodes = append(g.Nodes, Node{ID: "root", Width: 160, Height: 60})
			for i := range n {
				id := fmt.Sprintf("node %02d", i+1)
				g.Nodes = append(g.Nodes, Node{ID: id, Width: 160, Height: 60})
				g.Edges = append(g.Edges, Edge{From: "root", To: id})
			}
			r, err := Layout(context.Background(), g)
			if err != nil {
				t.Fatal(err)
			}
			// Read in rows (columns), then along them: the way a person reads a stacked fan-out.
			ids := make([]string, 0, n)
			for _, nd := range g.Nodes[1:] {
				ids = append(ids, nd.ID)
			}
			sort.SliceStable(ids, func(i, j int) bool {
				a, b := r.Nodes[ids[i]], r.Nodes[ids[j]]
				if r.Direction == LeftRight {
					a.X, a.Y, b.X, b.Y = a.Y, a.X, b.Y, b.X
				}
				if math.Abs(a.X-b.X) > 1 {
					return a.X < b.X
				}
				return a.Y < b.Y
			})
			if !sort.StringsAreSorted(ids) {
				t.Errorf("%s, %d children (%s): read in order %v", dir, n, r.Arrangement, ids)
			}
		}
	}
}

// TestSpreadNeverSqueezes: a picture already wider than its aspect asks is not "spread" by
// narrowing the gaps between its nodes (which once put nodes 1 px apart).
func TestSpreadNeverSqueezes(t *testing.T) {
	for _, dir := range []Direction{TopDown, LeftRight} {
		g := Graph{Direction: dir, NodeSep: 60, RankSep: 90}
		for i := range 6 {
			g.Nodes = append(g.Nodes, Node{ID: fmt.Sprintf("n%d", i), Width: 300, Height: 120})
			if i > 0 {
				g.Edges = append(g.Edges, Edge{From: "n0", To: fmt.Sprintf("n%d", i)})
			}
		}
		p := newPlan(g, dir, false)
		c, ok, err := runCandidate(context.Background(), p, 1)
		if err != nil || !ok {
			t.Fatalf("%s: %v", dir, err)
		}
		q, _, _ := p.spread(c, p.ranksOf(c.pl), Fit{MaxAspect: 2.5})
		if q != nil && (q.g.NodeSep < g.NodeSep || q.g.RankSep < g.RankSep) {
			t.Errorf("%s: spread to gaps %v/%v, want no less than %v/%v", dir, q.g.NodeSep, q.g.RankSep, g.NodeSep, g.RankSep)
		}
	}
}

// TestUnrelatedSiblingsShareARow: a group whose members have no edge or path between them, each
// fed from its own rank elsewhere (a driver's handlers), is laid out as one row, not stretched
// over the ranks between its members around empty space, when the plain layout is to be improved
// on (here: too tall for the screen); members a path leads between keep their ranks.
func TestUnrelatedSiblingsShareARow(t *testing.T) {
	build := func(linked bool) Graph {
		g := Graph{Direction: TopDown, Clusters: []Cluster{{ID: "driver", TitleHeight: 30}}, Fit: screenFit}
		add := func(id, c string) { g.Nodes = append(g.Nodes, Node{ID: id, Width: 160, Height: 80, Cluster: c}) }
		for _, id := range []string{"api", "worker", "housekeeping", "certificates", "amphorae", "health", "metrics"} {
			add(id, "")
		}
		add("stats", "driver")
		add("message", "driver")
		edges := [][2]string{{"api", "worker"}, {"worker", "housekeeping"}, {"housekeeping", "certificates"}, {"certificates", "amphorae"},
			{"amphorae", "health"}, {"metrics", "stats"}, {"health", "message"}}
		if linked {
			edges = append(edges, [2]string{"stats", "api"})
		}
		for _, e := range edges {
			g.Edges = append(g.Edges, Edge{From: e[0], To: e[1]})
		}
		return g
	}
	for _, tc := range []struct {
		name   string
		linked bool
		oneRow bool
	}{
		{"unrelated", false, true},
		{"a path from one to the other", true, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g := build(tc.linked)
			r, err := Layout(context.Background(), g)
			if err != nil {
				t.Fatal(err)
			}
			s, m := r.Nodes["stats"], r.Nodes["message"]
			if got := s.Y == m.Y; got != tc.oneRow {
				t.Errorf("stats %v and message %v on one row: %v, want %v (group %v)", s, m, got, tc.oneRow, r.Clusters["driver"])
			}
		})
	}
}

// failingDot is Graphviz that fails on every source holding a fold's bands.
type failingDot struct{}

func (failingDot) Run(ctx context.Context, src []byte) ([]byte, error) {
	if strings.Contains(string(src), "style=invis") {
		return nil, errors.New("run dot: wasm error: out of bounds memory access")
	}
	return dotproc.InProcess{}.Run(ctx, src)
}

// TestFitOutlivesAFailedRearrangement: when Graphviz fails on a rearrangement, the layout is
// made of the plain layouts instead of failing; a failure of the plain layout itself is an error.
func TestFitOutlivesAFailedRearrangement(t *testing.T) {
	SetDot(failingDot{})
	defer SetDot(nil)
	g := chain(12, LeftRight, nil)
	g.Fit = screenFit
	r, err := Layout(context.Background(), g)
	if err != nil {
		t.Fatalf("a failed wrap failed the layout: %v", err)
	}
	if r.Arrangement != "" || len(r.Nodes) != 12 {
		t.Errorf("arranged %q with %d nodes, want the plain layout of 12", r.Arrangement, len(r.Nodes))
	}
	SetDot(dotFunc(func(context.Context, []byte) ([]byte, error) { return nil, errors.New("run dot: broken") }))
	if _, err := Layout(context.Background(), g); err == nil {
		t.Error("a failed plain layout gave no error")
	}
}

type dotFunc func(context.Context, []byte) ([]byte, error)

func (f dotFunc) Run(ctx context.Context, src []byte) ([]byte, error) { return f(ctx, src) }
