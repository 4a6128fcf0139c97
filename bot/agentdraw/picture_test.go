package agentdraw

import (
	"bytes"
	"context"
	"errors"
	"image"
	"image/color"
	"image/png"
	"strings"
	"testing"

	"github.com/excalibot/excalibot/agent"
	"github.com/excalibot/excalibot/agent/ollama"
	"github.com/excalibot/excalibot/agent/ollamafake"
	"github.com/excalibot/excalibot/bot"
)

func board(t *testing.T) bot.Image {
	t.Helper()
	img := image.NewGray(image.Rect(0, 0, 64, 48))
	for i := range img.Pix {
		img.Pix[i] = 230
	}
	img.SetGray(10, 10, color.Gray{Y: 20})
	var b bytes.Buffer
	if err := png.Encode(&b, img); err != nil {
		t.Fatal(err)
	}
	return bot.Image{Data: b.Bytes(), Width: 64, Height: 48}
}

func drawerOn(t *testing.T, fake *ollamafake.Server, model, vision string) *Drawer {
	t.Helper()
	o, err := ollama.New(ollama.Config{Host: fake.URL(), Model: model}, nil)
	if err != nil {
		t.Fatal(err)
	}
	var cfg agent.Config
	if vision != "" {
		cfg.VisionModel = o.ForModel(vision)
	}
	return New(agent.New(o, cfg, nil), Options{}, nil)
}

// TestPictureThroughOllama sends a picture through the real Ollama client to the fake's vision
// model: the picture arrives in the request and the diagram it reads is drawn.
func TestPictureThroughOllama(t *testing.T) {
	sketch := ollamafake.Sketch{Nodes: []ollamafake.SketchNode{{ID: "web", Label: "Web"}, {ID: "db", Label: "Database"}},
		Edges: []ollamafake.SketchEdge{{From: "web", To: "db", Label: "SQL"}}}
	fake := ollamafake.New(t, ollamafake.Config{Models: []string{ollamafake.ToolModel, ollamafake.VisionToolModel},
		Responder: ollamafake.Sees(sketch)})
	d := drawerOn(t, fake, ollamafake.ToolModel, ollamafake.VisionToolModel)
	res, err := d.Draw(context.Background(), bot.DrawRequest{Prompt: "redraw this", Images: []bot.Image{board(t)}})
	if err != nil {
		t.Fatal(err)
	}
	for _, id := range []string{"web", "db"} {
		if !res.Scene.Has(id) {
			t.Errorf("scene lacks %s", id)
		}
	}
	reqs := fake.Requests()
	if len(reqs) == 0 || reqs[0].Model != ollamafake.VisionToolModel || len(ollamafake.Pictures(reqs[0])) != 1 {
		t.Errorf("first request: %d requests, model %q; want the vision model with the picture", len(reqs), reqs[0].Model)
	}
}

// TestPictureForModelThatCannotSee is refused before any chat request, as bot.ErrCannotSee,
// naming a model that can.
func TestPictureForModelThatCannotSee(t *testing.T) {
	fake := ollamafake.New(t, ollamafake.Config{Models: []string{ollamafake.ToolModel, ollamafake.VisionToolModel},
		Responder: ollamafake.Boxes})
	d := drawerOn(t, fake, ollamafake.ToolModel, "")
	_, err := d.Draw(context.Background(), bot.DrawRequest{Prompt: "redraw this", Images: []bot.Image{board(t)}})
	if !errors.Is(err, bot.ErrCannotSee) || !errors.Is(err, agent.ErrNoVision) {
		t.Fatalf("err = %v, want bot.ErrCannotSee wrapping agent.ErrNoVision", err)
	}
	if msg := err.Error(); !strings.Contains(msg, ollamafake.VisionToolModel) || !strings.Contains(msg, "cannot read pictures") {
		t.Errorf("message %q, want it to name %s as a model that can", msg, ollamafake.VisionToolModel)
	}
	if n := len(fake.Requests()); n != 0 {
		t.Errorf("%d chat requests sent, want none", n)
	}
}
