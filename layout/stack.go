package layout

import (
	"fmt"
	"math"
)

// Stacking: a node with many leaves (children with nothing below them, as the last level of an
// org chart) would spread them over one very wide layer. Its leaves are stacked instead, in
// columns of a few under it (rows beside it in a left-right layout), each column hanging from a
// bus line along its side, as compact org charts draw them. dot lays each column out as one block
// node; the leaves are put into it afterwards and their edges routed along the bus.

const (
	minStack  = 3    // the fewest leaves of one node that are stacked
	stackGap  = 20.0 // between two leaves of a column
	busIndent = 40.0 // from a column's side to its leaves; the bus runs half-way
)

// block is one column (or row) of stacked leaves.
type block struct {
	parent int   // plan node the leaves hang from
	leaves []int // plan nodes, in order
	edges  []int // Graph edges parent → leaf, in the same order
	node   int   // the block's own plan node
}

// stackable is, per node with at least minStack leaves in one cluster, those leaves and their
// edges, in the order given.
func (p *plan) stackable() [][2][]int {
	out := make([]int, len(p.nodes))
	in := make([]int, len(p.nodes))
	for _, e := range p.g.Edges {
		u, v := p.realIndex(e.From), p.realIndex(e.To)
		if u != v {
			out[u]++
			in[v]++
		}
	}
	inSame := map[int]bool{}
	for _, s := range p.same {
		for _, i := range s {
			inSame[i] = true
		}
	}
	type key struct{ parent, cluster int }
	groups := map[key][2][]int{}
	var order []key
	for i, e := range p.g.Edges {
		u, v := p.realIndex(e.From), p.realIndex(e.To)
		if u == v || out[v] != 0 || in[v] != 1 || p.label[i] >= 0 || inSame[v] {
			continue
		}
		k := key{u, p.nodes[v].cluster}
		if _, ok := groups[k]; !ok {
			order = append(order, k)
		}
		g := groups[k]
		groups[k] = [2][]int{append(g[0], v), append(g[1], i)}
	}
	var res [][2][]int
	for _, k := range order {
		if g := groups[k]; len(g[0]) >= minStack {
			res = append(res, g)
		}
	}
	return res
}

// stack is the plan with the leaves of every node that has minStack or more of them stacked in
// columns of at most rows leaves; nil when no node has that many.
func (p *plan) stack(rows int) *plan {
	groups := p.stackable()
	if len(groups) == 0 || rows < 1 {
		return nil
	}
	q := p.clone()
	for _, g := range groups {
		leaves, edges := g[0], g[1]
		parent := q.realIndex(q.g.Edges[edges[0]].From)
		cols := (len(leaves) + rows - 1) / rows
		at := 0
		for c := range cols {
			n := len(leaves) / cols
			if c < len(leaves)%cols {
				n++
			}
			b := block{parent: parent, leaves: leaves[at : at+n], edges: edges[at : at+n], node: len(q.nodes)}
			at += n
			var along, across float64
			for k, l := range b.leaves {
				_, la := q.along(Rect{0, 0, q.nodes[l].w, q.nodes[l].h})
				_, ac := q.across(Rect{0, 0, q.nodes[l].w, q.nodes[l].h})
				along += la
				if k > 0 {
					along += stackGap
				}
				across = math.Max(across, ac)
				q.nodes[l].gone = true
				q.inBlock[l] = b.node
			}
			across += busIndent
			w, h := across, along
			if q.dir == LeftRight {
				w, h = along, across
			}
			q.nodes = append(q.nodes, pnode{kind: blockNode, w: w, h: h, cluster: q.nodes[b.leaves[0]].cluster, ref: len(q.blocks)})
			q.edges = append(q.edges, pedge{from: parent, to: b.node, minlen: q.span, weight: 1, edge: -1})
			q.blocks = append(q.blocks, b)
		}
		for _, e := range edges {
			for k := range q.edges {
				if q.edges[k].edge == e {
					q.edges[k].gone = true
				}
			}
		}
	}
	// Helpers (gates) that led to a stacked leaf lead to its block.
	for k := range q.edges {
		e := &q.edges[k]
		if e.edge < 0 {
			e.from, e.to = q.blockOf(e.from), q.blockOf(e.to)
		}
	}
	unit := "columns"
	if q.dir == LeftRight {
		unit = "rows"
	}
	q.arrangement = fmt.Sprintf("leaves stacked in %s of up to %d", unit, rows)
	return q
}

// expandBlocks puts the stacked leaves of each block in their places and routes their edges
// from the parent down to the bus and along it (across to it and along it, left to right).
func (p *plan) expandBlocks(pl placed, res *Result) {
	for _, b := range p.blocks {
		if !pl.laid[b.node] {
			continue
		}
		br := pl.nodes[b.node]
		par := pl.nodes[b.parent]
		pc := Point{par.X + par.Width/2, par.Y + par.Height/2}
		lr := p.dir == LeftRight
		// dot centres a block on its layer; its leaves start at the layer's top (left), level
		// with the leaves of the blocks beside it in its group.
		start, size := p.along(br)
		for i, n := range pl.nodes {
			if s, l := p.along(n); pl.laid[i] && p.nodes[i].cluster == p.nodes[b.node].cluster && math.Abs(s+l/2-(start+size/2)) < 1 {
				start = math.Min(start, s)
			}
		}
		if lr {
			br.X = start
		} else {
			br.Y = start
		}
		run := start
		for k, l := range b.leaves {
			n := p.nodes[l]
			var r Rect
			if lr {
				r = Rect{run, br.Y + busIndent, n.w, n.h}
				run += n.w + stackGap
			} else {
				r = Rect{br.X + busIndent, run, n.w, n.h}
				run += n.h + stackGap
			}
			res.Nodes[p.g.Nodes[n.ref].ID] = r
			lc := Point{r.X + r.Width/2, r.Y + r.Height/2}
			var route []Point
			if lr {
				mid := (par.X + par.Width + br.X) / 2
				bus := br.Y + busIndent/2
				route = []Point{{mid, pc.Y}, {mid, bus}, {lc.X, bus}}
			} else {
				mid := (par.Y + par.Height + br.Y) / 2
				bus := br.X + busIndent/2
				route = []Point{{pc.X, mid}, {bus, mid}, {bus, lc.Y}}
			}
			res.Routes[b.edges[k]] = dropCollinear(route, pc, lc)
			res.Sharp[b.edges[k]] = true
		}
	}
}

// dropCollinear leaves out the bends that lie on the straight line between their neighbours
// (the bus right below its parent needs no corner there).
func dropCollinear(route []Point, start, end Point) []Point {
	line := append(append([]Point{start}, route...), end)
	var out []Point
	for i := 1; i+1 < len(line); i++ {
		a, b, c := line[i-1], line[i], line[i+1]
		if math.Abs((b.X-a.X)*(c.Y-a.Y)-(b.Y-a.Y)*(c.X-a.X)) > 1 {
			out = append(out, b)
		} else {
			line[i] = a // a dropped point's neighbour looks back past it
		}
	}
	return out
}
