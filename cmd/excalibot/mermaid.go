package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/excalibot/excalibot/bot"
	"github.com/excalibot/excalibot/bot/agentdraw"
	"github.com/excalibot/excalibot/diagram/mermaid"
	"github.com/excalibot/excalibot/internal/plural"
	"github.com/excalibot/excalibot/render"
	"github.com/excalibot/excalibot/scene"
)

// mermaidConverter is the renderer's Mermaid page as a mermaid.Converter. A diagram Mermaid
// refuses comes back as the renderer's *mermaid.Error, unchanged.
type mermaidConverter struct{ r *render.Renderer }

var _ mermaid.Converter = mermaidConverter{}

func (c mermaidConverter) Mermaid(ctx context.Context, src string) (mermaid.Diagram, error) {
	res, err := c.r.Mermaid(ctx, src)
	if err != nil {
		return mermaid.Diagram{}, err
	}
	return mermaid.Diagram{Elements: res.Elements, Files: res.Files, Type: res.Type, Image: res.Image, Fixes: res.Fixes}, nil
}

// mermaidDrawer draws the Mermaid messages of the bot: converted in the browser, imported like the
// tool does it, beside the thread's drawing.
type mermaidDrawer struct {
	conv        mermaid.Converter
	maxElements int
}

var _ bot.MermaidDrawer = mermaidDrawer{}

func (m mermaidDrawer) DrawMermaid(ctx context.Context, src string, sc *scene.Scene) (bot.MermaidDrawing, error) {
	if sc == nil {
		sc = scene.New()
	}
	d, err := m.conv.Mermaid(ctx, src)
	if err != nil {
		return bot.MermaidDrawing{}, err
	}
	next, info, err := mermaid.Import(sc, d, false)
	if err != nil {
		return bot.MermaidDrawing{}, err
	}
	if m.maxElements > 0 && next.Len() > m.maxElements {
		return bot.MermaidDrawing{}, overLimit{next.Len(), m.maxElements}
	}
	return bot.MermaidDrawing{Scene: next, Summary: mermaidSummary(info)}, nil
}

// overLimit is a Mermaid diagram that would take the drawing over its element limit; the person
// who sent it reads why.
type overLimit struct{ n, max int }

var _ bot.UserMessager = overLimit{}

func (e overLimit) Error() string {
	return fmt.Sprintf("the diagram would bring the drawing to %d elements, over the limit of %d", e.n, e.max)
}
func (e overLimit) UserMessage() string { return e.Error() }

// mermaidSummary is the chat reply's text: shorter than what the model reads.
func mermaidSummary(m mermaid.Imported) string {
	kind := strings.TrimSuffix(m.Type, "-v2")
	var s string
	if m.Image {
		s = fmt.Sprintf("Excalidraw has no shapes for Mermaid %s diagrams, so this one is a picture: it cannot be edited shape by shape (flowchart, sequence, class, state and ER diagrams can).", kind)
	} else {
		s = fmt.Sprintf("Drew the Mermaid %s diagram: %s, %s. Ask me to change it, or open it in the editor.", kind,
			plural.Count(len(m.Shapes), "shape", ""), plural.Count(m.Arrows, "arrow", ""))
	}
	if len(m.Fixes) > 0 {
		s += " I fixed: " + strings.Join(m.Fixes, "; ") + "."
	}
	return s
}

// wireMermaid gives the agent's tools the Mermaid converter and returns the bot's Mermaid drawer;
// nil when there is no renderer (Mermaid then goes to the agent, which draws without it).
func wireMermaid(rend *chromeRenderer, drawer *agentdraw.Drawer, maxElements int) bot.MermaidDrawer {
	if rend == nil || rend.r == nil {
		return nil
	}
	conv := mermaidConverter{rend.r}
	drawer.Mermaid = conv
	return mermaidDrawer{conv: conv, maxElements: maxElements}
}

// cmdMermaid converts a Mermaid diagram into an .excalidraw file, and a PNG or SVG of it:
//
//	excalibot mermaid in.mmd -o out.excalidraw [--png out.png]
func cmdMermaid(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("mermaid", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprint(stderr, `usage: excalibot mermaid [flags] IN.mmd

Converts a Mermaid diagram (a file, or a message with a `+"```mermaid"+` fence) into Excalidraw shapes
with @excalidraw/mermaid-to-excalidraw in headless Chromium. IN may be - for standard input.

`)
		fs.PrintDefaults()
	}
	out := fs.String("o", "", "the .excalidraw file to write (default: IN with .excalidraw)")
	png := fs.String("png", "", "also render a PNG to this file")
	svg := fs.String("svg", "", "also render an SVG to this file")
	chrome := fs.String("chrome", "", "Chromium binary (default: chromium on PATH)")
	timeout := fs.Duration("timeout", render.DefaultRenderTimeout, "time limit per conversion attempt")
	times := fs.Int("times", 1, "convert this many times and print each time (first call vs warm)")
	verbose := fs.Bool("v", false, "log what the renderer does")
	in, code := parseOneInput(fs, args, stderr)
	if code >= 0 {
		return code
	}
	var src []byte
	var err error
	if in == "-" {
		src, err = io.ReadAll(io.LimitReader(os.Stdin, render.MaxMermaidBytes+1))
	} else {
		src, err = os.ReadFile(in)
	}
	if err != nil {
		fmt.Fprintf(stderr, "excalibot mermaid: read %s: %v\n", in, err)
		return 1
	}
	if *out == "" {
		if in == "-" {
			fmt.Fprintln(stderr, "excalibot mermaid: -o is required when reading standard input")
			return 2
		}
		*out = strings.TrimSuffix(in, filepath.Ext(in)) + ".excalidraw"
	}
	level := slog.LevelWarn
	if *verbose {
		level = slog.LevelDebug
	}
	log := slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: level}))
	start := time.Now()
	r, err := render.New(ctx, render.Config{ChromePath: *chrome, Tabs: 1, RenderTimeout: *timeout, PracticeRenders: -1}, log)
	if err != nil {
		fmt.Fprintf(stderr, "excalibot mermaid: %v\n", err)
		return 1
	}
	defer r.Close()
	fmt.Fprintf(stderr, "chromium ready in %s\n", time.Since(start).Round(time.Millisecond))
	conv := mermaidConverter{r}
	var d mermaid.Diagram
	for i := range max(*times, 1) {
		t0 := time.Now()
		d, err = conv.Mermaid(ctx, string(src))
		if err != nil {
			fmt.Fprintf(stderr, "excalibot mermaid: %s: %v\n", in, err)
			return 1
		}
		if *times > 1 {
			fmt.Fprintf(stderr, "conversion %d: %s\n", i+1, time.Since(t0).Round(time.Millisecond))
		}
	}
	sc, info, err := mermaid.Import(scene.New(), d, false)
	if err != nil {
		fmt.Fprintf(stderr, "excalibot mermaid: %v\n", err)
		return 1
	}
	doc, err := sc.Encode()
	if err == nil {
		err = os.WriteFile(*out, doc, 0o644)
	}
	if err != nil {
		fmt.Fprintf(stderr, "excalibot mermaid: write %s: %v\n", *out, err)
		return 1
	}
	for _, p := range []struct {
		path string
		svg  bool
	}{{*png, false}, {*svg, true}} {
		if p.path == "" {
			continue
		}
		var pic []byte
		if p.svg {
			pic, err = r.SVG(ctx, doc, render.Options{})
		} else {
			pic, err = r.PNG(ctx, doc, render.Options{})
		}
		if err == nil {
			err = os.WriteFile(p.path, pic, 0o644)
		}
		if err != nil {
			fmt.Fprintf(stderr, "excalibot mermaid: picture %s: %v\n", p.path, err)
			return 1
		}
	}
	fmt.Fprintln(stdout, info.String())
	fmt.Fprintf(stdout, "wrote %s (%s)\n", *out, plural.Count(sc.Len(), "element", ""))
	return 0
}
