package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/excalibot/excalibot/agent"
	"github.com/excalibot/excalibot/agent/ollama"
	"github.com/excalibot/excalibot/config"
	"github.com/excalibot/excalibot/internal/plural"
	"github.com/excalibot/excalibot/render"
	"github.com/excalibot/excalibot/scene"
	"github.com/excalibot/excalibot/tools"
)

// cmdDraw draws one diagram from a prompt (and a picture) and writes the PNG and the .excalidraw
// file:
//
//	excalibot draw "org chart: CEO, CTO, CFO" [-o diagram.png] [--model NAME] [--in start.excalidraw]
//	excalibot draw --image whiteboard.jpg ["redraw this, add a cache"] [--vision-model NAME]
func cmdDraw(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("draw", flag.ContinueOnError)
	fs.SetOutput(stderr)
	out := fs.String("o", "diagram.png", "PNG to write; the .excalidraw file goes beside it")
	in := fs.String("in", "", "start from this .excalidraw file instead of an empty canvas")
	quiet := fs.Bool("q", false, "do not show each step")
	verbose := fs.Bool("v", false, "log what the agent and the renderer do")
	allTools := fs.Bool("all-tools", false, "offer the model every tool, not only the core ones (a longer prompt)")
	image := fs.String("image", "", "a picture to redraw (PNG, JPEG or WebP: a whiteboard photo, a screenshot), sent to the vision model; a PNG exported from Excalidraw is drawn on instead")
	fs.Usage = func() {
		fmt.Fprint(stderr, `usage: excalibot draw [flags] "PROMPT"
       excalibot draw --image FILE [flags] ["PROMPT"]

Asks the model (Ollama at OLLAMA_HOST) to draw PROMPT, shows each step, and writes the
picture and the editable .excalidraw file. With --image the model redraws the picture as a
diagram (with PROMPT's changes, if any). Flags may come before or after the prompt.

`)
		fs.PrintDefaults()
	}
	l, pos, code := loadConfig(fs, args, stderr, "draw")
	if l == nil {
		return code
	}
	prompt := strings.TrimSpace(strings.Join(pos, " "))
	if prompt == "" && *image == "" {
		fs.Usage()
		return 2
	}
	var source drawPicture
	if *image != "" {
		var err error
		if source, err = readPicture(*image, l.Config); err != nil {
			fmt.Fprintf(stderr, "excalibot draw: %v; nothing was sent or written\n", err)
			return 1
		}
		if source.scene != nil && *in != "" {
			fmt.Fprintf(stderr, "excalibot draw: --in and --image %s both give the diagram to start from; give one\n", *image)
			return 2
		}
		if source.scene != nil && prompt == "" {
			fmt.Fprintf(stderr, "excalibot draw: %s carries an Excalidraw scene; say what to change in it, or open it at excalidraw.com\n", *image)
			return 2
		}
		fmt.Fprintln(stdout, source.line)
	}
	k, err := newKit(l.Config, stderr, *verbose, *allTools)
	if err != nil {
		fmt.Fprintf(stderr, "excalibot draw: %v\n", err)
		return 2
	}
	defer k.close()
	if err := k.checkModel(ctx, len(source.images) > 0); err != nil {
		fmt.Fprintf(stderr, "excalibot draw: %v\n", err)
		return 1
	}
	sc := scene.New()
	switch {
	case source.scene != nil:
		sc = source.scene
	case *in != "":
		if sc, err = readScene(*in); err != nil {
			fmt.Fprintf(stderr, "excalibot draw: %v\n", err)
			return 1
		}
	}
	k.chrome.start(ctx) // while the model works, so the picture comes sooner
	set := k.tools(sc)
	var onStep func(agent.Step)
	if !*quiet {
		onStep = func(s agent.Step) { printStep(stdout, s) }
	}
	req := k.request(set, prompt, agent.Memory{}, onStep)
	req.Images = source.images
	res, err := k.agent.Run(ctx, req)
	if errors.Is(err, agent.ErrNoVision) {
		fmt.Fprintf(stderr, "excalibot draw: %v; name one with --vision-model (EXCALIBOT_VISION_MODEL)\n", err)
		return 1
	}
	if err != nil {
		fmt.Fprintf(stderr, "excalibot draw: %v\n", err)
		return 1
	}
	fmt.Fprintln(stdout, res.Summary)
	fmt.Fprintln(stdout, runFigures(res))

	doc, err := set.Scene().Encode()
	if err != nil {
		fmt.Fprintf(stderr, "excalibot draw: encode scene: %v\n", err)
		return 1
	}
	sceneFile := strings.TrimSuffix(*out, filepath.Ext(*out)) + ".excalidraw"
	if err := os.WriteFile(sceneFile, doc, 0o644); err != nil {
		fmt.Fprintf(stderr, "excalibot draw: write scene: %v\n", err)
		return 1
	}
	fmt.Fprintf(stdout, "wrote %s\n", sceneFile)
	if set.Scene().Len() == 0 {
		// The request emptied the diagram (or drew nothing): there is no picture to make, which
		// is an answer, not a failure. A picture from before would contradict the file beside it.
		fmt.Fprintln(stdout, nothingToDraw)
		switch err := os.Remove(*out); {
		case err == nil:
			fmt.Fprintf(stdout, "removed %s, the picture from before\n", *out)
		case !errors.Is(err, os.ErrNotExist):
			fmt.Fprintf(stderr, "excalibot draw: remove the picture from before: %v\n", err)
			return 1
		}
		return 0
	}
	pic, err := k.renderPNG(ctx, doc)
	if err != nil {
		fmt.Fprintf(stderr, "excalibot draw: no PNG: %v\n(the drawing is in %s; open it at excalidraw.com)\n", err, sceneFile)
		return 1
	}
	if err := os.WriteFile(*out, pic, 0o644); err != nil {
		fmt.Fprintf(stderr, "excalibot draw: write PNG: %v\n", err)
		return 1
	}
	fmt.Fprintf(stdout, "wrote %s (%d bytes)\n", *out, len(pic))
	return 0
}

// nothingToDraw is what draw and chat say of a diagram left with no element: its file is
// written, and there is no picture to render.
const nothingToDraw = "The diagram is empty: there is nothing to draw, so no PNG."

// kit is the agent wired from the settings, shared by draw, chat and eval.
type kit struct {
	cfg      config.Config
	agent    *agent.Agent
	allTools bool
	model    *ollama.Client
	log      *slog.Logger
	chrome   *lazyRenderer // pictures and create_from_mermaid's conversions
}

func newKit(cfg config.Config, stderr io.Writer, verbose, allTools bool) (*kit, error) {
	log := cliLogger(stderr, verbose)
	a, m, err := newAgent(cfg, allTools, log)
	if err != nil {
		return nil, err
	}
	return &kit{cfg: cfg, agent: a, model: m, log: log, allTools: allTools,
		chrome: newLazyRenderer(cfg.ChromePath, cfg.RenderTimeout, true, log)}, nil
}

// use points the kit at another model and protocol, keeping its renderer: eval compares them.
func (k *kit) use(model string, proto agent.Protocol) error {
	cfg := k.cfg
	cfg.Model, cfg.Protocol = model, string(proto)
	a, m, err := newAgent(cfg, k.allTools, k.log)
	if err != nil {
		return err
	}
	k.cfg, k.model, k.agent = cfg, m, a
	return nil
}

// checkModel asks Ollama what the model can do before the first request, so a command stops at
// once with the sentence to act on when Ollama is down or the model not pulled. A run with
// pictures asks about the vision model when one is named, as that is the model it uses.
func (k *kit) checkModel(ctx context.Context, pictures bool) error {
	m := k.model
	if pictures && k.cfg.VisionModel != "" {
		m = m.ForModel(k.cfg.VisionModel)
	}
	proto, err := oneProtocol(k.cfg)
	if err != nil {
		return err
	}
	_, err = checkModel(ctx, m, proto, k.log)
	return err
}

func (k *kit) tools(sc *scene.Scene) *tools.Set {
	set := tools.New(sc, toolLimits(k.cfg))
	set.SetMermaid(k.chrome)
	return set
}

func (k *kit) request(set *tools.Set, prompt string, mem agent.Memory, onStep func(agent.Step)) agent.Request {
	return agent.SetRequest(set, prompt, mem, onStep)
}

// renderPNG renders with the kit's renderer.
func (k *kit) renderPNG(ctx context.Context, doc []byte) ([]byte, error) {
	r, err := k.chrome.get(ctx)
	if err != nil {
		return nil, err
	}
	return r.PNG(ctx, doc, render.Options{Scale: k.cfg.RenderScale})
}

func (k *kit) close() { k.chrome.close() }

func readScene(path string) (*scene.Scene, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read scene: %w", err)
	}
	sc, err := scene.Decode(b)
	if err != nil {
		return nil, fmt.Errorf("read scene %s: %w", path, err)
	}
	return sc, nil
}

// printStep shows one step on a line, as it happens.
func printStep(w io.Writer, s agent.Step) {
	switch s.Kind {
	case agent.StepModel:
		line := fmt.Sprintf("  [%d] model: %d+%d tokens, %s", s.Turn, s.PromptTokens, s.OutputTokens, s.Duration.Round(time.Millisecond))
		if s.Result != "" {
			line += fmt.Sprintf(": %q", s.Result)
		}
		fmt.Fprintln(w, line)
	case agent.StepTool:
		mark := "ok"
		if s.IsError {
			mark = "ERROR"
		}
		from := ""
		if s.FromText {
			from = " (written as text)"
		}
		fmt.Fprintf(w, "  [%d] %s%s %s -> %s: %s\n", s.Turn, s.Tool, from, s.Args, mark, s.Result)
	case agent.StepNudge:
		fmt.Fprintf(w, "  [%d] nudge: %s\n", s.Turn, s.Result)
	case agent.StepFallback:
		fmt.Fprintf(w, "  [%d] plan fallback: %s\n", s.Turn, s.Result)
	}
}

func runFigures(r agent.Result) string {
	fixes := ""
	c := r.Corrections
	for _, k := range []struct {
		n         int
		one, many string
	}{{c.Nudges, "nudge", ""}, {c.Retries, "retry", "retries"}, {c.PlanFallbacks, "plan fallback", ""},
		{c.WithoutSchema, "request without the schema", "requests without the schema"}} {
		if k.n > 0 {
			fixes += ", " + plural.Count(k.n, k.one, k.many)
		}
	}
	return fmt.Sprintf("(%s: %s, %s, %s%s, %d+%d tokens, %s, model %s)", r.Reason, plural.Count(r.Turns, "turn", ""),
		plural.Count(r.ToolCalls, "tool call", ""), plural.Count(r.ToolErrors, "error", ""), fixes, r.PromptTokens, r.OutputTokens,
		r.Duration.Round(time.Millisecond), r.ModelTime.Round(time.Millisecond))
}

// loadConfig reads the settings and the command's own flags from args, which may mix flags and
// positional arguments in any order (flag stops at the first positional, so they are split
// first). It returns nil and an exit code when the command should stop.
func loadConfig(fs *flag.FlagSet, args []string, stderr io.Writer, name string) (*config.Loaded, []string, int) {
	probe := flag.NewFlagSet(name, flag.ContinueOnError)
	probe.SetOutput(io.Discard)
	fs.VisitAll(func(f *flag.Flag) { probe.Var(f.Value, f.Name, f.Usage) })
	_, _ = config.Load(probe, nil, nil, settingsOf(name)...) // registers the settings' flags on probe to learn their names
	var flags, pos []string
	for i := 0; i < len(args); i++ {
		a := args[i]
		if a == "--" {
			pos = append(pos, args[i+1:]...)
			break
		}
		if !strings.HasPrefix(a, "-") || a == "-" {
			pos = append(pos, a)
			continue
		}
		flags = append(flags, a)
		fname := strings.TrimLeft(a, "-")
		if strings.Contains(fname, "=") {
			continue
		}
		f := probe.Lookup(fname)
		if f == nil {
			continue // flag.Parse reports it
		}
		if bf, ok := f.Value.(interface{ IsBoolFlag() bool }); ok && bf.IsBoolFlag() {
			continue
		}
		if i+1 < len(args) {
			flags = append(flags, args[i+1])
			i++
		}
	}
	l, err := config.Load(fs, flags, os.Environ(), settingsOf(name)...)
	if err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return nil, nil, 0
		}
		fmt.Fprintf(stderr, "excalibot %s: %v\n", name, err)
		return nil, nil, 2
	}
	return l, pos, 0
}
