package layout

import (
	"slices"
	"sort"
)

// Groups ranked whole. dot's ranking with newrank (which folds and the anchoring of loose
// members need) ranks every node by its own edges, so a group whose members are fed from far
// apart spans every rank between them, around other boxes and empty space (a cluster of worker
// pods, two feeding Prometheus near the start of the flow and one fed by the master at its end,
// as tall as the whole picture); and a group fed by the one before it starts beside that one,
// one rank further, so a pipeline of groups comes out as a staircase. dot's own ranking without
// newrank ranks each group on its own and places it as a unit, but it cannot be combined with
// the rest and, run in the same Graphviz module, it was seen to leave the module broken for later
// runs. rankGroups does such a ranking itself and hands dot the result as constraints:
//
//   - inside each group the items — the nodes right in it with edges and the groups right in it,
//     each a rigid block — are ranked by the edges inside the group alone, longest path first,
//     then each item fed from nowhere inside the group moved up to the items it feeds;
//   - each top group's ranks are fixed for dot by a rank=same set per rank and an invisible,
//     heavy edge from one rank to the next, so edges from outside move the group as a whole
//     instead of stretching it;
//   - in sequence, each top group (or node in none) starts after every one an edge comes to it
//     from ends (sequenceTop).
//
// A graph where a path leaves a group and comes back into it is left alone (itemCycle): ranked
// whole, that group would turn an arrow back against the flow.

// rigid is a constraint dot gets beside the plan's edges: to at least minlen ranks after from,
// pulled to exactly that by its weight. It is invisible and no route is read from it.
type rigid struct{ from, to, minlen, weight int }

// rigidWeight is how hard a rigid edge holds its group's ranks together against the edges
// that pull its members apart.
const rigidWeight = 100

// rankGroups ranks the plan's groups whole (above), in sequence or not. It reports whether
// that changes anything against the plan as it was: a group spanning fewer ranks than the
// longest-path ranking gives it, or (in sequence) a group put after another.
func (p *plan) rankGroups(sequence bool) bool {
	if len(p.clusters) == 0 {
		return false
	}
	p.whole = true
	if p.itemCycle() {
		return false
	}
	off := p.groupOffsets()
	if off == nil {
		return false
	}
	p.wholeLayers = layersOf(p, off)
	before := p.clusterSpans(p.plainRanks())
	changed := false
	for ci := range p.clusters {
		first, lo, hi := true, 0, 0
		for _, r := range off[ci] {
			if first {
				lo, hi, first = r, r, false
			}
			lo, hi = min(lo, r), max(hi, r)
		}
		changed = changed || hi-lo < before[ci]
	}
	for ci, c := range p.clusters {
		if c.parent >= 0 || len(off[ci]) < 2 {
			continue
		}
		byRank := map[int][]int{}
		for i, r := range off[ci] {
			byRank[r] = append(byRank[r], i)
		}
		ranks := make([]int, 0, len(byRank))
		for r, set := range byRank {
			ranks = append(ranks, r)
			slices.Sort(set)
			if len(set) > 1 {
				p.same = append(p.same, set)
			}
		}
		slices.Sort(ranks)
		for k := 1; k < len(ranks); k++ {
			p.rigid = append(p.rigid, rigid{from: byRank[ranks[k-1]][0], to: byRank[ranks[k]][0], minlen: ranks[k] - ranks[k-1], weight: rigidWeight})
		}
	}
	if sequence {
		return p.sequenceTop(off) || changed
	}
	return changed
}

// sequenceTop puts each item of the top level (a group as a whole, or a node in none) after
// every item an edge comes to it from: a group fed from another starts where that one ends,
// instead of beside it one rank further, which lays a pipeline of groups out as a staircase.
// The constraints pull nothing (weight 0); the edges keep their own pull. It reports whether
// it added any.
func (p *plan) sequenceTop(off []map[int]int) bool {
	added := false
	first := map[int]int{} // item → its node on its first rank, and on its last
	last := map[int]int{}
	top := func(it int) (lo, hi int) {
		if it < len(p.nodes) {
			return it, it
		}
		c := it - len(p.nodes)
		lo, hi = -1, -1
		for i, r := range off[c] {
			if lo < 0 || r < off[c][lo] || r == off[c][lo] && i < lo {
				lo = i
			}
			if hi < 0 || r > off[c][hi] || r == off[c][hi] && i < hi {
				hi = i
			}
		}
		return lo, hi
	}
	type pair struct{ a, b int }
	seen := map[pair]bool{}
	for _, e := range p.edges {
		if !p.liveEdge(e) {
			continue
		}
		u, v := p.ranked(e)
		a, b := p.item(u, -1), p.item(v, -1)
		if a == b || seen[pair{a, b}] {
			continue
		}
		seen[pair{a, b}] = true
		if _, ok := last[a]; !ok {
			first[a], last[a] = top(a)
		}
		if _, ok := first[b]; !ok {
			first[b], last[b] = top(b)
		}
		if last[a] < 0 || first[b] < 0 || last[a] == u && first[b] == v {
			continue // the edge itself says it
		}
		p.rigid = append(p.rigid, rigid{from: last[a], to: first[b], minlen: e.minlen})
		added = true
	}
	return added
}

// liveEdge reports whether the plan edge e ranks its ends.
func (p *plan) liveEdge(e pedge) bool {
	return !e.gone && !e.free && e.from != e.to && !p.nodes[e.from].gone && !p.nodes[e.to].gone
}

// ranked is e's ends in the order dot ranks them: head first where e is written backwards.
func (p *plan) ranked(e pedge) (int, int) {
	if e.back {
		return e.to, e.from
	}
	return e.from, e.to
}

// rankGraph is, per plan node, the nodes its live edges lead to as dot ranks them, and the
// edges' minlen alongside.
func (p *plan) rankGraph() (succ, minlen [][]int) {
	succ = make([][]int, len(p.nodes))
	minlen = make([][]int, len(p.nodes))
	for _, e := range p.edges {
		if p.liveEdge(e) {
			u, v := p.ranked(e)
			succ[u] = append(succ[u], v)
			minlen[u] = append(minlen[u], e.minlen)
		}
	}
	return succ, minlen
}

// plainRanks is the longest-path ranking of the plan's nodes by its edges as they are.
func (p *plan) plainRanks() []int { return longestPathRanks(p.rankGraph()) }

// clusterSpans is, per cluster, how many ranks its members with edges span under rank.
func (p *plan) clusterSpans(rank []int) []int {
	lo := make([]int, len(p.clusters))
	hi := make([]int, len(p.clusters))
	seen := make([]bool, len(p.clusters))
	connected := p.connected()
	for i, n := range p.nodes {
		if !connected[i] {
			continue
		}
		for _, c := range p.clusterPath(n.cluster) {
			if !seen[c] {
				lo[c], hi[c], seen[c] = rank[i], rank[i], true
			}
			lo[c], hi[c] = min(lo[c], rank[i]), max(hi[c], rank[i])
		}
	}
	spans := make([]int, len(p.clusters))
	for c := range spans {
		spans[c] = hi[c] - lo[c]
	}
	return spans
}

// connected is, per plan node, whether a live edge ends at it.
func (p *plan) connected() []bool {
	out := make([]bool, len(p.nodes))
	for _, e := range p.edges {
		if p.liveEdge(e) {
			out[e.from], out[e.to] = true, true
		}
	}
	return out
}

// item is a node or a whole group as one unit at a level: node index, or len(nodes)+cluster.
func (p *plan) item(node, level int) int {
	c := p.nodes[node].cluster
	if c == level {
		return node
	}
	for c >= 0 && p.clusters[c].parent != level {
		c = p.clusters[c].parent
	}
	if c < 0 { // node is not inside level (cannot happen for the ends of an edge at that level)
		return node
	}
	return len(p.nodes) + c
}

// itemCycle reports whether, at some level (the top level or inside a group), the items — the
// nodes right in it and the groups right in it, each as a unit — form a cycle: a path that
// leaves a group and comes back into it. Ranking that group whole would turn an arrow back
// against the flow; such graphs are left to dot's ranking.
func (p *plan) itemCycle() bool {
	n := len(p.nodes) + len(p.clusters)
	out := make([][]int, n)
	for _, e := range p.edges {
		if !p.liveEdge(e) {
			continue
		}
		u, v := p.ranked(e)
		level := p.commonCluster(p.nodes[u].cluster, p.nodes[v].cluster)
		if a, b := p.item(u, level), p.item(v, level); a != b {
			out[a] = append(out[a], b)
		}
	}
	const (
		unseen = iota
		open
		done
	)
	state := make([]int, n)
	var cyclic func(a int) bool
	cyclic = func(a int) bool {
		state[a] = open
		for _, b := range out[a] {
			if state[b] == open || state[b] == unseen && cyclic(b) {
				return true
			}
		}
		state[a] = done
		return false
	}
	for a := range out {
		if state[a] == unseen && cyclic(a) {
			return true
		}
	}
	return false
}

// groupOffsets ranks every group's members with edges by the edges inside it, each nested
// group a rigid block: per cluster, its members' ranks from its first. nil when the edges inside
// a group still form a cycle (acyclicItems prevents that).
func (p *plan) groupOffsets() []map[int]int {
	depth := make([]int, len(p.clusters))
	for ci := range p.clusters {
		depth[ci] = len(p.clusterPath(ci))
	}
	byDepth := make([]int, len(p.clusters))
	for i := range byDepth {
		byDepth[i] = i
	}
	sort.SliceStable(byDepth, func(i, j int) bool { return depth[byDepth[i]] > depth[byDepth[j]] })
	connected := p.connected()
	off := make([]map[int]int, len(p.clusters))
	inside := func(x, c int) bool { return slices.Contains(p.clusterPath(p.nodes[x].cluster), c) }
	for _, c := range byDepth {
		// The items: direct members with edges, and nested groups with members.
		var items []int
		seen := map[int]bool{}
		add := func(it int) {
			if !seen[it] {
				seen[it] = true
				items = append(items, it)
			}
		}
		for i, nd := range p.nodes {
			if connected[i] && !nd.gone && inside(i, c) {
				add(p.item(i, c))
			}
		}
		sort.Ints(items)
		inner := func(it, x int) int {
			if it < len(p.nodes) {
				return 0
			}
			return off[it-len(p.nodes)][x]
		}
		type arc struct{ to, w int }
		out := map[int][]arc{}
		indeg := map[int]int{}
		for _, e := range p.edges {
			if !p.liveEdge(e) || !inside(e.from, c) || !inside(e.to, c) {
				continue
			}
			u, v := p.ranked(e)
			a, b := p.item(u, c), p.item(v, c)
			if a == b {
				continue
			}
			out[a] = append(out[a], arc{b, inner(a, u) + e.minlen - inner(b, v)})
			indeg[b]++
		}
		// Longest path in topological order.
		pos := map[int]int{}
		deg := map[int]int{}
		var queue, topo []int
		for _, it := range items {
			deg[it] = indeg[it]
			if deg[it] == 0 {
				queue = append(queue, it)
			}
		}
		for len(queue) > 0 {
			a := queue[0]
			queue = queue[1:]
			topo = append(topo, a)
			for _, x := range out[a] {
				pos[x.to] = max(pos[x.to], pos[a]+x.w)
				if deg[x.to]--; deg[x.to] == 0 {
					queue = append(queue, x.to)
				}
			}
		}
		if len(topo) != len(items) {
			return nil
		}
		// An item fed from nowhere in the group goes as late as what it feeds allows.
		for k := len(topo) - 1; k >= 0; k-- {
			a := topo[k]
			if indeg[a] > 0 || len(out[a]) == 0 {
				continue
			}
			late := 1 << 30
			for _, x := range out[a] {
				late = min(late, pos[x.to]-x.w)
			}
			pos[a] = late
		}
		lo := 1 << 30
		for _, it := range items {
			lo = min(lo, pos[it])
		}
		off[c] = map[int]int{}
		for i, nd := range p.nodes {
			if connected[i] && !nd.gone && inside(i, c) {
				it := p.item(i, c)
				off[c][i] = pos[it] - lo + inner(it, i)
			}
		}
	}
	return off
}

// layersOf is, per cluster, how many ranks its real nodes take under the offsets.
func layersOf(p *plan, off []map[int]int) []int {
	out := make([]int, len(p.clusters))
	for ci := range off {
		seen := map[int]bool{}
		for i, r := range off[ci] {
			if p.nodes[i].kind == realNode {
				seen[r] = true
			}
		}
		out[ci] = len(seen)
	}
	return out
}

// groupLayers is, per cluster of p laid out as pl, the layers its connected real nodes are on
// (nested clusters' included) and the first and last of them (hi -1 for none).
func groupLayers(p *plan, pl placed) (lo, hi []int, layers []map[int]bool) {
	r := p.ranksOf(pl)
	lo = make([]int, len(p.clusters))
	hi = make([]int, len(p.clusters))
	layers = make([]map[int]bool, len(p.clusters))
	for ci := range layers {
		layers[ci], lo[ci], hi[ci] = map[int]bool{}, 1<<30, -1
	}
	connected := p.connected()
	for i, n := range p.nodes {
		if n.kind != realNode || !connected[i] || r.of[i] < 0 {
			continue
		}
		for _, ci := range p.clusterPath(n.cluster) {
			layers[ci][r.of[i]] = true
			lo[ci], hi[ci] = min(lo[ci], r.of[i]), max(hi[ci], r.of[i])
		}
	}
	return lo, hi, layers
}

// staircase reports whether the top groups a and b (a feeding b) lie partly side by side: b
// begins after a begins but before a ends.
func staircase(lo, hi []int, a, b int) bool {
	return a >= 0 && b >= 0 && a != b && hi[a] >= 0 && hi[b] >= 0 && hi[a] >= lo[b] && lo[a] < lo[b]
}

// topArcs are the pairs of top groups an edge of p leads from and to, in the edges' drawn
// direction (a labelled edge counted whole, from its tail).
func (p *plan) topArcs() [][2]int {
	var out [][2]int
	for _, e := range p.edges {
		if !p.liveEdge(e) || e.part == 1 {
			continue
		}
		u, v := p.edgeEnds(e) // a labelled edge whole, from its tail
		if e.back {
			u, v = v, u
		}
		out = append(out, [2]int{p.item(u, -1) - len(p.nodes), p.item(v, -1) - len(p.nodes)})
	}
	return out
}

// stretch counts, in the layout pl of p, the layers inside a group's span that hold none of
// its members (a group stretched around empty space, or around other boxes), and the pairs of
// top groups laid out as a staircase.
func (p *plan) stretch(pl placed) int {
	if len(p.clusters) == 0 {
		return 0
	}
	lo, hi, layers := groupLayers(p, pl)
	n := 0
	for ci, c := range p.clusters {
		if hi[ci] >= 0 && c.id != "" { // a fold's bands are no one's groups
			n += hi[ci] - lo[ci] + 1 - len(layers[ci])
		}
	}
	seen := map[[2]int]bool{}
	for _, a := range p.topArcs() {
		if a[0] < 0 || a[1] < 0 || p.clusters[a[0]].id == "" || p.clusters[a[1]].id == "" {
			continue
		}
		if !seen[a] && staircase(lo, hi, a[0], a[1]) {
			seen[a] = true
			n++
		}
	}
	return n
}

// mends says what ranking groups whole (the plan q, after rankGroups) would mend in the plain
// layout c: stretched, a group whose members dot spread over more layers than they need; a
// staircase, two top groups joined by an edge that dot put partly side by side, each beginning
// before the other ends.
func mends(c candidate, q *plan) (stretched, staircased bool) {
	lo, hi, layers := groupLayers(c.p, c.pl)
	for ci := range c.p.clusters {
		stretched = stretched || ci < len(q.wholeLayers) && len(layers[ci]) > q.wholeLayers[ci]
	}
	for _, a := range q.topArcs() {
		staircased = staircased || staircase(lo, hi, a[0], a[1])
	}
	return stretched, staircased
}
