package dotproc

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"sync"
	"time"
)

// Default bounds of a Worker. The slowest dot run of the corpus takes a few tenths of a
// second, the slowest of a random grouped graph of 500 boxes (layout.MaxNodes) 16 s on 2 loaded
// cores; the caller's context bounds the whole drawing besides. A worker's start compiles the
// WebAssembly module (about 1 s, 60 ms with the compilation cache that the program's own start
// fills), slower on a loaded machine. Replaying the corpus's dot runs over and over in one
// module, it first failed at its 295th run, and another worker hung after 780; replaced every
// 200 runs, no worker failed in 1827 runs, for a 60 ms start every 200.
const (
	DefaultRunTimeout   = time.Minute
	DefaultStartTimeout = time.Minute
	DefaultMaxRuns      = 200
)

// ErrClosed is returned by a Worker's Run after Close.
var ErrClosed = errors.New("dot worker closed")

// Command is how a worker process is started: normally the program itself with a hidden
// subcommand whose main calls Serve on its stdin and stdout.
type Command struct {
	Path string
	Args []string
	// Name is the process's name in its argument list (what ps shows); "" for Path.
	Name string
	// Env is the worker's environment; nil inherits this process's.
	Env []string
}

// Options bound a Worker's runs and starts; zero takes the defaults.
type Options struct {
	// RunTimeout bounds one run: a run not answered by then is taken as hung.
	RunTimeout time.Duration
	// StartTimeout bounds a worker's start, until it says it is ready.
	StartTimeout time.Duration
	// MaxRuns replaces a worker once it has done that many runs, before its module has run long
	// enough to be corrupted; negative for never.
	MaxRuns int
}

// Worker runs dot in a child process it supervises, one run at a time. A run that outlasts
// RunTimeout, a worker that dies, and an answer that says the module is broken each get the
// worker killed and the run retried once in a fresh one; a run that fails that way twice returns
// the error. An error about the source from a worker that has run other sources before is
// checked the same way, since a module being corrupted first fails plausibly ("size too small for
// label", a syntax error in a source it laid out before): the fresh worker's answer is returned.
// A fresh worker's error about the source is returned at once. Run is safe for concurrent use;
// Close stops the worker.
type Worker struct {
	cmd  Command
	opts Options
	log  *slog.Logger

	sem chan struct{} // held by the one Run under way; a caller waiting for it may give up

	mu     sync.Mutex
	proc   *proc // nil until started, and after a kill
	closed bool
}

// NewWorker returns a Worker that starts its process at the first Run, or at Start.
func NewWorker(cmd Command, opts Options, log *slog.Logger) *Worker {
	if opts.RunTimeout <= 0 {
		opts.RunTimeout = DefaultRunTimeout
	}
	if opts.StartTimeout <= 0 {
		opts.StartTimeout = DefaultStartTimeout
	}
	if opts.MaxRuns == 0 {
		opts.MaxRuns = DefaultMaxRuns
	}
	return &Worker{cmd: cmd, opts: opts, log: log, sem: make(chan struct{}, 1)}
}

// Start starts the worker process unless one runs, so that the first diagram does not wait for it.
func (w *Worker) Start(ctx context.Context) error {
	if err := w.acquire(ctx); err != nil {
		return err
	}
	defer w.release()
	_, err := w.running(ctx)
	return err
}

// Run lays src out with dot in the worker and returns Graphviz's json output.
func (w *Worker) Run(ctx context.Context, src []byte) ([]byte, error) {
	if err := w.acquire(ctx); err != nil {
		return nil, err
	}
	defer w.release()
	out, err, fault := w.try(ctx, src)
	if fault == nil || ctx.Err() != nil || errors.Is(fault, ErrClosed) {
		return out, err
	}
	w.log.Warn("dot worker replaced; running the layout again in a fresh one", "reason", fault)
	// A fresh worker's error about the source is believed: try returns it without a fault.
	out, err, again := w.try(ctx, src)
	if again == nil || ctx.Err() != nil || errors.Is(again, ErrClosed) {
		return out, err
	}
	w.log.Error("dot failed again in a fresh worker", "reason", again)
	return nil, fmt.Errorf("run dot in a worker: %w; again in a fresh worker: %w", fault, again)
}

// Close kills the worker process and waits for it, and for a Run under way to return. Runs after
// Close return ErrClosed.
func (w *Worker) Close() error {
	w.mu.Lock()
	w.closed = true
	if w.proc != nil {
		_ = w.proc.cmd.Process.Kill() // a Run under way sees the end of its answer at once
	}
	w.mu.Unlock()
	w.sem <- struct{}{}
	defer w.release()
	w.mu.Lock()
	p := w.proc
	w.proc = nil
	w.mu.Unlock()
	if p != nil {
		p.stop()
	}
	return nil
}

// Pid is the worker process's id, 0 when none runs.
func (w *Worker) Pid() int {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.proc == nil {
		return 0
	}
	return w.proc.cmd.Process.Pid
}

// acquire waits for the turn at the worker while ctx lasts. A caller already gone does not get
// it: its run would be abandoned at once, and the worker killed for nothing.
func (w *Worker) acquire(ctx context.Context) error {
	select {
	case w.sem <- struct{}{}:
	case <-ctx.Done():
		return ctx.Err()
	}
	if err := ctx.Err(); err != nil {
		w.release()
		return err
	}
	return nil
}

func (w *Worker) release() { <-w.sem }

// try runs src once. It returns dot's output or error, and fault when the worker was killed
// instead of being believed (hung, died, broken, an error about the source after other runs, or
// ctx done mid-run): then err says the same.
func (w *Worker) try(ctx context.Context, src []byte) (out []byte, err, fault error) {
	p, err := w.running(ctx)
	if err == nil && w.opts.MaxRuns > 0 && p.runs >= w.opts.MaxRuns {
		w.drop(p)
		w.log.Debug("dot worker replaced after its runs", "runs", p.runs)
		p, err = w.running(ctx)
	}
	if err != nil {
		return nil, err, err
	}
	status, payload, err := p.call(ctx, src, w.opts.RunTimeout)
	if err == nil {
		p.runs++
	}
	switch {
	case err == nil && status == statusOK:
		return payload, nil, nil
	case err == nil && status == statusError && p.runs == 1:
		return nil, &answerError{msg: string(payload)}, nil
	}
	w.drop(p) // hung, dead, broken, suspect or abandoned: of no more use
	switch {
	case err == nil && status == statusError:
		err = &answerError{msg: string(payload)}
	case err == nil && status == statusBroken:
		err = &answerError{msg: string(payload), broken: true}
	case err == nil:
		err = fmt.Errorf("dot worker answered with status %q", status)
	case ctx.Err() != nil:
		err = fmt.Errorf("dot worker cut short: %w", ctx.Err())
	case errors.Is(err, os.ErrDeadlineExceeded):
		err = fmt.Errorf("dot run took longer than %s", w.opts.RunTimeout)
	default:
		err = fmt.Errorf("dot worker (pid %d) died: %w", p.cmd.Process.Pid, p.exit(err))
	}
	w.mu.Lock()
	closed := w.closed
	w.mu.Unlock()
	if closed {
		err = ErrClosed
	}
	return nil, err, err
}

// answerError is an error the worker answered with, in its words. A broken one is ErrBroken.
type answerError struct {
	msg    string
	broken bool
}

func (e *answerError) Error() string        { return e.msg }
func (e *answerError) Is(target error) bool { return e.broken && target == ErrBroken }

// running returns the worker process, started when none runs.
func (w *Worker) running(ctx context.Context) (*proc, error) {
	w.mu.Lock()
	p, closed := w.proc, w.closed
	w.mu.Unlock()
	if closed {
		return nil, ErrClosed
	}
	if p != nil {
		return p, nil
	}
	began := time.Now()
	p, err := startProc(ctx, w.cmd, w.opts.StartTimeout, w.log)
	if err != nil {
		return nil, fmt.Errorf("start dot worker: %w", err)
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.closed {
		p.stop()
		return nil, ErrClosed
	}
	w.proc = p
	w.log.Debug("dot worker started", "pid", p.cmd.Process.Pid, "took", time.Since(began).Round(time.Millisecond))
	return p, nil
}

// drop kills p and forgets it: the next run starts a fresh worker.
func (w *Worker) drop(p *proc) {
	w.mu.Lock()
	if w.proc == p {
		w.proc = nil
	}
	w.mu.Unlock()
	p.stop()
}

// proc is one worker process: its stdin to write requests to, its stdout to read answers from.
type proc struct {
	cmd  *exec.Cmd
	in   *os.File
	out  *os.File
	r    *bufio.Reader
	runs int // answered, the first-graph warm-up aside
}

func startProc(ctx context.Context, c Command, timeout time.Duration, log *slog.Logger) (*proc, error) {
	inR, inW, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	outR, outW, err := os.Pipe()
	if err != nil {
		inR.Close()
		inW.Close()
		return nil, err
	}
	cmd := exec.Command(c.Path, c.Args...)
	if c.Name != "" {
		cmd.Args[0] = c.Name
	}
	cmd.Env = c.Env
	cmd.Stdin, cmd.Stdout = inR, outW
	cmd.Stderr = &logLines{log: log} // a panic's trace, should the worker crash
	cmd.WaitDelay = time.Second
	err = cmd.Start()
	inR.Close() // the child's ends: the worker holds them now
	outW.Close()
	if err != nil {
		inW.Close()
		outR.Close()
		return nil, err
	}
	p := &proc{cmd: cmd, in: inW, out: outR, r: bufio.NewReader(outR)}
	release := p.bound(ctx, timeout)
	var status byte
	var payload []byte
	first, err := p.r.Peek(1)
	if err == nil && first[0] != statusReady {
		err = fmt.Errorf("%s did not speak the dot worker's protocol: it began with %q", c.Path, first)
	}
	if err == nil {
		status, payload, err = readReply(p.r)
	}
	release()
	if err == nil && (status != statusReady || string(payload) != protocolName) {
		err = fmt.Errorf("%s did not speak the dot worker's protocol: it said %q", c.Path, clipped(payload))
	}
	if err != nil {
		switch {
		case ctx.Err() != nil:
			err = ctx.Err()
		case errors.Is(err, os.ErrDeadlineExceeded):
			err = fmt.Errorf("not ready within %s", timeout)
		}
		p.stop()
		return nil, p.exit(err)
	}
	return p, nil
}

// call sends one request and reads its answer, within timeout and while ctx lasts.
func (p *proc) call(ctx context.Context, src []byte, timeout time.Duration) (byte, []byte, error) {
	release := p.bound(ctx, timeout)
	defer release()
	if err := writeRequest(p.in, src); err != nil {
		return 0, nil, err
	}
	return readReply(p.r)
}

// bound makes reads and writes on p's pipes fail after timeout, or as soon as ctx is done. The
// returned release lifts the bound and waits until ctx's hook cannot fire any more.
func (p *proc) bound(ctx context.Context, timeout time.Duration) (release func()) {
	deadline := time.Now().Add(timeout)
	_ = p.in.SetWriteDeadline(deadline)
	_ = p.out.SetReadDeadline(deadline)
	fired := make(chan struct{})
	stop := context.AfterFunc(ctx, func() {
		defer close(fired)
		past := time.Unix(1, 0)
		_ = p.in.SetWriteDeadline(past)
		_ = p.out.SetReadDeadline(past)
	})
	return func() {
		if !stop() {
			<-fired
		}
		_ = p.in.SetWriteDeadline(time.Time{})
		_ = p.out.SetReadDeadline(time.Time{})
	}
}

// stop kills the process and waits for it.
func (p *proc) stop() {
	_ = p.cmd.Process.Kill()
	_ = p.in.Close()
	_ = p.out.Close()
	_ = p.cmd.Wait()
}

// exit adds how the process ended to err, when it has.
func (p *proc) exit(err error) error {
	if p.cmd.ProcessState != nil {
		return fmt.Errorf("%w (%s)", err, p.cmd.ProcessState)
	}
	return err
}

func clipped(b []byte) string {
	if len(b) > 80 {
		return string(b[:80]) + "…"
	}
	return string(b)
}

// logLines writes a worker's stderr to the log, a line at a time.
type logLines struct {
	log  *slog.Logger
	part []byte
}

func (l *logLines) Write(b []byte) (int, error) {
	l.part = append(l.part, b...)
	for {
		i := bytes.IndexByte(l.part, '\n')
		if i < 0 {
			break
		}
		l.log.Warn("dot worker", "stderr", string(l.part[:i]))
		l.part = l.part[i+1:]
	}
	if len(l.part) > 4096 { // a line without an end is logged in pieces
		l.log.Warn("dot worker", "stderr", string(l.part))
		l.part = l.part[:0]
	}
	return len(b), nil
}
