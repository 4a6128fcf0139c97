// Command excalibot is the one binary of the project: it serves the bot and offers
// local commands (draw, render, chat …). It is the only place that wires packages together.
package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}

// run dispatches a subcommand and returns the process exit code.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		usage(stderr)
		return 2
	}
	switch args[0] {
	case "help", "-h", "--help":
		usage(stdout)
		return 0
	case "serve":
		return cmdServe(ctx, args[1:], stdout, stderr)
	case "config":
		return cmdConfig(ctx, args[1:], stdout, stderr)
	case "doctor":
		return cmdDoctor(ctx, args[1:], stdout, stderr)
	case "render":
		return cmdRender(ctx, args[1:], stdout, stderr)
	case "tools":
		return cmdTools(ctx, args[1:], stdout, stderr)
	case "draw":
		return cmdDraw(ctx, args[1:], stdout, stderr)
	case "chat":
		return cmdChat(ctx, args[1:], stdout, stderr)
	case "eval":
		return cmdEval(ctx, args[1:], stdout, stderr)
	case "mermaid":
		return cmdMermaid(ctx, args[1:], stdout, stderr)
	default:
		fmt.Fprintf(stderr, "excalibot: unknown command %q\n\n", args[0])
		usage(stderr)
		return 2
	}
}

func usage(w io.Writer) {
	fmt.Fprint(w, `usage: excalibot <command> [flags]

commands:
  help      show this text
  serve     run the bot: chat adapters with credentials, the HTTP server, the store
  render    render a .excalidraw file to PNG or SVG in headless Chromium
  tools     run a script of the model's tool calls and write the .excalidraw file (--list: schemas)
  draw      draw a diagram from a prompt with the model: writes the PNG and the .excalidraw file
  chat      a drawing thread in the terminal: each line changes the same diagram (undo, reset, save)
  mermaid   convert a Mermaid diagram into an .excalidraw file (and a PNG/SVG) in headless Chromium
  eval      run the suite of diagram requests against a real model and report how each went
  config    print the effective settings (secrets redacted) and what is missing or invalid
  doctor    check everything a deployment needs: Ollama and the model, Chromium, the store, tokens, public URL
`)
}
