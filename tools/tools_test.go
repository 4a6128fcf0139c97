package tools

import (
	"bytes"
	"context"
	"encoding/json"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/excalibot/excalibot/scene"
)

// newTestScene returns an empty scene with a fixed random source and clock, so that files written
// from it are byte-identical run after run.
func newTestScene() *scene.Scene {
	t0 := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	return scene.New(scene.WithRand(rand.New(rand.NewPCG(1, 2))), scene.WithClock(func() time.Time { return t0 }))
}

// orgChart is the fixture most table tests start from.
const orgChart = `{"elements":[
 {"id":"ceo","type":"rectangle","x":200,"y":0,"text":"CEO","backgroundColor":"blue"},
 {"id":"cto","type":"rectangle","x":0,"y":200,"text":"CTO"},
 {"id":"cfo","type":"rectangle","x":400,"y":200,"text":"CFO"},
 {"id":"a1","type":"arrow","startElementId":"ceo","endElementId":"cto"},
 {"id":"a2","type":"arrow","startElementId":"ceo","endElementId":"cfo","text":"reports"}]}`

type step struct{ tool, args string }

func mustCall(t testing.TB, s *Set, tool, args string) Result {
	t.Helper()
	r := s.Call(context.Background(), tool, json.RawMessage(args))
	if r.IsError {
		t.Fatalf("%s %s: unexpected refusal:\n%s", tool, args, r.Text)
	}
	return r
}

func encode(t testing.TB, sc *scene.Scene) []byte {
	t.Helper()
	b, err := sc.Encode()
	if err != nil {
		t.Fatalf("encode scene: %v", err)
	}
	return b
}

func get(t testing.TB, sc *scene.Scene, id string) scene.Element {
	t.Helper()
	e, ok := sc.Get(id)
	if !ok {
		t.Fatalf("element %q missing; scene has %v", id, sc.IDs())
	}
	return e
}

// toolCase is one table row: setup calls that must succeed, the call under test, what its text
// must contain, and a check of the scene afterwards. A refused call must leave the scene
// byte-identical, which every error row asserts.
type toolCase struct {
	name    string
	setup   []step
	tool    string
	args    string
	wantErr bool
	want    []string // substrings of the result text
	check   func(t *testing.T, sc *scene.Scene)
}

func runCases(t *testing.T, cases []toolCase) {
	t.Helper()
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s := New(newTestScene(), DefaultLimits())
			for _, st := range tc.setup {
				mustCall(t, s, st.tool, st.args)
			}
			before := encode(t, s.Scene())
			got := s.Call(context.Background(), tc.tool, json.RawMessage(tc.args))
			if got.IsError != tc.wantErr {
				t.Fatalf("IsError = %v, want %v; text:\n%s", got.IsError, tc.wantErr, got.Text)
			}
			for _, w := range tc.want {
				if !strings.Contains(got.Text, w) {
					t.Errorf("result text does not contain %q; got:\n%s", w, got.Text)
				}
			}
			if tc.wantErr {
				if after := encode(t, s.Scene()); !bytes.Equal(before, after) {
					t.Errorf("refused call changed the scene")
				}
				if got.Changed {
					t.Errorf("refused call reports Changed")
				}
			}
			if tc.check != nil {
				tc.check(t, s.Scene())
			}
		})
	}
}

func wantLen(n int) func(*testing.T, *scene.Scene) {
	return func(t *testing.T, sc *scene.Scene) {
		t.Helper()
		if got := sc.Len(); got != n {
			t.Errorf("scene has %d elements, want %d (%v)", got, n, sc.IDs())
		}
	}
}

func TestCallEnvelope(t *testing.T) {
	runCases(t, []toolCase{
		{name: "unknown tool", tool: "get_scen", args: `{}`, wantErr: true, want: []string{`unknown tool "get_scen"`, `did you mean "get_scene"`}},
		{name: "invalid JSON", tool: "create_element", args: `{"id":`, wantErr: true, want: []string{"not valid JSON"}},
		{name: "not an object", tool: "delete_elements", args: `["r1"]`, wantErr: true, want: []string{"want a JSON object", "a list"}},
		{name: "empty args for no-arg tool", tool: "get_scene", args: ``, want: []string{"scene: empty"}},
		{name: "stray field on no-arg tool", tool: "get_scene", args: `{"verbose":true}`, want: []string{"scene: empty"}},
	})
}

func TestCancelledContext(t *testing.T) {
	s := New(newTestScene(), DefaultLimits())
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	r := s.Call(ctx, "create_element", json.RawMessage(`{"id":"r1","type":"rectangle","x":0,"y":0}`))
	if !r.IsError || !strings.Contains(r.Text, "cancelled") || s.Scene().Len() != 0 {
		t.Errorf("got %+v with %d elements, want a cancelled refusal and no change", r, s.Scene().Len())
	}
}

func TestSpecs(t *testing.T) {
	s := New(nil, Limits{})
	specs := s.Specs()
	want := []string{"get_scene", "batch_create_elements", "create_element", "update_element", "delete_elements",
		"get_element", "query_elements", "group_elements", "ungroup_elements", "align_elements", "distribute_elements",
		"lock_elements", "unlock_elements", "snapshot_scene", "restore_snapshot", "set_viewport", "read_diagram_guide",
		"clear_canvas", "done"}
	names := map[string]bool{}
	for _, sp := range specs {
		names[sp.Name] = true
		var schema struct {
			Type       string                     `json:"type"`
			Properties map[string]json.RawMessage `json:"properties"`
			Required   []string                   `json:"required"`
		}
		if err := json.Unmarshal(sp.Parameters, &schema); err != nil {
			t.Errorf("%s: parameters are not valid JSON: %v", sp.Name, err)
			continue
		}
		if schema.Type != "object" || schema.Properties == nil {
			t.Errorf("%s: schema type %q, properties %v; want an object schema", sp.Name, schema.Type, schema.Properties)
		}
		for _, r := range schema.Required {
			if _, ok := schema.Properties[r]; !ok {
				t.Errorf("%s: required %q is not a property", sp.Name, r)
			}
		}
		if _, ok := handlers[sp.Name]; !ok {
			t.Errorf("%s: no handler", sp.Name)
		}
		if len(sp.Description) > 600 {
			t.Errorf("%s: description is %d bytes; keep it short for small models", sp.Name, len(sp.Description))
		}
	}
	for _, w := range want {
		if !names[w] {
			t.Errorf("tool %q missing from Specs", w)
		}
	}
	if len(specs) != len(handlers) {
		t.Errorf("%d specs but %d handlers", len(specs), len(handlers))
	}
}

func TestReadGuideAndDone(t *testing.T) {
	runCases(t, []toolCase{
		{name: "guide", tool: "read_diagram_guide", args: `{}`, want: []string{"startElementId", "blue-light", "160x80"}},
		{name: "done with summary", tool: "done", args: `{"summary":"drew the org chart"}`, want: []string{"done: drew the org chart"}},
		{name: "done without summary", tool: "done", args: ``, want: []string{"done."}},
	})
	s := New(nil, Limits{})
	if r := s.Call(context.Background(), "done", nil); !r.Done || r.IsError {
		t.Errorf("done: got %+v, want Done", r)
	}
}
