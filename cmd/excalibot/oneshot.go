package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"time"

	"github.com/excalibot/excalibot/diagram/mermaid"
	"github.com/excalibot/excalibot/internal/logkey"
	"github.com/excalibot/excalibot/render"
)

// What the one-shot commands (draw, chat, eval, render, mermaid, doctor) share: a logger for the
// terminal and one Chromium, started when first needed.

// cliLogger is a one-shot command's logger: warnings on stderr, everything with -v.
func cliLogger(stderr io.Writer, verbose bool) *slog.Logger {
	level := slog.LevelWarn
	if verbose {
		level = slog.LevelDebug
	}
	return slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: level}))
}

// lazyRenderer is a one-shot command's one renderer: brought up in the background by start (while
// the model works, so the picture comes sooner) or on first use. Not safe for concurrent use (the
// commands call it from one goroutine); close releases it.
type lazyRenderer struct {
	cfg render.Config
	log *slog.Logger
	r   *render.Renderer
	// starting delivers the renderer that start is bringing up; whoever receives it owns it (get
	// or close), so the starting goroutine is always waited for.
	starting  chan startedRenderer
	stopStart context.CancelFunc // ends a start nobody waits for; released by close
}

type startedRenderer struct {
	r   *render.Renderer
	err error
}

// newLazyRenderer renders with the Chromium at path ("" finds one on PATH), one tab, each attempt
// within timeout. A command that renders once skips the practice renders that make later ones
// faster (practise false).
func newLazyRenderer(path string, timeout time.Duration, practise bool, log *slog.Logger) *lazyRenderer {
	cfg := render.Config{ChromePath: path, Tabs: 1, RenderTimeout: timeout}
	if !practise {
		cfg.PracticeRenders = -1
	}
	return &lazyRenderer{cfg: cfg, log: log}
}

// start brings Chromium up in the background.
func (c *lazyRenderer) start(ctx context.Context) {
	if c.r != nil || c.starting != nil {
		return
	}
	ch := make(chan startedRenderer, 1)
	sctx, cancel := context.WithCancel(ctx)
	c.starting, c.stopStart = ch, cancel
	go func() {
		r, err := render.New(sctx, c.cfg, c.log)
		ch <- startedRenderer{r, err}
	}()
}

// get returns the renderer: the one start is bringing up, else one started now.
func (c *lazyRenderer) get(ctx context.Context) (*render.Renderer, error) {
	if c.starting != nil {
		st := <-c.starting
		c.starting = nil
		if st.err != nil {
			return nil, st.err
		}
		c.r = st.r
	}
	if c.r == nil {
		r, err := render.New(ctx, c.cfg, c.log)
		if err != nil {
			return nil, err
		}
		c.r = r
	}
	return c.r, nil
}

var _ mermaid.Converter = (*lazyRenderer)(nil)

// Mermaid converts with the renderer's Mermaid page, bringing Chromium up (or waiting for it) on the
// first conversion, as serve's converter does with its own.
func (c *lazyRenderer) Mermaid(ctx context.Context, src string) (mermaid.Diagram, error) {
	r, err := c.get(ctx)
	if err != nil {
		return mermaid.Diagram{}, fmt.Errorf("start the renderer for Mermaid: %w", err)
	}
	return r.Converter().Mermaid(ctx, src)
}

// close stops Chromium, and a start nobody waited for.
func (c *lazyRenderer) close() {
	if c.stopStart != nil {
		defer c.stopStart()
	}
	if c.starting != nil {
		c.stopStart() // never used: do not wait for Chromium to finish starting
		if st := <-c.starting; st.r != nil {
			c.r = st.r
		}
		c.starting = nil
	}
	if c.r != nil {
		if err := c.r.Close(); err != nil {
			c.log.Warn("close renderer", logkey.Err, err)
		}
		c.r = nil
	}
}
