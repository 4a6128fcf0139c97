package bot

import (
	"bytes"
	"context"
	"fmt"
	"image"
	"image/png"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/excalibot/excalibot/internal/fuzzbound"
	"github.com/excalibot/excalibot/scene"
)

// fuzzBudget bounds one fuzz input: an import of at most 1 MB decodes in milliseconds, so
// anything near this is a hang, reported as a crasher instead of a stuck worker.
const fuzzBudget = 10 * time.Second

// FuzzImport runs arbitrary bytes through the bot's import of an uploaded file, as a
// .excalidraw and as a PNG: the whole path the chat adapters hand files to (size checks,
// EmbeddedScene, Decode, the element and text limits, Encode). Every input ends in a document
// within the limits, with safe links only, or in a refusal with a message.
func FuzzImport(f *testing.F) {
	f.Add([]byte(`{"type":"excalidraw","elements":[{"id":"a","type":"rectangle","link":"javascript:alert(1)"}]}`), false)
	f.Add(sceneOf(3, 40), false)
	f.Add(sceneOf(51, 0), false)
	if files, _ := filepath.Glob("../scene/testdata/*.excalidraw"); len(files) > 0 {
		for _, p := range files {
			if b, err := os.ReadFile(p); err == nil && len(b) < 25<<10 {
				f.Add(b, false)
			}
		}
	}
	var img bytes.Buffer
	if err := png.Encode(&img, image.NewGray(image.Rect(0, 0, 3, 3))); err != nil {
		f.Fatal(err)
	}
	f.Add(img.Bytes(), true)
	if p, err := scene.EmbedScene(img.Bytes(), sceneOf(2, 10)); err == nil {
		f.Add(p, true)
	}
	const maxElements, maxText = 50, 300
	b := New(nil, nil, nil, nil, Options{MaxImportBytes: 1 << 20, MaxSceneBytes: 512 << 10, MaxElements: maxElements, MaxTextLength: maxText}, nil)
	f.Fuzz(func(t *testing.T, data []byte, isPNG bool) {
		name := "upload.excalidraw"
		if isPNG {
			name = "upload.png"
		}
		err := fuzzbound.Within(fuzzBudget, "import", func() error {
			att := Attachment{Name: name, Size: int64(len(data)), Fetch: func(context.Context, int64) ([]byte, error) { return data, nil }}
			up, err := b.readUpload(context.Background(), []Attachment{att})
			if err != nil {
				if err.Error() == "" {
					return fmt.Errorf("refusal without a message")
				}
				return nil
			}
			if p := up.picture; p != nil { // a picture without a scene goes to the model, scaled
				if max(p.Width, p.Height) > b.opt.ImageSide || len(p.Data) == 0 {
					return fmt.Errorf("picture for the model is %dx%d (%d bytes), over the side of %d", p.Width, p.Height, len(p.Data), b.opt.ImageSide)
				}
				return nil
			}
			sc, err := scene.Decode(up.doc)
			if err != nil {
				return fmt.Errorf("imported document does not decode: %v", err)
			}
			n := 0
			for _, e := range sc.Elements() {
				if !e.IsDeleted {
					n++
				}
				if scene.SafeLink(e.Link) != e.Link {
					return fmt.Errorf("element %s kept the unsafe link %q", e.ID, e.Link)
				}
				if len([]rune(e.Text)) > maxText {
					return fmt.Errorf("element %s kept a text of %d characters", e.ID, len([]rune(e.Text)))
				}
			}
			if n > maxElements {
				return fmt.Errorf("imported %d elements, over the limit of %d", n, maxElements)
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	})
}
