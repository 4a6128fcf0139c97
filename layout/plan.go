package layout

import (
	"fmt"
	"math"
	"slices"
	"sort"
	"strconv"
	"strings"
)

// A plan is the graph as dot is given it: the caller's nodes, plus a node for every edge label
// (on the edge's way), invisible gates that order groups, and blocks that stand for stacked
// leaves; edges (spanning two ranks when some edge has a label: a labelled edge is two halves
// through its label's node),
// clusters (the caller's, and the bands of a wrapped layout) and rank constraints.

type nodeKind int

const (
	realNode  nodeKind = iota
	labelNode          // an edge's label, on the edge's way
	gateNode           // an invisible point that puts one group after another
	blockNode          // a column (or row) of stacked leaves, expanded after layout
)

type pnode struct {
	kind    nodeKind
	w, h    float64
	cluster int  // plan cluster index, -1 for none
	ref     int  // realNode: index in Graph.Nodes; labelNode: edge index; blockNode: index in plan.blocks
	gone    bool // not laid out: a leaf stacked in a block, or a gate dropped by a fold
}

type pedge struct {
	from, to int // plan node indexes, in the edge's own direction
	minlen   int // in dot ranks
	weight   int // 0: the edge does not pull its ends together
	invis    bool
	free     bool // does not rank its ends (dot's constraint=false): an edge against the groups' order
	edge     int  // the Graph edge this is (a half of), -1 for a helper
	part     int  // 0 the whole edge, 1 tail → label, 2 label → head
	back     bool // written to dot head first; the route is read backwards
	gone     bool
}

type pcluster struct {
	id     string // the caller's cluster id; "" for a band
	parent int    // -1 for none
	title  float64
}

type plan struct {
	g        Graph
	dir      Direction
	nodes    []pnode
	edges    []pedge
	clusters []pcluster
	same     [][]int        // sets of plan nodes on one rank
	blocks   []block        // stack.go
	bands    int            // the number of bands of a fold (fold.go), 0 for none
	band     []int          // per plan cluster: the band it is, -1 for the caller's clusters
	label    []int          // per Graph edge: its label node, -1 for none
	ids      map[string]int // the caller's node ids → plan nodes (realIndex)
	nodeBand []int          // per plan node: its band in a fold, -1 for none
	inBlock  map[int]int    // a stacked leaf → its block's plan node
	// reverseBands declares the bands' clusters last first (see fold).
	reverseBands bool
	// looseFirst declares the nodes in no cluster before the clusters: with the bands of a fold
	// inside a group, dot then keeps the bands in order across when the nodes before the group
	// (declared last) would have it stack them the other way round.
	looseFirst bool
	// margin is the margin of a band's cluster (fold).
	margin float64
	// span is how many dot ranks an edge spans: 2 when some edge has a label (its label's node
	// takes the rank between), else 1 (dot's own layout of a graph without labels, whose crossing
	// reduction does better without the extra ranks).
	span int
	// arrangement names how the plan changes dot's plain layout ("" for not at all).
	arrangement string
	// lonerSets are the indexes in same of the sets anchorLoners made: a group's first connected
	// member, then its members without edges; lonerRows the members lonersAfter put side by side.
	lonerSets []int
	lonerRows [][]int
	// rigid holds groups ranked whole together, and whole says rankGroups ranked them.
	rigid []rigid
	whole bool
	// wholeLayers is, per cluster, how many layers its nodes take when ranked whole.
	wholeLayers []int
}

// depthFirst breaks cycles as dot's own cycle breaking does, by a depth-first search from the
// nodes in the order given, each node's edges in the order given, turning back the edges that
// close a cycle: a second opinion on which edges go back, different from againstFlow's on some
// graphs. It marks whole edges instead of leaving the search to dot, which would turn back one
// half of a labelled edge and not the other: the label's rank then lies beyond the tail and the
// arrow leaves its box the wrong way and hooks back. It reports whether any edge changed.
func (p *plan) depthFirst() bool {
	g := p.g
	out := make([][]int, len(g.Nodes)) // per node, its edges' indexes
	for k, e := range g.Edges {
		if u := p.realIndex(e.From); u != p.realIndex(e.To) {
			out[u] = append(out[u], k)
		}
	}
	const (
		unseen = iota
		open
		done
	)
	state := make([]int, len(g.Nodes))
	back := make([]bool, len(g.Edges))
	var visit func(u int)
	visit = func(u int) {
		state[u] = open
		for _, k := range out[u] {
			switch v := p.realIndex(g.Edges[k].To); state[v] {
			case open:
				back[k] = true
			case unseen:
				visit(v)
			}
		}
		state[u] = done
	}
	for u := range g.Nodes {
		if state[u] == unseen {
			visit(u)
		}
	}
	changed := false
	for k := range p.edges {
		if e := &p.edges[k]; e.edge >= 0 && e.back != back[e.edge] {
			e.back = back[e.edge]
			changed = true
		}
	}
	return changed
}

// hasGates reports whether the plan orders groups with gates.
func (p *plan) hasGates() bool {
	for _, n := range p.nodes {
		if n.kind == gateNode {
			return true
		}
	}
	return false
}

// clone is a copy of p that can be changed without changing p.
func (p *plan) clone() *plan {
	q := *p
	q.nodes = append([]pnode(nil), p.nodes...)
	q.edges = append([]pedge(nil), p.edges...)
	q.clusters = append([]pcluster(nil), p.clusters...)
	q.band = append([]int(nil), p.band...)
	q.same = make([][]int, len(p.same))
	for i, s := range p.same {
		q.same[i] = append([]int(nil), s...)
	}
	q.blocks = append([]block(nil), p.blocks...)
	q.rigid = slices.Clone(p.rigid)
	q.inBlock = make(map[int]int, len(p.inBlock))
	for k, v := range p.inBlock {
		q.inBlock[k] = v
	}
	return &q
}

// blockOf is the block a stacked leaf is in, or the node itself.
func (p *plan) blockOf(i int) int {
	if b, ok := p.inBlock[i]; ok {
		return b
	}
	return i
}

// wholeEdge lays edge i out as one dot edge, its label (if any) put half-way along its route
// afterwards instead of being a node on its way: for edges dot does not rank by, or between the
// bands of a fold.
func (p *plan) wholeEdge(i int, free bool) {
	if l := p.label[i]; l >= 0 && !p.nodes[l].gone {
		p.nodes[l].gone = true
		back := false
		for k := range p.edges {
			if p.edges[k].edge == i {
				p.edges[k].gone = true
				back = p.edges[k].back
			}
		}
		e := p.g.Edges[i]
		p.edges = append(p.edges, pedge{from: p.realIndex(e.From), to: p.realIndex(e.To), minlen: p.span, weight: 1, edge: i, free: free, back: back})
		return
	}
	for k := range p.edges {
		if p.edges[k].edge == i && !p.edges[k].gone {
			p.edges[k].free = free
		}
	}
}

// labelPad is the room kept around an edge label, so that its arrow shows on both sides of it
// and neighbouring labels keep apart.
const labelPad = 8.0

// newPlan is the plain plan of g in direction dir; gated, sibling groups are put one after the
// other along the layers by the edges between them (orderGroups), else dot places them freely.
func newPlan(g Graph, dir Direction, gated bool) *plan {
	p := &plan{g: g, dir: dir}
	clusterIndex := make(map[string]int, len(g.Clusters))
	for i, c := range g.Clusters {
		clusterIndex[c.ID] = i
	}
	for _, c := range g.Clusters {
		parent := -1
		if c.Parent != "" {
			parent = clusterIndex[c.Parent]
		}
		p.clusters = append(p.clusters, pcluster{id: c.ID, parent: parent, title: c.TitleHeight})
		p.band = append(p.band, -1)
	}
	nodeIndex := make(map[string]int, len(g.Nodes))
	for i, n := range g.Nodes {
		nodeIndex[n.ID] = i
		ci := -1
		if n.Cluster != "" {
			ci = clusterIndex[n.Cluster]
		}
		p.nodes = append(p.nodes, pnode{kind: realNode, w: n.Width, h: n.Height, cluster: ci, ref: i})
	}
	p.label = make([]int, len(g.Edges))
	p.span = 1
	for _, e := range g.Edges {
		if e.LabelWidth > 0 && e.LabelHeight > 0 && e.From != e.To {
			p.span = 2
		}
	}
	back := againstFlow(g)
	for i, e := range g.Edges {
		u, v := nodeIndex[e.From], nodeIndex[e.To]
		p.label[i] = -1
		if e.LabelWidth <= 0 || e.LabelHeight <= 0 || u == v {
			p.edges = append(p.edges, pedge{from: u, to: v, minlen: p.span, weight: 1, edge: i, back: back[i]})
			continue
		}
		l := len(p.nodes)
		p.label[i] = l
		p.nodes = append(p.nodes, pnode{kind: labelNode, w: e.LabelWidth + 2*labelPad, h: e.LabelHeight + labelPad,
			cluster: p.commonCluster(p.nodes[u].cluster, p.nodes[v].cluster), ref: i})
		p.edges = append(p.edges, pedge{from: u, to: l, minlen: 1, weight: 1, edge: i, part: 1, back: back[i]},
			pedge{from: l, to: v, minlen: 1, weight: 1, edge: i, part: 2, back: back[i]})
	}
	p.anchorLoners()
	if gated {
		p.orderGroups()
	}
	return p
}

// rowSiblings puts the members of a group of unrelated siblings on one rank: members with no
// edge between any two of them and no path from one to another, each fed from its own place
// elsewhere (a driver's handlers, a set of consumers). dot ranks each by its own edges, and the
// group is stretched over every rank in between, around empty space; side by side it is one row.
// Members that the ranks would put side by side anyway are left alone (a fan-out stacks them).
func (p *plan) rowSiblings() bool {
	changed := false
	succ, minlen := p.rankGraph()
	rank := longestPathRanks(succ, minlen)
	for ci := range p.clusters {
		var members []int
		for i, n := range p.nodes {
			if n.kind == realNode && n.cluster == ci && len(succ[i])+p.indegree(i) > 0 {
				members = append(members, i)
			}
		}
		if len(members) < 2 || p.hasInnerEdge(ci) {
			continue
		}
		spread := false
		for _, m := range members[1:] {
			spread = spread || rank[m] != rank[members[0]]
		}
		if !spread || reachesAny(succ, members) {
			continue
		}
		p.same = append(p.same, members)
		changed = true
	}
	return changed
}

// indegree is the number of plan edges into node i.
func (p *plan) indegree(i int) int {
	n := 0
	for _, e := range p.edges {
		if !e.gone && e.to == i || !e.gone && e.from == i && e.back {
			n++
		}
	}
	return n
}

// hasInnerEdge reports whether some edge runs between two nodes inside cluster ci (nested
// groups included).
func (p *plan) hasInnerEdge(ci int) bool {
	inside := func(i int) bool {
		for c := p.nodes[i].cluster; c >= 0; c = p.clusters[c].parent {
			if c == ci {
				return true
			}
		}
		return false
	}
	for _, e := range p.g.Edges {
		if inside(p.realIndex(e.From)) && inside(p.realIndex(e.To)) {
			return true
		}
	}
	return false
}

// longestPathRanks is each node's rank by the longest path to it along succ (an acyclic graph),
// each edge as long as its minlen.
func longestPathRanks(succ, minlen [][]int) []int {
	rank := make([]int, len(succ))
	in := make([]int, len(succ))
	for _, vs := range succ {
		for _, v := range vs {
			in[v]++
		}
	}
	var queue []int
	for i := range succ {
		if in[i] == 0 {
			queue = append(queue, i)
		}
	}
	for len(queue) > 0 {
		u := queue[0]
		queue = queue[1:]
		for k, v := range succ[u] {
			rank[v] = max(rank[v], rank[u]+minlen[u][k])
			if in[v]--; in[v] == 0 {
				queue = append(queue, v)
			}
		}
	}
	return rank
}

// reachesAny reports whether a path along succ leads from one of nodes to another.
func reachesAny(succ [][]int, nodes []int) bool {
	target := make(map[int]bool, len(nodes))
	for _, n := range nodes {
		target[n] = true
	}
	for _, start := range nodes {
		seen := map[int]bool{start: true}
		stack := append([]int(nil), succ[start]...)
		for len(stack) > 0 {
			u := stack[len(stack)-1]
			stack = stack[:len(stack)-1]
			if target[u] {
				return true
			}
			if !seen[u] {
				seen[u] = true
				stack = append(stack, succ[u]...)
			}
		}
	}
	return false
}

// anchorLoners puts each node without edges in a cluster on the rank of the cluster's first
// connected node: alone it would sit on the first rank and stretch its group over every rank
// down to its other members.
func (p *plan) anchorLoners() {
	degree := make([]int, len(p.nodes))
	for _, e := range p.edges {
		degree[e.from]++
		degree[e.to]++
	}
	for ci := range p.clusters {
		anchor := -1
		var loners []int
		for i, n := range p.nodes {
			if n.kind != realNode || n.cluster != ci {
				continue
			}
			if degree[i] > 0 && anchor < 0 {
				anchor = i
			} else if degree[i] == 0 {
				loners = append(loners, i)
			}
		}
		if anchor >= 0 && len(loners) > 0 {
			p.same = append(p.same, append([]int{anchor}, loners...))
			p.lonerSets = append(p.lonerSets, len(p.same)-1)
		}
	}
}

// lonersAfter puts the loose members of a group (two or more nodes without edges) on the rank
// after its first connected member, side by side, instead of on that member's rank: there they
// make the group a line as long as all its members (a directory of two files fed from elsewhere
// and two loose ones is a column of four), beside it a block of two lines. It reports whether
// any group has such members.
func (p *plan) lonersAfter() bool {
	changed := false
	for _, s := range p.lonerSets {
		set := p.same[s]
		if len(set) < 3 {
			continue
		}
		anchor, loners := set[0], set[1:]
		p.same[s] = loners
		p.edges = append(p.edges, pedge{from: anchor, to: loners[0], minlen: p.span, weight: 0, invis: true, edge: -1})
		p.lonerRows = append(p.lonerRows, loners)
		changed = true
	}
	return changed
}

// orderLoners puts the loose members lonersAfter laid side by side in the order given, in the
// places dot gave them (dot orders nodes without edges at will). Flat edges between them would
// order them in dot, but with them some later Graphviz run in the same module broke. A row with
// another node between its members is left as it is.
func (p *plan) orderLoners(pl *placed) {
	for _, row := range p.lonerRows {
		slots := append([]int(nil), row...)
		sort.SliceStable(slots, func(a, b int) bool {
			sa, _ := p.across(pl.nodes[slots[a]])
			sb, _ := p.across(pl.nodes[slots[b]])
			return sa < sb
		})
		first, _ := p.across(pl.nodes[slots[0]])
		ls, lw := p.across(pl.nodes[slots[len(slots)-1]])
		ok := true
		for i, n := range p.nodes {
			if n.gone || !pl.laid[i] || contains(row, i) {
				continue
			}
			s, w := p.across(pl.nodes[i])
			a, l := p.along(pl.nodes[i])
			b, m := p.along(pl.nodes[row[0]])
			if a < b+m && b < a+l && s < ls+lw && first < s+w {
				ok = false // another node between them on their rank
			}
		}
		if !ok {
			continue
		}
		// Each in the order given, with the gaps there were between the places.
		gaps := make([]float64, len(slots)-1)
		for k := range gaps {
			s0, w0 := p.across(pl.nodes[slots[k]])
			s1, _ := p.across(pl.nodes[slots[k+1]])
			gaps[k] = s1 - s0 - w0
		}
		at := first
		for k, i := range row {
			r := pl.nodes[i]
			if p.dir == LeftRight {
				r.Y = at
			} else {
				r.X = at
			}
			pl.nodes[i] = r
			if k < len(gaps) {
				_, w := p.across(r)
				at += w + gaps[k]
			}
		}
	}
}

// commonCluster is the innermost cluster holding both a and b (-1 for none).
func (p *plan) commonCluster(a, b int) int {
	up := map[int]bool{}
	for c := a; c >= 0; c = p.clusters[c].parent {
		up[c] = true
	}
	for c := b; c >= 0; c = p.clusters[c].parent {
		if up[c] {
			return c
		}
	}
	return -1
}

// clusterPath is the cluster c and the clusters around it, innermost first.
// innermostFirst sorts clusters cs so that each comes before the clusters holding it.
func (p *plan) innermostFirst(cs []int) {
	sort.SliceStable(cs, func(a, b int) bool { return len(p.clusterPath(cs[a])) > len(p.clusterPath(cs[b])) })
}

func (p *plan) clusterPath(c int) []int {
	var out []int
	for ; c >= 0; c = p.clusters[c].parent {
		out = append(out, c)
	}
	return out
}

// source writes the plan as DOT. Nodes are named p<index>, clusters cluster_<index> and edges
// carry their plan index in xi, so no caller's ID needs quoting rules; sizes are fixed so dot's
// estimate of label text plays no part. Crossing reduction gets four times dot's default effort
// (mclimit): it finds fewer crossings among labels' nodes, at little cost at these sizes. Network
// simplex is bounded (nslimit, nslimit1: iterations per node): on some graphs it cycles, and a
// Graphviz run cannot be interrupted once started, so an unbounded one would hang every layout
// behind it.
func (p *plan) source() string {
	var b strings.Builder
	fmt.Fprintf(&b, "digraph G {\nrankdir=%s; nodesep=%s; ranksep=%s; splines=spline; newrank=true; mclimit=4; nslimit=100; nslimit1=100;\n",
		p.dir, inch(p.g.NodeSep), inch(p.g.RankSep/float64(p.span)))
	b.WriteString("node [shape=box, fixedsize=true, label=\"\"];\nedge [arrowhead=none];\n")
	inside := make([][]int, len(p.clusters))
	var top []int
	for ci, c := range p.clusters {
		if c.parent >= 0 {
			inside[c.parent] = append(inside[c.parent], ci)
		} else {
			top = append(top, ci)
		}
	}
	members := make([][]int, len(p.clusters))
	var loose []int
	for i, n := range p.nodes {
		switch {
		case n.gone:
		case n.cluster >= 0:
			members[n.cluster] = append(members[n.cluster], i)
		default:
			loose = append(loose, i)
		}
	}
	writeNode := func(i int) {
		n := p.nodes[i]
		w, h := n.w, n.h
		if n.kind == gateNode {
			w, h = 1, 1
		}
		fmt.Fprintf(&b, "p%d [width=%s, height=%s];\n", i, inch(w), inch(h))
	}
	var writeCluster func(ci int)
	writeCluster = func(ci int) {
		c := p.clusters[ci]
		if c.id == "" { // a band: invisible, its margin the gap between bands
			fmt.Fprintf(&b, "subgraph cluster_%d {\nmargin=%s; label=\"\"; style=invis;\n", ci, num(p.margin))
		} else {
			// The title strip is reserved as a label of that height; dot puts it on top in TB and LR.
			fmt.Fprintf(&b, "subgraph cluster_%d {\nmargin=20; labelloc=t; label=\" \"; fontsize=%s;\n", ci, num(c.title*0.75))
		}
		for _, i := range members[ci] {
			writeNode(i)
		}
		kids := inside[ci]
		if p.reverseBands && len(kids) > 0 && p.clusters[kids[0]].id == "" { // bands inside a group
			kids = slices.Clone(kids)
			slices.Reverse(kids)
		}
		for _, k := range kids {
			writeCluster(k)
		}
		b.WriteString("}\n")
	}
	if p.reverseBands {
		for i, j := 0, len(top)-1; i < j; i, j = i+1, j-1 {
			top[i], top[j] = top[j], top[i]
		}
	}
	if p.looseFirst {
		for _, i := range loose {
			writeNode(i)
		}
	}
	for _, ci := range top {
		writeCluster(ci)
	}
	if !p.looseFirst {
		for _, i := range loose {
			writeNode(i)
		}
	}
	for _, set := range p.same {
		var live []string
		for _, i := range set {
			if !p.nodes[i].gone {
				live = append(live, "p"+strconv.Itoa(i))
			}
		}
		if len(live) > 1 {
			fmt.Fprintf(&b, "{rank=same; %s;}\n", strings.Join(live, "; "))
		}
	}
	for k, e := range p.edges {
		if e.gone || p.nodes[e.from].gone || p.nodes[e.to].gone {
			continue
		}
		from, to := e.from, e.to
		if e.back {
			from, to = to, from
		}
		fmt.Fprintf(&b, "p%d -> p%d [minlen=%d, weight=%d, xi=%d", from, to, e.minlen, e.weight, k)
		if from == to && e.edge >= 0 {
			// A loop is drawn by the caller beside its node (LoopReach out, its label on its
			// far side); an empty label of that size makes dot keep the room free.
			lw := p.g.Edges[e.edge].LabelWidth
			w := int(math.Ceil(LoopReach(lw) + lw/2 + labelPad))
			h := int(math.Ceil(p.nodes[from].h))
			fmt.Fprintf(&b, `, label=<<table fixedsize="true" width="%d" height="%d" border="0" cellborder="0" cellspacing="0" cellpadding="0"><tr><td fixedsize="true" width="%d" height="%d"></td></tr></table>>`, w, h, w, h)
		}
		if e.invis {
			b.WriteString(", style=invis")
		}
		if e.free {
			b.WriteString(", constraint=false")
		}
		b.WriteString("];\n")
	}
	for _, r := range p.rigid {
		fmt.Fprintf(&b, "p%d -> p%d [minlen=%d, weight=%d, style=invis];\n", r.from, r.to, r.minlen, r.weight)
	}
	b.WriteString("}\n")
	return b.String()
}

func inch(px float64) string { return num(px / pt) }

func num(v float64) string { return strconv.FormatFloat(v, 'f', 4, 64) }

// dotJSON is the part of `dot -Tjson` output read here and by readPlain.
type dotJSON struct {
	BB      string `json:"bb"`
	Objects []struct {
		Name string `json:"name"`
		BB   string `json:"bb"`
		Pos  string `json:"pos"`
	} `json:"objects"`
	Edges []struct {
		Pos string `json:"pos"`
		LP  string `json:"lp"` // a dot label's centre (plain dot only)
		XI  string `json:"xi"`
	} `json:"edges"`
}

// placed is a plan as dot laid it out, in px with y down.
type placed struct {
	nodes    []Rect    // per plan node (zero for nodes not laid out)
	clusters []Rect    // per plan cluster
	splines  [][]Point // per plan edge: the Bézier control points, in the edge's own direction
	laid     []bool    // per plan node: laid out
}

// bounds is the box around every laid-out node and cluster.
func (pl placed) bounds() Rect {
	var r Rect
	first := true
	add := func(b Rect) {
		if first {
			r, first = b, false
			return
		}
		x0, y0 := min(r.X, b.X), min(r.Y, b.Y)
		x1, y1 := max(r.X+r.Width, b.X+b.Width), max(r.Y+r.Height, b.Y+b.Height)
		r = Rect{x0, y0, x1 - x0, y1 - y0}
	}
	for i, n := range pl.nodes {
		if pl.laid[i] {
			add(n)
		}
	}
	for _, c := range pl.clusters {
		if c.Width > 0 || c.Height > 0 {
			add(c)
		}
	}
	return r
}

func (p *plan) read(data []byte) (placed, error) {
	var out dotJSON
	if err := jsonUnmarshal(data, &out); err != nil {
		return placed{}, err
	}
	bb, err := floats(out.BB, 4)
	if err != nil {
		return placed{}, fmt.Errorf("graph bb: %w", err)
	}
	top := bb[3]
	flip := func(x, y float64) Point { return Point{X: x - bb[0], Y: top - y} }
	pl := placed{nodes: make([]Rect, len(p.nodes)), clusters: make([]Rect, len(p.clusters)),
		splines: make([][]Point, len(p.edges)), laid: make([]bool, len(p.nodes))}
	for _, o := range out.Objects {
		switch {
		case strings.HasPrefix(o.Name, "cluster_"):
			i, err := strconv.Atoi(strings.TrimPrefix(o.Name, "cluster_"))
			if err != nil || i < 0 || i >= len(p.clusters) {
				return placed{}, fmt.Errorf("unexpected cluster %q", o.Name)
			}
			c, err := floats(o.BB, 4)
			if err != nil {
				return placed{}, fmt.Errorf("cluster %q bb: %w", o.Name, err)
			}
			a, z := flip(c[0], c[3]), flip(c[2], c[1])
			pl.clusters[i] = Rect{a.X, a.Y, z.X - a.X, z.Y - a.Y}
		case strings.HasPrefix(o.Name, "p"):
			i, err := strconv.Atoi(o.Name[1:])
			if err != nil || i < 0 || i >= len(p.nodes) {
				return placed{}, fmt.Errorf("unexpected node %q", o.Name)
			}
			c, err := floats(o.Pos, 2)
			if err != nil {
				return placed{}, fmt.Errorf("node %q pos: %w", o.Name, err)
			}
			n := p.nodes[i]
			q := flip(c[0], c[1])
			pl.nodes[i] = Rect{q.X - n.w/2, q.Y - n.h/2, n.w, n.h}
			pl.laid[i] = true
		}
	}
	for i, n := range p.nodes {
		if !n.gone && !pl.laid[i] {
			return placed{}, fmt.Errorf("dot did not place node p%d", i)
		}
	}
	for _, e := range out.Edges {
		k, err := strconv.Atoi(e.XI)
		if err != nil || k < 0 || k >= len(p.edges) {
			continue // an edge dot made (none are expected)
		}
		pts := controlPoints(e.Pos, flip)
		if p.edges[k].back {
			for i, j := 0, len(pts)-1; i < j; i, j = i+1, j-1 {
				pts[i], pts[j] = pts[j], pts[i]
			}
		}
		pl.splines[k] = pts
	}
	return pl, nil
}

// controlPoints reads an edge's spline "x,y x,y …" (cubic Bézier control points, 3n+1 of them;
// arrowhead ends "e,…"/"s,…" skipped); nil when it is not one.
func controlPoints(pos string, flip func(x, y float64) Point) []Point {
	var pts []Point
	for _, f := range strings.Fields(pos) {
		if strings.HasPrefix(f, "e,") || strings.HasPrefix(f, "s,") {
			continue
		}
		c, err := floats(f, 2)
		if err != nil {
			return nil
		}
		pts = append(pts, flip(c[0], c[1]))
	}
	if len(pts) < 4 || (len(pts)-1)%3 != 0 {
		return nil
	}
	return pts
}

// sortedKeys is the keys of m in increasing order.
func sortedKeys(m map[int]bool) []int {
	out := make([]int, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Ints(out)
	return out
}

func floats(s string, n int) ([]float64, error) {
	parts := strings.Split(s, ",")
	if len(parts) != n {
		return nil, fmt.Errorf("%q: want %d numbers", s, n)
	}
	out := make([]float64, n)
	for i, p := range parts {
		v, err := strconv.ParseFloat(strings.TrimSpace(p), 64)
		if err != nil {
			return nil, fmt.Errorf("%q: %w", s, err)
		}
		out[i] = v
	}
	return out, nil
}
