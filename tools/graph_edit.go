package tools

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/excalibot/excalibot/diagram"
	"github.com/excalibot/excalibot/diagram/graph"
	"github.com/excalibot/excalibot/internal/plural"
	"github.com/excalibot/excalibot/scene"
)

// addToGraph adds nodes and edges to the diagram on the canvas. Nodes already there stay where they
// are (the human's edits included); each new node goes near its neighbours, clear of everything.
func (s *Set) addToGraph(ctx context.Context, w *scene.Scene, o *object) (string, error) {
	groupObjs, _ := o.objList("groups")
	for _, g := range groupObjs { // only as holders of nodes: a new group is made by its members
		finishGraph(g, []string{"id", "title", "nodes"})
	}
	nodeObjs := graphNodeObjs(o, groupObjs)
	finishGraph(o, []string{"nodes", "edges", "groups"})
	nodes, edges := s.decodeGraphItems(o, w, nodeObjs)
	if !o.p.ok() {
		return "", o.p
	}
	if len(nodes)+len(edges) == 0 {
		return "", refuse("give nodes or edges to add, e.g. {\"nodes\":[{\"id\":\"cache\",\"label\":\"Cache\"}],\"edges\":[{\"from\":\"api\",\"to\":\"cache\"}]}")
	}
	res, err := graph.Add(ctx, w, graphNodes(nodes), graphEdges(edges), s.graphOptions())
	if err != nil {
		return "", graphRefusal(err)
	}
	return createdText(w, res.IDs, s.lim), nil
}

// updateGraph changes labels, colours and groups of nodes, and labels and styles of edges.
func (s *Set) updateGraph(_ context.Context, w *scene.Scene, o *object) (string, error) {
	nodeObjs, _ := o.objList("nodes")
	edgeObjs, _ := o.objList("edges")
	finishGraph(o, []string{"nodes", "edges"})
	if len(nodeObjs)+len(edgeObjs) == 0 && o.p.ok() {
		return "", refuse("give nodes or edges to change, e.g. {\"nodes\":[{\"node\":\"api\",\"label\":\"API v2\",\"group\":\"Backend\"}]}")
	}
	g := graph.Read(w)
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
		id, err := g.Edge(a.from, a.to)
		if err != nil {
			e.p.add(e.path, "%s", err)
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
		id, err := g.Node(ref)
		if err != nil {
			n.p.add(n.path+".node", "%s", err)
			continue
		}
		if !n.p.ok() {
			continue
		}
		if hasShape {
			if err := graph.Reshape(w, id, scene.Type(shape)); err != nil {
				var locked *graph.LockedError
				if errors.As(err, &locked) {
					n.p.add(n.path+".shape", "%q is locked; call %s first", id, UnlockElements)
				} else {
					n.p.add(n.path+".shape", "%s", sceneErrText(err))
				}
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
			if err := graph.MoveToGroup(w, id, group, s.graphOptions()); err != nil {
				n.p.add(n.path+".group", "%s", sceneErrText(err))
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

// removeFromGraph deletes nodes (with their labels and edges) and edges.
func (s *Set) removeFromGraph(_ context.Context, w *scene.Scene, o *object) (string, error) {
	refs, _ := o.strList("nodes")
	edgeObjs := graphEdgeObjs(o, w, nil)
	finishGraph(o, []string{"nodes", "edges"})
	if len(refs)+len(edgeObjs) == 0 && o.p.ok() {
		return "", refuse("give nodes (ids or labels) or edges ({\"from\":…,\"to\":…}) to remove")
	}
	var edges []graph.Edge
	for _, e := range edgeObjs {
		from, _ := e.str("from")
		to, _ := e.str("to")
		finishGraph(e, []string{"from", "to", "label", "style", "arrow"})
		edges = append(edges, graph.Edge{From: from, To: to, Ref: e.path})
	}
	gone, err := graph.Remove(w, refs, edges)
	var ps graph.Problems
	if errors.As(err, &ps) { // the ones not found, after what was wrong with the arguments
		for _, q := range ps {
			o.p.add(q.Where, "%s", graphErrText(q.Err))
		}
	}
	if !o.p.ok() {
		return "", o.p
	}
	if err != nil {
		return "", graphRefusal(err)
	}
	return fmt.Sprintf("removed %s: %s. The canvas has %s.", plural.Count(len(gone), "element", ""), strings.Join(gone, ", "), plural.Count(w.Len(), "element", "")), nil
}

// relayoutGraph lays the whole diagram out again, keeping its top-left corner.
func (s *Set) relayoutGraph(ctx context.Context, w *scene.Scene, o *object) (string, error) {
	var dir graph.Direction // the way the diagram runs now
	if d, ok := o.enum("direction", graphDirs, graphDirAlias); ok {
		dir = graph.Direction(d)
	}
	finishGraph(o, []string{"direction"})
	if !o.p.ok() {
		return "", o.p
	}
	res, err := graph.Relayout(ctx, w, dir)
	if err != nil {
		return "", graphRefusal(err)
	}
	note := legibilityNote(res.Legibility, nil)
	if note != "" {
		note = "\n" + strings.TrimSuffix(note, "\n")
	}
	return fmt.Sprintf("laid out %s%s again: %s; %s.", res.Direction, arrangementText(res.Arrangement), graphCounts(res.Nodes, res.Edges, res.Groups), plural.Count(res.Crossings, "edge crossing", "")) +
		note + warningsAbout(w, res.IDs), nil
}
