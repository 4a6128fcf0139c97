package graph

import (
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/excalibot/excalibot/diagram"
	"github.com/excalibot/excalibot/layout"
	"github.com/excalibot/excalibot/scene"
)

// View is the graph as the scene held it when Read was called: edits find the nodes and edges
// they were given by that, so a node renamed earlier in the same edit is still found by its old
// label's place in the list.
type View struct {
	w *scene.Scene
	g sceneGraph
}

// Read reads the graph on w.
func Read(w *scene.Scene) View { return View{w, readGraph(w, nil)} }

// Node finds a node by id, or else by its label (case and spaces ignored).
func (v View) Node(ref string) (string, error) { return resolveNode(v.w, v.g, ref) }

// Edge finds the arrow from one node to another (either way round when only that exists).
func (v View) Edge(from, to string) (string, error) { return findEdge(v.w, v.g, from, to) }

// Nodes are the graph's nodes in z-order.
func (v View) Nodes() []string { return append([]string(nil), v.g.nodes...) }

// Edges are the ids of the graph's edges (arrows bound to two nodes) in z-order.
func (v View) Edges() []string { return edgeIDs(v.g) }

// GroupOf is the group (box or frame) a node is in, or "".
func (v View) GroupOf(node string) string { return v.g.frame[node] }

// Parent is the group a group of the graph sits in, or "".
func (v View) Parent(group string) string { return v.g.parent[group] }

// Direction is the way the diagram on the canvas runs, guessed from its edges.
func (v View) Direction() Direction { return v.g.direction(v.w) }

// Remove deletes nodes (with their labels and edges) and edges, found by id or label; it returns
// the ids deleted. Nodes or edges it cannot find come back as Problems ("nodes[1]" for the second
// of nodes, an edge's Ref), and nothing is deleted.
func Remove(w *scene.Scene, nodes []string, edges []Edge) ([]string, error) {
	v := Read(w)
	var ids []string
	var p Problems
	for i, r := range nodes {
		id, err := v.Node(r)
		if err != nil {
			p = append(p, Problem{Where: fmt.Sprintf("nodes[%d]", i), Err: err})
			continue
		}
		ids = append(ids, id)
	}
	for _, e := range edges {
		id, err := v.Edge(e.From, e.To)
		if err != nil {
			p = append(p, Problem{Where: e.Ref, Err: err})
			continue
		}
		ids = append(ids, id)
	}
	if len(p) > 0 {
		return nil, p
	}
	return w.Delete(ids...)
}

// Relayout lays the whole diagram out again in dir (the way it runs now when empty), keeping its
// top-left corner. A canvas without nodes is ErrNoNodes; locked nodes are a *LockedError.
func Relayout(ctx context.Context, w *scene.Scene, dir Direction) (Result, error) {
	return RelayoutWith(ctx, w, dir, Options{})
}

// RelayoutWith is Relayout with the layout engine opt.Engine (or opt.Layout).
func RelayoutWith(ctx context.Context, w *scene.Scene, dir Direction, opt Options) (Result, error) {
	g := readGraph(w, nil)
	if dir == "" {
		dir = g.direction(w)
	}
	if len(g.nodes) == 0 {
		return Result{}, ErrNoNodes
	}
	var locked []string
	for _, id := range g.nodes {
		if e, _ := w.Get(id); e.Locked {
			locked = append(locked, id)
		}
	}
	if len(locked) > 0 {
		return Result{}, &LockedError{IDs: locked}
	}
	box := graphBounds(w, g)
	fit := fitFor(w, g, false)
	if dir == MindMap {
		fit = layout.Fit{}
	}
	lg, r, err := layoutOf(ctx, w, g, dir, fit, opt)
	if err != nil {
		return Result{}, err
	}
	if err := applyLayout(w, lg, r, box.X, box.Y); err != nil {
		return Result{}, err
	}
	if err := routeEdges(w, edgeIDs(g), r, box.X, box.Y); err != nil {
		return Result{}, err
	}
	if err := keepLabelsInRoom(w, lg, edgeIDs(g)); err != nil {
		return Result{}, err
	}
	if err := clearTitles(w, g.frames); err != nil {
		return Result{}, err
	}
	return Result{IDs: g.nodes, Direction: r.Direction, Arrangement: r.Arrangement, Nodes: len(g.nodes), Edges: len(g.edges), Groups: len(g.frames), Crossings: r.Crossings,
		Legibility: legibility(w, g)}, nil
}

// Reshape changes a node's shape. The scene refuses to change an element's type (Excalidraw
// cannot), so the node is replaced by one of the new shape with the same id, centre, style, label,
// frame and groups, and its arrows are detached first and bound again after, so they survive.
func Reshape(w *scene.Scene, id string, t scene.Type) error {
	old, _ := w.Get(id)
	if old.Type == t {
		return nil
	}
	if old.Locked {
		return &LockedError{IDs: []string{id}}
	}
	label := w.LabelText(id)
	var style scene.TextStyle
	if l, ok := w.Get(old.Label()); ok && old.Label() != "" {
		style = scene.TextStyle{FontSize: l.FontSize, FontFamily: l.FontFamily}
	}
	type end struct {
		arrow string
		start bool
		b     scene.Binding
	}
	var ends []end
	w.Each(func(e *scene.Element) bool {
		if e.Type.IsLinear() {
			if e.StartBinding != nil && e.StartBinding.ElementID == id {
				ends = append(ends, end{e.ID, true, *e.StartBinding})
			}
			if e.EndBinding != nil && e.EndBinding.ElementID == id {
				ends = append(ends, end{e.ID, false, *e.EndBinding})
			}
		}
		return true
	})
	for _, en := range ends {
		if err := w.Update(en.arrow, func(e *scene.Element) error {
			if en.start {
				e.StartBinding = nil
			} else {
				e.EndBinding = nil
			}
			return nil
		}); err != nil {
			return fmt.Errorf("detach %s: %w", en.arrow, err)
		}
	}
	if _, err := w.Delete(id); err != nil {
		return err
	}
	e := scene.NewElement(t)
	e.ID = id
	e.Width, e.Height, _ = diagram.DefaultSize(t)
	c := old.Center()
	e.X, e.Y = c.X-e.Width/2, c.Y-e.Height/2
	e.StrokeColor, e.BackgroundColor, e.FillStyle = old.StrokeColor, old.BackgroundColor, old.FillStyle
	e.StrokeWidth, e.StrokeStyle, e.Roughness, e.Opacity = old.StrokeWidth, old.StrokeStyle, old.Roughness, old.Opacity
	e.GroupIDs = old.GroupIDs
	if _, err := w.Add(e); err != nil {
		return err
	}
	if label != "" {
		if _, err := w.SetLabel(id, label, style); err != nil {
			return err
		}
		if err := diagram.FitLabel(w, id); err != nil {
			return err
		}
	}
	if old.FrameID != "" {
		if err := w.SetFrame(old.FrameID, id); err != nil {
			return err
		}
	}
	for _, en := range ends {
		if err := w.Update(en.arrow, func(e *scene.Element) error {
			b := en.b
			if en.start {
				e.StartBinding = &b
			} else {
				e.EndBinding = &b
			}
			return nil
		}); err != nil {
			return fmt.Errorf("re-attach %s: %w", en.arrow, err)
		}
	}
	return nil
}

// MoveToGroup puts a node into the group (frame or box) named by id or title, creating a frame
// next to the node when there is none; "" takes the node out of its groups. The node keeps its
// place when the group can grow to hold it without covering anything else; otherwise it moves to
// the nearest spot beside the group's members where it can. The group then grows to hold it.
func MoveToGroup(w *scene.Scene, id, group string, opt Options) error {
	opt = opt.withDefaults()
	n, _ := w.Get(id)
	if strings.TrimSpace(group) == "" {
		if boxOf(w, &n) != "" {
			if err := assignBoxes(w, map[string]string{id: ""}, nil, nil); err != nil {
				return err
			}
		}
		if err := w.SetFrame("", id); err != nil {
			return err
		}
		return settleInGroup(w, id, "")
	}
	f := FindGroup(w, group)
	if f == "" {
		f = diagram.FreshID(diagram.Slug(group, opt.MaxIDLength), "group", opt.MaxIDLength, w.Has)
		e := scene.NewElement(scene.Frame)
		e.ID, e.Name = f, group
		e.X, e.Y, e.Width, e.Height = n.X-groupMargin, n.Y-groupMargin, n.Width+2*groupMargin, n.Height+2*groupMargin
		if _, err := w.Add(e); err != nil {
			return err
		}
	}
	if groupOf(w, &n) == f {
		return nil
	}
	if g, _ := w.Get(f); g.Type == scene.Frame {
		if boxOf(w, &n) != "" {
			if err := assignBoxes(w, map[string]string{id: ""}, nil, nil); err != nil {
				return err
			}
		}
	} else if err := assignBoxes(w, map[string]string{id: f}, nil, nil); err != nil {
		return err
	}
	if err := w.SetFrame(frameAbove(w, f), id); err != nil {
		return err
	}
	return settleInGroup(w, id, f)
}

// settleInGroup keeps a node that changed group where it is when its group (grown to hold it) and
// everything else allow it; otherwise it slides to the nearest spot that does: beside the group's
// other members when it joined a group, out of the boxes it left when it joined none.
func settleInGroup(w *scene.Scene, id, group string) error {
	n, _ := w.Get(id)
	var neighbours []string // its arrows must not cross other nodes where it goes
	for _, e := range readGraph(w, nil).edges {
		if e.from == id {
			neighbours = append(neighbours, e.to)
		} else if e.to == id {
			neighbours = append(neighbours, e.from)
		}
	}
	ok := spotTest(w, id, group, map[string]bool{id: true}, neighbours)
	if !ok(n.Bounds()) {
		want := scene.Point{X: n.X, Y: n.Y}
		if group != "" {
			g, _ := w.Get(group)
			want = scene.Point{X: g.X + groupMargin, Y: g.Y + g.Height}
			if members := Members(w, group); len(members) > 1 {
				box, _ := diagram.Bounds(w, notIn(w, slices.DeleteFunc(members, func(m string) bool { return m == id })))
				want = scene.Point{X: box.X, Y: box.Y + box.Height + diagram.Gap}
			}
		}
		dir := readGraph(w, nil).direction(w)
		p, found := freeSpot(want, n.Width, n.Height, dir, false, ok, groupGrowth(w, group))
		if !found && group != "" {
			var err error
			if p, err = makeRoom(w, id, group, string(dir), false, want); err != nil {
				return err
			}
			found = true
		}
		if found {
			n, _ = w.Get(id) // making room may have moved it
			if err := w.MoveBy([]string{id}, p.X-n.X, p.Y-n.Y); err != nil {
				return fmt.Errorf("move %q: %w", id, err)
			}
		}
	}
	if group == "" {
		return nil
	}
	return fitGroup(w, group, nil)
}

// notIn is the set of elements on w other than ids (and their labels), for diagram.Bounds.
func notIn(w *scene.Scene, ids []string) map[string]bool {
	keep := map[string]bool{}
	for _, id := range ids {
		keep[id] = true
	}
	skip := map[string]bool{}
	w.Each(func(e *scene.Element) bool {
		if !keep[e.ID] && !keep[e.ContainerID] {
			skip[e.ID] = true
		}
		return true
	})
	return skip
}

// findEdge finds the arrow from one node to another (either way round when only that exists).
func findEdge(w *scene.Scene, g sceneGraph, fromRef, toRef string) (string, error) {
	from, err := resolveNode(w, g, fromRef)
	if err != nil {
		return "", fmt.Errorf("from: %w", err)
	}
	to, err := resolveNode(w, g, toRef)
	if err != nil {
		return "", fmt.Errorf("to: %w", err)
	}
	back := ""
	var all []string
	for _, e := range g.edges {
		if e.from == from && e.to == to {
			return e.id, nil
		}
		if e.from == to && e.to == from {
			back = e.id
		}
		if e.from == from || e.to == from {
			all = append(all, e.from+"→"+e.to)
		}
	}
	if back != "" {
		return back, nil
	}
	msg := fmt.Sprintf("no edge from %q to %q", from, to)
	if len(all) > 0 {
		msg += "; edges of " + from + ": " + strings.Join(all, ", ")
	}
	return "", errors.New(msg)
}

// graphBounds is the box around the graph's nodes and frames: the corner a relayout keeps.
func graphBounds(w *scene.Scene, g sceneGraph) scene.Rect {
	minX, minY := math.Inf(1), math.Inf(1)
	for _, id := range append(append([]string(nil), g.nodes...), g.frames...) {
		e, _ := w.Get(id)
		b := e.Bounds()
		if e.Type == scene.Frame {
			b.Y -= FrameTitle // the frame's name sits above it
		}
		minX, minY = math.Min(minX, b.X), math.Min(minY, b.Y)
	}
	return scene.Rect{X: minX, Y: minY}
}
