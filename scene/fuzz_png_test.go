package scene

import (
	"bytes"
	"compress/zlib"
	"encoding/json"
	"fmt"
	"image"
	"image/png"
	"testing"
	"time"

	"github.com/excalibot/excalibot/internal/fuzzbound"
)

// fuzzBudget bounds one fuzz input: a scene of at most 1 MB decodes in milliseconds, so anything
// near this is a hang, reported as a crasher instead of a stuck worker.
const fuzzBudget = 10 * time.Second

// fuzzMaxScene is the inflated-size bound the fuzz target passes, like the bot's MaxSceneBytes.
const fuzzMaxScene = 1 << 20

func pngOfSize(tb testing.TB, w, h int) []byte {
	tb.Helper()
	var b bytes.Buffer
	if err := png.Encode(&b, image.NewGray(image.Rect(0, 0, w, h))); err != nil {
		tb.Fatal(err)
	}
	return b.Bytes()
}

// FuzzEmbeddedScene feeds arbitrary bytes to the PNG import: EmbeddedScene, then Decode, as the
// bot does with an uploaded PNG. Nothing may panic or hang, the inflated scene never exceeds the
// limit (zlib bombs stop there), and whatever decodes keeps only safe links.
func FuzzEmbeddedScene(f *testing.F) {
	base := pngOfSize(f, 4, 3)
	embed := func(doc string) []byte {
		out, err := EmbedScene(base, []byte(doc))
		if err != nil {
			f.Fatal(err)
		}
		return out
	}
	f.Add(base)
	f.Add(embed(`{"type":"excalidraw","elements":[{"id":"a","type":"rectangle","x":1,"y":2,"width":30,"height":20,"link":"javascript:alert(1)"}]}`))
	f.Add(embed(`{"type":"excalidraw","elements":[{"id":"t","type":"text","text":"Привет ✓","link":"https://example.com"}],"files":{"x":{"dataURL":"https://evil.example/a.png"}}}`))
	// A zlib bomb: 8 MB of spaces inflate from a few kilobytes.
	var z bytes.Buffer
	zw := zlib.NewWriter(&z)
	zw.Write(bytes.Repeat([]byte(" "), 8<<20))
	zw.Close()
	env, _ := json.Marshal(map[string]any{"version": "1", "encoding": "bstring", "compressed": true, "encoded": latin1ToUTF8(z.Bytes())})
	text, _ := utf8ToLatin1(string(env))
	var chunk bytes.Buffer
	writeChunk(&chunk, "tEXt", append([]byte(pngKeyword+"\x00"), text...))
	ihdrEnd := 8 + 12 + 13
	f.Add(append(append(append([]byte{}, base[:ihdrEnd]...), chunk.Bytes()...), base[ihdrEnd:]...))
	// Legacy plain-JSON chunk, and a chunk whose declared length runs past the end.
	var legacy bytes.Buffer
	writeChunk(&legacy, "tEXt", []byte(pngKeyword+"\x00"+`{"type":"excalidraw","elements":[]}`))
	f.Add(append(append(append([]byte{}, base[:ihdrEnd]...), legacy.Bytes()...), base[ihdrEnd:]...))
	f.Add(append(append([]byte{}, base[:ihdrEnd]...), 0xff, 0xff, 0xff, 0xf0, 't', 'E', 'X', 't'))
	f.Fuzz(func(t *testing.T, data []byte) {
		err := fuzzbound.Within(fuzzBudget, "png import", func() error {
			doc, err := EmbeddedScene(data, fuzzMaxScene)
			if err != nil {
				return nil
			}
			if len(doc) > fuzzMaxScene {
				return fmt.Errorf("EmbeddedScene returned %d bytes, over its limit of %d", len(doc), fuzzMaxScene)
			}
			s, err := Decode(doc)
			if err != nil {
				return nil
			}
			for _, e := range s.Elements() {
				if SafeLink(e.Link) != e.Link {
					return fmt.Errorf("element %s kept the unsafe link %q", e.ID, e.Link)
				}
			}
			_, err = s.Encode()
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
	})
}
