package corpus

import (
	"bytes"
	"context"
	"flag"
	"fmt"
	"log/slog"
	"os"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/excalibot/excalibot/layout"
	"github.com/excalibot/excalibot/layout/dotproc"
)

var dotReplay = flag.Int("dot.replay", 0, "lay the graph inputs out, then replay their dot runs N times over in one dot worker, never replaced and replaced as shipped, and report the faults (a minute or more)")

// workerEnv makes the test binary a dot worker.
const workerEnv = "EXCALIBOT_CORPUS_DOT_WORKER"

// corpusDot is the dot worker the corpus lays out with, as serve does: hundreds of dot runs in
// one process's Graphviz module can corrupt it, and a worker is replaced on such a fault and the
// run done again, so a figure never depends on what ran before it.
var corpusDot layout.Dot = dotproc.InProcess{}

func TestMain(m *testing.M) {
	if os.Getenv(workerEnv) != "" {
		if err := dotproc.Serve(os.Stdin, os.Stdout); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	exe, err := os.Executable()
	if err != nil {
		fmt.Fprintln(os.Stderr, "find the test binary for the dot worker:", err)
		os.Exit(1)
	}
	log := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	w := dotproc.NewWorker(dotproc.Command{Path: exe, Env: append(os.Environ(), workerEnv+"=1")}, dotproc.Options{}, log)
	corpusDot = w
	layout.SetDot(w)
	code := m.Run()
	if err := w.Close(); err != nil {
		fmt.Fprintln(os.Stderr, "close the dot worker:", err)
	}
	os.Exit(code)
}

// recordingDot keeps every source it lays out, in order.
type recordingDot struct {
	mu   sync.Mutex
	srcs [][]byte
}

func (r *recordingDot) Run(ctx context.Context, src []byte) ([]byte, error) {
	r.mu.Lock()
	r.srcs = append(r.srcs, src)
	r.mu.Unlock()
	return dotproc.InProcess{}.Run(ctx, src)
}

// TestDotReplay measures how a Graphviz module fares over many runs: a module's memory can be
// corrupted by a sequence of runs, and a run can hang. It records the dot sources of the
// side-by-side run's own and plain-dot layouts, then replays them -dot.replay times over,
// in order, through a dotproc.Worker: once never replaced after a number of runs, once as shipped
// (dotproc.DefaultMaxRuns). It logs the runs that failed, the workers replaced and why, and the
// slowest run.
func TestDotReplay(t *testing.T) {
	if *dotReplay <= 0 {
		t.Skip("-dot.replay N runs it")
	}
	rec := &recordingDot{}
	layout.SetDot(rec)
	sideBySideRuns(t.Context(), t)
	layout.SetDot(corpusDot)
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	for _, maxRuns := range []int{-1, dotproc.DefaultMaxRuns} {
		var logs bytes.Buffer // written by Run's goroutine, this one, and by the worker's stderr
		var mu sync.Mutex
		log := slog.New(slog.NewTextHandler(writerFunc(func(p []byte) (int, error) {
			mu.Lock()
			defer mu.Unlock()
			return logs.Write(p)
		}), nil))
		w := dotproc.NewWorker(dotproc.Command{Path: exe, Env: append(os.Environ(), workerEnv+"=1")}, dotproc.Options{MaxRuns: maxRuns}, log)
		var failed []string
		var slowest time.Duration
		began := time.Now()
		for pass := range *dotReplay {
			for i, src := range rec.srcs {
				start := time.Now()
				if _, err := w.Run(t.Context(), src); err != nil {
					failed = append(failed, fmt.Sprintf("run %d: %s", pass*len(rec.srcs)+i+1, oneLine(err.Error())))
				}
				slowest = max(slowest, time.Since(start))
			}
		}
		_ = w.Close()
		mu.Lock()
		var replaced []string
		for line := range strings.Lines(logs.String()) {
			if strings.Contains(line, "dot worker replaced;") {
				replaced = append(replaced, strings.TrimSpace(line))
			}
		}
		mu.Unlock()
		t.Logf("max runs %d: %d runs (%d sources × %d) in %s, slowest %s; %d failed, %d workers replaced on a fault",
			maxRuns, len(rec.srcs)**dotReplay, len(rec.srcs), *dotReplay, time.Since(began).Round(time.Millisecond),
			slowest.Round(time.Millisecond), len(failed), len(replaced))
		for _, s := range slices.Concat(failed, replaced) {
			t.Log("  " + s)
		}
	}
}

type writerFunc func(p []byte) (int, error)

func (f writerFunc) Write(p []byte) (int, error) { return f(p) }
