package agent

import (
	"context"
	"strings"
	"testing"

	"github.com/excalibot/excalibot/scene"
	"github.com/excalibot/excalibot/tools"
)

// TestEndToEndGraphTools plays what the prompt now asks of a small model: an architecture through
// create_graph (offered by default), a person moving a node in the editor, and a follow-up that adds a
// node by its neighbour's label with add_to_graph, which must leave the moved node where the person put it.
func TestEndToEndGraphTools(t *testing.T) {
	f, srv := newFakeOllama(t,
		calls(call("create_graph", `{"direction":"LR","nodes":[{"id":"web","label":"Web app","group":"Frontend"},
		 {"id":"api","label":"API","group":"Backend"},{"id":"db","label":"Database","shape":"ellipse","group":"Backend"}],
		 "edges":[{"from":"web","to":"api","label":"REST"},{"from":"API","to":"Database"}]}`)),
		calls(call("done", `{"summary":"Web app, API and database."}`)),
		calls(call("add_to_graph", `{"nodes":[{"id":"cache","label":"Cache","group":"Backend"}],"edges":[{"from":"API","to":"cache","style":"dashed"}]}`)),
		calls(call("done", `{"summary":"Added a cache."}`)),
	)
	set := tools.New(scene.New(), tools.Limits{})
	a := newAgent(t, srv.URL, Limits{})
	ctx := context.Background()
	first, err := a.Run(ctx, realRequest(set, "architecture: web app, API, database", Memory{}))
	if err != nil {
		t.Fatal(err)
	}
	if first.Reason != StopDone || first.ToolErrors != 0 || len(first.Warnings) != 0 {
		t.Fatalf("first run: %s, %d tool errors, warnings %q: %+v", first.Reason, first.ToolErrors, first.Warnings, first.Steps)
	}
	offered := map[string]bool{}
	for _, tl := range f.request(0).Tools {
		offered[tl.Function.Name] = true
	}
	if !offered["create_graph"] || !offered["add_to_graph"] {
		t.Errorf("graph tools not offered: %v", offered)
	}

	edited := set.Scene().Clone()
	if err := edited.MoveBy([]string{"web"}, 0, -120); err != nil {
		t.Fatal(err)
	}
	web, _ := edited.Get("web")
	set = tools.New(edited, tools.Limits{})
	second, err := a.Run(ctx, realRequest(set, "add a cache next to the API", first.Memory))
	if err != nil {
		t.Fatal(err)
	}
	if second.Reason != StopDone || second.ToolErrors != 0 || len(second.Warnings) != 0 {
		t.Fatalf("second run: %s, %d tool errors, warnings %q: %+v", second.Reason, second.ToolErrors, second.Warnings, second.Steps)
	}
	if got, _ := set.Scene().Get("web"); got.X != web.X || got.Y != web.Y {
		t.Errorf("the person's move was undone: web at %v,%v, want %v,%v", got.X, got.Y, web.X, web.Y)
	}
	if c, ok := set.Scene().Get("cache"); !ok || c.FrameID != "backend" {
		t.Errorf("cache missing or outside the Backend group: %+v", c)
	}
	if tm := toolMessages(f.request(3)); len(tm) == 0 || !strings.Contains(tm[len(tm)-1].Content, "created 2: cache, e-api-cache") {
		t.Errorf("add_to_graph result not sent back: %+v", tm)
	}
}
