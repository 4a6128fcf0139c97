package main

import (
	"archive/zip"
	"bytes"
	"context"
	"encoding/binary"
	"hash/crc32"
	"image"
	"image/color"
	"image/draw"
	"image/jpeg"
	"image/png"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/ollama/ollama/api"

	"github.com/excalibot/excalibot/agent/ollamafake"
	"github.com/excalibot/excalibot/scene"
)

// whiteboardSketch is what the fake vision model reads in any picture.
var whiteboardSketch = ollamafake.Sketch{Kind: "flowchart", Direction: "LR",
	Nodes: []ollamafake.SketchNode{{ID: "idea", Label: "Idea"}, {ID: "review", Label: "Review?", Shape: "diamond"},
		{ID: "ship", Label: "Ship", Group: "release"}},
	Edges:  []ollamafake.SketchEdge{{From: "idea", To: "review"}, {From: "review", To: "ship", Label: "yes"}},
	Groups: []ollamafake.SketchGroup{{ID: "release", Title: "Release"}},
}

// whiteboardPhoto is a w×h JPEG of dark boxes on a light board, stored turned as a phone stores
// a photo taken upright: EXIF orientation 6 tells viewers to turn it a quarter clockwise.
func whiteboardPhoto(t testing.TB, w, h int) []byte {
	t.Helper()
	m := image.NewRGBA(image.Rect(0, 0, w, h))
	draw.Draw(m, m.Bounds(), image.NewUniform(color.RGBA{235, 235, 228, 255}), image.Point{}, draw.Src)
	for i := 0; i < 3; i++ {
		r := image.Rect(w/10+i*w/3, h/3, w/10+i*w/3+w/6, h/3+h/5)
		draw.Draw(m, r, image.NewUniform(color.RGBA{30, 30, 40, 255}), image.Point{}, draw.Src)
	}
	return photoJPEG(t, m)
}

// photoJPEG encodes m as a phone does, with EXIF orientation 6.
func photoJPEG(t testing.TB, m image.Image) []byte {
	t.Helper()
	var b bytes.Buffer
	if err := jpeg.Encode(&b, m, &jpeg.Options{Quality: 80}); err != nil {
		t.Fatal(err)
	}
	// APP1 Exif: big-endian TIFF, one IFD entry, Orientation (0x0112) SHORT 1 = 6.
	tiff := []byte("MM\x00\x2a\x00\x00\x00\x08\x00\x01\x01\x12\x00\x03\x00\x00\x00\x01\x00\x06\x00\x00\x00\x00\x00\x00")
	body := append([]byte("Exif\x00\x00"), tiff...)
	seg := append([]byte{0xFF, 0xE1, byte((len(body) + 2) >> 8), byte(len(body) + 2)}, body...)
	jpg := b.Bytes()
	return append(append(append([]byte{}, jpg[:2]...), seg...), jpg[2:]...)
}

func writeFile(t testing.TB, dir, name string, data []byte) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, data, 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func visionFake(t *testing.T, models ...string) *ollamafake.Server {
	t.Helper()
	fake := ollamafake.New(t, ollamafake.Config{Models: models, Responder: ollamafake.Sees(whiteboardSketch)})
	t.Setenv("OLLAMA_HOST", fake.URL())
	return fake
}

// TestDrawPicture: `excalibot draw --image photo.jpg` sends the photo, turned and scaled, to the
// vision model, and writes the diagram it read: the sketch's nodes, edges and group, laid out.
func TestDrawPicture(t *testing.T) {
	fake := visionFake(t, ollamafake.ToolModel, ollamafake.VisionToolModel)
	dir := t.TempDir()
	photo := writeFile(t, dir, "whiteboard.jpg", whiteboardPhoto(t, 3000, 2000))
	out := filepath.Join(dir, "flow.png")
	args := []string{"--image", photo, "redraw this", "-o", out, "--vision-model", ollamafake.VisionToolModel}
	_, chromeErr := exec.LookPath("chromium")
	if chromeErr != nil {
		args = append(args, "--chrome", filepath.Join(dir, "no-chromium"))
	}
	var stdout, stderr bytes.Buffer
	code := cmdDraw(context.Background(), args, &stdout, &stderr)
	if want := "picture whiteboard.jpg: 3000×2000 JPEG → 683×1024 JPEG of "; !strings.Contains(stdout.String(), want) ||
		!strings.Contains(stdout.String(), "turned (EXIF orientation 6)") {
		t.Errorf("stdout lacks %q and the turn:\n%s", want, stdout.String())
	}

	reqs := fake.Requests()
	if len(reqs) == 0 {
		t.Fatalf("no chat request; code %d, stderr %s", code, stderr.String())
	}
	for i, r := range reqs {
		if r.Model != ollamafake.VisionToolModel {
			t.Errorf("request %d went to %s, want the vision model", i+1, r.Model)
		}
	}
	pics := ollamafake.Pictures(reqs[0])
	if len(pics) != 1 {
		t.Fatalf("%d pictures in the first request, want 1", len(pics))
	}
	cfg, format, err := image.DecodeConfig(bytes.NewReader(pics[0]))
	if err != nil || format != "jpeg" || cfg.Width != 683 || cfg.Height != 1024 {
		t.Errorf("the model got a %s of %d×%d (%v), want the photo upright as a 683×1024 JPEG", format, cfg.Width, cfg.Height, err)
	}

	doc, err := os.ReadFile(filepath.Join(dir, "flow.excalidraw"))
	if err != nil {
		t.Fatalf("no scene written: %v; stderr %s", err, stderr.String())
	}
	sc, err := scene.Decode(doc)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := sortedLabels(t, doc), []string{"Idea", "Review?", "Ship", "yes"}; !slices.Equal(got, want) {
		t.Errorf("labels %q, want %q", got, want)
	}
	var edges, frames []string
	for _, e := range sc.Elements() {
		switch {
		case e.Type == scene.Arrow && e.StartBinding != nil && e.EndBinding != nil:
			edges = append(edges, e.StartBinding.ElementID+"->"+e.EndBinding.ElementID)
		case e.Type == scene.Frame:
			frames = append(frames, e.Name)
		}
	}
	slices.Sort(edges)
	if want := []string{"idea->review", "review->ship"}; !slices.Equal(edges, want) {
		t.Errorf("edges %q, want %q", edges, want)
	}
	if !slices.Equal(frames, []string{"Release"}) {
		t.Errorf("frames %q, want the Release group", frames)
	}
	if chromeErr != nil {
		if code != 1 || !strings.Contains(stderr.String(), "no PNG") {
			t.Errorf("without Chromium: code %d, stderr %q", code, stderr.String())
		}
		return
	}
	if pic, err := os.ReadFile(out); code != 0 || err != nil || !scene.IsPNG(pic) {
		t.Errorf("code %d, PNG %d bytes, %v; stderr %s", code, len(pic), err, stderr.String())
	}
}

// TestDrawPictureRefused: hostile and unusable files are refused with a message before anything
// is sent to the model, and nothing is written.
func TestDrawPictureRefused(t *testing.T) {
	fake := visionFake(t, ollamafake.VisionToolModel)
	jpg := whiteboardPhoto(t, 400, 300)
	tests := []struct {
		name, file string
		data       []byte
		want       string
	}{
		{"a 50 000 × 50 000 PNG header", "huge.png", pngHeader(50000, 50000),
			"huge.png: the picture is 50000×50000 pixels (2500 megapixels); I read pictures of up to 40 megapixels; nothing was sent or written"},
		{"a truncated JPEG", "cut.jpg", jpg[:len(jpg)/2], "cut.jpg: the JPEG is cut short: the file ends before the picture does; send it again"},
		{"a zip bomb named .png", "bomb.png", zipOfZeros(t, 16<<20), "bomb.png: this is a ZIP archive, not a picture I read; send a PNG, JPEG or WebP"},
		{"an empty file", "empty.jpg", nil, "empty.jpg: the file is empty"},
		{"over the size limit", "big.jpg", make([]byte, 21<<20), "big.jpg: the file is 21.0 MB; I read pictures of up to 20.0 MB (--max-image-size)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			in, outDir := t.TempDir(), t.TempDir()
			file := writeFile(t, in, tt.file, tt.data)
			var stdout, stderr bytes.Buffer
			code := cmdDraw(context.Background(), []string{"--image", file, "-o", filepath.Join(outDir, "d.png")}, &stdout, &stderr)
			if code != 1 || !strings.Contains(stderr.String(), tt.want) {
				t.Errorf("code %d, stderr %q; want 1 and %q", code, stderr.String(), tt.want)
			}
			if entries, _ := os.ReadDir(outDir); len(entries) != 0 {
				t.Errorf("%d files written", len(entries))
			}
		})
	}
	if n := len(fake.Requests()); n != 0 {
		t.Errorf("%d chat requests, want none", n)
	}
}

// TestDrawPictureNoVision: a picture for a model that cannot read it stops with the sentence
// naming the models that can and the setting that picks one; nothing is written.
func TestDrawPictureNoVision(t *testing.T) {
	fake := visionFake(t, ollamafake.ToolModel, ollamafake.ToolLessModel)
	dir := t.TempDir()
	photo := writeFile(t, dir, "board.jpg", whiteboardPhoto(t, 800, 600))
	var stdout, stderr bytes.Buffer
	code := cmdDraw(context.Background(), []string{"--image", photo, "-o", filepath.Join(dir, "d.png")}, &stdout, &stderr)
	want := "excalibot draw: qwen3:8b cannot read pictures; models that can: gemma3:4b (pulled here), or pull one such as qwen2.5vl, gemma3, llama3.2-vision; name one with --vision-model (EXCALIBOT_VISION_MODEL)"
	if code != 1 || !strings.Contains(stderr.String(), want) {
		t.Errorf("code %d, stderr %q\nwant 1 and %q", code, stderr.String(), want)
	}
	if _, err := os.Stat(filepath.Join(dir, "d.excalidraw")); err == nil {
		t.Error("a scene was written")
	}
	if n := len(fake.Requests()); n != 0 {
		t.Errorf("%d chat requests, want none", n)
	}
}

// TestDrawPictureWithScene: a PNG exported from Excalidraw is not a picture for the model: the
// drawing starts from its scene, as with --in.
func TestDrawPictureWithScene(t *testing.T) {
	fake := ollamafake.New(t, ollamafake.Config{Responder: ollamafake.Boxes})
	t.Setenv("OLLAMA_HOST", fake.URL())
	dir := t.TempDir()
	base := pngOf(t, image.NewGray(image.Rect(0, 0, 40, 30)))
	withScene, err := scene.EmbedScene(base, []byte(`{"type":"excalidraw","version":2,"elements":[{"id":"old","type":"rectangle","x":0,"y":0,"width":100,"height":60}]}`))
	if err != nil {
		t.Fatal(err)
	}
	file := writeFile(t, dir, "exported.png", withScene)
	var stdout, stderr bytes.Buffer
	cmdDraw(context.Background(), []string{"--image", file, "add a note", "-o", filepath.Join(dir, "d.png"), "--chrome", filepath.Join(dir, "no-chromium")}, &stdout, &stderr)
	if !strings.Contains(stdout.String(), "exported.png carries an Excalidraw scene: drawing on it, as with --in") {
		t.Errorf("stdout:\n%s\nstderr:\n%s", stdout.String(), stderr.String())
	}
	doc, err := os.ReadFile(filepath.Join(dir, "d.excalidraw"))
	if err != nil {
		t.Fatal(err)
	}
	sc, err := scene.Decode(doc)
	if err != nil || !sc.Has("old") || len(sc.Elements()) < 2 {
		t.Errorf("scene %v: want the imported box and the new one", err)
	}
	for _, r := range fake.Requests() {
		if len(ollamafake.Pictures(r)) > 0 {
			t.Error("the exported PNG was sent to the model as a picture")
		}
	}
	if !requestsAskFor(fake.Requests(), "add a note") {
		t.Error("the request did not reach the model")
	}
}

func requestsAskFor(reqs []api.ChatRequest, prompt string) bool {
	for _, r := range reqs {
		if ollamafake.Request(r) == prompt {
			return true
		}
	}
	return false
}

func pngOf(t testing.TB, m image.Image) []byte {
	t.Helper()
	var b bytes.Buffer
	if err := png.Encode(&b, m); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// pngHeader is a PNG signature, an IHDR declaring w×h RGBA pixels and IEND: a decompression
// bomb's header without its data.
func pngHeader(w, h uint32) []byte {
	var b bytes.Buffer
	b.WriteString("\x89PNG\r\n\x1a\n")
	chunk := func(typ string, data []byte) {
		_ = binary.Write(&b, binary.BigEndian, uint32(len(data)))
		b.WriteString(typ)
		b.Write(data)
		_ = binary.Write(&b, binary.BigEndian, crc32.ChecksumIEEE(append([]byte(typ), data...)))
	}
	chunk("IHDR", append(binary.BigEndian.AppendUint32(binary.BigEndian.AppendUint32(nil, w), h), 8, 6, 0, 0, 0))
	chunk("IEND", nil)
	return b.Bytes()
}

// zipOfZeros is a ZIP holding n zero bytes: a few kilobytes that inflate to n.
func zipOfZeros(t testing.TB, n int) []byte {
	t.Helper()
	var b bytes.Buffer
	zw := zip.NewWriter(&b)
	f, err := zw.Create("zeros.png")
	if err != nil {
		t.Fatal(err)
	}
	zero := make([]byte, 1<<20)
	for ; n > 0; n -= len(zero) {
		if _, err := f.Write(zero[:min(n, len(zero))]); err != nil {
			t.Fatal(err)
		}
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}
