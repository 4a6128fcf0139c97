package bot

import (
	"archive/zip"
	"bytes"
	"context"
	"encoding/binary"
	"hash/crc32"
	"image"
	"image/color"
	"image/jpeg"
	"strings"
	"testing"
)

func attachment(name, mime string, data []byte) Attachment {
	return Attachment{Name: name, MIME: mime, Size: int64(len(data)),
		Fetch: func(context.Context, int64) ([]byte, error) { return data, nil }}
}

// whiteboard is a photo-sized JPEG: a light background with dark boxes.
func whiteboard(t *testing.T, w, h int) []byte {
	t.Helper()
	img := image.NewRGBA(image.Rect(0, 0, w, h))
	for y := range h {
		for x := range w {
			c := color.RGBA{240, 240, 235, 255}
			if (x/300)%2 == 0 && (y/200)%2 == 0 {
				c = color.RGBA{30, 30, 30, 255}
			}
			img.Set(x, y, c)
		}
	}
	var buf bytes.Buffer
	if err := jpeg.Encode(&buf, img, &jpeg.Options{Quality: 80}); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// pngHeader is a PNG whose header claims w × h pixels and whose data is missing.
func pngHeader(w, h uint32) []byte {
	var b bytes.Buffer
	b.WriteString("\x89PNG\r\n\x1a\n")
	ihdr := make([]byte, 13)
	binary.BigEndian.PutUint32(ihdr[0:], w)
	binary.BigEndian.PutUint32(ihdr[4:], h)
	ihdr[8], ihdr[9] = 8, 6 // 8-bit RGBA
	chunk := func(typ string, data []byte) {
		binary.Write(&b, binary.BigEndian, uint32(len(data)))
		b.WriteString(typ)
		b.Write(data)
		binary.Write(&b, binary.BigEndian, crc32.ChecksumIEEE(append([]byte(typ), data...)))
	}
	chunk("IHDR", ihdr)
	chunk("IEND", nil)
	return b.Bytes()
}

// TestPictureIsRedrawn sends a photo with and without words: the drawer gets it scaled to the
// model's size, with the words (or none), and the reply is the new diagram.
func TestPictureIsRedrawn(t *testing.T) {
	h := newHarness(t, Options{UserRatePerMinute: noRateLimit, ChatRatePerMinute: noRateLimit, ImageSide: 800}, nil)
	photo := whiteboard(t, 2400, 1600)
	h.say(thread, "", attachment("IMG_0412.jpg", "image/jpeg", photo))
	h.rec.wait(t, 1)
	if r := h.rec.last(thread); r.Error || r.Image == nil {
		t.Fatalf("reply = %+v, want the redrawn diagram", r)
	}
	h.say(thread, "make this neat and add a cache", attachment("board.jpg", "image/jpeg", photo))
	h.rec.wait(t, 1)

	h.drawer.mu.Lock()
	defer h.drawer.mu.Unlock()
	if len(h.drawer.images) != 2 {
		t.Fatalf("drawer ran %d times, want 2", len(h.drawer.images))
	}
	for i, want := range []string{"", "make this neat and add a cache"} {
		imgs := h.drawer.images[i]
		if len(imgs) != 1 {
			t.Fatalf("run %d got %d pictures, want 1", i+1, len(imgs))
		}
		im := imgs[0]
		cfg, _, err := image.DecodeConfig(bytes.NewReader(im.Data))
		if err != nil {
			t.Fatalf("run %d: the picture sent does not decode: %v", i+1, err)
		}
		if im.Width != 800 || im.Height != 533 || cfg.Width != im.Width || cfg.Height != im.Height {
			t.Errorf("run %d: picture %dx%d (data %dx%d), want 800x533", i+1, im.Width, im.Height, cfg.Width, cfg.Height)
		}
		if got := h.drawer.prompts[i]; got != want {
			t.Errorf("run %d: prompt %q, want %q", i+1, got, want)
		}
	}
	if got := h.rev(t, thread).Rev; got != 2 {
		t.Errorf("revision %d, want 2 (one per redrawn picture, no import revisions)", got)
	}
}

// TestHostilePictures refuses what must not be decoded, with the file's name and what is wrong,
// and leaves the stored diagram as it was.
func TestHostilePictures(t *testing.T) {
	h := newHarness(t, Options{UserRatePerMinute: noRateLimit, ChatRatePerMinute: noRateLimit}, nil)
	h.say(thread, "draw")
	h.rec.wait(t, 1)

	var zipped bytes.Buffer
	zw := zip.NewWriter(&zipped)
	w, _ := zw.Create("bomb.txt")
	w.Write(bytes.Repeat([]byte{0}, 1<<20))
	zw.Close()
	photo := whiteboard(t, 400, 300)
	tests := []struct {
		name string
		att  Attachment
		want string
	}{
		{"50 000 × 50 000 header", attachment("huge.png", "image/png", pngHeader(50000, 50000)), "huge.png: "},
		{"truncated JPEG", attachment("cut.jpg", "image/jpeg", photo[:len(photo)/2]), "cut short"},
		{"zip named .png", attachment("bomb.png", "image/png", zipped.Bytes()), "ZIP"},
		{"declared too large", Attachment{Name: "big.jpg", MIME: "image/jpeg", Size: 200 << 20}, "big.jpg is 200.0 MB"},
	}
	for _, tt := range tests {
		h.say(thread, "redraw this", tt.att)
		h.rec.wait(t, 1)
		r := h.rec.last(thread)
		if !r.Error || !strings.Contains(r.Text, tt.want) || !strings.Contains(r.Text, "Nothing in the diagram changed") {
			t.Errorf("%s: reply %q, want an error with %q", tt.name, r.Text, tt.want)
		}
		if got := h.rev(t, thread).Rev; got != 1 {
			t.Errorf("%s: revision %d, want 1 (unchanged)", tt.name, got)
		}
	}
	h.drawer.mu.Lock()
	defer h.drawer.mu.Unlock()
	if len(h.drawer.prompts) != 1 {
		t.Errorf("the drawer ran %d times, want once (no hostile picture reaches the model)", len(h.drawer.prompts))
	}
}

// TestModelCannotSee turns the drawer's refusal of pictures into a reply naming what to do.
func TestModelCannotSee(t *testing.T) {
	h := newHarness(t, Options{UserRatePerMinute: noRateLimit, ChatRatePerMinute: noRateLimit}, nil)
	h.drawer.err = cannotSeeErr{}
	h.say(thread, "redraw this", attachment("board.jpg", "image/jpeg", whiteboard(t, 300, 200)))
	h.rec.wait(t, 1)
	r := h.rec.last(thread)
	for _, want := range []string{"I cannot redraw this picture: qwen3:8b cannot read pictures; models that can: gemma3:4b",
		"EXCALIBOT_VISION_MODEL", "Nothing in the diagram changed"} {
		if !r.Error || !strings.Contains(r.Text, want) {
			t.Errorf("reply %q, want an error with %q", r.Text, want)
		}
	}
}

type cannotSeeErr struct{}

func (cannotSeeErr) Error() string {
	return "qwen3:8b cannot read pictures; models that can: gemma3:4b (pulled here)"
}
func (e cannotSeeErr) UserMessage() string { return e.Error() }
func (cannotSeeErr) Is(target error) bool  { return target == ErrCannotSee }
