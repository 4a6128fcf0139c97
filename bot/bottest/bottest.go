// Package bottest holds fakes for tests of the bot's adapters: a drawer and a renderer that need
// no model and no browser, so a test sees each message's effect at once.
package bottest

import (
	"bytes"
	"context"
	"fmt"
	"image"
	"image/png"

	"github.com/excalibot/excalibot/bot"
	"github.com/excalibot/excalibot/render/export"
	"github.com/excalibot/excalibot/scene"
)

var _ bot.Drawer = (*BoxDrawer)(nil)

// BoxDrawer is a bot.Drawer that adds one labelled rectangle per request. When Gate is set, each run reports progress
// and then waits for a value on it, so a test can watch the run's status.
type BoxDrawer struct {
	Gate chan struct{}
}

func (d *BoxDrawer) Draw(ctx context.Context, req bot.DrawRequest) (bot.DrawResult, error) {
	sc := scene.New()
	if req.Scene != nil {
		sc = req.Scene.Clone()
	}
	n := 0
	for _, e := range sc.Elements() {
		if e.Type == scene.Rectangle {
			n++
		}
	}
	e := scene.NewElement(scene.Rectangle)
	e.ID = fmt.Sprintf("box%d", n+1)
	e.X, e.Width, e.Height = float64(n*220), 180, 80
	if _, err := sc.Add(e); err != nil {
		return bot.DrawResult{}, err
	}
	if _, err := sc.SetLabel(e.ID, req.Prompt); err != nil {
		return bot.DrawResult{}, err
	}
	if req.Progress != nil {
		req.Progress(bot.Progress{Step: 1, Tool: "create_element", Shapes: n + 1})
	}
	if d.Gate != nil {
		select {
		case <-d.Gate:
		case <-ctx.Done():
			return bot.DrawResult{}, ctx.Err()
		}
	}
	return bot.DrawResult{Scene: sc, Summary: fmt.Sprintf("Added box %d.", n+1), Changed: true}, nil
}

// WidthRenderer is a renderer that draws a PNG 100 px wide per rectangle, so each revision's picture differs.
type WidthRenderer struct{}

func (WidthRenderer) Render(ctx context.Context, sc *scene.Scene, doc []byte, format export.Format, dark bool) ([]byte, error) {
	n := 0
	for _, e := range sc.Elements() {
		if e.Type == scene.Rectangle {
			n++
		}
	}
	var b bytes.Buffer
	err := png.Encode(&b, image.NewGray(image.Rect(0, 0, 100*n, 50)))
	return b.Bytes(), err
}
