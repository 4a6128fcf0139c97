package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/excalibot/excalibot/diagram/mermaid"
	"github.com/excalibot/excalibot/internal/plural"
	"github.com/excalibot/excalibot/render"
	"github.com/excalibot/excalibot/scene"
)

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
	start := time.Now()
	chromium := newLazyRenderer(*chrome, *timeout, false, cliLogger(stderr, *verbose))
	defer chromium.close()
	r, err := chromium.get(ctx)
	if err != nil {
		fmt.Fprintf(stderr, "excalibot mermaid: %v\n", err)
		return 1
	}
	fmt.Fprintf(stderr, "chromium ready in %s\n", time.Since(start).Round(time.Millisecond))
	conv := r.Converter()
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
