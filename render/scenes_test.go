package render

import (
	"bytes"
	"errors"
	"strings"
	"testing"

	"github.com/excalibot/excalibot/render/export"
	"github.com/excalibot/excalibot/scene"
)

// TestScenesUnavailable: without Chromium every picture and readiness check says why, and there is
// no Mermaid converter (Mermaid then goes to the agent).
func TestScenesUnavailable(t *testing.T) {
	why := errors.New("render: Chromium not found")
	s := Unavailable(why)
	sc := scene.New()
	for _, f := range []export.Format{export.PNG, export.SVG} {
		if _, err := s.Render(t.Context(), sc, nil, f, false); !errors.Is(err, why) {
			t.Errorf("Render(%s) = %v, want %v", f, err, why)
		}
	}
	if err := s.Ready(); !errors.Is(err, why) {
		t.Errorf("Ready() = %v, want %v", err, why)
	}
	if c := s.Converter(); c != nil {
		t.Errorf("Converter() = %v, want nil", c)
	}
	if err := s.Close(); err != nil {
		t.Errorf("Close() = %v", err)
	}
}

// TestScenesRender: a PNG embeds the scene; an SVG says what the diagram is in its <title> and <desc>.
func TestScenesRender(t *testing.T) {
	s := NewScenes(shared(t), 1) // the shared renderer outlives the test: no Close
	sc := scene.New()
	for _, id := range []string{"api", "db"} {
		e, err := sc.Add(scene.Element{ID: id, Type: scene.Rectangle, X: float64(len(sc.Elements()) * 300), Width: 160, Height: 80})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := sc.SetLabel(e.ID, strings.ToUpper(id)); err != nil {
			t.Fatal(err)
		}
	}
	doc, err := sc.Encode()
	if err != nil {
		t.Fatal(err)
	}
	png, err := s.Render(testCtx(t), sc, doc, export.PNG, false)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.HasPrefix(png, []byte("\x89PNG")) {
		t.Errorf("PNG starts %q", png[:min(8, len(png))])
	}
	if got, err := embeddedScene(png); err != nil || len(got) == 0 {
		t.Errorf("PNG embeds %d bytes of scene (%v), want the scene", len(got), err)
	}
	svg, err := s.Render(testCtx(t), sc, doc, export.SVG, true)
	if err != nil {
		t.Fatal(err)
	}
	title, desc := AltText(sc)
	if !strings.Contains(string(svg), "<title>"+title+"</title>") || !strings.Contains(string(svg), "API") || desc == "" {
		t.Errorf("SVG lacks the alt text %q / %q:\n%.300s", title, desc, svg)
	}
}
