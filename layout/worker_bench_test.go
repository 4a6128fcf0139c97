package layout

import (
	"context"
	"log/slog"
	"os"
	"sync/atomic"
	"testing"
	"time"

	"github.com/excalibot/excalibot/layout/dotproc"
)

// workerEnv makes the test binary a dot worker, for BenchmarkLayout40Worker.
const workerEnv = "EXCALIBOT_LAYOUT_TEST_DOT_WORKER"

func TestMain(m *testing.M) {
	if os.Getenv(workerEnv) != "" {
		if err := dotproc.Serve(os.Stdin, os.Stdout); err != nil {
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// countingDot counts the dot runs of a layout.
type countingDot struct {
	Dot
	runs atomic.Int64
}

func (c *countingDot) Run(ctx context.Context, src []byte) ([]byte, error) {
	c.runs.Add(1)
	return c.Dot.Run(ctx, src)
}

// BenchmarkLayout40Worker lays BenchmarkLayout40's graph out with dot in this process and in a
// worker process (dotproc.Worker), in the same run, and reports the time of each, their ratio
// and what the worker adds to each dot run.
func BenchmarkLayout40Worker(b *testing.B) {
	ctx := context.Background()
	g := groupedGraph(40, 55, 7)
	g.Fit = Fit{MaxAspect: 2.5, MaxWidth: 2800, Small: 1000, Turn: true}
	exe, err := os.Executable()
	if err != nil {
		b.Fatal(err)
	}
	w := dotproc.NewWorker(dotproc.Command{Path: exe, Env: append(os.Environ(), workerEnv+"=1")}, dotproc.Options{}, slog.New(slog.DiscardHandler))
	defer w.Close()
	inProc, worker := &countingDot{Dot: dotproc.InProcess{}}, &countingDot{Dot: w}
	defer SetDot(nil)
	for _, d := range []Dot{inProc, worker} { // warm both up outside the timing
		SetDot(d)
		if _, err := Layout(ctx, g); err != nil {
			b.Fatal(err)
		}
	}
	inProc.runs.Store(0)
	worker.runs.Store(0)
	var tIn, tWorker time.Duration
	for b.Loop() {
		SetDot(inProc)
		start := time.Now()
		if _, err := Layout(ctx, g); err != nil {
			b.Fatal(err)
		}
		mid := time.Now()
		SetDot(worker)
		if _, err := Layout(ctx, g); err != nil {
			b.Fatal(err)
		}
		tIn += mid.Sub(start)
		tWorker += time.Since(mid)
	}
	b.ReportMetric(float64(tIn)/1e6/float64(b.N), "ms-inproc/op")
	b.ReportMetric(float64(tWorker)/1e6/float64(b.N), "ms-worker/op")
	b.ReportMetric(float64(tWorker)/float64(tIn), "x-worker-vs-inproc")
	b.ReportMetric(float64(inProc.runs.Load())/float64(b.N), "dot-runs/op")
	b.ReportMetric(float64(tWorker-tIn)/1e6/float64(worker.runs.Load()), "ms-added/dot-run")
}
