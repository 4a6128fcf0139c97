package tools

import (
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/excalibot/excalibot/diagram"
	"github.com/excalibot/excalibot/layout"
	"github.com/excalibot/excalibot/scene"
)

// addToGraph adds nodes and edges to the diagram on the canvas. Nodes already there stay where they
// are (the human's edits included); each new node goes near its neighbours, clear of everything.
func (s *Set) addToGraph(w *scene.Scene, o *object) (string, error) {
	nodeObjs, _ := o.objList("nodes")
	edgeObjs, _ := o.objList("edges")
	finishGraph(o, []string{"nodes", "edges"})
	nodes, edges := s.decodeGraphItems(o, nodeObjs, edgeObjs)
	if !o.p.ok() {
		return "", o.p
	}
	if len(nodes)+len(edges) == 0 {
		return "", refuse("give nodes or edges to add, e.g. {\"nodes\":[{\"id\":\"cache\",\"label\":\"Cache\"}],\"edges\":[{\"from\":\"api\",\"to\":\"cache\"}]}")
	}
	dir := readGraph(w, nil).direction(w)
	ids, err := s.addGraphItems(w, nodes, edges, nil)
	if err != nil {
		return "", err
	}
	fresh := make([]string, len(nodes))
	for i, n := range nodes {
		fresh[i] = n.id
	}
	if err := placeNew(graphContext(o), w, fresh, dir); err != nil {
		return "", err
	}
	return createdText(w, ids, s.lim), nil
}

// updateGraph changes labels, colours and groups of nodes, and labels and styles of edges.
func (s *Set) updateGraph(w *scene.Scene, o *object) (string, error) {
	nodeObjs, _ := o.objList("nodes")
	edgeObjs, _ := o.objList("edges")
	finishGraph(o, []string{"nodes", "edges"})
	if len(nodeObjs)+len(edgeObjs) == 0 && o.p.ok() {
		return "", refuse("give nodes or edges to change, e.g. {\"nodes\":[{\"node\":\"api\",\"label\":\"API v2\",\"group\":\"Backend\"}]}")
	}
	g := readGraph(w, nil)
	// Edges are found before any node changes: the model named them as the scene was when it
	// wrote the call, so a node renamed in the same call is still found by its old label.
	type edgeUpd struct {
		o  *object
		a  edgeArgs
		id string
	}
	var edgeUpds []edgeUpd
	for _, e := range edgeObjs {
		a := decodeEdge(e, s.lim)
		if a.from != "" && a.to != "" && !e.has("label") && !e.has("style") && !e.has("arrow") {
			// Only the edge's ends (and perhaps unknown fields): changing nothing is no success.
			e.p.add(e.path, "nothing to change: give label, style or arrow besides from and to")
		}
		if !e.p.ok() {
			continue
		}
		id, msg := findEdge(w, g, a.from, a.to)
		if msg != "" {
			e.p.add(e.path, "%s", msg)
			continue
		}
		edgeUpds = append(edgeUpds, edgeUpd{e, a, id})
	}
	var changed []string
	for _, n := range nodeObjs {
		ref, _ := n.str("node")
		label, hasLabel := s.lim.label(n, "label")
		fill := optColor(n, "color", roleFill)
		shape, hasShape := n.enum("shape", graphShapes, typeAliases)
		group, hasGroup := n.str("group")
		finishGraph(n, nodeUpdFields)
		if ref == "" {
			n.p.add(n.path+".node", "missing; give the node's id or label")
			continue
		}
		if !n.has("label") && !n.has("color") && !n.has("shape") && !n.has("group") {
			n.p.add(n.path, "nothing to change: give label, shape, color or group besides node")
			continue
		}
		id, msg := resolveNode(w, g, ref)
		if msg != "" {
			n.p.add(n.path+".node", "%s", msg)
			continue
		}
		if !n.p.ok() {
			continue
		}
		if hasShape {
			if err := reshape(w, id, scene.Type(shape)); err != nil {
				n.p.add(n.path+".shape", "%s", err)
				continue
			}
		}
		if hasLabel {
			if _, err := w.SetLabel(id, label); err != nil {
				n.p.add(n.path+".label", "%s", sceneErrText(err))
				continue
			}
			if err := diagram.FitLabel(w, id); err != nil {
				n.p.add(n.path+".label", "%s", err)
				continue
			}
		}
		if fill != nil {
			if err := w.Update(id, func(e *scene.Element) error { e.BackgroundColor = *fill; return nil }); err != nil {
				n.p.add(n.path+".color", "%s", sceneErrText(err))
				continue
			}
		}
		if hasGroup {
			if err := s.moveToGroup(w, id, group); err != nil {
				n.p.add(n.path+".group", "%s", err)
				continue
			}
		}
		changed = append(changed, id)
	}
	for _, u := range edgeUpds {
		e, a, id := u.o, u.a, u.id
		if a.hasLabel {
			if _, err := w.SetLabel(id, a.label); err != nil {
				e.p.add(e.path+".label", "%s", sceneErrText(err))
				continue
			}
		}
		if err := w.Update(id, func(el *scene.Element) error {
			if a.hasStyle {
				el.StrokeStyle = a.style
			}
			if e.has("arrow") {
				el.StartArrowhead, el.EndArrowhead = "", "arrow"
				switch a.arrow {
				case "both":
					el.StartArrowhead = "arrow"
				case "none":
					el.EndArrowhead = ""
				}
			}
			return nil
		}); err != nil {
			e.p.add(e.path, "%s", sceneErrText(err))
			continue
		}
		changed = append(changed, id)
	}
	if !o.p.ok() {
		return "", o.p
	}
	return fmt.Sprintf("changed %d: %s.", len(changed), strings.Join(changed, ", ")) + warningsAbout(w, changed), nil
}

// reshape changes a node's shape. The scene refuses to change an element's type (Excalidraw
// cannot), so the node is replaced by one of the new shape with the same id, centre, style, label,
// frame and groups, and its arrows are detached first and bound again after, so they survive.
func reshape(w *scene.Scene, id string, t scene.Type) error {
	old, _ := w.Get(id)
	if old.Type == t {
		return nil
	}
	if old.Locked {
		return fmt.Errorf("%q is locked; call unlock_elements first", id)
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
			return fmt.Errorf("detach %s: %s", en.arrow, sceneErrText(err))
		}
	}
	if _, err := w.Delete(id); err != nil {
		return fmt.Errorf("%s", sceneErrText(err))
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
		return fmt.Errorf("%s", sceneErrText(err))
	}
	if label != "" {
		if _, err := w.SetLabel(id, label, style); err != nil {
			return fmt.Errorf("%s", sceneErrText(err))
		}
		if err := diagram.FitLabel(w, id); err != nil {
			return err
		}
	}
	if old.FrameID != "" {
		if err := w.SetFrame(old.FrameID, id); err != nil {
			return fmt.Errorf("%s", sceneErrText(err))
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
			return fmt.Errorf("re-attach %s: %s", en.arrow, sceneErrText(err))
		}
	}
	return nil
}

// moveToGroup puts a node into the group (frame or box) named by id or title, creating a frame
// next to the node when there is none; "" takes the node out of its groups. The node keeps its
// place when the group can grow to hold it without covering anything else; otherwise it moves to
// the nearest spot beside the group's members where it can. The group then grows to hold it.
func (s *Set) moveToGroup(w *scene.Scene, id, group string) error {
	n, _ := w.Get(id)
	if strings.TrimSpace(group) == "" {
		if boxOf(w, &n) != "" {
			if err := assignBoxes(w, map[string]string{id: ""}, nil, nil); err != nil {
				return err
			}
		}
		if err := w.SetFrame("", id); err != nil {
			return fmt.Errorf("%s", sceneErrText(err))
		}
		return settleInGroup(w, id, "")
	}
	f := findGroup(w, group)
	if f == "" {
		f = freshID(slug(group, s.lim.MaxIDLength), "group", s.lim.MaxIDLength, w.Has)
		e := scene.NewElement(scene.Frame)
		e.ID, e.Name = f, group
		e.X, e.Y, e.Width, e.Height = n.X-groupMargin, n.Y-groupMargin, n.Width+2*groupMargin, n.Height+2*groupMargin
		if _, err := w.Add(e); err != nil {
			return fmt.Errorf("%s", sceneErrText(err))
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
		return fmt.Errorf("%s", sceneErrText(err))
	}
	return settleInGroup(w, id, f)
}

// settleInGroup keeps a node that changed group where it is when its group (grown to hold it) and
// everything else allow it; otherwise it slides to the nearest spot that does: beside the group's
// other members when it joined a group, out of the boxes it left when it joined none.
func settleInGroup(w *scene.Scene, id, group string) error {
	n, _ := w.Get(id)
	ok := spotTest(w, id, group, map[string]bool{id: true}, nil)
	if !ok(n.Bounds()) {
		want := scene.Point{X: n.X, Y: n.Y}
		if group != "" {
			g, _ := w.Get(group)
			want = scene.Point{X: g.X + groupMargin, Y: g.Y + g.Height}
			if members := groupMembers(w, group); len(members) > 1 {
				box, _ := diagram.Bounds(w, notIn(w, slices.DeleteFunc(members, func(m string) bool { return m == id })))
				want = scene.Point{X: box.X, Y: box.Y + box.Height + diagram.Gap}
			}
		}
		dir := readGraph(w, nil).direction(w)
		p, found := freeSpot(want, n.Width, n.Height, dir, ok)
		if !found && group != "" {
			var err error
			if p, err = makeRoom(w, id, group, string(dir), want); err != nil {
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
func findEdge(w *scene.Scene, g sceneGraph, fromRef, toRef string) (string, string) {
	from, msg := resolveNode(w, g, fromRef)
	if msg != "" {
		return "", "from: " + msg
	}
	to, msg := resolveNode(w, g, toRef)
	if msg != "" {
		return "", "to: " + msg
	}
	back := ""
	var all []string
	for _, e := range g.edges {
		if e.from == from && e.to == to {
			return e.id, ""
		}
		if e.from == to && e.to == from {
			back = e.id
		}
		if e.from == from || e.to == from {
			all = append(all, e.from+"→"+e.to)
		}
	}
	if back != "" {
		return back, ""
	}
	msg = fmt.Sprintf("no edge from %q to %q", from, to)
	if len(all) > 0 {
		msg += "; edges of " + from + ": " + strings.Join(all, ", ")
	}
	return "", msg
}

// removeFromGraph deletes nodes (with their labels and edges) and edges.
func (s *Set) removeFromGraph(w *scene.Scene, o *object) (string, error) {
	refs, _ := o.strList("nodes")
	edgeObjs, _ := o.objList("edges")
	finishGraph(o, []string{"nodes", "edges"})
	if len(refs)+len(edgeObjs) == 0 && o.p.ok() {
		return "", refuse("give nodes (ids or labels) or edges ({\"from\":…,\"to\":…}) to remove")
	}
	g := readGraph(w, nil)
	var ids []string
	for i, r := range refs {
		id, msg := resolveNode(w, g, r)
		if msg != "" {
			o.p.add(fmt.Sprintf("nodes[%d]", i), "%s", msg)
			continue
		}
		ids = append(ids, id)
	}
	for _, e := range edgeObjs {
		from, _ := e.str("from")
		to, _ := e.str("to")
		finishGraph(e, []string{"from", "to"})
		id, msg := findEdge(w, g, from, to)
		if msg != "" {
			e.p.add(e.path, "%s", msg)
			continue
		}
		ids = append(ids, id)
	}
	if !o.p.ok() {
		return "", o.p
	}
	gone, err := w.Delete(ids...)
	if err != nil {
		return "", refuse("%s", sceneErrText(err))
	}
	return fmt.Sprintf("removed %d elements: %s. The canvas has %d elements.", len(gone), strings.Join(gone, ", "), w.Len()), nil
}

// relayoutGraph lays the whole diagram out again, keeping its top-left corner.
func (s *Set) relayoutGraph(w *scene.Scene, o *object) (string, error) {
	g := readGraph(w, nil)
	dir := g.direction(w)
	if d, ok := o.enum("direction", graphDirs, graphDirAlias); ok {
		dir = layout.Direction(d)
	}
	finishGraph(o, []string{"direction"})
	if !o.p.ok() {
		return "", o.p
	}
	if len(g.nodes) == 0 {
		return "", refuse("the canvas has no nodes to lay out; draw with create_graph first")
	}
	var locked []string
	for _, id := range g.nodes {
		if e, _ := w.Get(id); e.Locked {
			locked = append(locked, id)
		}
	}
	if len(locked) > 0 {
		return "", refuse("nodes %s are locked; call unlock_elements first", strings.Join(locked, ", "))
	}
	box := graphBounds(w, g)
	lg, r, err := layoutOf(graphContext(o), w, g, dir)
	if err != nil {
		return "", err
	}
	if err := applyLayout(w, lg, r, box.X, box.Y); err != nil {
		return "", err
	}
	if err := routeEdges(w, edgeIDs(g), r, box.X, box.Y); err != nil {
		return "", err
	}
	return fmt.Sprintf("laid out %s again: %d nodes, %d edges, %d groups; %d edge crossings.", dir, len(g.nodes), len(g.edges), len(g.frames), r.Crossings) +
		warningsAbout(w, g.nodes), nil
}

// graphBounds is the box around the graph's nodes and frames: the corner a relayout keeps.
func graphBounds(w *scene.Scene, g sceneGraph) scene.Rect {
	minX, minY := math.Inf(1), math.Inf(1)
	for _, id := range append(append([]string(nil), g.nodes...), g.frames...) {
		e, _ := w.Get(id)
		b := e.Bounds()
		if e.Type == scene.Frame {
			b.Y -= frameTitle // the frame's name sits above it
		}
		minX, minY = math.Min(minX, b.X), math.Min(minY, b.Y)
	}
	return scene.Rect{X: minX, Y: minY}
}
