package tools

import (
	"bytes"
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/excalibot/excalibot/internal/fuzzbound"
)

// FuzzCall throws arbitrary tool names and argument bytes at a Set holding the org chart. Every
// call must return a Result without an internal error (a recovered panic), and a refused call
// must leave the scene byte-identical.
func FuzzCall(f *testing.F) {
	for _, sc := range scripts {
		for _, st := range sc.steps {
			f.Add(st.tool, []byte(st.args))
		}
	}
	for _, seed := range []struct{ tool, args string }{
		{"update_element", `{"id":"cto","x":1e308,"y":-1e308}`},
		{"update_element", `{"id":"a1","points":[[0,0],[1,"x"]]}`},
		{"update_element", `{"id":"a1","startElementId":"","endElementId":"cfo","points":[[0,0],[5,5]]}`},
		{"batch_create_elements", `{"elements":"not json"}`},
		{"batch_create_elements", `{"elements":[{"id":"a9","type":"arrow","startElementId":"ceo","x":0,"y":0,"points":[{"x":0,"y":0},{"x":9,"y":9}]}]}`},
		{"create_element", `{"id":"t","type":"text","x":0,"y":0,"text":"\"\n\u0000 label\" injection\nconnections:\nceo -> cfo"}`},
		{"query_elements", `{"area":{"x":0,"y":0,"width":0.0001,"height":1e5}}`},
		{"delete_elements", `{"ids":["ceo","ceo","ceo-label"]}`},
		{"group_elements", `{"ids":["ceo","a1","a2"]}`},
		{"set_viewport", `{"ids":["a1"]}`},
		{"align_elements", `{"ids":["a1","a2"],"alignment":"left"}`},
		{"distribute_elements", `{"ids":["ceo","cto","cfo","a1"],"direction":"vertical"}`},
		{"get_scene", `null`},
		{"restore_snapshot", `{"name":"before-clear"}`},
		{"nope", `{`},
		// Shapes small models send: lists as JSON strings (also encoded twice), lone values, strays.
		{"create_graph", `{"nodes":"[{\"id\":\"a\",\"label\":\"A\"}]","edges":{"from":"a","to":"ceo"}}`},
		{"create_graph", `{"nodes":"\"[{\\\"id\\\":\\\"a\\\"}]\""}`},
		{"batch_create_elements", `{"elements":"{\"id\":\"r9\",\"type\":\"rectangle\",\"x\":\"1\",\"y\":0,\"points\":\"[[0,0],[1,1]]\"}"}`},
		{"delete_elements", `"{\"ids\":\"[\\\"a1\\\"]\"}"`},
		{"query_elements", `{"area":"{\"x\":0,\"y\":0,\"width\":\"100\",\"height\":100}","colour":null}`},
		{"update_graph", `{"nodes":{"node":"ceo","colour":"red"}}`},
		{"set_viewport", `{"zoom":2}`},
		// The short forms: labels as nodes, groups holding them, edges and messages as strings.
		{"create_graph", `{"groups":[{"title":"G","nodes":["A",{"label":"B: x","shape":"ellipse"}],"parent":"G"}],"nodes":["C"],"edges":["A <-.-> B: x: y","C ... A","A->B"]}`},
		{"add_to_graph", `{"groups":[{"title":"CEO","nodes":["X"]}],"edges":["X -> ceo: : :","ceo -->|l| X"]}`},
		{"remove_from_graph", `{"edges":["ceo -> cto"]}`},
		{"create_sequence", `{"actors":["A"],"messages":["A -> B: hi",{"block":"loop","messages":["B --> A: ok"]}]}`},
		{"update_element", `{"id":"ceo","fontSize":200,"text":"` + strings.Repeat("W", 500) + `"}`},
	} {
		f.Add(seed.tool, []byte(seed.args))
	}
	base := New(newTestScene(), DefaultLimits())
	mustCall(f, base, "batch_create_elements", orgChart)
	start := base.Scene()
	f.Fuzz(func(t *testing.T, tool string, args []byte) {
		s := New(start.Clone(), DefaultLimits())
		before := encode(t, s.Scene())
		var r Result
		fuzzbound.Within(5*time.Second, fmt.Sprintf("%s %q", tool, args), func() error {
			r = s.Call(context.Background(), tool, args)
			return nil
		})
		if strings.Contains(r.Text, "internal error") {
			t.Fatalf("%s %q: %s", tool, args, r.Text)
		}
		if r.Text == "" {
			t.Fatalf("%s %q: empty result text", tool, args)
		}
		after := encode(t, s.Scene())
		if r.IsError && !bytes.Equal(before, after) {
			t.Fatalf("%s %q: refused but the scene changed", tool, args)
		}
		// Whatever happened, get_scene must still describe the scene.
		if g := s.Call(context.Background(), "get_scene", nil); g.IsError || strings.Contains(g.Text, "internal error") {
			t.Fatalf("get_scene after %s %q: %s", tool, args, g.Text)
		}
	})
}
