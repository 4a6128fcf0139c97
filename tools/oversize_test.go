package tools

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"testing"
)

// TestOversizedArguments: a call's arguments over MaxArgs are refused before they are parsed,
// even for a tool that would otherwise ignore them, and the scene stays as it was.
func TestOversizedArguments(t *testing.T) {
	s := New(newTestScene(), DefaultLimits())
	mustCall(t, s, "batch_create_elements", orgChart)
	before := encode(t, s.Scene())
	pad := `{"pad":"` + strings.Repeat("x", DefaultLimits().MaxArgs) + `"}`
	for _, tool := range []string{"get_scene", "batch_create_elements", "create_graph", "done"} {
		r := s.Call(context.Background(), tool, []byte(pad))
		if !r.IsError || !strings.Contains(r.Text, "over the limit of 256 KB") {
			t.Errorf("%s with %d bytes of arguments: %q, want a refusal naming the limit", tool, len(pad), r.Text)
		}
	}
	if !bytes.Equal(before, encode(t, s.Scene())) {
		t.Error("the scene changed")
	}
	// Just under the limit is parsed as usual.
	if r := s.Call(context.Background(), "get_scene", []byte(pad[:DefaultLimits().MaxArgs-2]+`"}`)); r.IsError {
		t.Errorf("get_scene just under the limit: %q", r.Text)
	}
}

// TestEncodedArgumentsKeepLimits: a list sent as a JSON-encoded string, or as a lone object, is
// held to the same caps as the list itself, and the raw size limit counts the encoded bytes.
func TestEncodedArgumentsKeepLimits(t *testing.T) {
	lim := DefaultLimits()
	lim.MaxBatch = 3
	encoded := func(list string) string {
		b, _ := json.Marshal(list)
		return string(b)
	}
	rects := `[` + strings.Repeat(`{"id":"x","type":"rectangle","x":0,"y":0},`, 3) + `{"id":"y","type":"rectangle","x":0,"y":0}]`
	nodes := `[{"id":"a"},{"id":"b"},{"id":"c"},{"id":"d"}]`
	steps := `[{"from":"a","to":"b"},{"from":"b","to":"a"},{"from":"a","to":"b"}]`
	tests := []struct {
		tool, args, want string
	}{
		{"batch_create_elements", `{"elements":` + rects + `}`, "4 elements in one call; the limit is 3"},
		{"batch_create_elements", `{"elements":` + encoded(rects) + `}`, "4 elements in one call; the limit is 3"},
		{"create_graph", `{"nodes":` + encoded(nodes) + `}`, "4 nodes and edges in one call; the limit is 3"},
		{"add_to_graph", `{"nodes":` + encoded(nodes) + `}`, "4 nodes and edges in one call; the limit is 3"},
		{"create_sequence", `{"actors":{"id":"a"},"messages":` + encoded(steps) + `}`, "4 actors and steps in one call; the limit is 3"},
	}
	for _, tt := range tests {
		s := New(newTestScene(), lim)
		r := s.Call(context.Background(), tt.tool, []byte(tt.args))
		if !r.IsError || !strings.Contains(r.Text, tt.want) || s.Scene().Len() != 0 {
			t.Errorf("%s %s: %q, want a refusal containing %q", tt.tool, tt.args, r.Text, tt.want)
		}
	}
	// An encoded list is longer than the list: the raw limit sees the encoding, not less.
	big := `[` + strings.Repeat(`{"id":"x","type":"rectangle","x":0,"y":0},`, 5300) + `{}]`
	args := `{"elements":` + encoded(big) + `}`
	if len(big) >= DefaultLimits().MaxArgs || len(args) <= DefaultLimits().MaxArgs {
		t.Fatalf("fixture: list %d bytes, encoded call %d bytes; want the limit %d between", len(big), len(args), DefaultLimits().MaxArgs)
	}
	s := New(newTestScene(), DefaultLimits())
	if r := s.Call(context.Background(), "batch_create_elements", []byte(args)); !r.IsError || !strings.Contains(r.Text, "over the limit of 256 KB") {
		t.Errorf("encoded list over the size limit: %q", r.Text)
	}
}
