// Package layout places the nodes of a directed graph in layers (top-down or left-right) with
// Graphviz dot, so that the agent's model gives structure and never coordinates.
//
// Graphviz runs compiled to WebAssembly through github.com/goccy/go-graphviz (no cgo). That
// library compiles its WASM module in an init function: every binary importing this package pays
// it once at start (about 1 s cold, about 0.1 s with wazero's compilation cache in
// os.TempDir()/go-graphviz). The Graphviz context itself is created lazily on the first Layout
// call and reused, since creating it costs as much as a small layout.
//
// Units in and out are Excalidraw pixels with y growing downwards; Graphviz's points and upward y
// are converted here.
package layout

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"sync"

	"github.com/goccy/go-graphviz"
)

// Direction is the direction the layers run in.
type Direction string

const (
	TopDown   Direction = "TB"
	LeftRight Direction = "LR"
)

// Node is one box to place. Width and Height are its final size: dot keeps them fixed.
type Node struct {
	ID            string
	Width, Height float64
	// Cluster is the ID of the Cluster the node belongs to, or "".
	Cluster string
}

// Edge is a directed edge between two node IDs. Order matters: dot keeps input order where it can,
// which keeps layouts of similar graphs similar.
type Edge struct {
	From, To string
}

// Cluster is a group drawn as a box around its nodes, with a title strip of TitleHeight px on top.
// A cluster with a Parent is drawn inside the parent's box (dot nests subgraph clusters).
type Cluster struct {
	ID          string
	TitleHeight float64
	Parent      string
}

// Graph is the input of Layout.
type Graph struct {
	Direction Direction
	Nodes     []Node
	Edges     []Edge
	Clusters  []Cluster
	// NodeSep is the gap between nodes in one layer, RankSep the gap between layers (px); zero
	// takes 60 and 90, the diagram guide's spacing.
	NodeSep, RankSep float64
}

// Rect is a box in px, top-left corner and size.
type Rect struct{ X, Y, Width, Height float64 }

// Point is a position in px.
type Point struct{ X, Y float64 }

// Result is where Layout put things. All coordinates are ≥ 0.
type Result struct {
	Nodes    map[string]Rect
	Clusters map[string]Rect
	// Routes holds, per edge index, the bends dot's spline passes through between its ends (empty
	// for a straight edge). Ends are left to the caller, which binds arrows to node borders.
	Routes [][]Point
	// Crossings is how many pairs of edge routes cross, counted on the polylines through the node
	// centres and the bends (dot's own objective, so a figure to compare with others).
	Crossings int
}

// MaxNodes bounds one layout; dot's time grows quickly past a few hundred nodes.
const MaxNodes = 500

// ErrInvalid is wrapped by every error about the input graph.
var ErrInvalid = errors.New("invalid graph")

const pt = 72.0 // Graphviz sizes are inches, positions points

var (
	gvOnce sync.Once
	gvErr  error
	gvMu   sync.Mutex // a Graphviz context is not safe for concurrent use
	gv     *graphviz.Graphviz
)

// Layout places g's nodes and clusters. It is safe for concurrent use (calls are serialised).
func Layout(ctx context.Context, g Graph) (Result, error) {
	if err := check(g); err != nil {
		return Result{}, err
	}
	if g.Direction == MindMap {
		return mindMap(ctx, g)
	}
	src := dotSource(g)
	gvOnce.Do(func() {
		gv, gvErr = graphviz.New(context.Background())
	})
	if gvErr != nil {
		return Result{}, fmt.Errorf("start graphviz: %w", gvErr)
	}
	gvMu.Lock()
	defer gvMu.Unlock()
	if err := ctx.Err(); err != nil {
		return Result{}, err
	}
	graph, err := graphviz.ParseBytes([]byte(src))
	if err != nil {
		return Result{}, fmt.Errorf("parse dot source: %w", err)
	}
	defer graph.Close()
	var buf bytes.Buffer
	if err := gv.Render(ctx, graph, "json", &buf); err != nil {
		return Result{}, fmt.Errorf("run dot: %w", err)
	}
	res, err := parseJSON(buf.Bytes(), g)
	if err != nil {
		return Result{}, fmt.Errorf("read dot output: %w", err)
	}
	res.Crossings = countCrossings(g, res)
	return res, nil
}

func check(g Graph) error {
	if g.Direction != TopDown && g.Direction != LeftRight && g.Direction != MindMap {
		return fmt.Errorf("%w: direction %q, want TB, LR or mindmap", ErrInvalid, g.Direction)
	}
	if len(g.Nodes) > MaxNodes {
		return fmt.Errorf("%w: %d nodes, the limit is %d", ErrInvalid, len(g.Nodes), MaxNodes)
	}
	ids := make(map[string]bool, len(g.Nodes))
	clusters := make(map[string]bool, len(g.Clusters))
	for _, c := range g.Clusters {
		if clusters[c.ID] {
			return fmt.Errorf("%w: cluster %q twice", ErrInvalid, c.ID)
		}
		clusters[c.ID] = true
	}
	parent := make(map[string]string, len(g.Clusters))
	for _, c := range g.Clusters {
		if c.Parent != "" && !clusters[c.Parent] {
			return fmt.Errorf("%w: cluster %q in unknown cluster %q", ErrInvalid, c.ID, c.Parent)
		}
		parent[c.ID] = c.Parent
	}
	for _, c := range g.Clusters { // a cycle of parents would nest forever
		seen := map[string]bool{}
		for p := c.ID; p != ""; p = parent[p] {
			if seen[p] {
				return fmt.Errorf("%w: cluster %q is inside itself", ErrInvalid, c.ID)
			}
			seen[p] = true
		}
	}
	for _, n := range g.Nodes {
		if ids[n.ID] {
			return fmt.Errorf("%w: node %q twice", ErrInvalid, n.ID)
		}
		ids[n.ID] = true
		if !(n.Width > 0 && n.Height > 0) || math.IsInf(n.Width, 0) || math.IsInf(n.Height, 0) {
			return fmt.Errorf("%w: node %q has size %gx%g", ErrInvalid, n.ID, n.Width, n.Height)
		}
		if n.Cluster != "" && !clusters[n.Cluster] {
			return fmt.Errorf("%w: node %q in unknown cluster %q", ErrInvalid, n.ID, n.Cluster)
		}
	}
	for _, e := range g.Edges {
		if !ids[e.From] || !ids[e.To] {
			return fmt.Errorf("%w: edge %q->%q names an unknown node", ErrInvalid, e.From, e.To)
		}
	}
	return nil
}

// dotSource writes g as DOT. Nodes and clusters are named by index (n0, cluster_0) so no ID ever
// needs quoting rules; sizes are fixed so dot's estimate of label text plays no part.
func dotSource(g Graph) string {
	nodeSep, rankSep := g.NodeSep, g.RankSep
	if nodeSep <= 0 {
		nodeSep = 60
	}
	if rankSep <= 0 {
		rankSep = 90
	}
	var b strings.Builder
	fmt.Fprintf(&b, "digraph G {\nrankdir=%s; nodesep=%s; ranksep=%s; splines=spline; newrank=true;\n",
		g.Direction, inch(nodeSep), inch(rankSep))
	b.WriteString("node [shape=box, fixedsize=true, label=\"\"];\nedge [arrowhead=none];\n")
	index := make(map[string]int, len(g.Nodes))
	for i, n := range g.Nodes {
		index[n.ID] = i
	}
	writeNode := func(i int, n Node) {
		fmt.Fprintf(&b, "n%d [width=%s, height=%s];\n", i, inch(n.Width), inch(n.Height))
	}
	degree := make([]int, len(g.Nodes))
	for _, e := range g.Edges {
		degree[index[e.From]]++
		degree[index[e.To]]++
	}
	var writeCluster func(ci int)
	writeCluster = func(ci int) {
		c := g.Clusters[ci]
		// The title strip is reserved as a label of that height; dot puts it on top in TB and LR.
		fmt.Fprintf(&b, "subgraph cluster_%d {\nmargin=20; labelloc=t; label=\" \"; fontsize=%s;\n", ci, num(c.TitleHeight*0.75))
		anchor := -1
		for i, n := range g.Nodes {
			if n.Cluster == c.ID {
				writeNode(i, n)
				if anchor < 0 && degree[i] > 0 {
					anchor = i
				}
			}
		}
		// A node without edges would sit on the first rank and stretch its group over every rank
		// down to its other members: it goes on the rank of the group's first connected node.
		for i, n := range g.Nodes {
			if n.Cluster == c.ID && degree[i] == 0 && anchor >= 0 {
				fmt.Fprintf(&b, "{rank=same; n%d; n%d;}\n", anchor, i)
			}
		}
		for k, sub := range g.Clusters {
			if sub.Parent == c.ID {
				writeCluster(k)
			}
		}
		b.WriteString("}\n")
	}
	for ci, c := range g.Clusters {
		if c.Parent == "" {
			writeCluster(ci)
		}
	}
	for i, n := range g.Nodes {
		if n.Cluster == "" {
			writeNode(i, n)
		}
	}
	for _, e := range g.Edges {
		fmt.Fprintf(&b, "n%d -> n%d;\n", index[e.From], index[e.To])
	}
	b.WriteString("}\n")
	return b.String()
}

func inch(px float64) string { return num(px / pt) }

func num(v float64) string { return strconv.FormatFloat(v, 'f', 4, 64) }

// dotJSON is the part of `dot -Tjson` output read here.
type dotJSON struct {
	BB      string `json:"bb"`
	Objects []struct {
		Name   string `json:"name"`
		BB     string `json:"bb"`
		Pos    string `json:"pos"`
		Width  string `json:"width"`
		Height string `json:"height"`
	} `json:"objects"`
	Edges []struct {
		Tail int    `json:"tail"`
		Head int    `json:"head"`
		Pos  string `json:"pos"`
	} `json:"edges"`
}

func parseJSON(data []byte, g Graph) (Result, error) {
	var out dotJSON
	if err := json.Unmarshal(data, &out); err != nil {
		return Result{}, err
	}
	bb, err := floats(out.BB, 4)
	if err != nil {
		return Result{}, fmt.Errorf("graph bb: %w", err)
	}
	top := bb[3]
	flip := func(x, y float64) Point { return Point{X: x - bb[0], Y: top - y} }
	res := Result{Nodes: make(map[string]Rect, len(g.Nodes)), Clusters: make(map[string]Rect, len(g.Clusters))}
	// Objects list the clusters first, then the nodes, each with its _gvid; names tell them apart.
	for _, o := range out.Objects {
		switch {
		case strings.HasPrefix(o.Name, "cluster_"):
			i, err := strconv.Atoi(strings.TrimPrefix(o.Name, "cluster_"))
			if err != nil || i >= len(g.Clusters) {
				return Result{}, fmt.Errorf("unexpected cluster %q", o.Name)
			}
			c, err := floats(o.BB, 4)
			if err != nil {
				return Result{}, fmt.Errorf("cluster %q bb: %w", o.Name, err)
			}
			p, q := flip(c[0], c[3]), flip(c[2], c[1])
			res.Clusters[g.Clusters[i].ID] = Rect{p.X, p.Y, q.X - p.X, q.Y - p.Y}
		case strings.HasPrefix(o.Name, "n"):
			i, err := strconv.Atoi(o.Name[1:])
			if err != nil || i >= len(g.Nodes) {
				return Result{}, fmt.Errorf("unexpected node %q", o.Name)
			}
			c, err := floats(o.Pos, 2)
			if err != nil {
				return Result{}, fmt.Errorf("node %q pos: %w", o.Name, err)
			}
			n := g.Nodes[i]
			p := flip(c[0], c[1])
			res.Nodes[n.ID] = Rect{p.X - n.Width/2, p.Y - n.Height/2, n.Width, n.Height}
		}
	}
	if len(res.Nodes) != len(g.Nodes) {
		return Result{}, fmt.Errorf("dot placed %d of %d nodes", len(res.Nodes), len(g.Nodes))
	}
	res.Routes = make([][]Point, len(g.Edges))
	for i, e := range out.Edges {
		if i >= len(g.Edges) {
			break
		}
		res.Routes[i] = bends(e.Pos, flip)
	}
	return res, nil
}

// bends reads an edge's spline "x,y x,y …" (cubic Bézier control points, 3n+1 of them) and keeps
// points the curve passes through between its ends: each segment's middle and the joints between
// segments. A drawing that curves through them follows dot's route around the nodes in between.
func bends(pos string, flip func(x, y float64) Point) []Point {
	var pts []Point
	for _, f := range strings.Fields(pos) {
		if strings.HasPrefix(f, "e,") || strings.HasPrefix(f, "s,") {
			continue
		}
		c, err := floats(f, 2)
		if err != nil {
			return nil
		}
		pts = append(pts, flip(c[0], c[1]))
	}
	if len(pts) < 4 || (len(pts)-1)%3 != 0 {
		return nil
	}
	var out []Point
	for i := 0; i+3 < len(pts); i += 3 {
		p0, p1, p2, p3 := pts[i], pts[i+1], pts[i+2], pts[i+3]
		// B(1/2) = (p0 + 3 p1 + 3 p2 + p3) / 8
		mid := Point{(p0.X + 3*p1.X + 3*p2.X + p3.X) / 8, (p0.Y + 3*p1.Y + 3*p2.Y + p3.Y) / 8}
		if len(pts) > 4 { // one segment: a gentle curve, drawn straight
			out = append(out, mid)
		}
		if i+3 < len(pts)-1 {
			out = append(out, p3)
		}
	}
	return out
}

func floats(s string, n int) ([]float64, error) {
	parts := strings.Split(s, ",")
	if len(parts) != n {
		return nil, fmt.Errorf("%q: want %d numbers", s, n)
	}
	out := make([]float64, n)
	for i, p := range parts {
		v, err := strconv.ParseFloat(strings.TrimSpace(p), 64)
		if err != nil {
			return nil, fmt.Errorf("%q: %w", s, err)
		}
		out[i] = v
	}
	return out, nil
}
