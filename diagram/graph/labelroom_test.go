package graph

import (
	"fmt"
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
