package bot

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"image"
	"image/png"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/excalibot/excalibot/scene"
)

// sceneOf builds a .excalidraw document of n rectangles, the first one with text of textLen
// characters in a bound text element.
func sceneOf(n, textLen int) []byte {
	var els []string
	for i := range n {
		els = append(els, fmt.Sprintf(`{"id":"r%d","type":"rectangle","x":%d,"y":0,"width":100,"height":50}`, i, i*120))
	}
	if textLen > 0 {
		els = append(els, fmt.Sprintf(`{"id":"t","type":"text","x":0,"y":0,"text":%q}`, strings.Repeat("w", textLen)))
	}
	return []byte(`{"type":"excalidraw","version":2,"elements":[` + strings.Join(els, ",") + `]}`)
}

// deletedScene is a document of one box and n deleted ones (Excalidraw's tombstones).
func deletedScene(n int) []byte {
	els := []string{`{"id":"live","type":"rectangle","x":0,"y":0,"width":100,"height":50}`}
	for i := range n {
		els = append(els, fmt.Sprintf(`{"id":"d%d","type":"rectangle","x":%d,"y":0,"width":100,"height":50,"isDeleted":true}`, i, i*120))
	}
	return []byte(`{"type":"excalidraw","version":2,"elements":[` + strings.Join(els, ",") + `]}`)
}

// zlibBombPNG is a PNG whose embedded scene inflates to n bytes from a few kilobytes.
func zlibBombPNG(t *testing.T, n int) []byte {
	t.Helper()
	var img bytes.Buffer
	if err := png.Encode(&img, image.NewGray(image.Rect(0, 0, 2, 2))); err != nil {
		t.Fatal(err)
	}
	doc := append([]byte(`{"type":"excalidraw","elements":[],"pad":"`), bytes.Repeat([]byte("x"), n)...)
	doc = append(doc, `"}`...)
	out, err := scene.EmbedScene(img.Bytes(), doc)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// TestOversizedInputRefused: every kind of oversized input is refused with a message that says
// what was too big and what the limit is, and the stored diagram stays as it was (revision 1,
// same bytes). A file whose declared size is over the limit is not even downloaded.
func TestOversizedInputRefused(t *testing.T) {
	opt := Options{UserRatePerMinute: noRateLimit, ChatRatePerMinute: noRateLimit,
		MaxImportBytes: 1 << 20, MaxSceneBytes: 256 << 10, MaxElements: 50, MaxTextLength: 300}
	h := newHarness(t, opt, nil)
	var fetched atomic.Int32
	att := func(name string, declared int64, data []byte) Attachment {
		return Attachment{Name: name, Size: declared, Fetch: func(ctx context.Context, max int64) ([]byte, error) {
			fetched.Add(1)
			return data, nil
		}}
	}
	h.say(thread, "", att("start.excalidraw", 10, sceneOf(3, 0)))
	h.rec.wait(t, 1)
	before := h.rev(t, thread)
	if before.Rev != 1 {
		t.Fatalf("setup: revision %d, reply %+v", before.Rev, h.rec.last(thread))
	}
	fetched.Store(0)
	for _, tc := range []struct {
		name     string
		text     string
		file     *Attachment
		want     string
		download bool // whether the file may be fetched at all
	}{
		{"message over 4000 characters", strings.Repeat("draw ", 801), nil, "I take at most 4000", false},
		{"declared file size over the limit", "", ptr(att("big.excalidraw", 2<<20, sceneOf(1, 0))), "I import files up to 1.0 MB", false},
		{"file bigger than declared", "", ptr(att("liar.excalidraw", 100, bytes.Repeat([]byte(" "), 1<<20+1))), "I import files up to 1.0 MB", true},
		{"scene over the scene limit", "", ptr(att("fat.excalidraw", 300<<10, append(sceneOf(1, 0)[:0:0], []byte(`{"type":"excalidraw","elements":[],"pad":"`+strings.Repeat("x", 300<<10)+`"}`)...))), "I keep scenes up to 256 KB", true},
		{"PNG zlib bomb", "", ptr(att("bomb.png", 5000, zlibBombPNG(t, 4<<20))), "bomb.png: the scene embedded in this PNG is more than 256 KB; I keep scenes up to 256 KB.", true},
		{"too many elements", "", ptr(att("many.excalidraw", 9000, sceneOf(51, 0))), "51 elements; I work on diagrams of up to 50", true},
		{"text too long", "", ptr(att("essay.excalidraw", 900, sceneOf(1, 301))), "301 characters long; I take texts of up to 300", true},
		{"deleted elements over the limit", "", ptr(att("old.excalidraw", 9000, deletedScene(51))), "51 deleted elements; I take up to 50", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fetched.Store(0)
			var files []Attachment
			if tc.file != nil {
				files = append(files, *tc.file)
			}
			h.say(thread, tc.text, files...)
			h.rec.wait(t, 1)
			r := h.rec.last(thread)
			if !r.Error || !strings.Contains(r.Text, tc.want) {
				t.Errorf("reply = %q (error %v), want an error containing %q", r.Text, r.Error, tc.want)
			}
			if !tc.download && fetched.Load() != 0 {
				t.Errorf("the file was downloaded %d times; its declared size alone should refuse it", fetched.Load())
			}
			after := h.rev(t, thread)
			if after.Rev != before.Rev || !bytes.Equal(after.Scene, before.Scene) {
				t.Errorf("stored diagram changed: revision %d → %d", before.Rev, after.Rev)
			}
		})
	}
}

func ptr[T any](v T) *T { return &v }

// TestImportDropsUnsafeLinks: an uploaded .excalidraw whose elements link to javascript: and
// data: URLs, and whose image file points at an outside URL, is stored without them.
func TestImportDropsUnsafeLinks(t *testing.T) {
	h := newHarness(t, Options{}, nil)
	doc := `{"type":"excalidraw","elements":[
	 {"id":"a","type":"rectangle","x":0,"y":0,"width":100,"height":50,"link":"javascript:alert(document.cookie)"},
	 {"id":"b","type":"rectangle","x":200,"y":0,"width":100,"height":50,"link":"data:text/html,<script>alert(1)</script>"},
	 {"id":"c","type":"rectangle","x":400,"y":0,"width":100,"height":50,"link":"https://example.com/ok"},
	 {"id":"i","type":"image","x":0,"y":100,"width":100,"height":100,"fileId":"f"}],
	 "files":{"f":{"id":"f","mimeType":"image/png","dataURL":"https://tracker.example/pixel.png"}}}`
	h.say(thread, "", Attachment{Name: "evil.excalidraw", Size: int64(len(doc)), Fetch: func(context.Context, int64) ([]byte, error) { return []byte(doc), nil }})
	h.rec.wait(t, 1)
	if r := h.rec.last(thread); r.Error {
		t.Fatalf("import refused: %q", r.Text)
	}
	stored := h.rev(t, thread).Scene
	for _, bad := range []string{"javascript:", "data:text/html", "tracker.example"} {
		if bytes.Contains(stored, []byte(bad)) {
			t.Errorf("stored scene keeps %q", bad)
		}
	}
	var env struct {
		Elements []struct{ ID, Link string }
	}
	if err := json.Unmarshal(stored, &env); err != nil {
		t.Fatal(err)
	}
	for _, e := range env.Elements {
		if e.ID == "c" && e.Link != "https://example.com/ok" {
			t.Errorf("the https link was lost: %q", e.Link)
		}
	}
}
