package tools

import (
	"bytes"
	"context"
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
