package layout

import (
	"context"
	"fmt"
	"math"
	"strconv"
	"strings"
)

// Engine is the layout engine Layout runs.
type Engine int

const (
	// EngineOwn is the project's layout: dot with each edge label on its edge's way, fitted to
	// a screen (the zero value).
	EngineOwn Engine = iota
	// EnginePlainDot is Graphviz dot as people use it: clusters for groups, dot's own edge
	// labels, splines, no fitting and no helper nodes. It is the baseline EngineOwn is measured
	// against (internal/corpus), not something to draw with.
	EnginePlainDot
)

// plainDot lays g out with plain dot. The nodes keep their sizes (fixedsize), an edge label is
// an empty HTML table of the label's size, so dot makes room for it beside its edge as it does for
// text. A route runs through dot's spline; a labelled one has as its middle point the spline's
// point nearest the label, where Excalidraw will centre the label, and Labels keeps dot's own
// place for it (lp). A mind map has no dot counterpart and is laid out as a mind map.
func plainDot(ctx context.Context, g Graph) (Result, error) {
	if g.Direction == MindMap {
		return mindMap(ctx, g)
	}
	g = g.withSpacing()
	out, err := runSource(ctx, plainSource(g))
	if err != nil {
		return Result{}, err
	}
	res, err := readPlain(g, out)
	if err != nil {
		return Result{}, fmt.Errorf("read dot output: %w", err)
	}
	res.Crossings = countCrossings(g, res)
	return res, nil
}

// plainSource writes g as a dot graph: nodes n<i>, clusters cluster_<i> nested as g nests them.
func plainSource(g Graph) string {
	var b strings.Builder
	fmt.Fprintf(&b, "digraph G {\nrankdir=%s; nodesep=%s; ranksep=%s; splines=true;\n", g.Direction, inch(g.NodeSep), inch(g.RankSep))
	b.WriteString("node [shape=box, fixedsize=true, label=\"\"];\nedge [arrowhead=none];\n")
	cluster := make(map[string]int, len(g.Clusters))
	for i, c := range g.Clusters {
		cluster[c.ID] = i
	}
	inside := make([][]int, len(g.Clusters))
	var top []int
	for i, c := range g.Clusters {
		if c.Parent != "" {
			inside[cluster[c.Parent]] = append(inside[cluster[c.Parent]], i)
		} else {
			top = append(top, i)
		}
	}
	members := make([][]int, len(g.Clusters))
	var loose []int
	for i, n := range g.Nodes {
		if n.Cluster != "" {
			members[cluster[n.Cluster]] = append(members[cluster[n.Cluster]], i)
		} else {
			loose = append(loose, i)
		}
	}
	writeNode := func(i int) {
		fmt.Fprintf(&b, "n%d [width=%s, height=%s];\n", i, inch(g.Nodes[i].Width), inch(g.Nodes[i].Height))
	}
	var writeCluster func(i int)
	writeCluster = func(i int) {
		// The title strip is reserved as a label of its height, on top, as for the own layout.
		fmt.Fprintf(&b, "subgraph cluster_%d {\nmargin=20; labelloc=t; label=\" \"; fontsize=%s;\n", i, num(g.Clusters[i].TitleHeight*0.75))
		for _, n := range members[i] {
			writeNode(n)
		}
		for _, k := range inside[i] {
			writeCluster(k)
		}
		b.WriteString("}\n")
	}
	for _, i := range top {
		writeCluster(i)
	}
	for _, i := range loose {
		writeNode(i)
	}
	index := make(map[string]int, len(g.Nodes))
	for i, n := range g.Nodes {
		index[n.ID] = i
	}
	for k, e := range g.Edges {
		fmt.Fprintf(&b, "n%d -> n%d [xi=%d", index[e.From], index[e.To], k)
		if e.LabelWidth > 0 && e.LabelHeight > 0 {
			w, h := num(e.LabelWidth), num(e.LabelHeight)
			fmt.Fprintf(&b, `, label=<<table fixedsize="true" width="%s" height="%s" border="0" cellborder="0" cellspacing="0" cellpadding="0"><tr><td fixedsize="true" width="%s" height="%s"></td></tr></table>>`, w, h, w, h)
		}
		b.WriteString("];\n")
	}
	b.WriteString("}\n")
	return b.String()
}

func readPlain(g Graph, data []byte) (Result, error) {
	var out dotJSON
	if err := jsonUnmarshal(data, &out); err != nil {
		return Result{}, err
	}
	bb, err := floats(out.BB, 4)
	if err != nil {
		return Result{}, fmt.Errorf("graph bb: %w", err)
	}
	flip := func(x, y float64) Point { return Point{X: x - bb[0], Y: bb[3] - y} }
	res := Result{Nodes: make(map[string]Rect, len(g.Nodes)), Clusters: make(map[string]Rect, len(g.Clusters)),
		Routes: make([][]Point, len(g.Edges)), Labels: make([]Point, len(g.Edges)), Sharp: make([]bool, len(g.Edges)),
		Direction: g.Direction}
	for _, o := range out.Objects {
		kind, num, _ := strings.Cut(o.Name, "_")
		switch {
		case kind == "cluster":
			i, err := strconv.Atoi(num)
			if err != nil || i < 0 || i >= len(g.Clusters) {
				return Result{}, fmt.Errorf("unexpected cluster %q", o.Name)
			}
			c, err := floats(o.BB, 4)
			if err != nil {
				return Result{}, fmt.Errorf("cluster %q bb: %w", o.Name, err)
			}
			a, z := flip(c[0], c[3]), flip(c[2], c[1])
			res.Clusters[g.Clusters[i].ID] = Rect{a.X, a.Y, z.X - a.X, z.Y - a.Y}
		case strings.HasPrefix(o.Name, "n"):
			i, err := strconv.Atoi(o.Name[1:])
			if err != nil || i < 0 || i >= len(g.Nodes) {
				return Result{}, fmt.Errorf("unexpected node %q", o.Name)
			}
			c, err := floats(o.Pos, 2)
			if err != nil {
				return Result{}, fmt.Errorf("node %q pos: %w", o.Name, err)
			}
			n, q := g.Nodes[i], flip(c[0], c[1])
			res.Nodes[n.ID] = Rect{q.X - n.Width/2, q.Y - n.Height/2, n.Width, n.Height}
		}
	}
	if len(res.Nodes) != len(g.Nodes) {
		return Result{}, fmt.Errorf("dot placed %d of %d nodes", len(res.Nodes), len(g.Nodes))
	}
	for _, e := range out.Edges {
		k, err := strconv.Atoi(e.XI)
		if err != nil || k < 0 || k >= len(g.Edges) {
			continue
		}
		spline := controlPoints(e.Pos, flip)
		if g.Edges[k].LabelWidth <= 0 || g.Edges[k].LabelHeight <= 0 || len(spline) < 4 {
			res.Routes[k] = curvePoints(spline)
			continue
		}
		if c, err := floats(e.LP, 2); err == nil {
			res.Labels[k] = flip(c[0], c[1])
		}
		first, at, second := splitNearest(spline, res.Labels[k])
		res.Routes[k] = throughLabel(first, at, second)
	}
	return res, nil
}

// splitNearest splits a spline (3n+1 Bézier control points) at its point nearest p into two
// splines, by de Casteljau's construction, and returns that point between them.
func splitNearest(spline []Point, p Point) (first []Point, at Point, second []Point) {
	const steps = 32
	seg, bestT, best := 0, 0.5, math.Inf(1)
	for i := 0; i+3 < len(spline); i += 3 {
		for s := 0; s <= steps; s++ {
			t := float64(s) / steps
			if d := dist(cubic(spline[i:i+4], t), p); d < best {
				seg, bestT, best = i, t, d
			}
		}
	}
	c := spline[seg : seg+4]
	lerp := func(a, b Point) Point { return Point{a.X + (b.X-a.X)*bestT, a.Y + (b.Y-a.Y)*bestT} }
	p01, p12, p23 := lerp(c[0], c[1]), lerp(c[1], c[2]), lerp(c[2], c[3])
	p012, p123 := lerp(p01, p12), lerp(p12, p23)
	at = lerp(p012, p123)
	first = append(append([]Point(nil), spline[:seg+1]...), p01, p012, at)
	second = append([]Point{at, p123, p23}, spline[seg+3:]...)
	return first, at, second
}

func cubic(c []Point, t float64) Point {
	u := 1 - t
	w0, w1, w2, w3 := u*u*u, 3*u*u*t, 3*u*t*t, t*t*t
	return Point{w0*c[0].X + w1*c[1].X + w2*c[2].X + w3*c[3].X, w0*c[0].Y + w1*c[1].Y + w2*c[2].Y + w3*c[3].Y}
}
