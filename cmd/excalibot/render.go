package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/excalibot/excalibot/render"
	"github.com/excalibot/excalibot/scene"
)

// cmdRender renders one .excalidraw file to PNG or SVG:
//
//	excalibot render in.excalidraw -o out.png [--svg] [--dark] [--scale N] …
func cmdRender(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("render", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprint(stderr, `usage: excalibot render [flags] IN.excalidraw

Renders the scene with Excalidraw's own export code in headless Chromium.
IN may be - for standard input. Flags may come before or after IN.

`)
		fs.PrintDefaults()
	}
	out := fs.String("o", "", "output file; - for standard output (default: IN with .png or .svg)")
	svg := fs.Bool("svg", false, "write SVG instead of PNG")
	dark := fs.Bool("dark", false, "dark theme")
	scale := fs.Float64("scale", render.DefaultScale, "PNG pixels per scene pixel (lowered to fit chat limits)")
	padding := fs.Int("padding", render.DefaultPadding, "padding around the drawing in scene pixels")
	transparent := fs.Bool("transparent", false, "no background")
	background := fs.String("background", "", "background CSS colour (default: the scene's, else white)")
	viewport := fs.String("viewport", "", "draw only this frame: X,Y,WIDTH,HEIGHT in scene coordinates")
	noEmbed := fs.Bool("no-embed", false, "do not embed the scene in the picture")
	check := fs.Bool("check", false, "also report what Excalidraw's restore() changes in the scene")
	chrome := fs.String("chrome", "", "Chromium binary (default: chromium on PATH)")
	timeout := fs.Duration("timeout", render.DefaultRenderTimeout, "time limit per render attempt")
	verbose := fs.Bool("v", false, "log what the renderer does")

	in, code := parseOneInput(fs, args, stderr)
	if code >= 0 {
		return code
	}

	opts := render.Options{
		Scale:        *scale,
		Dark:         *dark,
		Transparent:  *transparent,
		Background:   *background,
		Padding:      *padding,
		NoEmbedScene: *noEmbed,
	}
	if *padding == 0 {
		opts.Padding = -1 // Options: 0 means the default, negative means none
	}
	if *viewport != "" {
		var v render.Rect
		if _, err := fmt.Sscanf(strings.ReplaceAll(*viewport, " ", ""), "%g,%g,%g,%g", &v.X, &v.Y, &v.Width, &v.Height); err != nil {
			fmt.Fprintf(stderr, "excalibot render: --viewport %q: want X,Y,WIDTH,HEIGHT: %v\n", *viewport, err)
			return 2
		}
		opts.Viewport = &v
	}
	if *out == "" {
		if in == "-" {
			fmt.Fprintln(stderr, "excalibot render: reading standard input needs -o")
			return 2
		}
		ext := ".png"
		if *svg {
			ext = ".svg"
		}
		*out = strings.TrimSuffix(in, filepath.Ext(in)) + ext
	}

	var doc []byte
	var err error
	if in == "-" {
		doc, err = io.ReadAll(io.LimitReader(os.Stdin, render.MaxSceneBytes+1))
	} else {
		doc, err = os.ReadFile(in)
	}
	if err != nil {
		fmt.Fprintf(stderr, "excalibot render: read scene: %v\n", err)
		return 1
	}

	log := cliLogger(stderr, *verbose)
	start := time.Now()
	chromium := newLazyRenderer(*chrome, *timeout, false, log)
	defer chromium.close()
	r, err := chromium.get(ctx)
	if err != nil {
		fmt.Fprintf(stderr, "excalibot render: %v\n", err)
		return 1
	}
	log.Debug("renderer ready", "took", time.Since(start))

	if *check {
		rep, err := r.Check(ctx, doc)
		if err != nil {
			fmt.Fprintf(stderr, "excalibot render: check: %v\n", err)
			return 1
		}
		fmt.Fprint(stderr, rep.String())
	}
	var pic []byte
	if *svg {
		if sc, err := scene.Decode(doc); err == nil {
			opts.Title, opts.Description = render.AltText(sc)
		}
		pic, err = r.SVG(ctx, doc, opts)
	} else {
		pic, err = r.PNG(ctx, doc, opts)
	}
	if err != nil {
		fmt.Fprintf(stderr, "excalibot render: %s: %v\n", in, err)
		return 1
	}
	if *out == "-" {
		_, err = stdout.Write(pic)
	} else {
		err = os.WriteFile(*out, pic, 0o644)
	}
	if err != nil {
		fmt.Fprintf(stderr, "excalibot render: write: %v\n", err)
		return 1
	}
	if *out != "-" {
		fmt.Fprintf(stdout, "%s: %d bytes\n", *out, len(pic))
	}
	return 0
}

// parseOneInput parses flags that may stand before or after the one input file, and returns that
// file, or the exit code to end with (-1: go on).
func parseOneInput(fs *flag.FlagSet, args []string, stderr io.Writer) (string, int) {
	var in string
	for rest := args; ; {
		if err := fs.Parse(rest); err != nil {
			if errors.Is(err, flag.ErrHelp) {
				return "", 0
			}
			return "", 2
		}
		if fs.NArg() == 0 {
			break
		}
		if in != "" {
			fmt.Fprintf(stderr, "excalibot %s: one input file only (got %q and %q)\n", fs.Name(), in, fs.Arg(0))
			return "", 2
		}
		in, rest = fs.Arg(0), fs.Args()[1:]
	}
	if in == "" {
		fs.Usage()
		return "", 2
	}
	return in, -1
}
