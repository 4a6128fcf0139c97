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
	// The dot worker is a child of this program that must not set up anything of a command.
	if len(os.Args) == 2 && os.Args[1] == dotWorkerCommand {
		os.Exit(dotWorker(os.Stdin, os.Stdout, os.Stderr))
	}
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
		return help(ctx, args[1:], stdout, stderr)
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

// help prints the usage text, or with a command's name exactly what that command's --help does.
func help(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	switch {
	case len(args) == 0:
		usage(stdout)
		return 0
	case len(args) > 1:
		fmt.Fprintf(stderr, "excalibot help: takes one command, got %d arguments\n", len(args))
		return 2
	case args[0] == "help":
		usage(stdout)
		return 0
	}
	if _, ok := lookupCommand(args[0]); !ok {
		fmt.Fprintf(stderr, "excalibot help: unknown command %q; the commands are %s\n", args[0], commandNames())
		return 2
	}
	return run(ctx, []string{args[0], "--help"}, stdout, stderr)
}
