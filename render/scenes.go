package render

import (
	"context"

	"github.com/excalibot/excalibot/diagram/mermaid"
	"github.com/excalibot/excalibot/diagram/outline"
	"github.com/excalibot/excalibot/render/export"
	"github.com/excalibot/excalibot/scene"
)

// Scenes draws stored scenes for the conversation and the web server: the scene's own viewport
// frames the picture, and an SVG carries the diagram's alt text. Without Chromium every call
// returns why it is missing, so replies still carry the .excalidraw file.
type Scenes struct {
	r     *Renderer
	err   error // why there is no renderer
	scale float64
}

var _ export.Renderer = (*Scenes)(nil)

// NewScenes draws with r at scale pixels per scene pixel (0: DefaultScale). The Scenes owns r:
// Close closes it.
func NewScenes(r *Renderer, scale float64) *Scenes { return &Scenes{r: r, scale: scale} }

// Unavailable is Scenes without Chromium: every picture and readiness check fails with why.
func Unavailable(why error) *Scenes { return &Scenes{err: why} }

// Render implements export.Renderer.
func (s *Scenes) Render(ctx context.Context, sc *scene.Scene, doc []byte, format export.Format, dark bool) ([]byte, error) {
	if s.r == nil {
		return nil, s.err
	}
	opt := Options{Scale: s.scale, Dark: dark}
	if v, ok := sc.Viewport(); ok {
		opt.Viewport = &Rect{X: v.X, Y: v.Y, Width: v.Width, Height: v.Height}
	}
	if format == export.SVG {
		opt.Title, opt.Description = AltText(sc)
		return s.r.SVG(ctx, doc, opt)
	}
	return s.r.PNG(ctx, doc, opt)
}

// Converter is the Mermaid page as a mermaid.Converter; nil without Chromium.
func (s *Scenes) Converter() mermaid.Converter {
	if s.r == nil {
		return nil
	}
	return s.r.Converter()
}

// Ready is nil when a picture can be rendered now.
func (s *Scenes) Ready() error {
	if s.r == nil {
		return s.err
	}
	return s.r.Ready()
}

// Close stops Chromium.
func (s *Scenes) Close() error {
	if s.r == nil {
		return nil
	}
	return s.r.Close()
}

// AltText is what an SVG says of itself for those who cannot see it: the diagram's title (or its
// kind) and a sentence naming its boxes and connections.
func AltText(sc *scene.Scene) (title, desc string) {
	o := outline.Of(sc)
	title = o.Title
	if title == "" {
		title = "Excalidraw " + o.Kind
	}
	return title, o.Summary(1000)
}
