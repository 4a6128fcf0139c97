package render

import (
	"image"
	"testing"
)

// TestCanvasReuse renders through one tab in an order that would show any state a reused canvas
// carried over: the dark theme's filter, a transparent background, a different size. Every
// render of the same options must be pixel-identical to the first, and the page must say when it
// reused its canvas (same size as the tab's last picture) and when it could not.
func TestCanvasReuse(t *testing.T) {
	r := own(t, Config{Tabs: 1})
	doc := readFile(t, "testdata/shapes.excalidraw")
	light := Options{Scale: 1}
	steps := []struct {
		name       string
		opts       Options
		wantCanvas string
		sameAs     string // a step whose picture this one must equal pixel for pixel
	}{
		{name: "light", opts: light, wantCanvas: "new"},
		{name: "light again", opts: light, wantCanvas: "reused", sameAs: "light"},
		{name: "dark", opts: Options{Scale: 1, Dark: true}, wantCanvas: "reused"},
		{name: "light after dark", opts: light, wantCanvas: "reused", sameAs: "light"},
		{name: "transparent", opts: Options{Scale: 1, Transparent: true}, wantCanvas: "reused"},
		{name: "light after transparent", opts: light, wantCanvas: "reused", sameAs: "light"},
		{name: "wider padding", opts: Options{Scale: 1, Padding: 40}, wantCanvas: "new"},
		{name: "light after resize", opts: light, wantCanvas: "new", sameAs: "light"},
	}
	pics := map[string][]byte{}
	for _, st := range steps {
		png, rep, err := r.png(testCtx(t), doc, st.opts)
		if err != nil {
			t.Fatalf("%s: %v", st.name, err)
		}
		pics[st.name] = png
		if rep.Canvas != st.wantCanvas {
			t.Errorf("%s: canvas = %q, want %q", st.name, rep.Canvas, st.wantCanvas)
		}
		if st.sameAs != "" {
			if n := exactDiff(decodePNG(t, pics[st.sameAs]), decodePNG(t, png)); n != 0 {
				t.Errorf("%s: %d pixels differ from %q, want none", st.name, n, st.sameAs)
			}
		}
	}
	if n := pixelDiff(decodePNG(t, pics["light"]), decodePNG(t, pics["dark"])); n < 10000 {
		t.Errorf("dark differs from light in %d pixels, want most of the picture", n)
	}
	img := decodePNG(t, pics["transparent"])
	if _, _, _, a := rgba(img, 2, 2); a != 0 {
		t.Errorf("transparent after light: corner alpha = %d, want 0", a)
	}
}

// exactDiff counts the pixels whose colour or alpha differ at all (and those only one image has).
func exactDiff(a, b image.Image) int {
	if a.Bounds() != b.Bounds() {
		return max(a.Bounds().Dx()*a.Bounds().Dy(), b.Bounds().Dx()*b.Bounds().Dy())
	}
	n := 0
	for y := a.Bounds().Min.Y; y < a.Bounds().Max.Y; y++ {
		for x := a.Bounds().Min.X; x < a.Bounds().Max.X; x++ {
			if a.At(x, y) != b.At(x, y) {
				n++
			}
		}
	}
	return n
}
