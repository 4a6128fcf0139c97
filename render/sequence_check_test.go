package render

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/excalibot/excalibot/scene"
)

// TestCheckSequenceScenes: the sequence diagrams that diagram/sequence and create_sequence write
// in their golden files load in Excalidraw as they are: restore() drops nothing, repairs no
// binding, and moves or re-wraps no text by more than half a pixel. Messages touch only lifelines
// and activation bars, which Excalidraw cannot bind to, so they are free arrows; one bound to a
// shape must end on that shape.
func TestCheckSequenceScenes(t *testing.T) {
	var files []string
	for _, pat := range []string{"../diagram/sequence/testdata/*.golden.excalidraw", "../tools/testdata/graph-sequence*.golden.excalidraw"} {
		m, _ := filepath.Glob(pat)
		files = append(files, m...)
	}
	if len(files) < 4 {
		t.Fatalf("found %d sequence golden scenes, want those of diagram/sequence and tools", len(files))
	}
	r := shared(t)
	for _, f := range files {
		t.Run(strings.TrimPrefix(f, "../"), func(t *testing.T) {
			doc := readFile(t, f)
			sc, err := scene.Decode(doc)
			if err != nil {
				t.Fatal(err)
			}
			arrows := 0
			for _, e := range sc.Elements() {
				if e.Type != scene.Arrow {
					continue
				}
				arrows++
				pts := e.AbsPoints()
				for i, b := range []*scene.Binding{e.StartBinding, e.EndBinding} {
					if b == nil {
						continue
					}
					target, ok := sc.Get(b.ElementID)
					end := pts[0]
					if i == 1 {
						end = pts[len(pts)-1]
					}
					box := scene.BoundingBox(target)
					g := b.Gap + 1
					box = scene.Rect{X: box.X - g, Y: box.Y - g, Width: box.Width + 2*g, Height: box.Height + 2*g}
					if !ok || !box.Contains(end) {
						t.Errorf("%s is bound to %q but ends at %v, off it", e.ID, b.ElementID, end)
					}
				}
			}
			if arrows == 0 {
				t.Fatal("no messages in the scene")
			}
			rep, err := r.Check(testCtx(t), doc)
			if err != nil {
				t.Fatal(err)
			}
			if !rep.Clean(0.5) {
				t.Errorf("Excalidraw changes the scene:\n%s", rep)
			}
			b, err := r.PNG(testCtx(t), doc, Options{})
			if err != nil {
				t.Fatal(err)
			}
			save(t, "sequence-"+shortName(f)+".png", b)
		})
	}
}
