package layout

import (
	"math"
	"sort"
)

// Packing: parts of a graph that no edge joins — separate systems, a row of node groups each on
// its own, loose boxes — are placed by dot side by side across its layers, so the picture is as
// long as their sum and as deep as the deepest, with strips and holes around the small ones. After
// layout, every container that no edge leaves (the picture, and a group no edge crosses inside
// such a container) has its parts packed: each part (the pieces of the container that edges join,
// a piece being a node or a group right inside it) is moved whole, routes included, so nothing in
// it changes relative to itself; the parts go in input order, each as early along the layers and
// then across them as it fits without coming before the one given before it (bottom-left, row
// after row), within the breadth that makes the whole picture read best. It costs no dot run,
// and the packed picture is measured and chosen like any other (fit). Parts inside a group an
// edge leaves stay: the arrows into the group fix where its box is.

// preferPack lowers a packed picture a little: packing must gain more than a trace of density to
// move the parts dot placed.
const preferPack = 0.99

// packer moves the parts of one laid-out plan; pl is its own copy.
type packer struct {
	p    *plan
	pl   placed
	f    Fit
	live []bool // per plan edge: drawn (not gone, both ends laid out)
	open []bool // per plan cluster: some edge leaves it
	// under[i] is, per plan node, its clusters innermost first.
	under [][]int
	// choice is, per group, which of its breadths to pack in (an index from the broadest); a
	// group without one takes the breadth that fits the screen best on its own.
	choice map[int]int
	limits map[int]int // per group packed: how many breadths it has
	w, h   float64     // the picture before packing
	worth  float64     // of the packed picture: its value, lowered when it gains nothing
	moved  bool
}

// packed is c with the unconnected parts of its closed containers packed; ok is false when
// there is nothing to pack (no closed container has two parts).
func (c candidate) packed(f Fit) (candidate, bool) {
	base := &packer{p: c.p, pl: c.pl, f: f}
	base.live = make([]bool, len(c.p.edges))
	base.open = make([]bool, len(c.p.clusters))
	base.under = make([][]int, len(c.p.nodes))
	for i, n := range c.p.nodes {
		if c.pl.laid[i] {
			base.under[i] = c.p.clusterPath(n.cluster)
		}
	}
	for j, e := range c.p.edges {
		if e.gone || !c.pl.laid[e.from] || !c.pl.laid[e.to] || e.from == e.to {
			continue
		}
		base.live[j] = true
		cu, cv := c.p.nodes[e.from].cluster, c.p.nodes[e.to].cluster
		common := c.p.commonCluster(cu, cv)
		for _, c0 := range []int{cu, cv} {
			for x := c0; x != common; x = c.p.clusters[x].parent {
				base.open[x] = true
			}
		}
	}
	// Innermost containers first, so a group packed inside is moved whole by its container.
	var order []int
	for ci := range c.p.clusters {
		if base.closed(ci) {
			order = append(order, ci)
		}
	}
	c.p.innermostFirst(order)
	order = append(order, -1)
	run := func(choice map[int]int) *packer {
		k := *base
		k.pl = c.pl.copy()
		k.choice, k.limits, k.w, k.h = choice, map[int]int{}, c.w, c.h
		for _, x := range order {
			k.moved = k.pack(x) || k.moved
		}
		b := k.pl.bounds()
		k.worth = k.value(b.Width, b.Height)
		return &k
	}
	// Each group's breadth is chosen for the picture as a whole: one group at a time, innermost
	// first, the breadth that makes the packed picture read best with the others kept.
	choice := map[int]int{}
	best := run(choice)
	for _, x := range order[:len(order)-1] {
		for l := range best.limits[x] {
			try := map[int]int{}
			for k, v := range choice {
				try[k] = v
			}
			try[x] = l
			if k := run(try); k.worth > best.worth+1e-9 {
				best, choice = k, try
			}
		}
	}
	b := best.pl.bounds()
	if !best.moved || !best.gains(b.Width, b.Height) {
		return candidate{}, false
	}
	q := *c.p
	q.arrangement = join(c.p.arrangement, "unconnected parts packed")
	out := candidate{p: &q, pl: best.pl, prefer: c.prefer * preferPack, w: b.Width, h: b.Height}
	out.d = measureDefects(q.g, q.result(out.pl))
	out.d.stretch = c.d.stretch // parts move whole: their groups keep their layers
	return out, true
}

// closed reports whether cluster ci and every cluster around it has no edge leaving it: its size
// may change, since its container moves it whole.
func (k *packer) closed(ci int) bool {
	for c := ci; c >= 0; c = k.p.clusters[c].parent {
		if k.open[c] || k.p.clusters[c].id == "" {
			return false // a fold's bands keep their places in the snake
		}
	}
	return true
}

// piece is the child of container x (-1 for the picture) that holds plan node i: the node itself
// (i) or a cluster (len(nodes)+cluster); -1 when i is not inside x.
func (k *packer) piece(i, x int) int {
	path := k.under[i]
	if x < 0 {
		if len(path) == 0 {
			return i
		}
		return len(k.p.nodes) + path[len(path)-1]
	}
	for d, c := range path {
		if c == x {
			if d == 0 {
				return i
			}
			return len(k.p.nodes) + path[d-1]
		}
	}
	return -1
}

// part is a set of pieces of one container that edges join, moved as one.
type part struct {
	nodes    []int // plan nodes inside it
	clusters []int // plan clusters inside it
	edges    []int // plan edges inside it
	box      Rect  // around everything it draws, routes included
	first    int   // its first node given (input order)
}

// pack packs the parts of container x; it reports whether any moved.
func (k *packer) pack(x int) bool {
	root := map[int]int{}
	var find func(a int) int
	find = func(a int) int {
		if r, ok := root[a]; ok && r != a {
			r = find(r)
			root[a] = r
			return r
		}
		root[a] = a
		return a
	}
	for i := range k.p.nodes {
		if k.pl.laid[i] {
			if pc := k.piece(i, x); pc >= 0 {
				find(pc)
			}
		}
	}
	for j, e := range k.p.edges {
		if !k.live[j] {
			continue
		}
		a, b := k.piece(e.from, x), k.piece(e.to, x)
		if a >= 0 && b >= 0 {
			root[find(a)] = find(b)
		}
	}
	byRoot := map[int]*part{}
	var parts []*part
	for i := range k.p.nodes {
		pc := -1
		if k.pl.laid[i] {
			pc = k.piece(i, x)
		}
		if pc < 0 {
			continue
		}
		r := find(pc)
		pt := byRoot[r]
		if pt == nil {
			pt = &part{first: i}
			byRoot[r] = pt
			parts = append(parts, pt)
		}
		pt.nodes = append(pt.nodes, i)
	}
	if len(parts) < 2 {
		return false
	}
	partOf := map[int]*part{}
	for _, pt := range parts {
		for _, i := range pt.nodes {
			partOf[i] = pt
		}
	}
	for ci := range k.p.clusters {
		if ci == x || !k.p.within(ci, x) && x >= 0 {
			continue
		}
		for i, path := range k.under {
			if pt := partOf[i]; pt != nil && contains(path, ci) {
				pt.clusters = append(pt.clusters, ci)
				break
			}
		}
	}
	for j, e := range k.p.edges {
		if k.live[j] {
			if pt := partOf[e.from]; pt != nil {
				pt.edges = append(pt.edges, j)
			}
		}
	}
	for _, pt := range parts {
		pt.box = k.extent(pt)
	}
	sort.SliceStable(parts, func(a, b int) bool { return parts[a].first < parts[b].first })

	// The container's content and padding before, kept around the packed parts.
	before := k.content(parts)
	var pad [4]float64 // left, top, right, bottom
	if x >= 0 {
		box := k.pl.clusters[x]
		pad = [4]float64{before.X - box.X, before.Y - box.Y, box.X + box.Width - before.X - before.Width, box.Y + box.Height - before.Y - before.Height}
	}
	origin := union(boxes(parts))

	// Breadths to try: each run of the first parts side by side, the widest part alone at least;
	// and for each count, the broadest run of that many parts in a row, so that parts of about
	// one size make a grid (twelve machines in rows of four, not 4, 4, 3 and 1 where the last
	// ones' names are a digit longer).
	gap := k.p.g.NodeSep
	across := make([]float64, len(parts))
	var widest float64
	for i, pt := range parts {
		_, across[i] = k.p.across(pt.box)
		widest = math.Max(widest, across[i])
	}
	var limits []float64
	run := -gap
	for n, a := range across {
		run += a + gap
		limits = append(limits, run)
		broadest := 0.0
		for i := 0; i+n < len(across); i++ {
			w := float64(n) * gap
			for _, b := range across[i : i+n+1] {
				w += b
			}
			broadest = math.Max(broadest, w)
		}
		limits = append(limits, broadest)
	}
	// Broadest first (of equals, the broadest wins: closest to dot's own), none narrower than
	// the widest part.
	sort.Sort(sort.Reverse(sort.Float64Slice(limits)))
	kept := limits[:0]
	for _, l := range limits {
		if l >= widest-1e-9 && (len(kept) == 0 || l < kept[len(kept)-1]-1e-9) {
			kept = append(kept, l)
		}
	}
	limits = kept
	if len(limits) == 0 {
		limits = []float64{widest}
	}
	k.limits[x] = len(limits)
	var best []Point
	bestValue := math.Inf(-1)
	for l, limit := range limits {
		if c, ok := k.choice[x]; ok && x >= 0 && l != min(c, len(limits)-1) {
			continue
		}
		at, w, h := k.arrange(parts, limit, gap)
		w, h = w+pad[0]+pad[2], h+pad[1]+pad[3]
		var v float64
		if x < 0 {
			v = k.value(w, h)
		} else {
			v = math.Min(screenW/w, screenH/h)
		}
		if v > bestValue+1e-9 {
			best, bestValue = at, v
		}
	}

	moved := false
	for i, pt := range parts {
		dx, dy := origin.X+best[i].X-pt.box.X, origin.Y+best[i].Y-pt.box.Y
		if math.Abs(dx) > 0.5 || math.Abs(dy) > 0.5 {
			moved = true
			k.move(pt, dx, dy)
		}
	}
	if x >= 0 {
		after := k.content(parts)
		k.pl.clusters[x] = Rect{after.X - pad[0], after.Y - pad[1], after.Width + pad[0] + pad[2], after.Height + pad[1] + pad[3]}
	}
	return moved
}

// arrange places the parts, in order, bottom-left within limit across the layers: each as early
// along the layers as it fits below those already placed, then as early across, never before the
// part given before it (so they read in the order given, row after row). It returns each
// part's offset (x, y) from the arrangement's corner and the arrangement's size.
func (k *packer) arrange(parts []*part, limit, gap float64) ([]Point, float64, float64) {
	type slot struct{ a, l, wa, wl float64 }
	var placed []slot
	at := make([]Point, len(parts))
	var across, along float64
	for i, pt := range parts {
		_, wa := k.p.across(pt.box)
		_, wl := k.p.along(pt.box)
		starts := []float64{0}
		for _, s := range placed {
			starts = append(starts, s.a+s.wa+gap)
		}
		bestA, bestL := 0.0, math.Inf(1)
		for _, a := range starts {
			if a > 0 && a+wa > limit+1e-9 {
				continue
			}
			l := 0.0
			for _, s := range placed {
				if a < s.a+s.wa+gap-1e-9 && s.a < a+wa+gap-1e-9 {
					l = math.Max(l, s.l+s.wl+gap)
				}
			}
			// Never before the part given before it, reading along the layers, then across.
			if n := len(placed); n > 0 {
				l = math.Max(l, placed[n-1].l)
				if math.Abs(l-placed[n-1].l) <= 1e-9 && a < placed[n-1].a {
					continue
				}
			}
			if l < bestL-1e-9 || math.Abs(l-bestL) <= 1e-9 && a < bestA {
				bestA, bestL = a, l
			}
		}
		if math.IsInf(bestL, 1) { // a new row below all of them
			bestA, bestL = 0, 0
			for _, s := range placed {
				bestL = math.Max(bestL, s.l+s.wl+gap)
			}
		}
		placed = append(placed, slot{bestA, bestL, wa, wl})
		across, along = math.Max(across, bestA+wa), math.Max(along, bestL+wl)
		if k.p.dir == LeftRight {
			at[i] = Point{bestL, bestA}
		} else {
			at[i] = Point{bestA, bestL}
		}
	}
	if k.p.dir == LeftRight {
		return at, along, across
	}
	return at, across, along
}

// value is what choose would make of the packed picture at w×h: its legibility times its
// density's weight (the defects are those of the parts, which do not change); lowered below any
// other when it gains nothing.
func (k *packer) value(w, h float64) float64 {
	legible := 1.0
	if k.f.MaxAspect > 0 {
		legible = math.Min(k.f.score(w, h), fullSize)
	}
	var a float64
	for _, n := range k.p.g.Nodes {
		a += n.Width * n.Height
	}
	v := legible * math.Pow(math.Min(a/(w*h), 1), densityWeight)
	if !k.gains(w, h) {
		v -= 10
	}
	return v
}

// gains reports whether a packed picture w×h is worth having: shorter on its longer side than
// before, or no longer either way and smaller. A packing that does neither only adds a strip
// where dot had put a small part into a hole of another (it goes beside it instead).
func (k *packer) gains(w, h float64) bool {
	if math.Max(w, h) < math.Max(k.w, k.h)-1 {
		return true
	}
	return w <= k.w+1 && h <= k.h+1 && w*h < 0.98*k.w*k.h
}

// extent is the box around what a part draws: its nodes (a node with a loop with the loop's room
// beside it), clusters and routes.
func (k *packer) extent(pt *part) Rect {
	var rs []Rect
	for _, i := range pt.nodes {
		rs = append(rs, k.pl.nodes[i])
	}
	for _, c := range pt.clusters {
		rs = append(rs, k.pl.clusters[c])
	}
	for _, j := range pt.edges {
		for _, q := range k.pl.splines[j] {
			rs = append(rs, Rect{q.X, q.Y, 0, 0})
		}
	}
	for _, e := range k.p.g.Edges {
		if e.From != e.To {
			continue
		}
		u := k.p.realIndex(e.From)
		if contains(pt.nodes, u) {
			r := k.pl.nodes[u]
			r.Width += LoopReach(e.LabelWidth) + e.LabelWidth/2 + labelPad
			rs = append(rs, r)
		}
	}
	return union(rs)
}

// content is the box around the parts' nodes and clusters (routes left out: a group's box is
// drawn around its members).
func (k *packer) content(parts []*part) Rect {
	var rs []Rect
	for _, pt := range parts {
		for _, i := range pt.nodes {
			rs = append(rs, k.pl.nodes[i])
		}
		for _, c := range pt.clusters {
			rs = append(rs, k.pl.clusters[c])
		}
	}
	return union(rs)
}

// move shifts everything of a part by dx, dy.
func (k *packer) move(pt *part, dx, dy float64) {
	for _, i := range pt.nodes {
		k.pl.nodes[i].X += dx
		k.pl.nodes[i].Y += dy
	}
	for _, c := range pt.clusters {
		k.pl.clusters[c].X += dx
		k.pl.clusters[c].Y += dy
	}
	for _, j := range pt.edges {
		for q := range k.pl.splines[j] {
			k.pl.splines[j][q].X += dx
			k.pl.splines[j][q].Y += dy
		}
	}
}

// copy is pl with its own slices, to be moved without moving pl.
func (pl placed) copy() placed {
	out := placed{nodes: append([]Rect(nil), pl.nodes...), clusters: append([]Rect(nil), pl.clusters...),
		laid: append([]bool(nil), pl.laid...), splines: make([][]Point, len(pl.splines))}
	for j, s := range pl.splines {
		out.splines[j] = append([]Point(nil), s...)
	}
	return out
}

func boxes(parts []*part) []Rect {
	out := make([]Rect, len(parts))
	for i, pt := range parts {
		out[i] = pt.box
	}
	return out
}

// union is the box around rs.
func union(rs []Rect) Rect {
	if len(rs) == 0 {
		return Rect{}
	}
	x0, y0 := math.Inf(1), math.Inf(1)
	x1, y1 := math.Inf(-1), math.Inf(-1)
	for _, r := range rs {
		x0, y0 = math.Min(x0, r.X), math.Min(y0, r.Y)
		x1, y1 = math.Max(x1, r.X+r.Width), math.Max(y1, r.Y+r.Height)
	}
	return Rect{x0, y0, x1 - x0, y1 - y0}
}

func contains(s []int, v int) bool {
	for _, x := range s {
		if x == v {
			return true
		}
	}
	return false
}
