package layout

import (
	"context"
	"errors"
	"math"
	"sort"
)

// Fitting: dot's plain layout of a long chain, a wide org chart or a broad architecture is a strip
// that a chat client shrinks until its text cannot be read. When Graph.Fit is set and the plain
// layout exceeds it, the other arrangements are tried — the other direction (when Fit.Turn
// allows it), the leaves of wide fan-outs stacked, the layers wrapped into a snake — sized from
// the plain layout so that only the likeliest few are laid out, and the one that fits best wins.

// screenW×screenH is the preview a picture is scored in, a chat client's picture on a laptop:
// a score is the scale at which the picture fits in it, both ways.
const (
	screenW = 1600.0
	screenH = 1200.0
)

// Preferences between arrangements that fit: the plain layout first, then the plain layout
// spread out, stacked leaves, the other direction, and a snake (each edge between its bands but
// the wrapping one lowers a snake further). Arrangements of the other direction multiply in its
// preference.
const (
	preferSpread = 0.99
	preferStack  = 0.97
	preferWrap   = 0.96
	preferTurned = 0.95
	// preferWhole is the preference for groups ranked whole (groupranks.go) over dot's ranking.
	preferWhole = 0.98
	// wholeRuns is how many rearrangements of the plans with groups ranked whole are laid out.
	wholeRuns  = 2
	preferFold = 0.92
	// preferForwards favours a fold whose bands all read forwards over a snake of the same cuts.
	preferForwards = 1.03
	maxRuns        = 7  // dot runs for one layout
	bigGraph       = 25 // nodes from which only bigRuns are made: each run costs more
	bigRuns        = 4
)

type candidate struct {
	p      *plan
	pl     placed
	prefer float64
	w, h   float64
	d      defects // counted on the candidate's routes
	start  bool    // a plain layout (either direction), not a rearrangement of one
}

func (f Fit) fits(w, h float64) bool {
	if math.Max(w, h) <= f.Small {
		return true
	}
	return math.Max(w/h, h/w) <= f.MaxAspect+1e-9 && (f.MaxWidth <= 0 || w <= f.MaxWidth) &&
		(f.MaxHeight <= 0 || h <= f.MaxHeight)
}

// score is the scale at which a picture w×h fits the screen square, lowered steeply for an aspect
// beyond MaxAspect and for a width beyond MaxWidth or a height beyond MaxHeight.
func (f Fit) score(w, h float64) float64 {
	if w <= 0 || h <= 0 {
		return 0
	}
	s := math.Min(screenW/w, screenH/h)
	if a := math.Max(w/h, h/w); a > f.MaxAspect {
		s *= (f.MaxAspect / a) * (f.MaxAspect / a)
	}
	if f.MaxWidth > 0 && w > f.MaxWidth {
		s *= f.MaxWidth / w
	}
	if f.MaxHeight > 0 && h > f.MaxHeight {
		s *= f.MaxHeight / h
	}
	return s
}

func (c candidate) score(f Fit) float64 { return f.score(c.w, c.h) * c.prefer }

func runCandidate(ctx context.Context, p *plan, prefer float64) (candidate, bool, error) {
	pl, err := runDot(ctx, p)
	if err != nil {
		return candidate{}, false, err
	}
	if !p.orientBands(&pl) {
		// dot orders the bands' clusters by its own lights; declared the other way round they
		// often come out in order.
		q := p.clone()
		q.reverseBands = !p.reverseBands
		if pl, err = runDot(ctx, q); err != nil {
			return candidate{}, false, err
		}
		if !q.orientBands(&pl) {
			return candidate{}, false, nil
		}
		p = q
	}
	p.orderLoners(&pl)
	b := pl.bounds()
	d := measureDefects(p.g, p.result(pl))
	d.stretch = p.stretch(pl)
	return candidate{p: p, pl: pl, prefer: prefer, w: b.Width, h: b.Height, d: d}, true, nil
}

// fit lays g out, rearranged to g.Fit when the plain layout exceeds it. dot is run on the plain
// plan with its groups placed freely and with them ordered by their edges (when that differs),
// in the other direction too when Fit.Turn allows; then, when none of those fits the screen, the
// likeliest rearrangements of the best of them. Of everything laid out, the one with the fewest
// defects among those that read about as well as the best wins (choose).
func fit(ctx context.Context, g Graph) (Result, error) {
	f := g.Fit
	dirs := []Direction{g.Direction}
	if f.MaxAspect > 0 && f.Turn {
		other := TopDown
		if g.Direction == TopDown {
			other = LeftRight
		}
		dirs = append(dirs, other)
	}
	var cands, starts, whole []candidate
	addStart := func(p *plan, prefer float64) error {
		c, ok, err := runCandidate(ctx, p, prefer)
		if err != nil || !ok {
			return err
		}
		c.start = true
		cands = append(cands, c)
		starts = append(starts, c)
		return nil
	}
	for k, dir := range dirs {
		prefer, name := 1.0, ""
		if k > 0 {
			prefer, name = preferTurned, "turned "+string(dir)
		}
		for _, gated := range []bool{true, false} {
			p := newPlan(g, dir, gated)
			if gated && (!p.hasGates() || k > 0 && len(g.Nodes) >= bigGraph) {
				continue // a big graph is turned only as dot places its groups
			}
			p.arrangement = name
			c, ok, err := runCandidate(ctx, p, prefer)
			if err != nil {
				return Result{}, err
			}
			if !ok {
				continue
			}
			c.start = true
			if len(cands) == 0 && c.d.weight() == 0 && (f.MaxAspect <= 0 || f.fits(c.w, c.h)) {
				// Nothing to improve on but the room loose members and unconnected parts leave.
				fine := []candidate{c}
				if q := newPlan(g, dir, false); q.lonersAfter() {
					q.arrangement = name
					l, ok, err := runCandidate(ctx, q, prefer)
					if err != nil {
						return Result{}, err
					}
					if ok {
						fine = append(fine, l)
					}
				}
				return finish(choose(withPacked(fine, f), f)), nil
			}
			cands = append(cands, c)
			starts = append(starts, c)
		}
		if k == 0 || len(g.Nodes) < bigGraph {
			if p := newPlan(g, dir, false); p.rowSiblings() {
				p.arrangement = name
				if err := addStart(p, prefer); err != nil {
					return Result{}, err
				}
			}
		}
		if k == 0 || len(g.Nodes) < bigGraph {
			for _, p := range wholePlans(g, dir, cands, f) {
				// Measured beside the plain layouts; their own rearrangements are tried
				// apart from those of the plain layouts (below).
				p.arrangement = name
				c, ok, err := runCandidate(ctx, p, prefer*preferWhole)
				if err != nil && ctx.Err() != nil {
					return Result{}, err
				}
				if err == nil && ok {
					c.start = true
					cands = append(cands, c)
					whole = append(whole, c)
				}
			}
		}
		if k == 0 && len(g.Nodes) < bigGraph {
			if p := newPlan(g, dir, false); p.lonersAfter() {
				p.arrangement = name
				if err := addStart(p, prefer); err != nil {
					return Result{}, err
				}
			}
			if p := newPlan(g, dir, false); p.depthFirst() {
				p.arrangement = name
				if err := addStart(p, prefer); err != nil {
					return Result{}, err
				}
			}
		}
	}
	if len(cands) == 0 { // a plain plan has no bands to be out of order
		return Result{}, errors.New("lay out: the plain layout came out of order")
	}
	if f.MaxAspect <= 0 {
		return finish(choose(withPacked(cands, f), f)), nil
	}
	rearrange := func(starts []candidate, stop func(i, twins int) bool) error {
		opts := f.options(starts)
		fitting, twins := 0, 0
		for i, o := range opts {
			if stop(i, twins) || fitting >= 2 {
				break
			}
			c, ok, err := runCandidate(ctx, o.p, o.prefer)
			switch {
			case err != nil && ctx.Err() != nil:
				return err
			case err != nil:
				// Graphviz failed on a rearrangement (after its worker's retry, where it runs in
				// one): the plain layouts stand, and the picture is made of what was laid out.
				continue
			}
			if ok {
				cands = append(cands, c)
				if f.fits(c.w, c.h) {
					fitting++
				}
			}
			if o.twin == nil {
				continue
			}
			// The twin stands only where it is clearer than its snake: its arrows' long way back
			// must not cost what reading forwards gains.
			snake := ok
			switch t, ok, err := runCandidate(ctx, o.twin, o.prefer*preferForwards); {
			case err != nil && ctx.Err() != nil:
				return err
			case err == nil && ok && (!snake || t.d.weight() < c.d.weight()):
				cands = append(cands, t)
				twins++
			}
		}
		return nil
	}
	plainFits := false
	for _, c := range cands {
		plainFits = plainFits || c.prefer == 1 && f.fits(c.w, c.h) // the given direction fits as it is
	}
	if !plainFits {
		// The other arrangements of the best two starts, scored on sizes estimated from their
		// plain layouts.
		sort.SliceStable(starts, func(i, j int) bool { return starts[i].score(f) > starts[j].score(f) })
		if len(starts) > 2 {
			starts = starts[:2]
		}
		runs := maxRuns
		if len(g.Nodes) >= bigGraph {
			runs = bigRuns
		}
		if err := rearrange(starts, func(i, twins int) bool { return len(cands)-len(whole)-twins+i >= runs }); err != nil {
			return Result{}, err
		}
	}
	if len(whole) > 0 && !f.fits(whole[0].w, whole[0].h) {
		// Groups ranked whole make a longer picture: its own arrangements are tried too, a
		// few runs beyond the budget (only where ranking groups whole mends something).
		if err := rearrange(whole, func(i, _ int) bool { return i >= wholeRuns }); err != nil {
			return Result{}, err
		}
	}
	return finish(choose(withPacked(cands, f), f)), nil
}

// option is a rearrangement of a start to lay out.
type option struct {
	p        *plan
	prefer   float64
	estimate float64
	fits     bool  // estimated to
	twin     *plan // laid out with p and measured against it, outside the run budget
}

// options are the rearrangements of starts, in the order to try them.
func (f Fit) options(starts []candidate) []option {
	var opts []option
	for _, s := range starts {
		r := s.p.ranksOf(s.pl)
		for _, rows := range []int{2, 3, 4, 5, 6, 8} {
			if q := s.p.stack(rows); q != nil {
				w, h := s.p.stackEstimate(s.pl, r, q)
				opts = append(opts, option{q, s.prefer * preferStack, f.score(w, h) * s.prefer * preferStack, f.fits(w, h), nil})
			}
		}
		if row, ok := s.p.widestRow(s.pl); ok {
			n := len(row.groups)
			tried := map[int]bool{}
			for _, per := range []int{(n + 1) / 2, (n + 2) / 3, int(math.Ceil(math.Sqrt(float64(n))))} {
				if tried[per] {
					continue
				}
				tried[per] = true
				if q := s.p.wrapGroups(row, per); q != nil {
					w, h := s.p.wrapEstimate(s.pl, row, per)
					opts = append(opts, option{q, s.prefer * preferWrap, f.score(w, h) * s.prefer * preferWrap, f.fits(w, h), nil})
				}
			}
		}
		if q, w, h := s.p.spread(s, r, f); q != nil {
			opts = append(opts, option{q, s.prefer * preferSpread, f.score(w, h) * s.prefer * preferSpread, f.fits(w, h), nil})
		}
		// Folds between top groups, and inside the group that fills its layers, if any.
		ins := []int{-1}
		if g := s.p.foldGroup(r); g >= 0 {
			ins = append(ins, g)
		}
		for _, in := range ins {
			longest := r.hi[len(r.hi)-1] - r.lo[0]
			for n := 2; n <= len(r.lo) && n <= 12; n++ {
				cut := s.p.cuts(r, n, in)
				// One band more must make the longest band shorter (where cuts may go).
				if l := longestBand(r, cut); cut != nil && l < 0.95*longest {
					longest = l
					w, h := s.p.foldEstimate(r, cut)
					// Every edge between bands beyond the one that wraps makes the snake harder to follow.
					prefer := s.prefer * preferFold * math.Pow(preferFold, float64(s.p.crossingCuts(r, cut)-(n-1)))
					lines := s.p.foldsAsLines(r, cut, in)
					o := option{p: s.p.fold(r, cut, in, lines), prefer: prefer, estimate: f.score(w, h) * prefer, fits: f.fits(w, h)}
					if !lines && s.p.groupedIn(in) {
						// A snake's every other band reads backwards, which a person takes for the
						// flow going back; as lines of text, the arrows between bands make the
						// long way back across groups instead. Both are laid out and measured.
						o.twin = s.p.fold(r, cut, in, true)
					}
					opts = append(opts, o)
				}
			}
		}
	}
	// Those estimated to fit first, the least changed of them first; then the rest by estimate.
	sort.SliceStable(opts, func(i, j int) bool {
		a, b := opts[i], opts[j]
		if a.fits != b.fits {
			return a.fits
		}
		if a.fits && math.Abs(a.prefer-b.prefer) > 0.005 {
			return a.prefer > b.prefer
		}
		return a.estimate > b.estimate
	})
	return opts
}

// withPacked is cands, each followed by the same picture with its unconnected parts packed
// (pack.go) where it has any: no dot run, measured like the others.
func withPacked(cands []candidate, f Fit) []candidate {
	var out []candidate
	for _, c := range cands {
		out = append(out, c)
		if q, ok := c.packed(f); ok {
			out = append(out, q)
		}
	}
	return out
}

// choose picks the candidate a person reads best: the scale at which it fits the preview
// (lowered for an aspect or width beyond the fit), times how clear its arrows are — fewer
// crossings, arrows through boxes and needless trips across group borders per edge — times how
// little it rearranges the plain layout. Beyond its natural size a picture reads no better, so
// of two that both fit at full size the clearer wins. Of equals, the first. A rearrangement that
// tangles arrows a plain layout keeps apart is never chosen (tangles), nor a picture with groups
// ranked whole that crosses more arrows or group borders than a plain layout does; where groups
// ranked whole keep arrows apart that every plain layout tangles (two regions' replication
// arrows: 3 crossings against 10), the plain layouts tangle too.
func choose(cands []candidate, f Fit) candidate {
	best, bestValue := 0, -1.0
	fewest, borders := math.MaxInt, math.MaxInt
	for _, c := range cands {
		if c.start && !c.p.whole {
			fewest = min(fewest, c.d.crossings)
			borders = min(borders, c.d.borders)
		}
	}
	// The fewest crossings of a plain layout, groups ranked whole included where they cross
	// group borders no more often: what tangling is measured against.
	clearest := fewest
	for _, c := range cands {
		if c.start && c.p.whole && c.d.borders <= borders {
			clearest = min(clearest, c.d.crossings)
		}
	}
	for i, c := range cands {
		if tangles(c.d.crossings, clearest) {
			continue
		}
		if c.p.whole && (c.d.crossings > fewest || c.d.borders > borders) {
			continue // groups ranked whole must not cost arrows their clarity
		}
		if v := c.value(f); v > bestValue+1e-9 {
			best, bestValue = i, v
		}
	}
	return cands[best]
}

// wholePlans are the plans with groups ranked whole (groupranks.go) that mend what the best of
// cands shows: a group stretched over more layers than its members need, and a staircase of
// groups (then with each group after those that feed it).
func wholePlans(g Graph, dir Direction, cands []candidate, f Fit) []*plan {
	if f.MaxAspect <= 0 || len(cands) == 0 || len(g.Clusters) == 0 {
		return nil
	}
	var out []*plan
	p := newPlan(g, dir, false)
	changed := p.rankGroups(false)
	stretched, staircase := mends(choose(cands, f), p)
	if stretched && changed {
		out = append(out, p)
	}
	if q := newPlan(g, dir, false); staircase && q.rankGroups(true) {
		out = append(out, q)
	}
	return out
}

// tangles reports whether a candidate with crossings crosses too many more arrows than the
// plain layout with the fewest: a picture that fits the screen by tangling arrows a plain layout
// keeps apart is not worth it (a rearrangement may add two crossings, or a fifth more).
// The plain layout with the fewest never tangles, so choose always has one.
func tangles(crossings, fewest int) bool {
	return float64(crossings) > float64(fewest)+math.Max(2, 0.2*float64(fewest))
}

// value is what choose maximises.
func (c candidate) value(f Fit) float64 {
	legible := 1.0
	if f.MaxAspect > 0 {
		legible = math.Min(f.score(c.w, c.h), fullSize)
	}
	edges := max(len(c.p.g.Edges), 1)
	return legible * c.prefer * math.Pow(c.density(), densityWeight) / (1 + c.d.weight()/float64(edges))
}

// density is the share of the candidate's picture its nodes cover.
func (c candidate) density() float64 {
	var a float64
	for _, n := range c.p.g.Nodes {
		a += n.Width * n.Height
	}
	if c.w <= 0 || c.h <= 0 {
		return 1
	}
	return math.Min(a/(c.w*c.h), 1)
}

// densityWeight is how much a denser picture is preferred, all else equal: a canvas half empty
// reads as sparse, and its text is smaller once fitted.
const densityWeight = 0.25

// fullSize is the scale beyond which a larger picture reads no better.
const fullSize = 1.0

// longestBand is the length along the layers of the longest band of a fold at starts.
func longestBand(r ranks, starts []int) float64 {
	var l float64
	for b, s := range starts {
		e := len(r.lo) - 1
		if b+1 < len(starts) {
			e = starts[b+1] - 1
		}
		l = math.Max(l, r.hi[e]-r.lo[s])
	}
	return l
}

func finish(c candidate) Result { return c.p.result(c.pl) }

// stackEstimate is the size of the picture with q's stacks, from p's plain layout: the layers
// holding leaves get as broad as their remaining nodes and the blocks, and as deep as the deepest
// block.
func (p *plan) stackEstimate(pl placed, r ranks, q *plan) (width, height float64) {
	layers := len(r.lo)
	removed := make([]float64, layers) // breadth taken out of each layer
	added := make([]float64, layers)   // breadth of the blocks put in
	deeper := make([]float64, layers)  // how much deeper the layer gets
	for _, b := range q.blocks {
		k := r.of[b.leaves[0]]
		if k < 0 {
			continue
		}
		for _, l := range b.leaves {
			_, ac := p.across(pl.nodes[l])
			removed[k] += ac + p.g.NodeSep
		}
		bn := q.nodes[b.node]
		_, ac := q.across(Rect{0, 0, bn.w, bn.h})
		_, al := q.along(Rect{0, 0, bn.w, bn.h})
		added[k] += ac + p.g.NodeSep
		deeper[k] = math.Max(deeper[k], al-(r.hi[k]-r.lo[k]))
	}
	var along, across float64
	for k := range layers {
		across = math.Max(across, r.aHi[k]-r.aLo[k]-removed[k]+added[k])
		along += deeper[k]
	}
	b := pl.bounds()
	if p.dir == LeftRight {
		return b.Width + along, across
	}
	return across, b.Height + along
}
