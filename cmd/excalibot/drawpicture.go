package main

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/excalibot/excalibot/agent"
	"github.com/excalibot/excalibot/config"
	"github.com/excalibot/excalibot/picture"
	"github.com/excalibot/excalibot/scene"
)

// drawPicture is what `draw --image FILE` read: a picture for the vision model, or the scene of
// a PNG exported from Excalidraw, which the drawing starts from instead (as --in does).
type drawPicture struct {
	images []agent.Image
	scene  *scene.Scene
	line   string // what to print about it
	prep   time.Duration
}

// readPicture reads and checks --image FILE before anything else starts: a file it refuses is
// never sent, and nothing is written.
func readPicture(path string, cfg config.Config) (drawPicture, error) {
	name := filepath.Base(path)
	f, err := os.Open(path)
	if err != nil {
		return drawPicture{}, fmt.Errorf("read picture: %w", err)
	}
	defer f.Close()
	max := int64(cfg.MaxImageSize)
	if st, err := f.Stat(); err == nil && st.Size() > max {
		return drawPicture{}, fmt.Errorf("%s: the file is %s; I read pictures of up to %s (--max-image-size)", name, mb(st.Size()), mb(max))
	}
	data, err := io.ReadAll(io.LimitReader(f, max+1))
	if err != nil {
		return drawPicture{}, fmt.Errorf("read picture %s: %w", name, err)
	}
	if int64(len(data)) > max { // the file grew while it was read
		return drawPicture{}, fmt.Errorf("%s: the file is over %s; I read pictures of up to %s (--max-image-size)", name, mb(max), mb(max))
	}
	if picture.HasScene(data) {
		doc, err := scene.EmbeddedScene(data, cfg.MaxSceneSize)
		if err != nil {
			return drawPicture{}, fmt.Errorf("%s: %w", name, err)
		}
		sc, err := scene.Decode(doc)
		if err != nil {
			return drawPicture{}, fmt.Errorf("%s carries a scene that cannot be opened: %w", name, err)
		}
		return drawPicture{scene: sc, line: name + " carries an Excalidraw scene: drawing on it, as with --in"}, nil
	}
	t0 := time.Now()
	p, err := picture.Prepare(data, picture.Limits{MaxBytes: max, LongSide: cfg.ImageSize})
	if err != nil {
		return drawPicture{}, fmt.Errorf("%s: %w", name, err)
	}
	d := time.Since(t0)
	turned := ""
	if p.Orientation > 1 {
		turned = fmt.Sprintf(", turned (EXIF orientation %d)", p.Orientation)
	}
	return drawPicture{
		images: []agent.Image{{Data: p.Data, Width: p.Width, Height: p.Height}},
		prep:   d,
		line: fmt.Sprintf("picture %s: %d×%d %s → %d×%d %s of %s%s, in %s", name, p.SourceWidth, p.SourceHeight,
			strings.ToUpper(p.Format), p.Width, p.Height, strings.ToUpper(strings.TrimPrefix(p.MIME, "image/")), mb(int64(len(p.Data))),
			turned, d.Round(time.Millisecond)),
	}, nil
}

func mb(n int64) string {
	if n < 1<<20 {
		return fmt.Sprintf("%d KB", (n+1023)>>10)
	}
	return fmt.Sprintf("%.1f MB", float64(n)/(1<<20))
}
