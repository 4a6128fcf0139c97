package scene

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/excalibot/excalibot/internal/corpusdir"
)

// TestCorpusRoundTrip loads every real file, saves it, and checks that no element is lost and that
// re-decoding the saved file gives the same elements and the same bytes again.
func TestCorpusRoundTrip(t *testing.T) {
	for _, f := range corpusdir.Files(t) {
		t.Run(filepath.Base(f), func(t *testing.T) {
			data, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			s, err := Decode(data)
			if err != nil {
				t.Fatalf("Decode: %v", err)
			}
			wantIDs := rawIDs(t, data)
			var gotIDs []string
			for _, e := range s.AllElements() {
				gotIDs = append(gotIDs, e.ID)
			}
			if !slices.Equal(gotIDs, wantIDs) {
				t.Errorf("ids after decode: got %d %v, want %d %v", len(gotIDs), gotIDs, len(wantIDs), wantIDs)
			}
			out, err := s.Encode()
			if err != nil {
				t.Fatalf("Encode: %v", err)
			}
			s2, err := Decode(out)
			if err != nil {
				t.Fatalf("Decode(Encode()): %v", err)
			}
			assertSameElements(t, s, s2)
			out2, err := s2.Encode()
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(out, out2) {
				t.Errorf("second encode differs from first")
			}
			assertConsistent(t, s)
		})
	}
}

func assertSameElements(t *testing.T, a, b *Scene) {
	t.Helper()
	ea, eb := a.AllElements(), b.AllElements()
	if len(ea) != len(eb) {
		t.Fatalf("element count: got %d, want %d", len(eb), len(ea))
	}
	for i := range ea {
		if !sameElement(&ea[i], &eb[i]) {
			t.Errorf("element %d (%s) differs:\n got %s\nwant %s", i, ea[i].ID, encodeElement(&eb[i]), encodeElement(&ea[i]))
		}
	}
}

func rawIDs(t *testing.T, data []byte) []string {
	t.Helper()
	var env struct{ Elements []struct{ ID string } }
	if err := jsonUnmarshal(data, &env); err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, e := range env.Elements {
		ids = append(ids, e.ID)
	}
	return ids
}

func TestDecodeErrors(t *testing.T) {
	tests := []struct {
		name, in, want string
	}{
		{"not JSON", `{"type":`, "not JSON"},
		{"array", `[1,2]`, "must be a JSON object"},
		{"null", `null`, "must be a JSON object"},
		{"no type", `{"elements":[]}`, `"type" is missing`},
		{"wrong type", `{"type":"tldraw","elements":[]}`, `"type" is "tldraw"`},
		{"no elements", `{"type":"excalidraw"}`, `"elements" is missing`},
		{"elements object", `{"type":"excalidraw","elements":{}}`, `"elements" must be an array`},
		{"element not object", `{"type":"excalidraw","elements":[1]}`, `elements[0]: an element must be a JSON object`},
		{"no id", `{"type":"excalidraw","elements":[{"type":"rectangle"}]}`, `elements[0]: "id" is missing`},
		{"no type on element", `{"type":"excalidraw","elements":[{"id":"a"}]}`, `elements[0] (id "a"): "type" is missing`},
		{"x not number", `{"type":"excalidraw","elements":[{"id":"a","type":"rectangle"},{"id":"b","type":"rectangle","x":"12"}]}`, `elements[1] (id "b"): field "x": want a number, got "12"`},
		{"bad points", `{"type":"excalidraw","elements":[{"id":"a","type":"arrow","points":[[0]]}]}`, `field "points[0]"`},
		{"bad appState", `{"type":"excalidraw","elements":[],"appState":[]}`, `"appState" must be an object`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Decode([]byte(tt.in))
			if err == nil {
				t.Fatalf("got no error, want one containing %q", tt.want)
			}
			if !errors.Is(err, ErrFormat) {
				t.Errorf("error %v does not wrap ErrFormat", err)
			}
			if !strings.Contains(err.Error(), tt.want) {
				t.Errorf("got %q, want it to contain %q", err, tt.want)
			}
		})
	}
}

func TestDecodeTooLarge(t *testing.T) {
	big := make([]byte, MaxFileSize+1)
	_, err := Decode(big)
	if err == nil || !strings.Contains(err.Error(), "limit") {
		t.Fatalf("got %v, want a size-limit error", err)
	}
}
