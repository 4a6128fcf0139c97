package graph

import (
	"context"
	"fmt"
	"math"
	"testing"

	"github.com/excalibot/excalibot/scene"
)

// TestLabelsKeepTheirRoom: the long labels of edges fanning out of one node and back (a control
// plane's watches and health checks) lie on no other label and no node once drawn, although
// Excalidraw would put each on one line across its wide arrow.
func TestLabelsKeepTheirRoom(t *testing.T) {
	g := Graph{Direction: "TB", Nodes: []Node{{ID: "apiserver", Label: "kube-apiserver", Shape: scene.Ellipse, Group: "API Server"},
		{ID: "admin", Label: "Administrator", Group: "API Server"}, {ID: "insider", Label: "Malicious Internal User", Group: "API Server"}}}
	for i, c := range []string{"kubelet", "kube-proxy", "kube-scheduler", "controller-manager"} {
		g.Nodes = append(g.Nodes, Node{ID: c, Label: c, Shape: scene.Ellipse, Group: []string{"Worker", "Worker", "Control plane", "Control plane"}[i]})
		g.Edges = append(g.Edges,
			Edge{From: "apiserver", To: c, Label: fmt.Sprintf("%s Health, Status, &c.", c)},
			Edge{From: c, To: "apiserver", Label: "HTTP watch for resources on kube-apiserver"})
	}
	sc := drawn(t, g)
	var labels, nodes []scene.Element
	sc.Each(func(e *scene.Element) bool {
		switch {
		case e.Type == scene.Text && e.ContainerID != "":
			if c, ok := sc.Get(e.ContainerID); ok && c.Type == scene.Arrow {
				labels = append(labels, *e)
			}
		case IsNode(e.Type) && !IsBox(e):
			nodes = append(nodes, *e)
		}
		return true
	})
	if len(labels) != 8 {
		t.Fatalf("%d arrow labels, want 8", len(labels))
	}
	box := func(e scene.Element) scene.Rect { return scene.Rect{X: e.X, Y: e.Y, Width: e.Width, Height: e.Height} }
	for i, l := range labels {
		for _, o := range labels[i+1:] {
			if box(l).Intersects(box(o)) {
				t.Errorf("label %q %v lies on label %q %v", l.Text, box(l), o.Text, box(o))
			}
		}
		for _, n := range nodes {
			if box(l).Intersects(box(n)) {
				t.Errorf("label %q %v lies on node %s %v", l.Text, box(l), n.ID, box(n))
			}
		}
	}
}

// TestNewArrowLabelsKeepClear: an arrow a follow-up adds between two nodes already placed runs
// straight, and Excalidraw puts its label in the middle of it; where another arrow's label sits
// there, the new arrow bends beside its line so its label lies clear, and passes through no node.
func TestNewArrowLabelsKeepClear(t *testing.T) {
	sc := drawn(t, Graph{
		Nodes: []Node{{ID: "a", Label: "Client"}, {ID: "b", Label: "Server"}, {ID: "x", Label: "Scheduler"}, {ID: "y", Label: "Worker"}},
		Edges: []Edge{{From: "x", To: "y", Label: "dispatches jobs"}},
	})
	// a and b either side of x → y's label, x above it and y below.
	centreAt(t, sc, "a", 0, 400)
	centreAt(t, sc, "b", 900, 400)
	centreAt(t, sc, "x", 450, 0)
	centreAt(t, sc, "y", 450, 800)
	if err := sc.Update("e-x-y", func(e *scene.Element) error { setBends(sc, e, nil); return nil }); err != nil {
		t.Fatal(err)
	}
	xy := get(t, sc, "e-x-y")
	old := get(t, sc, xy.Label())
	if c := old.Center(); math.Abs(c.Y-400) > 40 || math.Abs(c.X-450) > 40 {
		t.Fatalf("x → y's label at %v, want it in the middle between a and b; the scene does not test it", c)
	}
	if _, err := Add(context.Background(), sc, nil, []Edge{{From: "a", To: "b", Label: "requests"}}, Options{}); err != nil {
		t.Fatal(err)
	}
	arrow := get(t, sc, "e-a-b")
	label := get(t, sc, arrow.Label())
	if label.Text == "" {
		t.Fatal("the new arrow has no label")
	}
	if labelCrowded(sc, arrow, graphNodes(sc)) {
		t.Errorf("the new label %v lies on another text or a node (x → y's label %v)", label.Bounds(), old.Bounds())
	}
	if n := nodesHit(arrow, graphNodes(sc)); n != 0 {
		t.Errorf("the new arrow passes through %d nodes, want 0", n)
	}
	if len(arrow.Points) != 3 {
		t.Errorf("the new arrow has %d points, want one bend beside its line", len(arrow.Points))
	}
}
