// Package graph draws boxes-and-arrows diagrams on a scene and keeps them tidy as they change:
// Draw lays a whole graph out with Graphviz dot (package layout), Add places new nodes beside their
// neighbours without moving the others, and the edits (Reshape, MoveToGroup, Remove, Relayout)
// work on the graph as the scene holds it. Nodes are the canvas's rectangles, ellipses and
// diamonds; edges are arrows bound at both ends to two nodes; groups are frames and boxes
// (groups.go).
//
// This is the one diagram package that links the layout engine (go-graphviz's WASM module).
package graph

import (
	"context"
	"fmt"

	"github.com/excalibot/excalibot/diagram"
	"github.com/excalibot/excalibot/layout"
	"github.com/excalibot/excalibot/scene"
)

// Direction is the way a layout runs.
type Direction = layout.Direction

// The directions Draw and Relayout take.
const (
	TopDown   = layout.TopDown
	LeftRight = layout.LeftRight
	MindMap   = layout.MindMap
)

// Graph is a diagram to draw.
type Graph struct {
	Nodes  []Node
	Edges  []Edge
	Groups []Group
	// Direction is the way the layers run. Empty lets Draw choose: top-down, or left-right when
	// that fits the screen better. A direction given is kept; a graph too long for the screen in
	// it is wrapped (its layers snake in rows or columns that keep the direction).
	Direction Direction
}

// Node is one box.
type Node struct {
	ID    string
	Label string
	// Shape is scene.Rectangle (when empty), scene.Ellipse or scene.Diamond.
	Shape scene.Type
	// Fill is the background colour; empty keeps Excalidraw's default.
	Fill string
	// Group is the id or title of the group the node is in: one of the call's Groups, one on the
	// canvas, or else a new frame titled so.
	Group string
	// Derived says the ID was made from the label (diagram.Slug): a clash then gets a -2, -3 …
	// suffix instead of being a problem.
	Derived bool
	// Ref names the node in errors, e.g. the caller's "nodes[0]".
	Ref string
}

// Edge is an arrow from one node to another, each named by id or label (case and spaces ignored).
type Edge struct {
	From, To string
	Label    string
	Style    string // solid (when empty), dashed or dotted
	Arrow    string // end (when empty), both or none
	Ref      string
}

// Group is a frame or a box around nodes.
type Group struct {
	ID    string
	Title string // the ID when empty
	// Style is "frame" (when empty) or "box"; a group inside another is always a box, since
	// Excalidraw's frames cannot nest.
	Style string
	// Parent is the id or title of the group this one sits in: of this graph or on the canvas.
	Parent string
	Ref    string
}

// Options are the limits a drawing keeps.
type Options struct {
	MaxIDLength int // the longest id made (from labels, for edges); 64 when 0
	MaxElements int // the most elements the canvas may hold, labels included; no limit when 0
	// Engine is the layout Draw and RelayoutWith run: the project's own (zero), or PlainDot,
	// the baseline the own layout is measured against.
	Engine Engine
	// Layout, when set, lays the graph out instead of Engine: an engine of the caller's, such
	// as layout/elk's Layout, which this package does not link.
	Layout func(context.Context, layout.Graph) (layout.Result, error)
}

// Engine is a layout engine (layout.Engine).
type Engine = layout.Engine

// The engines Options.Engine takes.
const (
	OwnLayout = layout.EngineOwn
	PlainDot  = layout.EnginePlainDot
)

// Result says what Draw or Add made.
type Result struct {
	IDs       []string // the new elements (groups, nodes, edges), labels not counted
	Direction Direction
	// Arrangement says how the layout was fitted to the screen ("wrapped into 3 rows", "turned
	// LR", "leaves stacked in columns of up to 4"); "" for dot's plain layered layout.
	Arrangement string
	Nodes       int
	Edges       int
	Groups      int // the groups laid out, the canvas's groups around the new nodes included
	Crossings   int // of edges in the layout
	// Legibility is how the whole diagram reads at chat size once laid out (Draw, Relayout).
	Legibility Legibility
	Dropped    []string // groups of the graph that held no node and were not drawn
}

func (o Options) withDefaults() Options {
	if o.MaxIDLength <= 0 {
		o.MaxIDLength = 64
	}
	return o
}

func internal(nodes []Node, edges []Edge, groups []Group) ([]nodeArgs, []edgeArgs, []groupArgs) {
	ns := make([]nodeArgs, len(nodes))
	for i, n := range nodes {
		ns[i] = nodeArgs{path: n.Ref, id: n.ID, label: n.Label, shape: string(n.Shape), group: n.Group, derived: n.Derived}
		if ns[i].shape == "" {
			ns[i].shape = string(scene.Rectangle)
		}
		if n.Fill != "" {
			fill := n.Fill
			ns[i].fill = &fill
		}
	}
	es := make([]edgeArgs, len(edges))
	for i, e := range edges {
		es[i] = edgeArgs{path: e.Ref, from: e.From, to: e.To, label: e.Label, style: e.Style, arrow: e.Arrow}
		if es[i].style == "" {
			es[i].style = "solid"
		}
		if es[i].arrow == "" {
			es[i].arrow = "end"
		}
	}
	gs := make([]groupArgs, len(groups))
	for i, g := range groups {
		gs[i] = groupArgs{path: g.Ref, id: g.ID, title: g.Title, style: g.Style, parent: g.Parent}
		if gs[i].title == "" {
			gs[i].title = g.ID
		}
		if gs[i].style == "" {
			gs[i].style = "frame"
		}
	}
	return ns, es, gs
}

// nodeArgs, edgeArgs and groupArgs are the graph as the drawing works on it.
type nodeArgs struct {
	path, id, label, shape, group string
	fill                          *string
	derived                       bool
}

type edgeArgs struct{ path, from, to, label, style, arrow string }

type groupArgs struct{ path, id, title, style, parent string }

// Draw adds the graph to w right of what w holds (diagram.Beside) and lays it out. What is wrong
// with the graph (ids taken or doubled, unknown ends or parents) comes back as Problems, all at
// once. Draw changes w even when it fails; callers that must not keep half a diagram draw on a
// batch copy (scene.Batch).
func Draw(ctx context.Context, w *scene.Scene, gr Graph, opt Options) (Result, error) {
	opt = opt.withDefaults()
	if len(gr.Nodes) == 0 {
		return Result{}, fmt.Errorf("a graph needs at least one node")
	}
	dir, turn := gr.Direction, false
	if dir == "" {
		dir, turn = TopDown, true // no direction asked for: the one that fits best
	}
	nodes, edges, groups := internal(gr.Nodes, gr.Edges, gr.Groups)
	at := diagram.Beside(w) // beside what is already there, never on top of it
	ids, err := addItems(w, nodes, edges, groups, opt)
	if err != nil {
		return Result{}, err
	}
	only := map[string]bool{}
	for _, n := range nodes {
		only[n.id] = true
	}
	g := readGraph(w, only)
	fit := fitFor(w, g, turn && dir != MindMap)
	if dir == MindMap {
		fit = layout.Fit{}
	}
	lg, r, err := layoutOf(ctx, w, g, dir, fit, opt)
	if err != nil {
		return Result{}, err
	}
	if err := applyLayout(w, lg, r, at.X, at.Y); err != nil {
		return Result{}, err
	}
	if err := routeEdges(w, edgeIDs(g), r, at.X, at.Y); err != nil {
		return Result{}, err
	}
	if err := keepLabelsInRoom(w, lg, edgeIDs(g)); err != nil {
		return Result{}, err
	}
	if err := clearTitles(w, g.frames); err != nil {
		return Result{}, err
	}
	ids, dropped, err := dropEmptyGroups(w, ids, g)
	if err != nil {
		return Result{}, err
	}
	return Result{IDs: ids, Direction: r.Direction, Arrangement: r.Arrangement, Nodes: len(nodes), Edges: len(edges), Groups: len(g.frames), Crossings: r.Crossings, Dropped: dropped,
		Legibility: legibility(w, readGraph(w, only))}, nil
}

// Add adds nodes and edges to the diagram on w. Nodes already there stay where they are (a
// person's edits included); each new node goes near its neighbours, clear of everything, in the
// direction the diagram runs.
func Add(ctx context.Context, w *scene.Scene, nodes []Node, edges []Edge, opt Options) (Result, error) {
	opt = opt.withDefaults()
	ns, es, _ := internal(nodes, edges, nil)
	dir := readGraph(w, nil).direction(w)
	blocked := blockedArrows(w) // before the new arrows exist: theirs are always routed
	ids, err := addItems(w, ns, es, nil, opt)
	if err != nil {
		return Result{}, err
	}
	fresh := make([]string, len(ns))
	for i, n := range ns {
		fresh[i] = n.id
	}
	if err := placeNew(ctx, w, fresh, dir); err != nil {
		return Result{}, err
	}
	for _, id := range ids {
		if a, ok := w.Get(id); ok && a.Type == scene.Arrow && a.StartBinding != nil && a.EndBinding != nil && a.StartBinding.ElementID == a.EndBinding.ElementID {
			if err := drawLoop(w, id); err != nil {
				return Result{}, err
			}
		}
	}
	if err := unblockNew(w, blocked); err != nil {
		return Result{}, err
	}
	if err := clearLabels(w, ids); err != nil {
		return Result{}, err
	}
	return Result{IDs: ids, Direction: dir, Nodes: len(ns), Edges: len(es)}, nil
}

// dropEmptyGroups deletes the groups of this call that hold no node, directly or through a group
// inside them: they were never placed, and a 1×1 box with its title at the origin helps nobody.
func dropEmptyGroups(w *scene.Scene, ids []string, g sceneGraph) (keep, gone []string, err error) {
	laid := map[string]bool{}
	for _, f := range g.frames {
		laid[f] = true
	}
	for _, id := range ids {
		e, ok := w.Get(id)
		if !ok || laid[id] || !(e.Type == scene.Frame || IsBox(&e)) || !emptyGroup(e) {
			keep = append(keep, id)
			continue
		}
		gone = append(gone, id)
	}
	if len(gone) == 0 {
		return ids, nil, nil
	}
	var del []string
	for _, id := range gone {
		del = append(del, id)
		if t := TitleOf(w, id); t != "" {
			del = append(del, t)
		}
	}
	if _, err := w.Delete(del...); err != nil {
		return nil, nil, fmt.Errorf("drop empty groups: %w", err)
	}
	return keep, gone, nil
}

func edgeIDs(g sceneGraph) []string {
	out := make([]string, len(g.edges))
	for i, e := range g.edges {
		out[i] = e.id
	}
	return out
}

// addGraphItems adds nodes (at the origin, sized by their labels), the groups' frames and the
// edges to w, checking ids, references and the element limit. Placement is the caller's. A group
// a node names that is neither declared nor on the canvas (by frame id or title) gets a new frame
// titled by the name.
func addItems(w *scene.Scene, nodes []nodeArgs, edges []edgeArgs, groups []groupArgs, opt Options) ([]string, error) {
	p := &Problems{}
	// Ids: new, and unique in the call. Ids made from labels give way to the ids given.
	seen := map[string]string{}
	for _, n := range nodes {
		if !n.derived {
			seen[n.id] = n.path
		}
	}
	for i, n := range nodes {
		if n.derived {
			nodes[i].id = diagram.FreshID(n.id, "node", opt.MaxIDLength, func(c string) bool { return seen[c] != "" || w.Has(c) })
			seen[nodes[i].id] = n.path
		}
	}
	seen = map[string]string{}
	for _, n := range nodes {
		if prev, dup := seen[n.id]; dup {
			p.add(n.path+".id", "%q is already used by %s; give each node its own id", n.id, prev)
			continue
		}
		seen[n.id] = n.path
		if e, ok := w.Get(n.id); ok {
			*p = append(*p, Problem{Where: n.path + ".id", Err: &TakenError{ID: n.id, Type: e.Type}})
		}
	}
	// Groups: declared ones, plus any a node names; an existing group is found by id or title.
	frameOf := map[string]string{} // group name as given → group id
	var newGroups []groupArgs
	for _, g := range groups {
		if _, ok := w.Get(g.id); ok {
			p.add(g.path+".id", "%q is already on the canvas; pick another group id", g.id)
			continue
		}
		frameOf[g.id] = g.id
		frameOf[g.title] = g.id
		newGroups = append(newGroups, g)
	}
	for _, n := range nodes {
		if n.group == "" || frameOf[n.group] != "" {
			continue
		}
		if f := FindGroup(w, n.group); f != "" {
			frameOf[n.group] = f
			continue
		}
		id := diagram.FreshID(diagram.Slug(n.group, opt.MaxIDLength), "group", opt.MaxIDLength, func(c string) bool {
			return w.Has(c) || seen[c] != "" || frameIDTaken(newGroups, c)
		})
		frameOf[n.group] = id
		newGroups = append(newGroups, groupArgs{id: id, title: n.group, style: "frame"})
	}
	parents := groupParents(w, newGroups, frameOf, p)
	if !p.ok() {
		return nil, *p
	}
	labels := 0
	for _, e := range edges {
		if e.label != "" {
			labels++
		}
	}
	if total := w.Len() + 2*len(nodes) + len(edges) + labels + 2*len(newGroups); opt.MaxElements > 0 && total > opt.MaxElements {
		return nil, &TooManyError{Total: total, Limit: opt.MaxElements, Now: w.Len()}
	}
	ids, err := addGroups(w, newGroups, parents)
	if err != nil {
		return nil, err
	}
	want := map[string]string{} // node → its box
	for _, n := range nodes {
		e := scene.NewElement(scene.Type(n.shape))
		e.ID = n.id
		e.Width, e.Height, _ = diagram.DefaultSize(scene.Type(n.shape))
		if n.fill != nil {
			e.BackgroundColor = *n.fill
		}
		if _, err := w.Add(e); err != nil {
			return nil, fmt.Errorf("%s: %w", n.path, err)
		}
		if n.label != "" {
			if _, err := w.SetLabel(n.id, n.label); err != nil {
				return nil, fmt.Errorf("%s.label: %w", n.path, err)
			}
			if err := diagram.FitLabel(w, n.id); err != nil {
				return nil, err
			}
		}
		if n.group != "" {
			gid := frameOf[n.group]
			if f := frameIn(w, gid, parents); f != "" {
				if err := w.SetFrame(f, n.id); err != nil {
					return nil, fmt.Errorf("%s.group: %w", n.path, err)
				}
			}
			if e, _ := w.Get(gid); e.Type != scene.Frame {
				want[n.id] = gid
			}
		}
		ids = append(ids, n.id)
	}
	if len(want) > 0 {
		if err := assignBoxes(w, want, nil, nil); err != nil {
			return nil, err
		}
	}
	g := readGraph(w, nil)
	for _, e := range edges {
		id, err := addEdge(w, g, e, opt.MaxIDLength)
		if err != nil {
			*p = append(*p, Problem{Where: e.path, Err: err})
			continue
		}
		ids = append(ids, id)
	}
	if !p.ok() {
		return nil, *p
	}
	return ids, nil
}

func frameIDTaken(frames []groupArgs, id string) bool {
	for _, f := range frames {
		if f.id == id {
			return true
		}
	}
	return false
}

// selfLoop is the points, from its start, of a loop leaving a w×h node's right side a quarter
// down and coming back a quarter up, as state diagrams draw a transition to the same state,
// reaching out far enough for a label labelWidth px wide on its far side to clear the node.
func selfLoop(w, h, labelWidth float64) []scene.Point {
	r := layout.LoopReach(labelWidth)
	return []scene.Point{{X: 0, Y: 0}, {X: r, Y: -h / 4}, {X: r, Y: h/2 + h/4}, {X: 0, Y: h / 2}}
}

// addEdge adds one edge as an arrow bound at both ends (a loop when both are one node), with its
// label.
func addEdge(w *scene.Scene, g sceneGraph, a edgeArgs, maxID int) (string, error) {
	from, err := resolveNode(w, g, a.from)
	if err != nil {
		return "", fmt.Errorf("from: %w", err)
	}
	to, err := resolveNode(w, g, a.to)
	if err != nil {
		return "", fmt.Errorf("to: %w", err)
	}
	id := "e-" + from + "-" + to
	if w.Has(id) || len(id) > maxID {
		id = diagram.FreshID(id, "e", maxID, w.Has)
	}
	e := scene.NewElement(scene.Arrow)
	e.ID = id
	e.StrokeStyle = a.style
	e.StartBinding = &scene.Binding{ElementID: from, Gap: scene.DefaultGap}
	e.EndBinding = &scene.Binding{ElementID: to, Gap: scene.DefaultGap}
	if from == to { // a loop: its route goes round the node's corner until the layout gives one
		n, _ := w.Get(from)
		e.X, e.Y = n.X+n.Width, n.Y+n.Height/4
		e.Points = selfLoop(n.Width, n.Height, 0)
	}
	e.EndArrowhead = "arrow"
	switch a.arrow {
	case "both":
		e.StartArrowhead = "arrow"
	case "none":
		e.EndArrowhead = ""
	}
	if _, err := w.Add(e); err != nil {
		return "", err
	}
	if a.label != "" {
		if _, err := w.SetLabel(id, a.label); err != nil {
			return "", fmt.Errorf("label: %w", err)
		}
	}
	return id, nil
}
