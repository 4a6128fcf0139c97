package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/excalibot/excalibot/agent"
	"github.com/excalibot/excalibot/agent/eval"
	"github.com/excalibot/excalibot/config"
	"github.com/excalibot/excalibot/scene"
)

// cmdEval runs the diagram suite against a real model:
//
//	excalibot eval --model NAME[,NAME…] [--protocol tools,plan] [--suite agent/eval/testdata/suite.json] [--out eval-out] [--only org]
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
for each: finished or not, turns, tool errors, tokens, time, the warnings left in the drawing and
the course corrections it needed. --model and --protocol take comma-separated lists; every model
runs the suite in every protocol, and a table compares them: cases passed, model requests per new
diagram and per follow-up, tool calls per run, and how often each course correction fired (nudges,
retries, plan fallbacks of the tool loop, the plan protocol's request without the schema), with
the share of runs that needed it. With more than one, pictures go in a folder per model and
protocol under --out.

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
	models, protos, err := evalMatrix(l.Config)
	if err != nil {
		fmt.Fprintf(stderr, "excalibot eval: %v\n", err)
		return 2
	}
	first := l.Config
	first.Model, first.Protocol = models[0], string(protos[0])
	k, err := newKit(first, stderr, *verbose, *allTools)
	if err != nil {
		fmt.Fprintf(stderr, "excalibot eval: %v\n", err)
		return 2
	}
	defer k.close()
	defer useDotWorker(ctx, k.log)()
	several := len(models)*len(protos) > 1

	var outs []eval.Outcome
	for _, model := range models {
		for _, proto := range protos {
			if ctx.Err() != nil {
				break
			}
			if err := k.use(model, proto); err != nil {
				fmt.Fprintf(stderr, "excalibot eval: %v\n", err)
				return 2
			}
			if err := k.checkModel(ctx, false); err != nil {
				fmt.Fprintf(stderr, "excalibot eval: %v\n", err)
				if !several {
					return 1
				}
				continue
			}
			dir := *outDir
			if several {
				dir = filepath.Join(*outDir, fileSafe(model)+"-"+string(proto))
			}
			if err := os.MkdirAll(dir, 0o755); err != nil {
				fmt.Fprintf(stderr, "excalibot eval: %v\n", err)
				return 1
			}
			fmt.Fprintf(stdout, "eval: %d cases with %s (protocol %s) at %s\n", len(suite.Cases), k.model.Name(), proto, k.model.URL())
			got, stop := evalSuite(ctx, k, suite, dir, string(proto), *steps, *noPNG, stdout, stderr)
			outs = append(outs, got...)
			if stop && !several {
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

// evalMatrix is what eval compares: the models of --model and the protocols of --protocol, each
// a comma-separated list.
func evalMatrix(cfg config.Config) ([]string, []agent.Protocol, error) {
	var models []string
	for _, m := range strings.Split(cfg.Model, ",") {
		if m = strings.TrimSpace(m); m != "" {
			models = append(models, m)
		}
	}
	if len(models) == 0 {
		return nil, nil, fmt.Errorf("--model names no model; give one or more, e.g. qwen3:8b,gemma3:4b")
	}
	ps, err := cfg.Protocols()
	if err != nil {
		return nil, nil, fmt.Errorf("--protocol: %w", err)
	}
	protos := make([]agent.Protocol, len(ps))
	for i, p := range ps {
		protos[i] = agent.Protocol(p)
	}
	return models, protos, nil
}

// evalSuite runs every case with the kit's model and protocol. stop is true when the first case
// failed before drawing anything (Ollama down, model missing): the rest would fail the same way.
func evalSuite(ctx context.Context, k *kit, suite eval.Suite, dir, proto string, steps, noPNG bool,
	stdout, stderr io.Writer) ([]eval.Outcome, bool) {
	var outs []eval.Outcome
	for i, c := range suite.Cases {
		if ctx.Err() != nil {
			break
		}
		fmt.Fprintf(stdout, "[%d/%d] %s\n", i+1, len(suite.Cases), c.Name)
		set := k.tools(scene.New())
		th := func(ctx context.Context, prompt string, mem agent.Memory) (agent.Result, error) {
			var onStep func(agent.Step)
			if steps {
				onStep = func(s agent.Step) { printStep(stdout, s) }
			}
			return k.agent.Run(ctx, k.request(set, prompt, mem, onStep))
		}
		o := eval.RunCase(ctx, c, th)
		o.Model, o.Protocol = k.model.Name(), proto
		if doc, err := set.Scene().Encode(); err == nil && set.Scene().Len() > 0 {
			o.Scene = doc
		}
		outs = append(outs, o)
		p, err := eval.WriteScene(dir, o)
		if err != nil {
			fmt.Fprintf(stderr, "excalibot eval: %s: %v\n", c.Name, err)
		}
		if p != "" && !noPNG {
			if pic, err := k.renderPNG(ctx, o.Scene); err != nil {
				fmt.Fprintf(stderr, "excalibot eval: %s: no PNG: %v\n", c.Name, err)
			} else if err := os.WriteFile(filepath.Join(dir, c.Name+".png"), pic, 0o644); err != nil {
				fmt.Fprintf(stderr, "excalibot eval: %s: %v\n", c.Name, err)
			}
		}
		// A model that is missing or unreachable fails every case the same way: stop early.
		if o.Err != "" && o.Turns <= 1 && o.ToolCalls == 0 {
			fmt.Fprintf(stderr, "excalibot eval: %s\n", o.Err)
			if i == 0 {
				return outs, true
			}
		}
	}
	return outs, false
}

// fileSafe makes a model name a folder name: "qwen3:8b" → "qwen3_8b".
func fileSafe(s string) string {
	return strings.Map(func(r rune) rune {
		if r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '.' || r == '-' {
			return r
		}
		return '_'
	}, s)
}
