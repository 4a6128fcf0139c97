package render

import (
	"bytes"
	"compress/zlib"
	"context"
	"encoding/binary"
	"encoding/json"
	"flag"
	"fmt"
	"image"
	"image/png"
	"io"
	"log/slog"
	"os"
	"strings"
	"sync"
	"testing"
	"time"
)

var verbose = flag.Bool("render.log", false, "log what the renderer does")

var (
	sharedOnce sync.Once
	sharedR    *Renderer
	sharedErr  error
)

func TestMain(m *testing.M) {
	flag.Parse()
	code := m.Run()
	if sharedR != nil {
		if err := sharedR.Close(); err != nil {
			fmt.Fprintln(os.Stderr, "close shared renderer:", err)
			code = 1
		}
	}
	os.Exit(code)
}

func testLogger(t testing.TB) *slog.Logger {
	if !*verbose {
		return slog.New(slog.DiscardHandler)
	}
	return slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelDebug}))
}

// needChrome skips the test when no Chromium is installed. CI installs it (.ci/run).
func needChrome(t testing.TB) {
	t.Helper()
	if _, err := findChrome(os.Getenv("CHROME")); err != nil {
		t.Skipf("skipping: needs Chromium: %v", err)
	}
}

// shared returns one renderer for all tests that do not break it on purpose.
func shared(t testing.TB) *Renderer {
	t.Helper()
	needChrome(t)
	sharedOnce.Do(func() {
		sharedR, sharedErr = New(context.Background(), Config{ChromePath: os.Getenv("CHROME")}, testLogger(t))
	})
	if sharedErr != nil {
		t.Fatalf("start shared renderer: %v", sharedErr)
	}
	return sharedR
}

// own starts a renderer the test may kill or hang; it is closed at the end of the test. Its tabs
// skip the practice renders unless cfg asks for them: these tests restart Chromium and reopen
// tabs often, and TestTabsPractise covers practice.
func own(t testing.TB, cfg Config) *Renderer {
	t.Helper()
	needChrome(t)
	cfg.ChromePath = os.Getenv("CHROME")
	if cfg.PracticeRenders == 0 {
		cfg.PracticeRenders = -1
	}
	r, err := New(context.Background(), cfg, testLogger(t))
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	t.Cleanup(func() {
		if err := r.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
	})
	return r
}

func testCtx(t testing.TB) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	t.Cleanup(cancel)
	return ctx
}

func readFile(t testing.TB, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func decodePNG(t testing.TB, b []byte) image.Image {
	t.Helper()
	img, err := png.Decode(bytes.NewReader(b))
	if err != nil {
		t.Fatalf("decode PNG (%d bytes): %v", len(b), err)
	}
	return img
}

func rgba(img image.Image, x, y int) (r, g, b, a uint8) {
	R, G, B, A := img.At(x, y).RGBA()
	return uint8(R >> 8), uint8(G >> 8), uint8(B >> 8), uint8(A >> 8)
}

// darkNear reports whether any pixel within d of (x, y) is a dark stroke pixel.
func darkNear(img image.Image, x, y, d int) bool {
	for yy := y - d; yy <= y+d; yy++ {
		for xx := x - d; xx <= x+d; xx++ {
			r, g, b, a := rgba(img, xx, yy)
			if a > 128 && int(r)+int(g)+int(b) < 3*90 {
				return true
			}
		}
	}
	return false
}

// ink counts pixels that differ from the colour of the top-left corner (the background).
func ink(img image.Image) int {
	br, bg, bb, ba := rgba(img, 0, 0)
	n := 0
	bounds := img.Bounds()
	for y := bounds.Min.Y; y < bounds.Max.Y; y++ {
		for x := bounds.Min.X; x < bounds.Max.X; x++ {
			r, g, b, a := rgba(img, x, y)
			if absDiff(r, br)+absDiff(g, bg)+absDiff(b, bb)+absDiff(a, ba) > 60 {
				n++
			}
		}
	}
	return n
}

// pixelDiff counts pixels that differ clearly between two pictures of the same size.
func pixelDiff(a, b image.Image) int {
	n := 0
	bounds := a.Bounds().Intersect(b.Bounds())
	for y := bounds.Min.Y; y < bounds.Max.Y; y++ {
		for x := bounds.Min.X; x < bounds.Max.X; x++ {
			r1, g1, b1, _ := rgba(a, x, y)
			r2, g2, b2, _ := rgba(b, x, y)
			if absDiff(r1, r2)+absDiff(g1, g2)+absDiff(b1, b2) > 60 {
				n++
			}
		}
	}
	return n + a.Bounds().Dx()*a.Bounds().Dy() - bounds.Dx()*bounds.Dy()
}

func absDiff(a, b uint8) int {
	if a > b {
		return int(a - b)
	}
	return int(b - a)
}

// embeddedScene reads the scene Excalidraw embeds in a PNG: the first tEXt chunk with the keyword
// application/vnd.excalidraw+json, Latin-1 text holding JSON whose "encoded" string is the
// zlib-compressed scene, one character per byte (Excalidraw's encodePngMetadata,
// https://github.com/excalidraw/excalidraw/blob/master/packages/excalidraw/data/image.ts).
func embeddedScene(b []byte) ([]byte, error) {
	const sig = "\x89PNG\r\n\x1a\n"
	if !bytes.HasPrefix(b, []byte(sig)) {
		return nil, fmt.Errorf("not a PNG")
	}
	for p := len(sig); p+8 <= len(b); {
		n := int(binary.BigEndian.Uint32(b[p:]))
		typ := string(b[p+4 : p+8])
		if p+12+n > len(b) {
			return nil, fmt.Errorf("chunk %s runs past the end", typ)
		}
		data := b[p+8 : p+8+n]
		p += 12 + n
		if typ != "tEXt" {
			continue
		}
		key, text, ok := bytes.Cut(data, []byte{0})
		if !ok {
			return nil, fmt.Errorf("tEXt chunk without keyword")
		}
		if string(key) != "application/vnd.excalidraw+json" {
			return nil, fmt.Errorf("first tEXt chunk has keyword %q", key)
		}
		runes := make([]rune, len(text)) // Latin-1 to UTF-8
		for i, c := range text {
			runes[i] = rune(c)
		}
		var env struct {
			Version    string `json:"version"`
			Encoding   string `json:"encoding"`
			Compressed bool   `json:"compressed"`
			Encoded    string `json:"encoded"`
		}
		if err := json.Unmarshal([]byte(string(runes)), &env); err != nil {
			return nil, fmt.Errorf("envelope: %w", err)
		}
		if env.Encoding != "bstring" || !env.Compressed {
			return nil, fmt.Errorf("envelope encoding %q compressed %v", env.Encoding, env.Compressed)
		}
		raw := make([]byte, 0, len(env.Encoded))
		for _, c := range env.Encoded {
			if c > 0xff {
				return nil, fmt.Errorf("encoded string has rune %U above 0xFF", c)
			}
			raw = append(raw, byte(c))
		}
		zr, err := zlib.NewReader(bytes.NewReader(raw))
		if err != nil {
			return nil, fmt.Errorf("zlib: %w", err)
		}
		return io.ReadAll(zr)
	}
	return nil, fmt.Errorf("no tEXt chunk")
}

// textScene is a scene with one free Excalifont text per line of texts.
func textScene(texts ...string) []byte {
	var els []map[string]any
	for i, s := range texts {
		els = append(els, element(fmt.Sprintf("t%d", i), "text", 0, float64(i)*60, float64(len([]rune(s)))*20, 45,
			map[string]any{"text": s, "originalText": s, "fontSize": 36, "fontFamily": 5, "textAlign": "left",
				"verticalAlign": "top", "containerId": nil, "autoResize": true, "lineHeight": 1.25}))
	}
	return sceneDoc(els)
}

func element(id, typ string, x, y, w, h float64, extra map[string]any) map[string]any {
	e := map[string]any{
		"id": id, "type": typ, "x": x, "y": y, "width": w, "height": h, "angle": 0,
		"strokeColor": "#1e1e1e", "backgroundColor": "transparent", "fillStyle": "solid",
		"strokeWidth": 2, "strokeStyle": "solid", "roughness": 1, "opacity": 100, "groupIds": []any{},
		"frameId": nil, "roundness": nil, "seed": 1 + len(id)*7919 + int(x)*31 + int(y), "version": 1,
		"versionNonce": 1, "index": nil, "isDeleted": false, "boundElements": []any{},
		"updated": 1700000000000, "link": nil, "locked": false,
	}
	for k, v := range extra {
		e[k] = v
	}
	return e
}

func sceneDoc(els []map[string]any) []byte {
	b, err := json.Marshal(map[string]any{"type": "excalidraw", "version": 2, "source": "test",
		"elements": els, "appState": map[string]any{"viewBackgroundColor": "#ffffff"}, "files": map[string]any{}})
	if err != nil {
		panic(err)
	}
	return b
}

// gridScene is a flowchart of n elements: labelled rectangles in rows, each joined to the next by
// a bound arrow (three elements per step), like the diagrams the bot draws.
func gridScene(n int) []byte {
	var els []map[string]any
	for i := 0; len(els) < n; i++ {
		x, y := float64(i%6)*260, float64(i/6)*180
		id := fmt.Sprintf("box%d", i)
		bound := []any{map[string]any{"type": "text", "id": id + "-t"}}
		label := fmt.Sprintf("Step %d: service", i)
		els = append(els, element(id, "rectangle", x, y, 180, 80, map[string]any{
			"backgroundColor": "#a5d8ff", "roundness": map[string]any{"type": 3}, "boundElements": bound}))
		els = append(els, element(id+"-t", "text", x+10, y+27, 160, 25, map[string]any{
			"text": label, "originalText": label, "fontSize": 20, "fontFamily": 5, "textAlign": "center",
			"verticalAlign": "middle", "containerId": id, "autoResize": true, "lineHeight": 1.25}))
		if len(els) < n && i%6 != 5 {
			aid := fmt.Sprintf("arrow%d", i)
			els = append(els, element(aid, "arrow", x+186, y+40, 68, 0, map[string]any{
				"points": [][]float64{{0, 0}, {68, 0}}, "endArrowhead": "arrow", "startArrowhead": nil,
				"roundness": map[string]any{"type": 2}, "elbowed": false,
				"startBinding": map[string]any{"elementId": id, "focus": 0, "gap": 6},
				"endBinding":   map[string]any{"elementId": fmt.Sprintf("box%d", i+1), "focus": 0, "gap": 6}}))
		}
	}
	return sceneDoc(els[:n])
}

func countElements(t testing.TB, doc []byte) int {
	var d struct{ Elements []json.RawMessage }
	if err := json.Unmarshal(doc, &d); err != nil {
		t.Fatal(err)
	}
	return len(d.Elements)
}

func shortName(path string) string {
	return strings.TrimSuffix(path[strings.LastIndex(path, "/")+1:], ".excalidraw")
}
