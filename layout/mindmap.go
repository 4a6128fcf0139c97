package layout

import (
	"context"
	"fmt"
)

// MindMap is the two-sided layout of a mind map: the root in the middle, its branches split
// between the right and the left, each side a left-right tree (the left one mirrored).
const MindMap Direction = "mindmap"

// mindMap lays out g as a two-sided tree with two dot runs. The root is the first node without an
// incoming edge (else the first node). Branches go to the lighter side, in the order given, so the
// two sides stay balanced and the first branch is on the right, where readers start.
func mindMap(ctx context.Context, g Graph) (Result, error) {
	if len(g.Clusters) > 0 {
		return Result{}, fmt.Errorf("%w: a mind map takes no groups", ErrInvalid)
	}
	if len(g.Nodes) == 0 {
		return Result{Nodes: map[string]Rect{}, Clusters: map[string]Rect{}}, nil
	}
	hasIn := map[string]bool{}
	kids := map[string][]string{}
	for _, e := range g.Edges {
		hasIn[e.To] = true
		kids[e.From] = append(kids[e.From], e.To)
	}
	root := g.Nodes[0].ID
	for _, n := range g.Nodes {
		if !hasIn[n.ID] {
			root = n.ID
			break
		}
	}
	// side: 1 right, -1 left; each branch's subtree (first reached wins) takes its side.
	side := map[string]int{root: 0}
	weight := map[int]int{}
	for _, b := range kids[root] {
		if _, seen := side[b]; seen {
			continue
		}
		s := 1
		if weight[-1] < weight[1] {
			s = -1
		}
		queue := []string{b}
		side[b] = s
		for len(queue) > 0 {
			n := queue[0]
			queue = queue[1:]
			weight[s]++
			for _, k := range kids[n] {
				if _, seen := side[k]; !seen {
					side[k] = s
					queue = append(queue, k)
				}
			}
		}
	}
	for _, n := range g.Nodes { // unreachable from the root: on the right
		if _, ok := side[n.ID]; !ok {
			side[n.ID] = 1
		}
	}
	half := func(s int) (Graph, []int) {
		h := Graph{Direction: LeftRight, NodeSep: g.NodeSep, RankSep: g.RankSep}
		for _, n := range g.Nodes {
			if side[n.ID] == s || n.ID == root {
				h.Nodes = append(h.Nodes, n)
			}
		}
		var idx []int
		for i, e := range g.Edges {
			if (side[e.From] == s || e.From == root) && (side[e.To] == s || e.To == root) {
				// The left side is laid out rightwards from the root and mirrored afterwards.
				h.Edges = append(h.Edges, e)
				idx = append(idx, i)
			}
		}
		return h, idx
	}
	res := Result{Nodes: map[string]Rect{}, Clusters: map[string]Rect{}, Routes: make([][]Point, len(g.Edges)),
		Labels: make([]Point, len(g.Edges)), Sharp: make([]bool, len(g.Edges)), Direction: MindMap}
	var rootAt Point
	for _, s := range []int{1, -1} {
		h, idx := half(s)
		r, err := Layout(ctx, h)
		if err != nil {
			return Result{}, err
		}
		rr := r.Nodes[root]
		if s == 1 {
			rootAt = Point{rr.X, rr.Y}
		}
		// Put this half's root on the right half's root; mirror the left half about the root's centre.
		cx := rr.X + rr.Width/2
		place := func(p Point) Point {
			if s == -1 {
				p.X = 2*cx - p.X
			}
			return Point{p.X - rr.X + rootAt.X, p.Y - rr.Y + rootAt.Y}
		}
		for id, n := range r.Nodes {
			if id == root && s == -1 {
				continue
			}
			p := place(Point{n.X, n.Y})
			if s == -1 {
				p.X -= n.Width
			}
			res.Nodes[id] = Rect{p.X, p.Y, n.Width, n.Height}
		}
		for j, i := range idx {
			for _, b := range r.Routes[j] {
				res.Routes[i] = append(res.Routes[i], place(b))
			}
			if g.Edges[i].LabelWidth > 0 && g.Edges[i].LabelHeight > 0 {
				res.Labels[i] = place(r.Labels[j])
			}
		}
	}
	// Shift everything to non-negative coordinates.
	minX, minY := 0.0, 0.0
	for _, n := range res.Nodes {
		minX, minY = min(minX, n.X), min(minY, n.Y)
	}
	for id, n := range res.Nodes {
		n.X, n.Y = n.X-minX, n.Y-minY
		res.Nodes[id] = n
	}
	for i := range res.Routes {
		for j := range res.Routes[i] {
			res.Routes[i][j].X -= minX
			res.Routes[i][j].Y -= minY
		}
		if g.Edges[i].LabelWidth > 0 && g.Edges[i].LabelHeight > 0 {
			res.Labels[i].X -= minX
			res.Labels[i].Y -= minY
		}
	}
	res.Crossings = countCrossings(g, res)
	return res, nil
}
