package main

import (
	"bufio"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/excalibot/excalibot/internal/plural"
	"github.com/excalibot/excalibot/scene"
	"github.com/excalibot/excalibot/tools"
)

// cmdTools runs a script of tool calls, the same tools the model gets, and writes the scene:
//
//	excalibot tools [--in start.excalidraw] [-o out.excalidraw] [SCRIPT | -]
//
// SCRIPT has one call per line: {"tool": "batch_create_elements", "args": {...}}. Blank lines and
// lines starting with # are skipped. Each result is printed; a refused call stops the script
// unless --keep-going.
func cmdTools(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("tools", flag.ContinueOnError)
	fs.SetOutput(stderr)
	in := fs.String("in", "", "start from this .excalidraw file instead of an empty canvas")
	out := fs.String("o", "", "write the scene to this .excalidraw file")
	list := fs.Bool("list", false, "print the tools' names, descriptions and JSON schemas, then exit")
	keepGoing := fs.Bool("keep-going", false, "run the remaining calls after a refused one")
	fs.Usage = func() {
		fmt.Fprint(stderr, `usage: excalibot tools [flags] [SCRIPT | -]

Runs tool calls as the model would make them, one JSON object per line:
  {"tool": "batch_create_elements", "args": {"elements": [...]}}
prints each result, and writes the scene with -o. SCRIPT defaults to standard input.

`)
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		if err == flag.ErrHelp {
			return 0
		}
		return 2
	}
	if *list {
		for _, sp := range tools.New(nil, tools.Limits{}).Specs() {
			fmt.Fprintf(stdout, "%s\n  %s\n  %s\n\n", sp.Name, sp.Description, sp.Parameters)
		}
		return 0
	}
	sc := scene.New()
	if *in != "" {
		data, err := os.ReadFile(*in)
		if err != nil {
			fmt.Fprintf(stderr, "excalibot tools: read scene: %v\n", err)
			return 1
		}
		if sc, err = scene.Decode(data); err != nil {
			fmt.Fprintf(stderr, "excalibot tools: load %s: %v\n", *in, err)
			return 1
		}
	}
	var src io.Reader = os.Stdin
	if name := fs.Arg(0); name != "" && name != "-" {
		f, err := os.Open(name)
		if err != nil {
			fmt.Fprintf(stderr, "excalibot tools: open script: %v\n", err)
			return 1
		}
		defer f.Close()
		src = f
	}
	set := tools.New(sc, tools.DefaultLimits())
	code := runToolScript(ctx, set, src, stdout, stderr, *keepGoing)
	if *out != "" {
		data, err := set.Scene().Encode()
		if err == nil {
			err = os.WriteFile(*out, data, 0o644)
		}
		if err != nil {
			fmt.Fprintf(stderr, "excalibot tools: write scene: %v\n", err)
			return 1
		}
		fmt.Fprintf(stdout, "wrote %s (%s)\n", *out, plural.Count(set.Scene().Len(), "element", ""))
	}
	return code
}

func runToolScript(ctx context.Context, set *tools.Set, src io.Reader, stdout, stderr io.Writer, keepGoing bool) int {
	sc := bufio.NewScanner(src)
	sc.Buffer(make([]byte, 0, 64*1024), 8<<20) // a 200-element batch is one long line
	code := 0
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		var call struct {
			Tool string          `json:"tool"`
			Args json.RawMessage `json:"args"`
		}
		if err := json.Unmarshal([]byte(line), &call); err != nil || call.Tool == "" {
			fmt.Fprintf(stderr, "excalibot tools: line %d: want {\"tool\": NAME, \"args\": {...}} (%v)\n", n, err)
			return 2
		}
		res := set.Call(ctx, call.Tool, call.Args)
		fmt.Fprintf(stdout, "> %s\n%s\n", call.Tool, strings.TrimRight(res.Text, "\n"))
		if res.IsError {
			code = 1
			if !keepGoing {
				fmt.Fprintf(stderr, "excalibot tools: line %d: %s was refused; stopping (use --keep-going to go on)\n", n, call.Tool)
				return code
			}
		}
		if res.Done {
			break
		}
	}
	if err := sc.Err(); err != nil {
		fmt.Fprintf(stderr, "excalibot tools: read script: %v\n", err)
		return 1
	}
	return code
}
