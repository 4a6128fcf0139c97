package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/excalibot/excalibot/agent"
	"github.com/excalibot/excalibot/agent/eval"
	"github.com/excalibot/excalibot/scene"
)

// cmdEval runs the diagram suite against a real model:
//
//	excalibot eval --model NAME [--suite agent/eval/testdata/suite.json] [--out eval-out] [--only org]
func cmdEval(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("eval", flag.ContinueOnError)
	fs.SetOutput(stderr)
	suitePath := fs.String("suite", filepath.Join("agent", "eval", "testdata", "suite.json"), "suite of diagram requests")
	outDir := fs.String("out", "eval-out", "folder for the pictures and .excalidraw files")
	only := fs.String("only", "", "run only cases whose name or kind contains this")
	noPNG := fs.Bool("no-png", false, "write .excalidraw files only (no Chromium needed)")
	steps := fs.Bool("steps", false, "show each step of each run")
	verbose := fs.Bool("v", false, "log what the agent and the renderer do")
	allTools := fs.Bool("all-tools", false, "offer the model every tool, not only the core ones (a longer prompt)")
	fs.Usage = func() {
		fmt.Fprint(stderr, `usage: excalibot eval [flags]

Runs every case of the suite against the model (a real Ollama: this takes minutes) and reports
for each: finished or not, turns, tool errors, tokens, time and the warnings left in the drawing.

`)
		fs.PrintDefaults()
	}
	l, pos, code := loadConfig(fs, args, stderr, "eval")
	if l == nil {
		return code
	}
	if len(pos) > 0 {
		fmt.Fprintf(stderr, "excalibot eval: unexpected argument %q\n", pos[0])
		return 2
	}
	suite, err := eval.Load(*suitePath)
	if err != nil {
		fmt.Fprintf(stderr, "excalibot eval: %v\n", err)
		return 2
	}
	suite = suite.Select(*only)
	if len(suite.Cases) == 0 {
		fmt.Fprintf(stderr, "excalibot eval: no case matches %q\n", *only)
		return 2
	}
	if err := os.MkdirAll(*outDir, 0o755); err != nil {
		fmt.Fprintf(stderr, "excalibot eval: %v\n", err)
		return 1
	}
	k, err := newKit(l.Config, stderr, *verbose, *allTools)
	if err != nil {
		fmt.Fprintf(stderr, "excalibot eval: %v\n", err)
		return 2
	}
	defer k.close()
	if err := k.checkModel(ctx); err != nil {
		fmt.Fprintf(stderr, "excalibot eval: %v\n", err)
		return 1
	}
	fmt.Fprintf(stdout, "eval: %d cases with %s at %s\n", len(suite.Cases), k.model.Name(), k.model.URL())

	var outs []eval.Outcome
	for i, c := range suite.Cases {
		if ctx.Err() != nil {
			break
		}
		fmt.Fprintf(stdout, "[%d/%d] %s\n", i+1, len(suite.Cases), c.Name)
		set := k.tools(scene.New())
		th := func(ctx context.Context, prompt string, mem agent.Memory) (agent.Result, error) {
			var onStep func(agent.Step)
			if *steps {
				onStep = func(s agent.Step) { printStep(stdout, s) }
			}
			return k.agent.Run(ctx, k.request(set, prompt, mem, onStep))
		}
		o := eval.RunCase(ctx, c, th)
		outs = append(outs, o)
		p, err := eval.WriteScene(*outDir, o)
		if err != nil {
			fmt.Fprintf(stderr, "excalibot eval: %s: %v\n", c.Name, err)
		}
		if p != "" && !*noPNG {
			if pic, err := k.renderPNG(ctx, o.Scene); err != nil {
				fmt.Fprintf(stderr, "excalibot eval: %s: no PNG: %v\n", c.Name, err)
			} else if err := os.WriteFile(filepath.Join(*outDir, c.Name+".png"), pic, 0o644); err != nil {
				fmt.Fprintf(stderr, "excalibot eval: %s: %v\n", c.Name, err)
			}
		}
		// A model that is missing or unreachable fails every case the same way: stop early.
		if o.Err != "" && o.Turns <= 1 && o.ToolCalls == 0 {
			fmt.Fprintf(stderr, "excalibot eval: %s\n", o.Err)
			if i == 0 {
				return 1
			}
		}
	}
	fmt.Fprintln(stdout)
	if err := eval.Report(stdout, outs); err != nil {
		fmt.Fprintf(stderr, "excalibot eval: %v\n", err)
		return 1
	}
	fmt.Fprintf(stdout, "pictures in %s\n", *outDir)
	return 0
}
