package layout

import (
	"encoding/json"
	"math"
	"sort"
)

// orderGroups puts each group after the sibling groups its edges come from, so that groups line
// up along the direction of the layers (side by side in a left-right layout) instead of sharing
// layers and stacking as bands across them. Between two sibling groups the direction most edges
// take wins; a pair whose order would close a cycle with orders already set (the heavier pairs
// first) is left to dot. Each order is an invisible gate node: the last members of the first
// group lead to it, it leads to the first members of the second.
func (p *plan) orderGroups() {
	if len(p.clusters) < 2 {
		return
	}
	// childOf[i][parent] is the cluster right under parent (-1: the top) that holds node i.
	type pair struct{ a, b int }
	count := map[pair]int{}
	under := func(node, parent int) int {
		path := p.clusterPath(p.nodes[node].cluster)
		for k, c := range path {
			if p.clusters[c].parent == parent {
				return path[k]
			}
		}
		return -1
	}
	for _, e := range p.g.Edges {
		u, v := p.realIndex(e.From), p.realIndex(e.To)
		cu, cv := p.nodes[u].cluster, p.nodes[v].cluster
		if cu == cv {
			continue
		}
		// The pair of siblings the edge runs between, under the innermost cluster holding both.
		common := p.commonCluster(cu, cv)
		a, b := under(u, common), under(v, common)
		if a >= 0 && b >= 0 && a != b {
			count[pair{a, b}]++
		}
	}
	type order struct{ a, b, net int }
	var orders []order
	for pr, n := range count {
		if back := count[pair{pr.b, pr.a}]; n > back {
			orders = append(orders, order{pr.a, pr.b, n - back})
		}
	}
	sort.Slice(orders, func(i, j int) bool {
		if orders[i].net != orders[j].net {
			return orders[i].net > orders[j].net
		}
		if orders[i].a != orders[j].a {
			return orders[i].a < orders[j].a
		}
		return orders[i].b < orders[j].b
	})
	after := map[int][]int{} // the orders set so far, a → b
	reaches := func(from, to int) bool {
		seen := map[int]bool{}
		stack := []int{from}
		for len(stack) > 0 {
			c := stack[len(stack)-1]
			stack = stack[:len(stack)-1]
			if c == to {
				return true
			}
			if seen[c] {
				continue
			}
			seen[c] = true
			stack = append(stack, after[c]...)
		}
		return false
	}
	set := map[pair]bool{}
	for _, o := range orders {
		if reaches(o.b, o.a) {
			continue
		}
		after[o.a] = append(after[o.a], o.b)
		set[pair{o.a, o.b}] = true
		p.addGate(o.a, o.b)
	}
	// Edges against an order set (a reply, a feedback loop) rank nothing: dot would otherwise
	// break the cycle they close with the gate, maybe at the gate.
	for i, e := range p.g.Edges {
		u, v := p.realIndex(e.From), p.realIndex(e.To)
		cu, cv := p.nodes[u].cluster, p.nodes[v].cluster
		if cu == cv {
			continue
		}
		common := p.commonCluster(cu, cv)
		if a, b := under(u, common), under(v, common); a >= 0 && b >= 0 && set[pair{b, a}] {
			p.wholeEdge(i, true)
		}
	}
}

// addGate adds a gate from the last members of cluster a to the first members of cluster b.
func (p *plan) addGate(a, b int) {
	ends := func(c int, last bool) []int {
		in := map[int]bool{}
		for i, n := range p.nodes {
			if n.kind == realNode && p.within(n.cluster, c) {
				in[i] = true
			}
		}
		inner := map[int]bool{}
		for _, e := range p.edges {
			// Through labels too: the label node of an edge inside the cluster is inside it.
			from, to := p.edgeEnds(e)
			if in[from] && in[to] && from != to {
				if last {
					inner[from] = true
				} else {
					inner[to] = true
				}
			}
		}
		var out []int
		for _, i := range sortedKeys(in) {
			if !inner[i] {
				out = append(out, i)
			}
		}
		if len(out) == 0 { // only cycles inside: every member
			out = sortedKeys(in)
		}
		return out
	}
	gate := len(p.nodes)
	p.nodes = append(p.nodes, pnode{kind: gateNode, w: 1, h: 1, cluster: p.clusters[a].parent, ref: -1})
	for _, i := range ends(a, true) {
		p.edges = append(p.edges, pedge{from: i, to: gate, minlen: 1, weight: 0, invis: true, edge: -1})
	}
	for _, i := range ends(b, false) {
		// With an edge spanning one rank the gate shares the second group's first rank.
		p.edges = append(p.edges, pedge{from: gate, to: i, minlen: p.span - 1, weight: 0, invis: true, edge: -1})
	}
}

// edgeEnds is the real nodes a plan edge joins: a half of a labelled edge counts as the whole.
func (p *plan) edgeEnds(e pedge) (int, int) {
	if e.edge < 0 || e.part == 0 {
		return e.from, e.to
	}
	ge := p.g.Edges[e.edge]
	return p.realIndex(ge.From), p.realIndex(ge.To)
}

// within reports whether cluster c is outer or inside it.
func (p *plan) within(c, outer int) bool {
	for ; c >= 0; c = p.clusters[c].parent {
		if c == outer {
			return true
		}
	}
	return false
}

// realIndex is the plan node of the caller's node id (real nodes come first, in order).
func (p *plan) realIndex(id string) int {
	if p.ids == nil {
		p.ids = make(map[string]int, len(p.g.Nodes))
		for i, n := range p.g.Nodes {
			p.ids[n.ID] = i
		}
	}
	return p.ids[id]
}

func jsonUnmarshal(data []byte, v any) error { return json.Unmarshal(data, v) }

func dist(a, b Point) float64 { return math.Hypot(b.X-a.X, b.Y-a.Y) }

// againstFlow marks, per edge of g, the edges that run against the flow: a set whose reversal
// leaves no cycle, found with Eades, Lin and Smyth's greedy heuristic (sinks to the end, sources
// to the front, else the node with the most more edges out than in), ties going to the node given
// first. dot breaks cycles itself by a depth-first search, which can make the start of a long
// chain — a source system fed back by the last step ("sync back") — the end of it instead and
// stretch its group over every layer; here a feedback edge is the one a person reads as going
// back.
func againstFlow(g Graph) []bool {
	n := len(g.Nodes)
	index := make(map[string]int, n)
	for i, nd := range g.Nodes {
		index[nd.ID] = i
	}
	out := make([][]int, n)
	in := make([][]int, n)
	for _, e := range g.Edges {
		u, v := index[e.From], index[e.To]
		if u != v {
			out[u] = append(out[u], v)
			in[v] = append(in[v], u)
		}
	}
	gone := make([]bool, n)
	outDeg, inDeg := make([]int, n), make([]int, n)
	for i := range n {
		outDeg[i], inDeg[i] = len(out[i]), len(in[i])
	}
	remove := func(i int) {
		gone[i] = true
		for _, v := range out[i] {
			inDeg[v]--
		}
		for _, u := range in[i] {
			outDeg[u]--
		}
	}
	var front, back []int
	left := n
	for left > 0 {
		changed := true
		for changed {
			changed = false
			for i := n - 1; i >= 0; i-- { // sinks, the last given first to the end
				if !gone[i] && outDeg[i] == 0 {
					back = append(back, i)
					remove(i)
					left--
					changed = true
				}
			}
			for i := range n {
				if !gone[i] && inDeg[i] == 0 {
					front = append(front, i)
					remove(i)
					left--
					changed = true
				}
			}
		}
		if left == 0 {
			break
		}
		best := -1
		for i := range n {
			if !gone[i] && (best < 0 || outDeg[i]-inDeg[i] > outDeg[best]-inDeg[best]) {
				best = i
			}
		}
		front = append(front, best)
		remove(best)
		left--
	}
	pos := make([]int, n)
	for k, i := range front {
		pos[i] = k
	}
	for k, i := range back {
		pos[i] = n - 1 - k
	}
	res := make([]bool, len(g.Edges))
	for k, e := range g.Edges {
		res[k] = pos[index[e.From]] > pos[index[e.To]]
	}
	return res
}
