package main

import (
	"context"
	"image"
	"math/rand/v2"
	"os/exec"
	"runtime"
	"runtime/debug"
	"testing"
	"time"

	"github.com/ollama/ollama/api"

	"github.com/excalibot/excalibot/agent"
	"github.com/excalibot/excalibot/agent/ollama"
	"github.com/excalibot/excalibot/agent/ollamafake"
	"github.com/excalibot/excalibot/picture"
	"github.com/excalibot/excalibot/render"
	"github.com/excalibot/excalibot/scene"
	"github.com/excalibot/excalibot/tools"
)

// BenchmarkPictureToDiagram times a 12-megapixel phone photo (4032 × 3024 JPEG, EXIF-turned, with
// sensor noise so that it compresses like a photo)
// from its bytes to the rendered picture of the diagram, with an instant vision model behind the
// real Ollama client (the fake Ollama over HTTP): preparing the picture (package picture), the
// run (the model's requests, base64 picture included, and the graph layout) and rendering in
// Chromium. The baseline, measured in the same run, is the same diagram asked for in words: what
// the picture adds is the preparation and the bytes of the request. Memory: what preparing one
// picture allocates (with the collector off, an upper bound of the peak) and what the run holds
// afterwards (the picture as sent).
//
//	go test ./cmd/excalibot -run '^$' -bench PictureToDiagram -benchtime 10x
func BenchmarkPictureToDiagram(b *testing.B) {
	if _, err := exec.LookPath("chromium"); err != nil {
		b.Skip("chromium is not installed")
	}
	fake := ollamafake.New(b, ollamafake.Config{Models: []string{ollamafake.VisionToolModel}})
	seen := ollamafake.Sees(whiteboardSketch)
	tiny := pngOf(b, scenePixel())
	fake.SetResponder(func(req api.ChatRequest) ollamafake.Turn {
		if len(ollamafake.Pictures(req)) == 0 { // the words-only baseline draws the same sketch
			for i := range req.Messages {
				if req.Messages[i].Role == "user" {
					req.Messages[i].Images = []api.ImageData{tiny}
				}
			}
		}
		return seen(req)
	})
	m, err := ollama.New(ollama.Config{Host: fake.URL(), Model: ollamafake.VisionToolModel}, nil)
	if err != nil {
		b.Fatal(err)
	}
	a := agent.New(m, agent.Config{}, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	r, err := render.New(ctx, render.Config{Tabs: 1}, nil)
	if err != nil {
		b.Fatal(err)
	}
	defer r.Close()
	photo := photoJPEG(b, noisyBoard(4032, 3024))

	draw := func(images []agent.Image) (run, model, rend time.Duration) {
		set := tools.New(scene.New(), tools.Limits{})
		req := agent.SetRequest(set, "redraw this", agent.Memory{}, nil)
		req.Images = images
		t0 := time.Now()
		res, err := a.Run(ctx, req)
		if err != nil || res.Reason != agent.StopDone {
			b.Fatalf("run: %v, %s", err, res.Reason)
		}
		run = time.Since(t0)
		doc, err := set.Scene().Encode()
		if err != nil {
			b.Fatal(err)
		}
		t1 := time.Now()
		if _, err := r.PNG(ctx, doc, render.Options{Scale: 2}); err != nil {
			b.Fatal(err)
		}
		return run, res.ModelTime, time.Since(t1)
	}

	var prep, run, model, rend, textRun, textRend time.Duration
	var held int
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		t0 := time.Now()
		p, err := picture.Prepare(photo, picture.Limits{})
		if err != nil {
			b.Fatal(err)
		}
		prep += time.Since(t0)
		held = len(p.Data)
		r1, m1, d1 := draw([]agent.Image{{Data: p.Data, Width: p.Width, Height: p.Height}})
		run, model, rend = run+r1, model+m1, rend+d1
		r2, _, d2 := draw(nil)
		textRun, textRend = textRun+r2, textRend+d2
	}
	b.StopTimer()
	n := float64(b.N)
	ms := func(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 / n }
	total, text := prep+run+rend, textRun+textRend
	b.ReportMetric(ms(total), "picture-ms")
	b.ReportMetric(ms(prep), "prepare-ms")
	b.ReportMetric(ms(model), "model-ms")
	b.ReportMetric(ms(run-model), "tools-ms")
	b.ReportMetric(ms(rend), "render-ms")
	b.ReportMetric(ms(text), "words-ms")
	b.ReportMetric(float64(total)/float64(text), "picture/words")
	b.ReportMetric(float64(prep)/float64(total), "prepare/picture")
	b.ReportMetric(float64(held)/1024, "held-KB")
	b.ReportMetric(float64(prepareAlloc(b, photo))/(1<<20), "prepare-alloc-MB")
	b.ReportMetric(0, "ns/op") // the figures above are the point
}

// prepareAlloc is what one Prepare allocates with the collector off: nothing is freed, so it
// bounds the heap the preparation needs at its peak.
func prepareAlloc(b *testing.B, photo []byte) uint64 {
	runtime.GC()
	old := debug.SetGCPercent(-1)
	defer debug.SetGCPercent(old)
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	if _, err := picture.Prepare(photo, picture.Limits{}); err != nil {
		b.Fatal(err)
	}
	runtime.ReadMemStats(&after)
	return after.TotalAlloc - before.TotalAlloc
}

// scenePixel is the smallest picture the fake's decoder takes, for the words-only baseline.
func scenePixel() image.Image { return image.NewGray(image.Rect(0, 0, 8, 8)) }

// noisyBoard is a whiteboard with three boxes and a photo's grain.
func noisyBoard(w, h int) *image.RGBA {
	m := image.NewRGBA(image.Rect(0, 0, w, h))
	rng := rand.New(rand.NewPCG(1, 2))
	for y := 0; y < h; y++ {
		for x := 0; x < w; x++ {
			v := uint8(225 + rng.IntN(20))
			if y > h/3 && y < h/3+h/5 && (x/(w/6))%2 == 1 {
				v = uint8(30 + rng.IntN(20))
			}
			i := m.PixOffset(x, y)
			m.Pix[i], m.Pix[i+1], m.Pix[i+2], m.Pix[i+3] = v, v, v-6, 255
		}
	}
	return m
}
