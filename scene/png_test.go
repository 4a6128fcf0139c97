package scene

import (
	"bytes"
	"errors"
	"image"
	"image/color"
	"image/png"
	"strings"
	"testing"
)

func tinyPNG(t *testing.T) []byte {
	t.Helper()
	img := image.NewRGBA(image.Rect(0, 0, 4, 3))
	img.Set(1, 1, color.RGBA{200, 10, 10, 255})
	var b bytes.Buffer
	if err := png.Encode(&b, img); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// withChunk inserts a raw chunk right after IHDR.
func withChunk(t *testing.T, p []byte, typ string, data []byte) []byte {
	t.Helper()
	ihdrEnd := 8 + 12 + 13
	var c bytes.Buffer
	writeChunk(&c, typ, data)
	return append(append(append([]byte{}, p[:ihdrEnd]...), c.Bytes()...), p[ihdrEnd:]...)
}

func TestEmbedSceneRoundTrip(t *testing.T) {
	doc := []byte(`{"type":"excalidraw","version":2,"elements":[{"id":"a","type":"text","text":"Привет, Ελληνικά, 日本語 ✓"}]}`)
	base := tinyPNG(t)
	out, err := EmbedScene(base, doc)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := png.Decode(bytes.NewReader(out)); err != nil {
		t.Fatalf("PNG with scene no longer decodes: %v", err)
	}
	got, err := EmbeddedScene(out, 1<<20)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, doc) {
		t.Errorf("EmbeddedScene = %s, want %s", got, doc)
	}
	// Embedding again replaces the scene instead of adding a second chunk.
	doc2 := []byte(`{"type":"excalidraw","version":2,"elements":[]}`)
	out2, err := EmbedScene(out, doc2)
	if err != nil {
		t.Fatal(err)
	}
	if n := bytes.Count(out2, []byte(pngKeyword)); n != 1 {
		t.Errorf("%d scene chunks after re-embedding, want 1", n)
	}
	if got, _ := EmbeddedScene(out2, 1<<20); !bytes.Equal(got, doc2) {
		t.Errorf("after re-embedding got %s, want %s", got, doc2)
	}
}

func TestEmbedSceneGoesBeforeOtherText(t *testing.T) {
	p := withChunk(t, tinyPNG(t), "tEXt", []byte("Software\x00some editor"))
	out, err := EmbedScene(p, []byte(`{"type":"excalidraw"}`))
	if err != nil {
		t.Fatal(err)
	}
	if got, err := EmbeddedScene(out, 1<<20); err != nil || string(got) != `{"type":"excalidraw"}` {
		t.Errorf("EmbeddedScene = %q, %v; the scene chunk must come first", got, err)
	}
}

func TestEmbeddedSceneErrors(t *testing.T) {
	plain := tinyPNG(t)
	legacy := withChunk(t, plain, "tEXt", append([]byte(pngKeyword+"\x00"), `{"type":"excalidraw","elements":[]}`...))
	hidden := withChunk(t, mustEmbed(t, plain), "tEXt", []byte("Comment\x00hello"))
	tests := []struct {
		name    string
		in      []byte
		want    string // substring of the error; "" = success
		wantErr error
	}{
		{"not a png", []byte("GIF89a..."), "not a PNG", nil},
		{"no scene", plain, "", ErrNoEmbeddedScene},
		{"legacy plain JSON", legacy, "", nil},
		{"scene hidden by an earlier text chunk", hidden, "", ErrNoEmbeddedScene},
		{"cut short", mustEmbed(t, plain)[:60], "cut short", nil},
		{"garbage envelope", withChunk(t, plain, "tEXt", []byte(pngKeyword+"\x00{not json")), "not JSON", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := EmbeddedScene(tt.in, 1<<20)
			switch {
			case tt.wantErr != nil:
				if !errors.Is(err, tt.wantErr) {
					t.Errorf("err = %v, want %v", err, tt.wantErr)
				}
			case tt.want == "":
				if err != nil {
					t.Errorf("err = %v, want nil", err)
				}
			default:
				if err == nil || !strings.Contains(err.Error(), tt.want) {
					t.Errorf("err = %v, want one containing %q", err, tt.want)
				}
			}
		})
	}
}

func TestEmbeddedSceneLimit(t *testing.T) {
	big := []byte(`{"type":"excalidraw","elements":[],"pad":"` + strings.Repeat("x", 100_000) + `"}`)
	out := mustEmbedDoc(t, tinyPNG(t), big)
	if _, err := EmbeddedScene(out, 50_000); err == nil || !strings.Contains(err.Error(), "limit") {
		t.Errorf("err = %v, want a size-limit error (zip bombs must not inflate unbounded)", err)
	}
}

func mustEmbed(t *testing.T, p []byte) []byte {
	return mustEmbedDoc(t, p, []byte(`{"type":"excalidraw","elements":[]}`))
}

func mustEmbedDoc(t *testing.T, p, doc []byte) []byte {
	t.Helper()
	out, err := EmbedScene(p, doc)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func TestHasEmbeddedScene(t *testing.T) {
	plain := tinyPNG(t)
	tests := []struct {
		name string
		in   []byte
		want bool
	}{
		{"not a png", []byte("GIF89a..."), false},
		{"a picture without a scene", plain, false},
		{"a scene", mustEmbed(t, plain), true},
		{"legacy plain JSON", withChunk(t, plain, "tEXt", append([]byte(pngKeyword+"\x00"), `{"type":"excalidraw"}`...)), true},
		{"a bomb still counts: the import refuses it", mustEmbedDoc(t, plain, []byte(`{"pad":"`+strings.Repeat("x", 100_000)+`"}`)), true},
		{"scene hidden by an earlier text chunk", withChunk(t, mustEmbed(t, plain), "tEXt", []byte("Comment\x00hello")), false},
		{"scene chunk cut short", mustEmbed(t, plain)[:60], false},
	}
	for _, tt := range tests {
		if got := HasEmbeddedScene(tt.in); got != tt.want {
			t.Errorf("%s: HasEmbeddedScene = %v, want %v", tt.name, got, tt.want)
		}
	}
}
