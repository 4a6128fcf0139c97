package layout

import (
	"fmt"
	"math"
	"sort"
)

// Folding: a graph with many more layers than it is wide (a pipeline, a long flow) is cut into
// bands of consecutive layers, laid side by side as a snake — left to right, then right to left
// below it, and so on for a left-right graph; columns for a top-down one — so every edge stays
// short and the picture keeps a readable shape. Cuts never go through a group, except inside one
// that alone fills the layers it spans (foldGroup): its bands are then clusters inside it, so a
// pipeline's steps in one box wrap within that box. The bands are
// clusters of one dot run, so dot still orders, places and routes everything: an edge from the
// end of one band to the start of the next is a flat edge between neighbouring clusters.

// bandMargin is the margin of a band's cluster: half the extra gap between bands.
const bandMargin = 16.0

// axes gives a rectangle's extent along the layers (rank axis) and across them (order axis).
func (p *plan) along(r Rect) (start, size float64) {
	if p.dir == LeftRight {
		return r.X, r.Width
	}
	return r.Y, r.Height
}

func (p *plan) across(r Rect) (start, size float64) {
	if p.dir == LeftRight {
		return r.Y, r.Height
	}
	return r.X, r.Width
}

// ranks groups the laid-out real nodes and blocks into layers by their centres along the rank
// axis.
type ranks struct {
	of     []int     // per plan node: its layer, -1 for labels, gates and nodes not laid out
	lo, hi []float64 // per layer: its extent along the rank axis
	// aLo, aHi per layer: its extent across (the order axis)
	aLo, aHi []float64
}

func (p *plan) ranksOf(pl placed) ranks {
	type c struct {
		i   int
		mid float64
	}
	var cs []c
	for i, n := range p.nodes {
		if pl.laid[i] && (n.kind == realNode || n.kind == blockNode) {
			s, l := p.along(pl.nodes[i])
			cs = append(cs, c{i, s + l/2})
		}
	}
	sort.Slice(cs, func(a, b int) bool { return cs[a].mid < cs[b].mid })
	r := ranks{of: make([]int, len(p.nodes))}
	for i := range r.of {
		r.of[i] = -1
	}
	last := math.Inf(-1)
	for _, x := range cs {
		if x.mid-last > 1 {
			r.lo, r.hi = append(r.lo, math.Inf(1)), append(r.hi, math.Inf(-1))
			r.aLo, r.aHi = append(r.aLo, math.Inf(1)), append(r.aHi, math.Inf(-1))
			last = x.mid
		}
		k := len(r.lo) - 1
		r.of[x.i] = k
		s, l := p.along(pl.nodes[x.i])
		a, w := p.across(pl.nodes[x.i])
		r.lo[k], r.hi[k] = math.Min(r.lo[k], s), math.Max(r.hi[k], s+l)
		r.aLo[k], r.aHi[k] = math.Min(r.aLo[k], a), math.Max(r.aHi[k], a+w)
	}
	return r
}

// cuts chooses where to cut the layers into n bands: band starts (layer indexes), never through a
// group, with the longest band as short as it can be; nil when there is no such cut. With in a
// group of the caller's (foldGroup), the cuts go inside it instead, through no group within it.
func (p *plan) cuts(r ranks, n, in int) []int {
	layers := len(r.lo)
	if n < 2 || layers < n {
		return nil
	}
	// A cut before layer k is allowed unless a group has members on both sides (in and the
	// groups holding it aside, which the cuts go inside).
	allowed := make([]bool, layers)
	for k := range allowed {
		allowed[k] = k > 0
	}
	for ci, c := range p.clusters {
		if c.id == "" {
			continue
		}
		first, last := p.spanOf(r, ci)
		if in >= 0 && p.within(in, ci) {
			if ci == in {
				for k := range allowed {
					allowed[k] = allowed[k] && k > first && k <= last
				}
			}
			continue
		}
		for k := first + 1; k <= last; k++ {
			allowed[k] = false
		}
	}
	length := func(s, e int) float64 { return r.hi[e] - r.lo[s] }
	// best[b][e]: the shortest longest band when layers 0..e make b+1 bands; from[b][e] the start
	// of the last of them.
	inf := math.Inf(1)
	best := make([][]float64, n)
	from := make([][]int, n)
	for b := range best {
		best[b], from[b] = make([]float64, layers), make([]int, layers)
		for e := range best[b] {
			best[b][e] = inf
		}
	}
	for e := 0; e < layers; e++ {
		best[0][e] = length(0, e)
	}
	for b := 1; b < n; b++ {
		for e := b; e < layers; e++ {
			for s := b; s <= e; s++ {
				if !allowed[s] || best[b-1][s-1] == inf {
					continue
				}
				if v := math.Max(best[b-1][s-1], length(s, e)); v < best[b][e] {
					best[b][e], from[b][e] = v, s
				}
			}
		}
	}
	if best[n-1][layers-1] == inf {
		return nil
	}
	starts := make([]int, n)
	e := layers - 1
	for b := n - 1; b > 0; b-- {
		starts[b] = from[b][e]
		e = starts[b] - 1
	}
	return starts
}

// spanOf is the first and last layer holding a member of cluster ci (last < first for none).
func (p *plan) spanOf(r ranks, ci int) (first, last int) {
	first, last = len(r.lo), -1
	for i, nd := range p.nodes {
		if r.of[i] >= 0 && p.within(nd.cluster, ci) {
			first, last = min(first, r.of[i]), max(last, r.of[i])
		}
	}
	return first, last
}

// foldGroup is the caller's group a fold may cut inside, -1 for none: one whose members alone
// fill the layers it spans, at least four and three fifths of all, so that bands inside it hold
// every node of those layers; of several, the longest along the layers, and of equals the innermost. The
// nodes before and after its layers keep their places, at the start of the first band and the
// end of the last.
func (p *plan) foldGroup(r ranks) int {
	best, bestLen := -1, 0.0
	for ci, c := range p.clusters {
		if c.id == "" {
			continue
		}
		// A long chain, most of the flow: a short group wrapped inside would read as a knot.
		first, last := p.spanOf(r, ci)
		if n := last - first + 1; n < 4 || float64(n) < 0.6*float64(len(r.lo)) {
			continue
		}
		owns := true
		for i, nd := range p.nodes {
			if k := r.of[i]; k >= first && k <= last && !p.within(nd.cluster, ci) {
				owns = false
				break
			}
		}
		if !owns {
			continue
		}
		if l := r.hi[last] - r.lo[first]; l > bestLen+0.5 || l > bestLen-0.5 && best >= 0 && p.within(ci, best) {
			best, bestLen = ci, l
		}
	}
	return best
}

// foldEstimate is the size of the picture folded at starts, from the plain layout: the longest
// band along the layers, the bands' breadths side by side across them.
func (p *plan) foldEstimate(r ranks, starts []int) (width, height float64) {
	var along, across float64
	for b, s := range starts {
		e := len(r.lo) - 1
		if b+1 < len(starts) {
			e = starts[b+1] - 1
		}
		along = math.Max(along, r.hi[e]-r.lo[s])
		lo, hi := math.Inf(1), math.Inf(-1)
		for k := s; k <= e; k++ {
			lo, hi = math.Min(lo, r.aLo[k]), math.Max(hi, r.aHi[k])
		}
		across += hi - lo
	}
	across += float64(len(starts)-1) * (p.g.NodeSep + 2*p.wrapMargin(r, starts))
	if p.dir == LeftRight {
		return along, across
	}
	return across, along
}

// wrapMargin is the margin of the bands' clusters: bandMargin, or more where a labelled edge
// goes flat from one band to the next, so the gap between them holds its label with the arrow
// showing on both sides.
func (p *plan) wrapMargin(r ranks, starts []int) float64 {
	m := bandMargin
	bandOf := func(k int) int { return bandAt(starts, k) }
	for i, e := range p.g.Edges {
		if p.label[i] < 0 {
			continue
		}
		ku, kv := r.of[p.blockOf(p.realIndex(e.From))], r.of[p.blockOf(p.realIndex(e.To))]
		if ku < 0 || kv < 0 || bandOf(ku) == bandOf(kv) {
			continue
		}
		l := p.nodes[p.label[i]]
		_, across := p.across(Rect{0, 0, l.w, l.h})
		m = math.Max(m, (across+2*wrapArrow-p.g.NodeSep)/2)
	}
	return m
}

// wrapArrow is how much of an arrow shows on each side of a label between two bands.
const wrapArrow = 40.0

// bandsOf is, per layer, the band of a fold at starts it is in.
func bandsOf(layers int, starts []int) []int {
	bandOf := make([]int, layers)
	for b, s := range starts {
		e := layers - 1
		if b+1 < len(starts) {
			e = starts[b+1] - 1
		}
		for k := s; k <= e; k++ {
			bandOf[k] = b
		}
	}
	return bandOf
}

// foldsAsLines reports whether a fold at starts reads as lines of text by itself: the flow goes
// on from each band to the next by a single arrow, and no group inside in stands in the way of
// its way back.
func (p *plan) foldsAsLines(r ranks, starts []int, in int) bool {
	return !p.groupedIn(in) && p.crossesOnce(r, bandsOf(len(r.lo), starts), len(starts))
}

// fold is the plan cut into bands at starts. As lines, the bands read like lines of text: every
// band runs forwards from the same side, and the arrows from one band to the next return across
// the gap to its start. Otherwise they are laid out as a snake, so that several arrows across a
// cut need not all make that long way back: band b's layers run forwards for even b and
// backwards for odd b, each band starting level with the end of the one before.
//
// With in a group of the caller's (foldGroup), the bands are clusters inside it and hold its
// members; nodes outside it keep their clusters and their places along the bands.
func (p *plan) fold(r ranks, starts []int, in int, lines bool) *plan {
	q := p.clone()
	layers := len(r.lo)
	bandOf := bandsOf(layers, starts)
	pos := make([]int, layers)
	cur, step := 0, 1
	for b, s := range starts {
		e := layers - 1
		if b+1 < len(starts) {
			e = starts[b+1] - 1
		}
		switch {
		case b > 0 && lines:
			cur = 0
		case b > 0:
			step = -step
		}
		for k := s; k <= e; k++ {
			if k > s || b == 0 && k > 0 {
				cur += step
			}
			pos[k] = cur
		}
	}
	// Bands are clusters; dot may order them either way round or out of order (orientBands).
	q.bands = len(starts)
	q.looseFirst = in >= 0
	q.margin = p.wrapMargin(r, starts)
	bandCluster := make([]int, len(starts))
	for b := range starts {
		bandCluster[b] = len(q.clusters)
		q.clusters = append(q.clusters, pcluster{parent: in})
		q.band = append(q.band, b)
	}
	nodeBand := make([]int, len(q.nodes))
	nodePos := make([]int, len(q.nodes))
	for i := range q.nodes {
		nodeBand[i], nodePos[i] = -1, 0
		if k := r.of[i]; k >= 0 {
			nodeBand[i], nodePos[i] = bandOf[k], pos[k]
			if in >= 0 && !p.within(q.nodes[i].cluster, in) {
				nodeBand[i] = -1 // outside the folded group: placed along, in no band
			}
		}
	}
	// The caller's top clusters (those right inside the folded group) go into the band of their
	// members.
	for ci := range p.clusters {
		if p.clusters[ci].parent != in || ci == in || p.clusters[ci].id == "" {
			continue
		}
		for i, n := range p.nodes {
			if nodeBand[i] >= 0 && p.within(n.cluster, ci) {
				q.clusters[ci].parent = bandCluster[nodeBand[i]]
				break
			}
		}
	}
	for i := range q.nodes {
		n := &q.nodes[i]
		if n.gone {
			continue
		}
		switch n.kind {
		case realNode, blockNode:
			if n.cluster == in && nodeBand[i] >= 0 {
				n.cluster = bandCluster[nodeBand[i]]
			}
		case labelNode:
			e := q.g.Edges[n.ref]
			u, v := q.realIndex(e.From), q.realIndex(e.To)
			u, v = q.blockOf(u), q.blockOf(v)
			switch {
			case nodeBand[u] == nodeBand[v]:
				nodeBand[i] = nodeBand[u]
				if n.cluster == in && nodeBand[u] >= 0 {
					n.cluster = bandCluster[nodeBand[u]]
				}
			case nodeBand[u] < 0 || nodeBand[v] < 0:
				// Into or out of the folded group: ranked as before, between neighbouring layers.
			default:
				// Between two bands dot would put a label node beside the bands, far from both:
				// the edge goes whole and its label half-way along it (in the gap between
				// neighbouring bands).
				q.wholeEdge(n.ref, false)
			}
		}
	}
	// Gates: kept inside a band, dropped between bands (the bands order those groups already).
	for i, n := range q.nodes {
		if n.kind != gateNode {
			continue
		}
		bands := map[int]bool{}
		for _, e := range q.edges {
			if e.from == i {
				bands[nodeBand[q.blockOf(e.to)]] = true
			} else if e.to == i {
				bands[nodeBand[q.blockOf(e.from)]] = true
			}
		}
		if len(bands) != 1 {
			q.nodes[i].gone = true
			continue
		}
		for b := range bands {
			nodeBand[i] = b
			if n.cluster == in && b >= 0 {
				q.nodes[i].cluster = bandCluster[b]
			}
		}
	}
	// Edges run forwards along the new layers: those of odd bands are written backwards, and one
	// between two bands at the same place is flat.
	for k := range q.edges {
		e := &q.edges[k]
		if e.gone || q.nodes[e.from].gone || q.nodes[e.to].gone {
			continue
		}
		u, v := q.edgeEnds(*e)
		if q.nodes[e.from].kind == gateNode || q.nodes[e.to].kind == gateNode {
			e.back = nodeBand[q.gateOther(e.from, e.to)]%2 == 1
			continue
		}
		u, v = q.blockOf(u), q.blockOf(v)
		switch {
		case nodePos[u] < nodePos[v]:
			e.back = false
		case nodePos[u] > nodePos[v]:
			e.back = true
		default:
			e.minlen = 0
			e.back = nodeBand[u] > nodeBand[v]
		}
	}
	byPos := map[int][]int{}
	for i, n := range q.nodes {
		if !n.gone && (n.kind == realNode || n.kind == blockNode) && r.of[i] >= 0 {
			byPos[nodePos[i]] = append(byPos[nodePos[i]], i)
		}
	}
	for _, k := range sortedKeys(keysOf(byPos)) {
		if len(byPos[k]) > 1 {
			q.same = append(q.same, byPos[k])
		}
	}
	q.nodeBand = nodeBand
	q.rigid = nil // the ranks along the bands are fixed above
	rows := "columns"
	if q.dir == LeftRight {
		rows = "rows"
	}
	q.arrangement = fmt.Sprintf("wrapped into %d %s", len(starts), rows)
	if in >= 0 {
		q.arrangement += fmt.Sprintf(" inside group %q", p.clusters[in].id)
	}
	q.arrangement = join(p.arrangement, q.arrangement)
	return q
}

// groupedIn reports whether the plan has groups of the caller's inside in (anywhere for in -1):
// their boxes would stand in the way of an arrow going back across a band.
func (p *plan) groupedIn(in int) bool {
	for ci, c := range p.clusters {
		if c.id != "" && ci != in && (in < 0 || p.within(ci, in)) {
			return true
		}
	}
	return false
}

// crossesOnce reports whether exactly one of the caller's edges joins each band to the next and no
// edge joins bands further apart.
func (p *plan) crossesOnce(r ranks, bandOf []int, bands int) bool {
	across := make([]int, bands)
	for _, e := range p.g.Edges {
		u, v := p.blockOf(p.realIndex(e.From)), p.blockOf(p.realIndex(e.To))
		ku, kv := r.of[u], r.of[v]
		if ku < 0 || kv < 0 {
			return false
		}
		bu, bv := bandOf[ku], bandOf[kv]
		if bu > bv {
			bu, bv = bv, bu
		}
		switch {
		case bv == bu:
		case bv == bu+1:
			across[bu]++
		default:
			return false
		}
	}
	for b := 0; b+1 < bands; b++ {
		if across[b] != 1 {
			return false
		}
	}
	return true
}

// gateOther is the end of a gate's edge that is not the gate (its block for a stacked leaf).
func (q *plan) gateOther(from, to int) int {
	if q.nodes[from].kind == gateNode {
		return q.blockOf(to)
	}
	return q.blockOf(from)
}

func keysOf(m map[int][]int) map[int]bool {
	out := make(map[int]bool, len(m))
	for k := range m {
		out[k] = true
	}
	return out
}

// orientBands checks that a folded layout has its bands in order across the layers, first band
// first (left, or top), and turns the picture over across the layers when dot put them the other
// way round. It reports false when the bands are not in order either way.
func (p *plan) orientBands(pl *placed) bool {
	if p.bands < 2 {
		return true
	}
	sum := make([]float64, p.bands)
	cnt := make([]float64, p.bands)
	for i, n := range p.nodes {
		if b := p.nodeBand[i]; b >= 0 && pl.laid[i] && n.kind == realNode {
			a, w := p.across(pl.nodes[i])
			sum[b] += a + w/2
			cnt[b]++
		}
	}
	up, down := true, true
	for b := 1; b < p.bands; b++ {
		if cnt[b] == 0 || cnt[b-1] == 0 {
			continue
		}
		m0, m1 := sum[b-1]/cnt[b-1], sum[b]/cnt[b]
		up = up && m1 > m0
		down = down && m1 < m0
	}
	switch {
	case up:
		return true
	case down && (p.dir == TopDown || !p.titled()):
		pl.mirrorAcross(p) // turned over top for bottom, a group's title strip would be at its foot
		return true
	}
	return false
}

// titled reports whether the plan has a cluster with a title strip.
func (p *plan) titled() bool {
	for _, c := range p.clusters {
		if c.id != "" && c.title > 0 {
			return true
		}
	}
	return false
}

// mirrorAcross turns a layout over across the layers (left for right in a top-down layout, top
// for bottom in a left-right one).
func (pl *placed) mirrorAcross(p *plan) {
	b := pl.bounds()
	lr := p.dir == LeftRight
	flip := func(r Rect) Rect {
		if lr {
			r.Y = b.Y + b.Height - (r.Y - b.Y) - r.Height
		} else {
			r.X = b.X + b.Width - (r.X - b.X) - r.Width
		}
		return r
	}
	for i := range pl.nodes {
		if pl.laid[i] {
			pl.nodes[i] = flip(pl.nodes[i])
		}
	}
	for i := range pl.clusters {
		pl.clusters[i] = flip(pl.clusters[i])
	}
	for _, s := range pl.splines {
		for k := range s {
			if lr {
				s[k].Y = b.Y + b.Height - (s[k].Y - b.Y)
			} else {
				s[k].X = b.X + b.Width - (s[k].X - b.X)
			}
		}
	}
}
