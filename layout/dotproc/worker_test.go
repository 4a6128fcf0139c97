package dotproc

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
	_ "unsafe" // linkname, to reach the Graphviz module's memory in the test worker

	"github.com/excalibot/excalibot/internal/waitfor"
	"github.com/tetratelabs/wazero/api"
)

// The test binary is its own worker: run with workerEnv set, it serves the protocol on its stdin
// and stdout, with testRun's hooks, instead of running the tests.
const (
	workerEnv = "EXCALIBOT_DOTPROC_TEST_WORKER"
	dirEnv    = "EXCALIBOT_DOTPROC_TEST_DIR" // where the hooks leave word of what they did
)

func TestMain(m *testing.M) {
	if os.Getenv(workerEnv) != "" {
		if err := serve(os.Stdin, os.Stdout, testRun); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// Markers in a source's comment make the test worker misbehave, as real workers were seen to:
//
//	/* hang */          never answers (a run that cycles), after leaving a file hung-<pid>
//	/* pause-once */    the first time, leaves paused (holding its pid) and never answers
//	/* corrupt */       overwrites the module's memory, then runs: Graphviz traps
//	/* corrupt-once */  the same, the first time only
//	/* refuse-once */   the first time, fails as a corrupted module first does: a plausible
//	                    error about the source
func testRun(ctx context.Context, src []byte) ([]byte, error) {
	dir := os.Getenv(dirEnv)
	pid := strconv.Itoa(os.Getpid())
	switch {
	case bytes.Contains(src, []byte("/* refuse-once */")) && first(dir, "refused", pid):
		return nil, errors.New("parse dot source: node 'p76', graph 'G' size too small for label")
	case bytes.Contains(src, []byte("/* hang */")):
		if err := os.WriteFile(filepath.Join(dir, "hung-"+pid), nil, 0o600); err != nil {
			return nil, err
		}
		select {}
	case bytes.Contains(src, []byte("/* pause-once */")) && first(dir, "paused", pid):
		select {}
	case bytes.Contains(src, []byte("/* corrupt */")),
		bytes.Contains(src, []byte("/* corrupt-once */")) && first(dir, "corrupted", pid):
		mem := graphvizModule.mod.Memory()
		mem.Write(0, bytes.Repeat([]byte{0xff}, int(mem.Size())))
	}
	return InProcess{}.Run(ctx, src)
}

// graphvizModule is go-graphviz's one module (the first field of its internal WasmModule).
//
//go:linkname graphvizModule github.com/goccy/go-graphviz/internal/wasm.mod
var graphvizModule *struct{ mod api.Module }

// first reports whether no worker has done what name says yet, and records that this one has.
func first(dir, name, pid string) bool {
	f, err := os.OpenFile(filepath.Join(dir, name), os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o600)
	if err != nil {
		return false
	}
	defer f.Close()
	_, _ = f.WriteString(pid)
	return true
}

const goodSource = "digraph G { a -> b; b -> c; a -> c }"

// testWorker is a Worker whose processes are this test binary, and what it logs.
func testWorker(t *testing.T, opts Options) (*Worker, string, *logBuffer) {
	t.Helper()
	dir := t.TempDir()
	logs := &logBuffer{}
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	w := NewWorker(Command{Path: exe, Env: append(os.Environ(), workerEnv+"=1", dirEnv+"="+dir)}, opts,
		slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug})))
	t.Cleanup(func() { _ = w.Close() })
	return w, dir, logs
}

// run is w.Run with a bound that only a broken test reaches.
func run(t *testing.T, w *Worker, src string) ([]byte, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 5*time.Minute)
	defer cancel()
	return w.Run(ctx, []byte(src))
}

// pidIn waits for the file a hook leaves and returns the pid it holds.
func pidIn(t *testing.T, path string) int {
	t.Helper()
	var data []byte
	waitfor.Until(t, 2*time.Minute, "the worker's hook to write "+filepath.Base(path), func() bool {
		b, err := os.ReadFile(path)
		data = b
		return err == nil && len(b) > 0
	}, nil)
	pid, err := strconv.Atoi(string(data))
	if err != nil {
		t.Fatalf("%s holds %q: %v", path, data, err)
	}
	return pid
}

// waitFile waits until a hook has left the file at path.
func waitFile(t *testing.T, path string) {
	t.Helper()
	waitfor.Until(t, 2*time.Minute, "the worker's hook to leave "+filepath.Base(path), func() bool {
		_, err := os.Stat(path)
		return err == nil
	}, nil)
}

func TestRoundTrip(t *testing.T) {
	w, _, logs := testWorker(t, Options{})
	for _, tc := range []struct {
		name, src string
		wantErr   string // "" for dot's output
		// replaced: the worker is replaced, as a source's error after other runs is checked in
		// a fresh one
		replaced bool
	}{
		{"bad source in a fresh worker", "digraph G { a -> ", "syntax error", false},
		{"graph", goodSource, "", false},
		{"clusters and labels", `digraph G { rankdir=LR; subgraph cluster_0 { a; b } a -> b [label="x"]; b -> c }`, "", false},
		{"bad source after runs", "digraph G { a -> ", "syntax error", true},
		{"graph after a bad source", goodSource, "", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			pid := w.Pid()
			got, err := run(t, w, tc.src)
			want, wantErr := InProcess{}.Run(t.Context(), []byte(tc.src))
			if replaced := w.Pid() != pid && pid != 0; replaced != tc.replaced {
				t.Errorf("worker replaced: %v (pid %d, then %d), want %v", replaced, pid, w.Pid(), tc.replaced)
			}
			if tc.wantErr != "" {
				if err == nil || wantErr == nil || !strings.Contains(err.Error(), tc.wantErr) || err.Error() != wantErr.Error() {
					t.Fatalf("got error %v, want in-process's %v (containing %q)", err, wantErr, tc.wantErr)
				}
				if errors.Is(err, ErrBroken) {
					t.Errorf("a bad source's error %v is ErrBroken", err)
				}
				return
			}
			if err != nil || wantErr != nil {
				t.Fatalf("got error %v, in-process %v; want none", err, wantErr)
			}
			if !bytes.Equal(got, want) {
				t.Errorf("the worker's output differs from in-process's:\ngot  %.300s\nwant %.300s", got, want)
			}
			var out struct{ Objects []any }
			if err := json.Unmarshal(got, &out); err != nil || len(out.Objects) == 0 {
				t.Errorf("output %.200s: objects %d, error %v", got, len(out.Objects), err)
			}
		})
	}
	if n := strings.Count(logs.String(), "dot worker replaced"); n != 1 {
		t.Errorf("the log says %d times that a worker was replaced, want 1 (the bad source after runs):\n%s", n, logs)
	}
}

// A corrupted module first fails with a plausible error about the source: from a worker that has
// run before, that error is checked in a fresh worker, whose layout is returned.
func TestSuspectError(t *testing.T) {
	w, _, logs := testWorker(t, Options{})
	if _, err := run(t, w, goodSource); err != nil {
		t.Fatal(err)
	}
	first := w.Pid()
	out, err := run(t, w, "digraph G { /* refuse-once */ a -> b }")
	if err != nil || !bytes.Contains(out, []byte(`"objects"`)) {
		t.Fatalf("got %.100s, %v; want the layout from a fresh worker", out, err)
	}
	if got := w.Pid(); got == first || got == 0 {
		t.Errorf("worker pid %d, want a fresh one (not %d)", got, first)
	}
	if !strings.Contains(logs.String(), "too small for label") {
		t.Errorf("the log does not give the first worker's error:\n%s", logs)
	}
}

// A worker that has done MaxRuns runs is replaced before the next.
func TestMaxRuns(t *testing.T) {
	w, _, _ := testWorker(t, Options{MaxRuns: 2})
	var pids []int
	for range 5 {
		if _, err := run(t, w, goodSource); err != nil {
			t.Fatal(err)
		}
		pids = append(pids, w.Pid())
	}
	if got := []bool{pids[0] == pids[1], pids[1] == pids[2], pids[2] == pids[3], pids[3] == pids[4]}; !slices.Equal(got, []bool{true, false, true, false}) {
		t.Errorf("workers of five runs %v, want a fresh one every two runs", pids)
	}
}

// A worker SIGKILLed in the middle of a run is replaced and the run done in the fresh one.
func TestWorkerKilledMidRun(t *testing.T) {
	w, dir, logs := testWorker(t, Options{})
	type result struct {
		out []byte
		err error
	}
	done := make(chan result, 1)
	go func() {
		out, err := run(t, w, "digraph G { /* pause-once */ a -> b }")
		done <- result{out, err}
	}()
	pid := pidIn(t, filepath.Join(dir, "paused"))
	if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	r := <-done
	if r.err != nil || !bytes.Contains(r.out, []byte(`"objects"`)) {
		t.Fatalf("got %.100s, %v; want the layout from a fresh worker", r.out, r.err)
	}
	if got := w.Pid(); got == pid || got == 0 {
		t.Errorf("worker pid %d after the kill of %d, want a fresh one", got, pid)
	}
	if !strings.Contains(logs.String(), "dot worker replaced") || !strings.Contains(logs.String(), "died") {
		t.Errorf("the log does not say the dead worker was replaced:\n%s", logs)
	}
}

// A run that never answers is cut at the run timeout, tried once more in a fresh worker, then
// given up with an error; the next run goes through in another fresh worker.
func TestHungRun(t *testing.T) {
	// Long enough for a three-node layout on a loaded machine; the hang is cut twice.
	const timeout = 4 * time.Second
	w, dir, logs := testWorker(t, Options{RunTimeout: timeout})
	if _, err := run(t, w, goodSource); err != nil {
		t.Fatal(err)
	}
	first := w.Pid()
	_, err := run(t, w, "digraph G { /* hang */ a -> b }")
	if err == nil || strings.Count(err.Error(), "took longer than "+timeout.String()) != 2 {
		t.Fatalf("got error %v, want it to say twice that the run took longer than %s", err, timeout)
	}
	hung, _ := filepath.Glob(filepath.Join(dir, "hung-*"))
	if len(hung) != 2 || !slices.Contains(hung, filepath.Join(dir, "hung-"+strconv.Itoa(first))) {
		t.Errorf("hung in %v, want in worker %d and a fresh one", hung, first)
	}
	for _, h := range hung {
		pid, _ := strconv.Atoi(strings.TrimPrefix(filepath.Base(h), "hung-"))
		if syscall.Kill(pid, 0) == nil {
			t.Errorf("the hung worker %d still runs", pid)
		}
	}
	out, err := run(t, w, goodSource)
	if err != nil || !bytes.Contains(out, []byte(`"objects"`)) {
		t.Fatalf("the run after: %.100s, %v", out, err)
	}
	if got := w.Pid(); got == first || got == 0 {
		t.Errorf("worker pid %d after the hangs, want a fresh one (not %d)", got, first)
	}
	if n := strings.Count(logs.String(), "dot worker replaced"); n != 1 {
		t.Errorf("the log says %d times that a worker was replaced, want 1:\n%s", n, logs)
	}
}

// A run that traps in a corrupted module is done again in a fresh worker; one that traps in the
// fresh worker too is given up with ErrBroken.
func TestBrokenModule(t *testing.T) {
	w, _, logs := testWorker(t, Options{})
	if _, err := run(t, w, goodSource); err != nil {
		t.Fatal(err)
	}
	first := w.Pid()
	out, err := run(t, w, "digraph G { /* corrupt-once */ a -> b }")
	if err != nil || !bytes.Contains(out, []byte(`"objects"`)) {
		t.Fatalf("got %.100s, %v; want the layout from a fresh worker", out, err)
	}
	if got := w.Pid(); got == first || got == 0 {
		t.Errorf("worker pid %d, want a fresh one (not %d)", got, first)
	}
	if !strings.Contains(logs.String(), "wasm error") {
		t.Errorf("the log does not name the trap:\n%s", logs)
	}

	_, err = run(t, w, "digraph G { /* corrupt */ a -> b }")
	if !errors.Is(err, ErrBroken) || strings.Count(err.Error(), "out of bounds memory access") != 2 {
		t.Fatalf("got error %v, want ErrBroken, trapped twice", err)
	}
	if _, err := run(t, w, goodSource); err != nil {
		t.Errorf("the run after: %v", err)
	}
}

// A caller that gives up gets its context's error at once; the busy worker is killed, and the
// next run starts a fresh one.
func TestCallerGivesUp(t *testing.T) {
	w, dir, _ := testWorker(t, Options{})
	if err := w.Start(t.Context()); err != nil {
		t.Fatal(err)
	}
	first := w.Pid()
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() {
		_, err := w.Run(ctx, []byte("digraph G { /* hang */ a -> b }"))
		done <- err
	}()
	waitFile(t, filepath.Join(dir, "hung-"+strconv.Itoa(first)))
	cancel()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Fatalf("got %v, want context.Canceled", err)
	}
	if syscall.Kill(first, 0) == nil {
		t.Errorf("the worker %d left running its abandoned run", first)
	}
	if _, err := run(t, w, goodSource); err != nil {
		t.Fatal(err)
	}
}

// A caller waiting for the worker behind a run may give up too.
func TestWaitingCallerGivesUp(t *testing.T) {
	w, dir, _ := testWorker(t, Options{})
	if err := w.Start(t.Context()); err != nil {
		t.Fatal(err)
	}
	go func() { _, _ = run(t, w, "digraph G { /* hang */ a -> b }") }() // cut by Close
	waitFile(t, filepath.Join(dir, "hung-"+strconv.Itoa(w.Pid())))
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	if _, err := w.Run(ctx, []byte(goodSource)); !errors.Is(err, context.Canceled) {
		t.Fatalf("got %v, want context.Canceled", err)
	}
}

// A caller gone before its turn leaves the worker as it was.
func TestCallerGoneBeforeItsTurn(t *testing.T) {
	w, _, logs := testWorker(t, Options{})
	if err := w.Start(t.Context()); err != nil {
		t.Fatal(err)
	}
	pid := w.Pid()
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	for range 20 { // the turn is free: a select between it and ctx would take either
		if _, err := w.Run(ctx, []byte(goodSource)); !errors.Is(err, context.Canceled) {
			t.Fatalf("got %v, want context.Canceled", err)
		}
	}
	if w.Pid() != pid || strings.Contains(logs.String(), "replaced") {
		t.Errorf("worker %d, then %d; want it kept:\n%s", pid, w.Pid(), logs)
	}
}

// Close kills a worker in the middle of a run: the run returns ErrClosed, not a retry, and so
// does every later one.
func TestCloseMidRun(t *testing.T) {
	w, dir, logs := testWorker(t, Options{})
	if err := w.Start(t.Context()); err != nil {
		t.Fatal(err)
	}
	pid := w.Pid()
	done := make(chan error, 1)
	go func() {
		_, err := run(t, w, "digraph G { /* hang */ a -> b }")
		done <- err
	}()
	waitFile(t, filepath.Join(dir, "hung-"+strconv.Itoa(pid)))
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if err := <-done; !errors.Is(err, ErrClosed) {
		t.Errorf("the run under way: %v, want ErrClosed", err)
	}
	if syscall.Kill(pid, 0) == nil {
		t.Errorf("worker %d still runs after Close", pid)
	}
	if _, err := run(t, w, goodSource); !errors.Is(err, ErrClosed) {
		t.Errorf("a run after Close: %v, want ErrClosed", err)
	}
	if strings.Contains(logs.String(), "replaced") {
		t.Errorf("Close started a fresh worker:\n%s", logs)
	}
}

// A worker whose parent is gone (its stdin ends) exits, between runs and in the middle of one.
func TestWorkerExitsWhenStdinEnds(t *testing.T) {
	for _, tc := range []struct {
		name, src string // "" sends nothing
	}{
		{"between runs", ""},
		{"mid-run", "digraph G { /* hang */ a -> b }"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			exe, err := os.Executable()
			if err != nil {
				t.Fatal(err)
			}
			cmd := exec.Command(exe)
			cmd.Env = append(os.Environ(), workerEnv+"=1", dirEnv+"="+dir)
			in, err := cmd.StdinPipe()
			if err != nil {
				t.Fatal(err)
			}
			out, err := cmd.StdoutPipe()
			if err != nil {
				t.Fatal(err)
			}
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			exited := make(chan error, 1)
			go func() { // ends with the process; the test waits for it or kills it
				status, payload, err := readReply(out)
				if err == nil && (status != statusReady || string(payload) != protocolName) {
					err = fmt.Errorf("ready answer %q %q", status, payload)
				}
				for err == nil {
					_, _, err = readReply(out) // to the end of the stream
				}
				exited <- cmd.Wait()
			}()
			if tc.src != "" {
				if err := writeRequest(in, []byte(tc.src)); err != nil {
					t.Fatal(err)
				}
				waitFile(t, filepath.Join(dir, "hung-"+strconv.Itoa(cmd.Process.Pid)))
			}
			_ = in.Close()
			select {
			case err := <-exited:
				if err != nil {
					t.Errorf("worker exit: %v, want 0", err)
				}
			case <-time.After(2 * time.Minute):
				_ = cmd.Process.Kill()
				t.Errorf("the worker did not exit within 2m of its stdin's end")
				<-exited
			}
		})
	}
}

// A program that does not speak the protocol is not taken for a worker.
func TestNotAWorker(t *testing.T) {
	sh, err := exec.LookPath("sh")
	if err != nil {
		t.Skip("needs sh")
	}
	for _, tc := range []struct{ name, script, want string }{
		{"says something else", "printf 'hello world'; exec sleep 60", "did not speak"},
		{"exits", "exit 3", "exit status 3"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w := NewWorker(Command{Path: sh, Args: []string{"-c", tc.script}}, Options{}, slog.New(slog.DiscardHandler))
			defer w.Close()
			_, err := w.Run(t.Context(), []byte(goodSource))
			if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), "start dot worker") {
				t.Errorf("got %v, want a start error containing %q", err, tc.want)
			}
		})
	}
}

func TestClassify(t *testing.T) {
	for _, tc := range []struct {
		err  string
		want bool
	}{
		{"wasm error: out of bounds memory access\nwasm stack trace:\n\t.$3071(i32) i32", true},
		{"wasm error: unreachable", true},
		{"module closed with exit_code(1)", true},
		{"syntax error in line 1 near '->'", false},
		{"size too small for label", false},
	} {
		if got := errors.Is(classify(errors.New(tc.err)), ErrBroken); got != tc.want {
			t.Errorf("classify(%q) is ErrBroken: %v, want %v", tc.err, got, tc.want)
		}
	}
}

// logBuffer is a log's text, written by the worker's goroutines and read by the test's.
type logBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *logBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *logBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// BenchmarkStart measures a worker's start, from the process's start to its first answer ready:
// with the compilation cache the parent's own start has filled (how a program starts its
// workers), and without (a cache in a fresh temporary directory), against one run of goodSource
// in a started worker.
func BenchmarkStart(b *testing.B) {
	exe, err := os.Executable()
	if err != nil {
		b.Fatal(err)
	}
	log := slog.New(slog.DiscardHandler)
	warm := NewWorker(Command{Path: exe, Env: append(os.Environ(), workerEnv+"=1")}, Options{}, log)
	defer warm.Close()
	if _, err := warm.Run(context.Background(), []byte(goodSource)); err != nil {
		b.Fatal(err)
	}
	for _, cached := range []bool{true, false} {
		b.Run(map[bool]string{true: "cached", false: "uncached"}[cached], func(b *testing.B) {
			var tStart, tRun time.Duration
			for b.Loop() {
				env := append(os.Environ(), workerEnv+"=1")
				if !cached {
					env = append(env, "TMPDIR="+b.TempDir())
				}
				w := NewWorker(Command{Path: exe, Env: env}, Options{}, log)
				start := time.Now()
				if err := w.Start(context.Background()); err != nil {
					b.Fatal(err)
				}
				mid := time.Now()
				if _, err := warm.Run(context.Background(), []byte(goodSource)); err != nil {
					b.Fatal(err)
				}
				tStart += mid.Sub(start)
				tRun += time.Since(mid)
				_ = w.Close()
			}
			b.ReportMetric(float64(tStart)/1e6/float64(b.N), "ms-start/op")
			b.ReportMetric(float64(tRun)/1e6/float64(b.N), "ms-run/op")
			b.ReportMetric(float64(tStart)/float64(tRun), "x-start-vs-run")
		})
	}
}

// A worker's stderr (a panic's trace) reaches the log a line at a time, however it is written.
func TestLogLines(t *testing.T) {
	for _, tc := range []struct {
		name   string
		writes []string
		want   []string
	}{
		{"one line", []string{"panic: boom\n"}, []string{"panic: boom"}},
		{"lines split across writes", []string{"pan", "ic: boom\ngorou", "tine 1\n"}, []string{"panic: boom", "goroutine 1"}},
		{"no end yet", []string{"partial"}, nil},
		{"a line too long", []string{strings.Repeat("x", 5000)}, []string{strings.Repeat("x", 5000)}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var got []string
			l := &logLines{log: slog.New(handlerFunc(func(r slog.Record) {
				r.Attrs(func(a slog.Attr) bool {
					got = append(got, a.Value.String())
					return true
				})
			}))}
			for _, w := range tc.writes {
				if n, err := l.Write([]byte(w)); n != len(w) || err != nil {
					t.Fatalf("Write(%q) = %d, %v", w, n, err)
				}
			}
			if !slices.Equal(got, tc.want) {
				t.Errorf("logged %q, want %q", got, tc.want)
			}
		})
	}
}

// handlerFunc is a slog.Handler that hands each record to a function.
type handlerFunc func(slog.Record)

func (h handlerFunc) Enabled(context.Context, slog.Level) bool      { return true }
func (h handlerFunc) Handle(_ context.Context, r slog.Record) error { h(r); return nil }
func (h handlerFunc) WithAttrs([]slog.Attr) slog.Handler            { return h }
func (h handlerFunc) WithGroup(string) slog.Handler                 { return h }
