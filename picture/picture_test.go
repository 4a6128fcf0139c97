package picture

import (
	"bytes"
	"encoding/binary"
	"errors"
	"image"
	"image/color"
	"strings"
	"testing"
)

func TestPrepareScales(t *testing.T) {
	tests := []struct {
		name       string
		data       []byte
		lim        Limits
		wantW      int
		wantH      int
		wantMIME   string
		wantFormat string
	}{
		{"a wide screenshot", pngOf(t, quadrants(1536, 768)), Limits{}, 1024, 512, "image/png", "png"},
		{"a tall photo", jpegOf(t, quadrants(1200, 1600)), Limits{}, 768, 1024, "image/jpeg", "jpeg"},
		{"small pictures keep their size", pngOf(t, quadrants(300, 200)), Limits{}, 300, 200, "image/png", "png"},
		{"the longest side is a setting", jpegOf(t, quadrants(1200, 600)), Limits{LongSide: 512}, 512, 256, "image/jpeg", "jpeg"},
		{"lossy WebP goes as JPEG", readTestdata(t, "blue-purple-pink.lossy.webp"), Limits{LongSide: 100}, 100, 67, "image/jpeg", "webp"},
		{"lossless WebP goes as PNG", readTestdata(t, "gopher-doc.with-alpha.lossless.webp"), Limits{}, 75, 100, "image/png", "webp"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, err := Prepare(tt.data, tt.lim)
			if err != nil {
				t.Fatal(err)
			}
			decodeOut(t, p)
			if p.Width != tt.wantW || p.Height != tt.wantH || p.MIME != tt.wantMIME || p.Format != tt.wantFormat {
				t.Errorf("got %d×%d %s from %s, want %d×%d %s from %s", p.Width, p.Height, p.MIME, p.Format,
					tt.wantW, tt.wantH, tt.wantMIME, tt.wantFormat)
			}
		})
	}
}

func TestPrepareKeepsTheContent(t *testing.T) {
	p, err := Prepare(pngOf(t, quadrants(1400, 1000)), Limits{})
	if err != nil {
		t.Fatal(err)
	}
	if got, want := corners(decodeOut(t, p)), [4]string{"red", "blue", "green", "yellow"}; got != want {
		t.Errorf("corners %v, want %v", got, want)
	}
}

// TestOrientation: a photo is turned as its EXIF orientation says, for all eight values, in both
// byte orders, and in a WebP's EXIF chunk.
func TestOrientation(t *testing.T) {
	base := jpegOf(t, quadrants(80, 40))
	want := map[uint16][4]string{ // top left, top right, bottom left, bottom right as a viewer shows them
		1: {"red", "blue", "green", "yellow"},
		2: {"blue", "red", "yellow", "green"},
		3: {"yellow", "green", "blue", "red"},
		4: {"green", "yellow", "red", "blue"},
		5: {"red", "green", "blue", "yellow"},
		6: {"green", "red", "yellow", "blue"},
		7: {"yellow", "blue", "green", "red"},
		8: {"blue", "yellow", "red", "green"},
	}
	for o := uint16(1); o <= 8; o++ {
		for _, bo := range []binary.ByteOrder{binary.BigEndian, binary.LittleEndian} {
			p, err := Prepare(withExif(base, o, bo), Limits{})
			if err != nil {
				t.Fatal(err)
			}
			m := decodeOut(t, p)
			wantW, wantH := 80, 40
			if o >= 5 {
				wantW, wantH = 40, 80
			}
			if p.Orientation != int(o) || p.Width != wantW || p.Height != wantH {
				t.Errorf("orientation %d (%v): got orientation %d, %d×%d; want %d×%d", o, bo, p.Orientation, p.Width, p.Height, wantW, wantH)
			}
			if got := corners(m); got != want[o] {
				t.Errorf("orientation %d (%v): corners %v, want %v", o, bo, got, want[o])
			}
		}
	}
	wp := webpWithExif(readTestdata(t, "gopher-doc.with-alpha.lossless.webp"), 6)
	p, err := Prepare(wp, Limits{})
	if err != nil {
		t.Fatal(err)
	}
	if p.Orientation != 6 || p.Width != 100 || p.Height != 75 {
		t.Errorf("WebP with orientation 6: orientation %d, %d×%d; want 6, 100×75", p.Orientation, p.Width, p.Height)
	}
}

func TestOrientationUnreadable(t *testing.T) {
	good := tiff(binary.BigEndian, 6)
	tests := []struct {
		name string
		t    []byte
		want int
	}{
		{"good", good, 6},
		{"out of range", tiff(binary.BigEndian, 9), 1},
		{"zero", tiff(binary.LittleEndian, 0), 1},
		{"not TIFF", []byte("XX\x00\x2a\x00\x00\x00\x08"), 1},
		{"IFD past the end", append(append([]byte{}, good[:4]...), 0xff, 0xff, 0xff, 0x00), 1},
		{"cut in the entry", good[:20], 1},
		{"empty", nil, 1},
	}
	for _, tt := range tests {
		if got := tiffOrientation(tt.t); got != tt.want {
			t.Errorf("%s: orientation %d, want %d", tt.name, got, tt.want)
		}
	}
	// A JPEG whose APP1 segment claims more bytes than the file has keeps its orientation as stored.
	j := withExif(jpegOf(t, quadrants(40, 20)), 6, binary.BigEndian)
	j[4], j[5] = 0xff, 0xff
	if got := jpegOrientation(j); got != 1 {
		t.Errorf("APP1 longer than the file: orientation %d, want 1", got)
	}
}

func TestTransparentBecomesWhite(t *testing.T) {
	m := image.NewNRGBA(image.Rect(0, 0, 64, 64)) // transparent, with black ink in the middle
	for y := 24; y < 40; y++ {
		for x := 24; x < 40; x++ {
			m.Set(x, y, color.NRGBA{0, 0, 0, 255})
		}
	}
	p, err := Prepare(pngOf(t, m), Limits{})
	if err != nil {
		t.Fatal(err)
	}
	out := decodeOut(t, p)
	if got := nearest(out.At(2, 2)); got != "white" {
		t.Errorf("transparent corner is %s, want white", got)
	}
	if got := nearest(out.At(32, 32)); got != "black" {
		t.Errorf("ink is %s, want black", got)
	}
}

// TestRefusals: every hostile or unusable file is refused before it is decoded, with a phrase
// that says what is wrong and a kind the caller can tell apart.
func TestRefusals(t *testing.T) {
	jpg := jpegOf(t, quadrants(400, 300))
	sceneDoc := `{"type":"excalidraw","version":2,"elements":[]}`
	withScene := append(pngHeader(16, 16, 8, 2)[:33:33], textChunk("application/vnd.excalidraw+json", sceneDoc)...)
	withScene = append(withScene, pngHeader(16, 16, 8, 2)[33:]...)
	tests := []struct {
		name string
		data []byte
		lim  Limits
		kind error
		want string
	}{
		{"empty", nil, Limits{}, ErrFormat, "the file is empty"},
		{"a 50 000 × 50 000 PNG header", pngHeader(50000, 50000, 8, 6), Limits{}, ErrTooLarge,
			"the picture is 50000×50000 pixels (2500 megapixels); I read pictures of up to 40 megapixels"},
		{"16-bit colour takes too much memory", pngHeader(6000, 6000, 16, 6), Limits{}, ErrTooLarge,
			"the picture would take 274.7 MB of memory to read (6000×6000 pixels of 8 bytes each); I read pictures that take up to 160.0 MB"},
		{"a truncated JPEG", jpg[:len(jpg)/2], Limits{}, ErrUnreadable, "the JPEG is cut short: the file ends before the picture does; send it again"},
		{"a JPEG without its header", jpg[:3], Limits{}, ErrUnreadable, "the JPEG is cut short"},
		{"a zip bomb named .png", zipBomb(t, 16<<20), Limits{}, ErrFormat, "this is a ZIP archive, not a picture I read; send a PNG, JPEG or WebP"},
		{"more bytes than the limit", jpg, Limits{MaxBytes: 1000}, ErrTooLarge, "the file is"},
		{"a GIF", []byte("GIF89a\x10\x00\x10\x00"), Limits{}, ErrFormat, "this is a GIF picture"},
		{"an iPhone photo", append([]byte("\x00\x00\x00\x18ftypheic"), make([]byte, 16)...), Limits{}, ErrFormat, "HEIC"},
		{"an .excalidraw file", []byte(`{"type":"excalidraw"}`), Limits{}, ErrFormat, "a JSON file"},
		{"text", []byte("hello there"), Limits{}, ErrFormat, "this is not a PNG, JPEG or WebP picture (it starts with the bytes 68 65 6c 6c)"},
		{"a 2 × 2 picture", pngOf(t, quadrants(2, 2)), Limits{}, ErrTooSmall, "the picture is 2×2 pixels, too small to show a diagram"},
		{"a PNG with a scene", withScene, Limits{}, ErrScene, "the PNG carries an Excalidraw scene"},
		{"a PNG whose data is missing", pngHeader(64, 64, 8, 2), Limits{}, ErrUnreadable, "the PNG"},
		{"a WebP cut short", readTestdata(t, "blue-purple-pink.lossy.webp")[:600], Limits{}, ErrUnreadable, "the WebP"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, err := Prepare(tt.data, tt.lim)
			if err == nil {
				t.Fatalf("accepted: %d×%d %s", p.Width, p.Height, p.MIME)
			}
			if !errors.Is(err, tt.kind) {
				t.Errorf("err %v is not %v", err, tt.kind)
			}
			var pe *Error
			if !errors.As(err, &pe) {
				t.Fatalf("err %T is not a *picture.Error", err)
			}
			if !strings.Contains(err.Error(), tt.want) || !strings.Contains(pe.UserMessage(), tt.want) {
				t.Errorf("err %q, says %q; want both to contain %q", err, pe.UserMessage(), tt.want)
			}
		})
	}
}

func TestHasScene(t *testing.T) {
	plain := pngHeader(16, 16, 8, 2)
	withScene := append(plain[:33:33], textChunk("application/vnd.excalidraw+json", "{}")...)
	withScene = append(withScene, plain[33:]...)
	other := append(plain[:33:33], textChunk("Software", "an editor")...)
	other = append(other, plain[33:]...)
	for _, tt := range []struct {
		name string
		data []byte
		want bool
	}{{"scene", withScene, true}, {"plain", plain, false}, {"other text", other, false}, {"JPEG", jpegOf(t, quadrants(16, 16)), false}} {
		if got := HasScene(tt.data); got != tt.want {
			t.Errorf("%s: HasScene = %v, want %v", tt.name, got, tt.want)
		}
	}
}

func textChunk(keyword, text string) []byte {
	var b bytes.Buffer
	data := []byte(keyword + "\x00" + text)
	_ = binary.Write(&b, binary.BigEndian, uint32(len(data)))
	b.WriteString("tEXt")
	b.Write(data)
	_ = binary.Write(&b, binary.BigEndian, crc(append([]byte("tEXt"), data...)))
	return b.Bytes()
}

// TestShrinkAverages: each target pixel is the mean of the source pixels that fall into it, on
// white where they are transparent, whatever the decoder's pixel layout.
func TestShrinkAverages(t *testing.T) {
	rgba := image.NewNRGBA(image.Rect(0, 0, 4, 2))
	for i, c := range []color.NRGBA{{200, 0, 0, 255}, {100, 0, 0, 255}, {0, 0, 0, 0}, {0, 0, 0, 0},
		{0, 100, 0, 255}, {0, 200, 0, 255}, {0, 0, 0, 255}, {0, 0, 0, 128}} {
		rgba.SetNRGBA(i%4, i/4, c)
	}
	pal := image.NewPaletted(image.Rect(0, 0, 4, 2), color.Palette{color.Black, color.White})
	pal.SetColorIndex(1, 0, 1)
	tests := []struct {
		name string
		src  image.Image
		want [2]color.RGBA
	}{
		{"NRGBA with transparency", rgba, [2]color.RGBA{{75, 75, 0, 255}, {159, 159, 159, 255}}},
		{"paletted, through At", pal, [2]color.RGBA{{64, 64, 64, 255}, {0, 0, 0, 255}}},
	}
	for _, tt := range tests {
		got := shrink(tt.src, 2, 1)
		for x := 0; x < 2; x++ {
			if c := got.RGBAAt(x, 0); c != tt.want[x] {
				t.Errorf("%s: pixel %d is %v, want %v", tt.name, x, c, tt.want[x])
			}
		}
	}
}

// TestThinStrokeSurvives: a one-pixel pen line on a board four times wider than the model's
// picture still shows after scaling, as grey.
func TestThinStrokeSurvives(t *testing.T) {
	m := image.NewGray(image.Rect(0, 0, 4096, 200))
	for i := range m.Pix {
		m.Pix[i] = 255
	}
	for y := 0; y < 200; y++ {
		m.Pix[y*m.Stride+2001] = 0
	}
	p, err := Prepare(pngOf(t, m), Limits{})
	if err != nil {
		t.Fatal(err)
	}
	out := decodeOut(t, p)
	r, _, _, _ := out.At(2001*1024/4096, 25).RGBA()
	if r>>8 > 224 {
		t.Errorf("the stroke's column is %d of 255 bright, want it visibly darker than the board", r>>8)
	}
}
