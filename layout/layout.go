// Package layout places the nodes of a directed graph in layers (top-down or left-right) with
// Graphviz dot, so that the agent's model gives structure and never coordinates.
//
// Edge labels are laid out as nodes on their edge's way (in a graph with labels every edge spans
// two ranks, the label's node on the one between, as dagre does), so a label sits on its edge,
// clear of nodes and of other labels. A graph given a
// Fit is rearranged when its plain layout would not fit a chat screen: turned to the other
// direction, its long chains wrapped into rows or columns, or the leaves of wide
// fan-outs stacked in columns (fit.go).
//
// Graphviz runs compiled to WebAssembly through github.com/goccy/go-graphviz (no cgo). That
// library compiles its WASM module in an init function: every binary importing this package pays
// it once at start (about 1 s cold, about 0.1 s with wazero's compilation cache in
// os.TempDir()/go-graphviz). dot runs in this process's module (layout/dotproc) unless a program
// sets a supervised worker process with SetDot.
//
// Units in and out are Excalidraw pixels with y growing downwards; Graphviz's points and upward y
// are converted here.
package layout

import (
	"context"
	"errors"
	"fmt"
	"math"
	"sync/atomic"

	"github.com/excalibot/excalibot/layout/dotproc"
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
	// LabelWidth and LabelHeight are the size of the edge's label, zero for none. The label is
	// placed on the edge's route, half-way between its ends' layers (Result.Labels).
	LabelWidth, LabelHeight float64
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
	// takes DefaultNodeSep and DefaultRankSep.
	NodeSep, RankSep float64
	// Fit, when its MaxAspect is set, lets Layout rearrange the graph to fit a screen.
	Fit Fit
	// Engine picks the layout: the project's own (zero) or plain dot, the baseline (plaindot.go).
	Engine Engine
}

// Fit bounds the picture a layout makes, so that it can be read once a chat client scales it to
// the screen.
type Fit struct {
	// MaxAspect is the most the picture's longer side may be of its shorter one (2.5 for 2.5:1);
	// zero leaves the layout as dot makes it.
	MaxAspect float64
	// MaxWidth is the widest the picture may be (px), so that its text stays legible when it is
	// shown at a given width; zero for no bound.
	MaxWidth float64
	// MaxHeight is the tallest the picture may be (px), for the same reason: a preview shows a
	// tall picture at the height of the screen. Zero for no bound.
	MaxHeight float64
	// Small pictures are left as dot lays them out: one whose longer side is at most Small px
	// stays legible on any screen, a strip of three boxes included.
	Small float64
	// Turn allows the other direction (top-down for left-right and back) when it fits better;
	// without it the layers keep Graph.Direction, and a long graph is wrapped instead.
	Turn bool
}

// Rect is a box in px, top-left corner and size.
type Rect struct{ X, Y, Width, Height float64 }

// Point is a position in px.
type Point struct{ X, Y float64 }

// Result is where Layout put things. All coordinates are ≥ 0.
type Result struct {
	Nodes    map[string]Rect
	Clusters map[string]Rect
	// Routes holds, per edge index, the points dot's route passes through between the edge's ends
	// (empty for a straight edge). Ends are left to the caller, which binds arrows to node
	// borders. A labelled edge's route has an odd number of points with its label's centre in the
	// middle, where Excalidraw centres an arrow's label.
	Routes [][]Point
	// Labels holds, per edge index, the centre of its label (the zero Point for an edge without).
	Labels []Point
	// Sharp marks edges whose route is a bus of straight segments (stacked leaves), to be drawn
	// with sharp corners rather than curved through the points.
	Sharp []bool
	// Ends holds, per edge index, where its route leaves the tail's border and meets the head's,
	// for an engine that chooses those points (layout/elk's orthogonal routes); nil when the
	// route's ends aim at the nodes' centres.
	Ends [][2]Point
	// Direction is the direction the layers run in; it differs from Graph.Direction when the
	// graph was turned to fit.
	Direction Direction
	// Arrangement says how the layout was fitted, e.g. "wrapped into 3 rows"; "" when it is dot's
	// plain layered layout.
	Arrangement string
	// Crossings is how many pairs of edge routes cross, counted on the polylines through the node
	// centres and the bends (dot's own objective, so a figure to compare with others).
	Crossings int
}

// The gaps between nodes in one layer and between layers (px) when a Graph gives none: room for
// a hand-drawn arrow and its head, and for a label's node between two layers, without the
// canvas turning sparse (every engine uses them, so pictures compare at the same spacing).
const (
	DefaultNodeSep = 60.0
	DefaultRankSep = 90.0
)

// withSpacing is g with the default gaps where it gives none.
func (g Graph) withSpacing() Graph {
	if g.NodeSep <= 0 {
		g.NodeSep = DefaultNodeSep
	}
	if g.RankSep <= 0 {
		g.RankSep = DefaultRankSep
	}
	return g
}

// SelfLoopReach is how far the loop of an edge from a node back to itself reaches out of the
// node's side when it has no label.
const SelfLoopReach = 40.0

// LoopReach is how far a loop with a label labelWidth px wide reaches out of its node's side:
// Excalidraw centres a label on its arrow's middle, the loop's far side, so the loop reaches out
// far enough for the label to clear the node. The layout keeps the room to the label's far end
// free beside the node.
func LoopReach(labelWidth float64) float64 {
	if labelWidth <= 0 {
		return SelfLoopReach
	}
	return SelfLoopReach/2 + labelWidth/2 + labelPad
}

// MaxNodes bounds one layout; dot's time grows quickly past a few hundred nodes.
const MaxNodes = 500

// ErrInvalid is wrapped by every error about the input graph.
var ErrInvalid = errors.New("invalid graph")

const pt = 72.0 // Graphviz sizes are inches, positions points

// Dot runs Graphviz dot on a source and returns its json output: dotproc.InProcess unless a
// program sets another with SetDot.
type Dot interface {
	Run(ctx context.Context, src []byte) ([]byte, error)
}

var (
	_ Dot = dotproc.InProcess{}
	_ Dot = (*dotproc.Worker)(nil)
)

type dotRef struct{ Dot }

var dotRunner atomic.Pointer[dotRef]

// SetDot makes every later layout run dot with d; nil goes back to this process's Graphviz. A
// long-running program sets a dotproc.Worker once at its start, so that a broken or hung Graphviz
// costs a worker process, not the program.
func SetDot(d Dot) {
	if d == nil {
		dotRunner.Store(nil)
		return
	}
	dotRunner.Store(&dotRef{d})
}

// runSource lays a dot source out with the Dot set, and returns dot's json output.
func runSource(ctx context.Context, src string) ([]byte, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if r := dotRunner.Load(); r != nil {
		return r.Run(ctx, []byte(src))
	}
	return dotproc.InProcess{}.Run(ctx, []byte(src))
}

// Layout places g's nodes and clusters. It is safe for concurrent use (calls are serialised).
func Layout(ctx context.Context, g Graph) (Result, error) {
	if err := check(g); err != nil {
		return Result{}, err
	}
	if g.Engine == EnginePlainDot {
		return plainDot(ctx, g)
	}
	if g.Direction == MindMap {
		return mindMap(ctx, g)
	}
	g = g.withSpacing()
	res, err := fit(ctx, g)
	if err != nil {
		return Result{}, err
	}
	res.Crossings = countCrossings(g, res)
	return res, nil
}

// runDot lays the plan out with dot.
func runDot(ctx context.Context, p *plan) (placed, error) {
	out, err := runSource(ctx, p.source())
	if err != nil {
		return placed{}, err
	}
	pl, err := p.read(out)
	if err != nil {
		return placed{}, fmt.Errorf("read dot output: %w", err)
	}
	return pl, nil
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
		if e.LabelWidth < 0 || e.LabelHeight < 0 || math.IsNaN(e.LabelWidth+e.LabelHeight) || math.IsInf(e.LabelWidth+e.LabelHeight, 0) {
			return fmt.Errorf("%w: edge %q->%q has a label of size %gx%g", ErrInvalid, e.From, e.To, e.LabelWidth, e.LabelHeight)
		}
	}
	if f := g.Fit; f.MaxAspect < 0 || f.MaxWidth < 0 || f.MaxHeight < 0 || f.Small < 0 ||
		math.IsNaN(f.MaxAspect+f.MaxWidth+f.MaxHeight+f.Small) || math.IsInf(f.MaxAspect+f.MaxWidth+f.MaxHeight+f.Small, 0) ||
		f.MaxAspect > 0 && f.MaxAspect < 1 {
		return fmt.Errorf("%w: fit to aspect %g, width %g and height %g; want an aspect ≥ 1 (or 0) and a width and height ≥ 0",
			ErrInvalid, f.MaxAspect, f.MaxWidth, f.MaxHeight)
	}
	return nil
}
