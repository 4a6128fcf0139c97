package render

import (
	"context"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/excalibot/excalibot/internal/corpusdir"
)

// TestScriptsRenderAsGlyphs renders labels in Russian, Ukrainian, Greek, Chinese and Japanese and
// checks they come out as glyphs, not empty boxes ("tofu").
//
// Method: each label is rendered twice at the same size, once as written and once with every
// character replaced by a private-use code point (U+E000…) that no font draws, which is exactly
// what a missing font looks like. Glyphs must leave ink, and differ from the tofu rendering in
// many pixels. For CJK the test also checks that the Xiaolai chunks were served by our page
// server and that Chromium reports the Xiaolai face as loaded, so the glyphs come from
// Excalidraw's font and not from whatever the machine has installed.
func TestScriptsRenderAsGlyphs(t *testing.T) {
	r := shared(t)
	tests := []struct {
		lang, label string
		cjk         bool
	}{
		{"Russian", "Привет, мир! Съешь же ещё", false},
		{"Ukrainian", "Ґанок, їжак, єнот, пісня", false},
		{"Greek", "Καλημέρα κόσμε, ψυχή", false},
		{"Chinese", "你好世界，流程图服务器", true},
		{"Japanese", "こんにちは、カタカナと漢字", true},
	}
	for _, tt := range tests {
		t.Run(tt.lang, func(t *testing.T) {
			fontsBefore := r.srv.fontRequests.Load()
			glyphs, err := r.PNG(testCtx(t), textScene(tt.label), Options{Scale: 1, NoEmbedScene: true})
			if err != nil {
				t.Fatal(err)
			}
			tofuLabel := []rune(tt.label)
			for i, c := range tofuLabel {
				if c != ' ' && c != ',' && c != '!' {
					tofuLabel[i] = rune(0xE000 + i)
				}
			}
			tofu, err := r.PNG(testCtx(t), textScene(string(tofuLabel)), Options{Scale: 1, NoEmbedScene: true})
			if err != nil {
				t.Fatal(err)
			}
			save(t, "script-"+tt.lang+".png", glyphs)
			save(t, "script-"+tt.lang+"-tofu.png", tofu)
			g, b := decodePNG(t, glyphs), decodePNG(t, tofu)
			inkG := ink(g)
			diff := pixelDiff(g, b)
			t.Logf("%s: %d ink pixels, %d pixels differ from the tofu rendering (tofu ink %d)", tt.lang, inkG, diff, ink(b))
			if inkG < 40*len([]rune(tt.label)) {
				t.Errorf("only %d ink pixels for %d characters", inkG, len([]rune(tt.label)))
			}
			if diff < inkG/3 {
				t.Errorf("the label differs from its tofu rendering in %d pixels only (ink %d)", diff, inkG)
			}
			if tt.cjk {
				if n := r.srv.fontRequests.Load() - fontsBefore; n == 0 && !xiaolaiLoaded(t, r) {
					t.Error("no Xiaolai font chunk was requested and none is loaded")
				}
				if !xiaolaiLoaded(t, r) {
					t.Error("Chromium reports no loaded Xiaolai face")
				}
			}
		})
	}
}

// xiaolaiLoaded asks every idle tab whether one of its Xiaolai faces is loaded.
func xiaolaiLoaded(t *testing.T, r *Renderer) bool {
	t.Helper()
	var out struct {
		pageReply
		Fonts []string `json:"fonts"`
	}
	loaded := false
	for range r.cfg.Tabs {
		if err := r.call(testCtx(t), `ExcalidrawRender.fontsStatus().then(fonts => ({fonts}))`, &out); err != nil {
			t.Fatal(err)
		}
		loaded = loaded || slices.Contains(out.Fonts, "Xiaolai:loaded")
	}
	return loaded
}

// TestCorpus renders every file of the corpus of real .excalidraw files (internal/corpusdir) and
// reports what Excalidraw's restore() would change in each.
func TestCorpus(t *testing.T) {
	files := corpusdir.Files(t)
	r := shared(t)
	for _, f := range files {
		t.Run(shortName(f), func(t *testing.T) {
			doc := readFile(t, f)
			b, err := r.PNG(testCtx(t), doc, Options{Scale: 1})
			if err != nil {
				t.Fatal(err)
			}
			save(t, "corpus-"+shortName(f)+".png", b)
			img := decodePNG(t, b)
			if n := ink(img); n < 500 {
				t.Errorf("%dx%d picture has only %d ink pixels", img.Bounds().Dx(), img.Bounds().Dy(), n)
			}
			rep, err := r.Check(testCtx(t), doc)
			if err != nil {
				t.Fatalf("Check: %v", err)
			}
			t.Logf("check: %s", strings.TrimSpace(strings.SplitN(rep.String(), "\n", 2)[0]))
		})
	}
}

// TestCheck runs the check mode on scenes with known defects.
func TestCheck(t *testing.T) {
	r := shared(t)
	clean := readFile(t, "testdata/shapes.excalidraw")
	tests := []struct {
		name        string
		doc         []byte
		dropped     int
		bindings    int
		textOver4px bool
	}{
		{"clean", clean, 0, 0, false},
		{"zero-size element and unknown type", sceneDoc([]map[string]any{
			element("ok", "rectangle", 0, 0, 50, 50, nil),
			element("dot", "rectangle", 0, 0, 0, 0, nil),
			element("odd", "sticker", 0, 0, 50, 50, nil),
		}), 2, 0, false},
		{"dangling container and one-sided text binding", sceneDoc([]map[string]any{
			element("box", "rectangle", 0, 0, 100, 50, nil),
			element("lbl", "text", 10, 10, 16.2, 25, map[string]any{"text": "hi", "originalText": "hi", "fontSize": 20,
				"fontFamily": 5, "containerId": "gone", "textAlign": "center", "verticalAlign": "middle", "lineHeight": 1.25}),
		}), 0, 1, false},
		{"text measured wrongly", sceneDoc([]map[string]any{
			element("far", "text", 0, 0, 20, 10, map[string]any{"text": "a much longer text than 20 px", "originalText": "a much longer text than 20 px",
				"fontSize": 20, "fontFamily": 5, "textAlign": "left", "verticalAlign": "top", "lineHeight": 1.25, "autoResize": true}),
		}), 0, 0, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rep, err := r.Check(testCtx(t), tt.doc)
			if err != nil {
				t.Fatal(err)
			}
			if len(rep.Dropped) != tt.dropped || len(rep.Bindings) != tt.bindings || (rep.MaxTextDelta > 4) != tt.textOver4px {
				t.Errorf("got %d dropped, %d bindings, text delta %.1f; want %d, %d, over 4 px %v\n%s",
					len(rep.Dropped), len(rep.Bindings), rep.MaxTextDelta, tt.dropped, tt.bindings, tt.textOver4px, rep)
			}
		})
	}
}

// TestCheckGoldenScenes: every scene the scene and tools packages write in their golden files
// loads in Excalidraw with nothing dropped, no binding repaired and text within 4 px.
func TestCheckGoldenScenes(t *testing.T) {
	// The golden outputs of those packages are named *.golden.excalidraw; other .excalidraw
	// files there are inputs, some broken on purpose.
	var scenes []string
	for _, pat := range []string{"../scene/testdata/*.golden.excalidraw", "../tools/testdata/*.golden.excalidraw"} {
		m, _ := filepath.Glob(pat)
		scenes = append(scenes, m...)
	}
	if len(scenes) == 0 {
		t.Skip("skipping: no *.golden.excalidraw files under ../scene/testdata or ../tools/testdata yet")
	}
	r := shared(t)
	for _, f := range scenes {
		t.Run(strings.TrimPrefix(f, "../"), func(t *testing.T) {
			doc := readFile(t, f)
			rep, err := r.Check(testCtx(t), doc)
			if err != nil {
				t.Fatal(err)
			}
			if !rep.Clean(4) {
				t.Errorf("Excalidraw changes the scene:\n%s", rep)
			}
			b, err := r.PNG(testCtx(t), doc, Options{})
			if err != nil {
				t.Fatal(err)
			}
			save(t, "golden-"+shortName(f)+".png", b)
		})
	}
}

// evalInTab runs expr in one tab outside the pool's retry logic, for tests.
func evalInTab[T any](t *testing.T, r *Renderer, expr string) T {
	t.Helper()
	tb, err := r.borrow(testCtx(t))
	if err != nil {
		t.Fatal(err)
	}
	defer r.put(tb)
	ctx, cancel := context.WithTimeout(tb.ctx, r.cfg.RenderTimeout)
	defer cancel()
	v, err := chromedp.Run(ctx, chromedp.Evaluate[T](expr, chromedp.EvalAwaitPromise))
	if err != nil {
		t.Fatalf("evaluate %s: %v", expr, err)
	}
	return v
}
