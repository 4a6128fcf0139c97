package layout

import (
	"fmt"
	"math"
	"sort"
)

// Wrapping groups: sibling groups that share layers lie side by side across them, so a dozen
// services fed from one gateway make a strip twelve groups wide. Wrapped, they are rows of a
// few (columns in a left-right layout), each group kept whole: gates (order.go) put each group
// after the one a row before it, so dot still places and routes everything.

// siblingRow is a set of sibling groups lying side by side across the layers in a laid-out plan,
// in the order they lie.
type siblingRow struct {
	groups []int     // plan clusters
	across []float64 // per group: its extent across the layers
	along  []float64 // per group: its extent along the layers
}

// widestRow finds, among the sets of sibling groups (the top ones, or those right inside one
// group) whose extents along the layers overlap, the one spanning most across them; ok is false
// when no such set has three groups or more.
func (p *plan) widestRow(pl placed) (siblingRow, bool) {
	byParent := map[int][]int{}
	for ci, c := range p.clusters {
		if c.id == "" {
			return siblingRow{}, false // a fold's bands: not wrapped again
		}
		if r := pl.clusters[ci]; r.Width > 0 && r.Height > 0 {
			byParent[c.parent] = append(byParent[c.parent], ci)
		}
	}
	var best siblingRow
	bestSpan := 0.0
	for _, sibs := range byParent {
		if len(sibs) < 3 {
			continue
		}
		// Those lying beside the broadest of them (their extents along the layers overlap), in
		// the order they lie across.
		ref := sibs[0]
		for _, ci := range sibs {
			_, a := p.across(pl.clusters[ci])
			_, b := p.across(pl.clusters[ref])
			if a > b {
				ref = ci
			}
		}
		rs, rl := p.along(pl.clusters[ref])
		var beside []int
		for _, ci := range sibs {
			if s, l := p.along(pl.clusters[ci]); s < rs+rl && rs < s+l {
				beside = append(beside, ci)
			}
		}
		sibs = beside
		sort.Slice(sibs, func(i, j int) bool {
			ai, _ := p.across(pl.clusters[sibs[i]])
			aj, _ := p.across(pl.clusters[sibs[j]])
			return ai < aj
		})
		var row siblingRow
		span := 0.0
		for _, ci := range sibs {
			r := pl.clusters[ci]
			_, ac := p.across(r)
			_, al := p.along(r)
			row.groups = append(row.groups, ci)
			row.across = append(row.across, ac)
			row.along = append(row.along, al)
			span += ac
		}
		if len(row.groups) >= 3 && span > bestSpan {
			best, bestSpan = row, span
		}
	}
	return best, bestSpan > 0
}

// wrapGroups is the plan with the groups of row wrapped into rows of per groups each (columns,
// left to right, in a left-right layout): each group is put after the group per places before it.
func (p *plan) wrapGroups(row siblingRow, per int) *plan {
	if per < 1 || per >= len(row.groups) {
		return nil
	}
	q := p.clone()
	for i := per; i < len(row.groups); i++ {
		q.addGate(row.groups[i-per], row.groups[i])
	}
	unit := "rows"
	if q.dir == LeftRight {
		unit = "columns"
	}
	q.arrangement = join(p.arrangement, fmt.Sprintf("%d groups wrapped into %s of %d", len(row.groups), unit, per))
	return q
}

// wrapEstimate is the size of the picture with row wrapped into rows of per groups, from the
// plain layout: across, the widest row instead of all of them; along, the deepest group of each
// row after the first added.
func (p *plan) wrapEstimate(pl placed, row siblingRow, per int) (width, height float64) {
	b := pl.bounds()
	_, across := p.across(b)
	_, along := p.along(b)
	total := 0.0
	for _, a := range row.across {
		total += a + p.g.NodeSep
	}
	widest := 0.0
	for start := 0; start < len(row.groups); start += per {
		w, deep := 0.0, 0.0
		for i := start; i < min(start+per, len(row.groups)); i++ {
			w += row.across[i] + p.g.NodeSep
			deep = math.Max(deep, row.along[i])
		}
		widest = math.Max(widest, w)
		if start > 0 {
			along += deep + p.g.RankSep
		}
	}
	across = math.Max(across-total+widest, widest)
	if p.dir == LeftRight {
		return along, across
	}
	return across, along
}
