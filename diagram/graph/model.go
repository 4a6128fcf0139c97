package graph

import (
	"errors"
	"fmt"
	"math"
	"strings"

	"github.com/excalibot/excalibot/diagram/sequence"
	"github.com/excalibot/excalibot/layout"
	"github.com/excalibot/excalibot/scene"
)

// The graph keeps no state of its own: it is read back from the scene on every call, so a
// diagram the human edited through the link (moved, recoloured, re-connected) is the graph the next
// call works on. Nodes are the canvas's rectangles, ellipses and diamonds; edges are arrows bound at
// both ends to two nodes; groups are frames and boxes (groups.go).

// FrameTitle is the strip reserved above a frame for its name, which Excalidraw draws outside the
// frame's top-left corner.
const FrameTitle = 30.0

type graphEdge struct{ id, from, to string }

// sceneGraph is the graph as the scene holds it.
type sceneGraph struct {
	nodes  []string          // node ids in z-order
	isNode map[string]bool   // node id → true
	frame  map[string]string // node id → its group (box or frame), for nodes in one
	frames []string          // groups holding at least one node, and the groups around them
	parent map[string]string // group id → the group it sits in
	edges  []graphEdge       // in z-order
}

func IsNode(t scene.Type) bool {
	return t == scene.Rectangle || t == scene.Ellipse || t == scene.Diamond
}

// readGraph reads the graph of the whole canvas, or only of the nodes in only when it is not nil.
func readGraph(w *scene.Scene, only map[string]bool) sceneGraph {
	g := sceneGraph{isNode: map[string]bool{}, frame: map[string]string{}, parent: map[string]string{}}
	var arrows []*scene.Element
	w.Each(func(e *scene.Element) bool {
		switch {
		case IsNode(e.Type) && (only == nil || only[e.ID]) && !isActor(e) && !IsBox(e):
			g.nodes = append(g.nodes, e.ID)
			g.isNode[e.ID] = true
			if gr := groupOf(w, e); gr != "" {
				g.frame[e.ID] = gr
			}
		case e.Type == scene.Arrow && e.StartBinding != nil && e.EndBinding != nil:
			arrows = append(arrows, e)
		}
		return true
	})
	for _, a := range arrows {
		from, to := a.StartBinding.ElementID, a.EndBinding.ElementID
		if g.isNode[from] && g.isNode[to] {
			g.edges = append(g.edges, graphEdge{a.ID, from, to})
		}
	}
	seen := map[string]bool{}
	for _, id := range g.nodes {
		for f := g.frame[id]; f != "" && !seen[f]; f = g.parent[f] {
			seen[f] = true
			g.frames = append(g.frames, f)
			g.parent[f] = parentGroup(w, f)
		}
	}
	return g
}

// isActor reports whether e is an actor of a sequence diagram (diagram/sequence groups each actor
// with its lifeline as "seq-<id>"): a graph layout must not move it away from its lifeline.
func isActor(e *scene.Element) bool {
	for _, g := range e.GroupIDs {
		if strings.HasPrefix(g, sequence.GroupPrefix) {
			return true
		}
	}
	return false
}

// direction guesses the direction a diagram was laid out in from its edges: most edges running
// more down than across mean top-down.
func (g sceneGraph) direction(w *scene.Scene) layout.Direction {
	down, across := 0, 0
	for _, e := range g.edges {
		a, _ := w.Get(e.from)
		b, _ := w.Get(e.to)
		ca, cb := a.Center(), b.Center()
		if math.Abs(cb.Y-ca.Y) >= math.Abs(cb.X-ca.X) {
			down++
		} else {
			across++
		}
	}
	if across > down {
		return layout.LeftRight
	}
	return layout.TopDown
}

// resolveNode finds a node by id, or else by its label (case and spaces ignored). Its error says
// which nodes there are when there is no such node, and which share the label when it is ambiguous.
func resolveNode(w *scene.Scene, g sceneGraph, ref string) (string, error) {
	if g.isNode[ref] {
		return ref, nil
	}
	norm := func(s string) string { return strings.Join(strings.Fields(strings.ToLower(s)), " ") }
	want := norm(ref)
	var found []string
	var all []string
	for _, id := range g.nodes {
		l := w.LabelText(id)
		all = append(all, fmt.Sprintf("%s (%q)", id, l))
		if want != "" && norm(l) == want {
			found = append(found, id)
		}
	}
	switch len(found) {
	case 1:
		return found[0], nil
	case 0:
		msg := fmt.Sprintf("no node with id or label %q", ref)
		if len(all) == 0 {
			return "", errors.New(msg + "; the canvas has no nodes yet")
		}
		if len(all) > 12 {
			all = append(all[:12], "…")
		}
		return "", errors.New(msg + "; nodes: " + strings.Join(all, ", "))
	}
	return "", fmt.Errorf("%d nodes are labelled %q (%s); use the id", len(found), ref, strings.Join(found, ", "))
}
