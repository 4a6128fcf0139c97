package tools

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/excalibot/excalibot/diagram/mermaid"
)

// linkingMermaid converts any text into one box that carries the link a Mermaid "click A href"
// line asks for, and an image file fetched from outside: what a hostile diagram could make the
// converter produce.
type linkingMermaid struct{}

func (linkingMermaid) Mermaid(context.Context, string) (mermaid.Diagram, error) {
	return mermaid.Diagram{
		Type: "flowchart-v2",
		Elements: []json.RawMessage{
			json.RawMessage(`{"id":"A","type":"rectangle","x":0,"y":0,"width":120,"height":60,"link":"javascript:alert(document.cookie)"}`),
			json.RawMessage(`{"id":"B","type":"rectangle","x":200,"y":0,"width":120,"height":60,"link":"https://example.com/ok"}`),
			json.RawMessage(`{"id":"I","type":"image","x":0,"y":100,"width":60,"height":60,"fileId":"f"}`),
		},
		Files: map[string]json.RawMessage{"f": json.RawMessage(`{"id":"f","mimeType":"image/png","dataURL":"https://tracker.example/p.png"}`)},
	}, nil
}

// TestMermaidCannotWriteUnsafeLinks: Mermaid's click directives can carry javascript: URLs; what
// create_from_mermaid adds goes through scene.Decode, which keeps only http(s) links and inline
// images.
func TestMermaidCannotWriteUnsafeLinks(t *testing.T) {
	s := New(newTestScene(), DefaultLimits())
	s.SetMermaid(linkingMermaid{})
	r := s.Call(context.Background(), "create_from_mermaid", json.RawMessage(`{"mermaid":"flowchart LR\n A --> B\n click A href \"javascript:alert(1)\""}`))
	if r.IsError {
		t.Fatalf("create_from_mermaid: %s", r.Text)
	}
	doc := string(encode(t, s.Scene()))
	for _, bad := range []string{"javascript:", "tracker.example"} {
		if strings.Contains(doc, bad) {
			t.Errorf("scene keeps %q", bad)
		}
	}
	if !strings.Contains(doc, "https://example.com/ok") {
		t.Error("the https link was dropped too")
	}
}
