package graph

import (
	"context"
	"testing"

	"github.com/excalibot/excalibot/scene"
)

// The plain dot engine draws the same graph, with its groups around their nodes; RelayoutWith
// lays an existing drawing out again by it.
func TestPlainDotEngine(t *testing.T) {
	nested := Graph{
		Nodes:  []Node{{ID: "web", Label: "Web"}, {ID: "api", Label: "API", Group: "core"}, {ID: "db", Label: "Database", Group: "store"}},
		Edges:  []Edge{{From: "web", To: "api", Label: "HTTPS"}, {From: "api", To: "db"}},
		Groups: []Group{{ID: "core", Title: "Backend"}, {ID: "store", Title: "Storage", Parent: "core"}},
	}
	ctx := context.Background()
	sc := scene.New()
	res, err := Draw(ctx, sc, nested, Options{Engine: PlainDot})
	if err != nil {
		t.Fatal(err)
	}
	if res.Arrangement != "" || res.Nodes != 3 || res.Groups != 2 {
		t.Errorf("result %+v, want no arrangement, 3 nodes, 2 groups", res)
	}
	check := func(when string) {
		for _, c := range []struct{ node, group string }{{"api", "core"}, {"db", "store"}, {"db", "core"}} {
			n, g := get(t, sc, c.node), get(t, sc, c.group)
			if b, o := n.Bounds(), g.Bounds(); b.X < o.X || b.Y < o.Y || b.X+b.Width > o.X+o.Width || b.Y+b.Height > o.Y+o.Height {
				t.Errorf("%s: %s %+v is not inside %s %+v", when, c.node, b, c.group, o)
			}
		}
	}
	check("drawn")
	if _, err := RelayoutWith(ctx, sc, LeftRight, Options{Engine: PlainDot}); err != nil {
		t.Fatal(err)
	}
	check("laid out again")
	if web, api := get(t, sc, "web"), get(t, sc, "api"); !(web.X+web.Width < api.X) {
		t.Errorf("web x %v, api x %v: want left to right", web.X, api.X)
	}
}
