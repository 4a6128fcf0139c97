package layout

import "math"

// maxSpread is the most spread multiplies a gap by: wider gaps leave empty space the routes wander
// through.
const maxSpread = 1.6

// spread is the plan with more room between nodes across the layers (or between the layers),
// when a little more of it brings a picture slightly too narrow (or too flat) within the aspect;
// nil when the picture is too far off for that.
func (p *plan) spread(c candidate, r ranks, f Fit) (*plan, float64, float64) {
	_, across := p.across(Rect{0, 0, c.w, c.h})
	_, along := p.along(Rect{0, 0, c.w, c.h})
	target := 0.92 * f.MaxAspect
	q := p.clone()
	if along > across {
		if along/across > 1.6*f.MaxAspect {
			return nil, 0, 0
		}
		perLayer := map[int]int{}
		for _, k := range r.of {
			if k >= 0 {
				perLayer[k]++
			}
		}
		n := 0
		for _, c := range perLayer {
			n = max(n, c)
		}
		if n < 2 {
			return nil, 0, 0
		}
		add := (along/target - across) / float64(n-1)
		if add <= 0 {
			return nil, 0, 0 // wide enough already: spreading would squeeze
		}
		q.g.NodeSep = math.Min(maxSpread*p.g.NodeSep, p.g.NodeSep+add)
		across += float64(n-1) * (q.g.NodeSep - p.g.NodeSep)
	} else {
		if across/along > 1.6*f.MaxAspect || len(r.lo) < 2 {
			return nil, 0, 0
		}
		add := (across/target - along) / float64(len(r.lo)-1)
		if add <= 0 {
			return nil, 0, 0
		}
		q.g.RankSep = math.Min(maxSpread*p.g.RankSep, p.g.RankSep+add)
		along += float64(len(r.lo)-1) * (q.g.RankSep - p.g.RankSep)
	}
	q.arrangement = join(p.arrangement, "spread out")
	if p.dir == LeftRight {
		return q, along, across
	}
	return q, across, along
}

// crossingCuts counts the edges that join two bands of a fold at starts.
func (p *plan) crossingCuts(r ranks, starts []int) int {
	n := 0
	for _, e := range p.g.Edges {
		ku, kv := r.of[p.blockOf(p.realIndex(e.From))], r.of[p.blockOf(p.realIndex(e.To))]
		if ku >= 0 && kv >= 0 && bandAt(starts, ku) != bandAt(starts, kv) {
			n++
		}
	}
	return n
}

// bandAt is the band of a fold at starts that layer k is in.
func bandAt(starts []int, k int) int {
	b := 0
	for b+1 < len(starts) && starts[b+1] <= k {
		b++
	}
	return b
}

func join(a, b string) string {
	if a == "" {
		return b
	}
	return a + ", " + b
}
