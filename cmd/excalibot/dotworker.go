package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/excalibot/excalibot/internal/logkey"
	"github.com/excalibot/excalibot/layout"
	"github.com/excalibot/excalibot/layout/dotproc"
)

// dotWorkerCommand is the hidden subcommand that runs Graphviz dot for its parent excalibot
// (layout/dotproc's protocol on stdin and stdout). It is not in usage: nobody runs it by hand.
const dotWorkerCommand = "dot-worker"

// dotWorker serves its parent until the parent closes its stdin or dies.
func dotWorker(stdin io.Reader, stdout, stderr io.Writer) int {
	// Ctrl-C in a terminal, or a service manager's SIGTERM to the whole group, is for the parent,
	// which finishes its drawings with this worker and then closes its stdin.
	signal.Ignore(os.Interrupt, syscall.SIGTERM)
	if err := dotproc.Serve(stdin, stdout); err != nil {
		fmt.Fprintf(stderr, "excalibot %s: %v\n", dotWorkerCommand, err)
		return 1
	}
	return 0
}

// useDotWorker makes every layout of this process run dot in a worker process, this program's
// dot-worker, started now so that the first diagram does not wait for it. The long-running
// commands (serve, chat, eval) use it: a Graphviz run that hangs or breaks the WebAssembly module
// costs a worker, not every later diagram. The one-shot commands lay out in-process: one
// diagram, with the person watching, has no later diagrams to protect and would pay the worker's
// start. stop ends the worker and goes back to in-process.
func useDotWorker(ctx context.Context, log *slog.Logger) (stop func()) {
	w := dotproc.NewWorker(dotproc.Command{Path: selfExecutable(), Args: []string{dotWorkerCommand}, Name: os.Args[0],
		Env: dotWorkerEnv(os.Environ())}, dotproc.Options{}, log)
	began := time.Now()
	if err := w.Start(ctx); err != nil {
		// Each layout tries to start one again, and says why it cannot.
		log.Error("could not start the Graphviz worker", logkey.Err, err)
	} else {
		log.Debug("Graphviz worker started", "pid", w.Pid(), "took", time.Since(began).Round(time.Millisecond))
	}
	layout.SetDot(w)
	return func() {
		layout.SetDot(nil)
		_ = w.Close()
	}
}

// selfExecutable is the path that starts this very program: /proc/self/exe where there is one, so
// that a binary replaced on disk by an upgrade still starts workers of its own version.
func selfExecutable() string {
	if _, err := os.Stat("/proc/self/exe"); err == nil {
		return "/proc/self/exe"
	}
	if exe, err := os.Executable(); err == nil {
		return exe
	}
	return os.Args[0]
}

// dotWorkerEnv is what of env the worker gets: TMPDIR, where go-graphviz keeps the compiled module
// the parent's start has cached, and the Go runtime's settings. The bot's tokens and passwords
// stay out of a process that reads dot sources only.
func dotWorkerEnv(env []string) []string {
	out := []string{}
	for _, kv := range env {
		name, _, _ := strings.Cut(kv, "=")
		switch name {
		case "TMPDIR", "GOGC", "GOMAXPROCS", "GOMEMLIMIT", "GODEBUG", "GOTRACEBACK":
			out = append(out, kv)
		}
	}
	return out
}
