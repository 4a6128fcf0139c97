package scene

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/excalibot/excalibot/internal/corpusdir"
	"github.com/excalibot/excalibot/internal/fuzzbound"
)

// FuzzDecode feeds arbitrary bytes to Decode. Nothing may panic, and whatever decodes must encode,
// decode again to the same elements, and encode to the same bytes. Seeds: the corpus files, our
// own test files (up to 25 KB each) and a few hand-made edge cases.
func FuzzDecode(f *testing.F) {
	seeds := corpusdir.Optional()
	more, _ := filepath.Glob("testdata/*.excalidraw")
	seeds = append(seeds, more...)
	for _, p := range seeds {
		// Large seeds make the mutator crawl (a few execs per second); the small files cover the
		// same field shapes. TestCorpusRoundTrip checks the large ones.
		if data, err := os.ReadFile(p); err == nil && len(data) <= 25<<10 {
			f.Add(data)
		}
	}
	for _, s := range []string{
		`{"type":"excalidraw","elements":[]}`,
		`{"type":"excalidraw","elements":[{"id":"a","type":"arrow","points":[]}]}`,
		`{"type":"excalidraw","elements":[{"id":"a","type":"text","containerId":"a"}]}`,
		`{"type":"excalidraw","elements":[{"id":"a","type":"rectangle","boundElements":[{"id":"a","type":"text"}]}]}`,
		`{"type":"excalidraw","elements":[{"id":"a","type":"arrow","startBinding":{"elementId":"a"},"points":[[1,1],[2,2]]}]}`,
		`{"type":"excalidraw","elements":[{"id":"x","type":"frame","frameId":"x"},{"id":"x","type":"frame"}]}`,
		`{"type":"excalidraw","elements":[{"id":"a","type":"rectangle","index":"a10"},{"id":"b","type":"rectangle","index":"a1"}]}`,
		`{"type":"excalidraw","elements":[{"id":"a","type":"rectangle","x":1e308,"roundness":{"type":3,"value":-1}}]}`,
		`{"type":"excalidraw","elements":[],"appState":{"excalibotViewport":{"x":1,"y":2,"width":3,"height":4}},"files":null}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		var s *Scene
		var err error
		fuzzbound.Within(fuzzBudget, "decode", func() error { s, err = Decode(data); return nil }) // a hang is a crasher
		if err != nil {
			return
		}
		for _, e := range s.Elements() {
			if SafeLink(e.Link) != e.Link {
				t.Fatalf("element %s kept the unsafe link %q", e.ID, e.Link)
			}
		}
		out, err := s.Encode()
		if err != nil {
			t.Fatalf("Encode after successful Decode: %v", err)
		}
		s2, err := Decode(out)
		if err != nil {
			t.Fatalf("re-Decode of our own output: %v\n%s", err, out)
		}
		assertSameElements(t, s, s2)
		out2, err := s2.Encode()
		if err != nil {
			t.Fatal(err)
		}
		if string(out) != string(out2) {
			t.Fatalf("encode is not stable:\n%s\n---\n%s", out, out2)
		}
	})
}
