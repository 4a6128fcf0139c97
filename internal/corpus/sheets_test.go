package corpus

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"html"
	"image"
	"image/color"
	"image/draw"
	"image/png"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/image/font"
	"golang.org/x/image/font/basicfont"
	"golang.org/x/image/math/fixed"

	"github.com/excalibot/excalibot/diagram/measure"
	"github.com/excalibot/excalibot/render"
	"github.com/excalibot/excalibot/scene"
)

// writeSheets renders the engines' pictures of each input into one contact sheet, DIR/NAME.png
// (ours left, plain dot in the middle, ELK right, each captioned with its key figures), and lists them in
// DIR/index.html. With -layout.before, only the inputs whose own drawing changed, the drawing
// before first. It skips the test when there is no Chromium: the figures were compared already.
func writeSheets(ctx context.Context, t *testing.T, dir string, runs []sideBySide) {
	t.Helper()
	r, err := render.New(ctx, render.Config{ChromePath: os.Getenv("CHROME"), Tabs: 1, PracticeRenders: -1}, slog.New(slog.DiscardHandler))
	if errors.Is(err, render.ErrNoChrome) {
		t.Skipf("no contact sheets: needs Chromium: %v", err)
	}
	if err != nil {
		t.Fatalf("start the renderer: %v", err)
	}
	defer func() {
		if err := r.Close(); err != nil {
			t.Errorf("close the renderer: %v", err)
		}
	}()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	var idx strings.Builder
	idx.WriteString("<!doctype html><meta charset=utf-8><title>Layout side by side</title>\n" +
		"<style>body{font-family:sans-serif} img{max-width:100%;border:1px solid #ccc} td,th{padding:2px 8px}</style>\n" +
		"<h1>The own layout (left), plain dot (middle) and ELK (right)</h1>\n")
	if *beforeDir != "" {
		idx.WriteString("<p>Only the inputs the own layout draws differently from " + html.EscapeString(*beforeDir) + ", the drawing before first.</p>\n")
	}
	changed := 0
	for _, s := range runs {
		if s.err != "" {
			fmt.Fprintf(&idx, "<h2>%s</h2><p>refused: %s</p>\n", html.EscapeString(s.name), html.EscapeString(s.err))
			continue
		}
		engines := []engineRun{s.ours, s.dt, s.elk}
		names := []string{"ours", "plain dot", "ELK"}
		if s.elk.sc == nil { // ELK was not run
			engines, names = engines[:2], names[:2]
		}
		if *beforeDir != "" {
			before, ok := drawingBefore(t, *beforeDir, s)
			if !ok {
				continue
			}
			changed++
			engines = append([]engineRun{before}, engines...)
			names = append([]string{"ours before"}, names...)
		}
		pics := make([]image.Image, len(engines))
		for i, e := range engines {
			doc, err := e.sc.Encode()
			if err != nil {
				t.Fatalf("%s: encode: %v", s.name, err)
			}
			b, err := r.PNG(ctx, doc, render.Options{NoEmbedScene: true, Scale: 1})
			if err != nil {
				t.Fatalf("%s: picture: %v", s.name, err)
			}
			if pics[i], err = png.Decode(bytes.NewReader(b)); err != nil {
				t.Fatalf("%s: decode picture: %v", s.name, err)
			}
		}
		captions := make([][]string, len(engines))
		for i, e := range engines {
			captions[i] = []string{s.name + ": " + names[i], keyFigures(e.m)}
		}
		var out bytes.Buffer
		if err := png.Encode(&out, sheet(pics, captions)); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, s.name+".png"), out.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
		fmt.Fprintf(&idx, "<h2>%s</h2>\n<table>", html.EscapeString(s.name))
		for i, e := range engines {
			fmt.Fprintf(&idx, "<tr><th>%s</th><td>%s</td></tr>", html.EscapeString(names[i]), html.EscapeString(keyFigures(e.m)))
		}
		fmt.Fprintf(&idx, "</table>\n<img src=\"%s.png\">\n", html.EscapeString(s.name))
	}
	if *beforeDir != "" {
		t.Logf("%d inputs drawn differently from %s", changed, *beforeDir)
	}
	if err := os.WriteFile(filepath.Join(dir, "index.html"), []byte(idx.String()), 0o644); err != nil {
		t.Fatal(err)
	}
}

// drawingBefore reads the input's own drawing as an earlier revision made it, from dir, measured
// like the others; ok is false when there is none or it has every element where it is now.
func drawingBefore(t *testing.T, dir string, s sideBySide) (engineRun, bool) {
	t.Helper()
	old, err := os.ReadFile(filepath.Join(dir, s.name+".excalidraw"))
	if errors.Is(err, os.ErrNotExist) {
		return engineRun{}, false
	}
	if err != nil {
		t.Fatal(err)
	}
	sc, err := scene.Decode(old)
	if err != nil {
		t.Fatalf("%s: read the drawing before: %v", s.name, err)
	}
	if placements(sc) == placements(s.ours.sc) {
		return engineRun{}, false
	}
	return engineRun{sc, measure.Measure(sc, measure.Options{DisplayWidth: displayWidth, Padding: render.DefaultPadding})}, true
}

// placements lists where a scene's elements are and what they say, to the tenth of a pixel:
// two drawings of the same calls differ otherwise only in their random seeds and times.
func placements(sc *scene.Scene) string {
	var b strings.Builder
	for _, e := range sc.Elements() {
		fmt.Fprintf(&b, "%s %s %.1f %.1f %.1f %.1f %q", e.ID, e.Type, e.X, e.Y, e.Width, e.Height, e.Text)
		for _, p := range e.Points {
			fmt.Fprintf(&b, " %.1f,%.1f", p.X, p.Y)
		}
		b.WriteByte('\n')
	}
	return b.String()
}

func keyFigures(m measure.Report) string {
	return fmt.Sprintf("crossings %d, through nodes %d, needless border crossings %d, intruders %d, %.0fx%.0f (%s), labels %.1f px at 1600x1200, %.1f px on a phone",
		m.Crossings, m.ArrowsThroughNodes, m.NeedlessBorderCrossings, m.Intruders, m.Width, m.Height, aspect(m), m.LabelPx1600, m.LabelPxPhone)
}

// sheet puts pictures side by side on white, each with its caption lines above it.
func sheet(pics []image.Image, captions [][]string) image.Image {
	const gap, line = 40, 16
	capH := line*len(captions[0]) + 10
	w, h := gap, 0
	for _, p := range pics {
		w += p.Bounds().Dx() + gap
		h = max(h, p.Bounds().Dy())
	}
	for _, c := range captions {
		for _, l := range c {
			w = max(w, 2*gap+7*len(l)) // basicfont's glyphs are 7 px wide
		}
	}
	out := image.NewRGBA(image.Rect(0, 0, w, h+capH+2*gap))
	draw.Draw(out, out.Bounds(), image.White, image.Point{}, draw.Src)
	x := gap
	for i, p := range pics {
		d := font.Drawer{Dst: out, Src: image.NewUniform(color.Black), Face: basicfont.Face7x13}
		for k, l := range captions[i] {
			d.Dot = fixed.P(x, gap+line*(k+1))
			d.DrawString(l)
		}
		r := p.Bounds()
		draw.Draw(out, image.Rect(x, gap+capH, x+r.Dx(), gap+capH+r.Dy()), p, r.Min, draw.Over)
		x += r.Dx() + gap
	}
	return out
}
