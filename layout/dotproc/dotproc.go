// Package dotproc runs Graphviz dot: in this process (InProcess, the default) or in a supervised
// child process (Worker) that is replaced when it breaks.
//
// go-graphviz compiles and instantiates its one WebAssembly module in a package init, so a
// process has exactly one Graphviz and cannot make another. A run can corrupt that module's
// memory (every later run then fails with "wasm error: out of bounds memory access"), and a run
// inside WebAssembly cannot be interrupted. In-process, either failure lasts until the process
// restarts; a worker process is simply killed and started again.
package dotproc

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"

	"github.com/goccy/go-graphviz"
)

// ErrBroken is wrapped by an error that says the Graphviz module is broken (a WebAssembly trap,
// the module closed, a panic in the binding) rather than that the source was bad: every later
// run in the same module is suspect.
var ErrBroken = errors.New("graphviz module broken")

// InProcess runs dot in this process's Graphviz module, one run at a time. It is the default, for
// tests and short-lived commands.
type InProcess struct{}

var (
	gvOnce sync.Once
	gvErr  error
	gvMu   sync.Mutex // a Graphviz context is not safe for concurrent use
	gv     *graphviz.Graphviz
)

// Run lays src out with dot and returns Graphviz's json output. ctx is checked before the run;
// a run under way cannot be interrupted.
func (InProcess) Run(ctx context.Context, src []byte) (out []byte, err error) {
	gvOnce.Do(func() {
		// The context is the module's, created once and reused: creating it costs as much
		// as a small layout.
		gv, gvErr = graphviz.New(context.Background())
	})
	if gvErr != nil {
		return nil, fmt.Errorf("start graphviz: %w", gvErr)
	}
	gvMu.Lock()
	defer gvMu.Unlock()
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	defer func() {
		// A panic in the binding leaves the module in an unknown state; the caller decides
		// what to do about it, the process goes on.
		if r := recover(); r != nil {
			out, err = nil, fmt.Errorf("run dot: %w: panic: %v", ErrBroken, r)
		}
	}()
	graph, err := graphviz.ParseBytes(src)
	if err != nil {
		return nil, fmt.Errorf("parse dot source: %w", classify(err))
	}
	defer graph.Close()
	var buf bytes.Buffer
	if err := gv.Render(ctx, graph, "json", &buf); err != nil {
		return nil, fmt.Errorf("run dot: %w", classify(err))
	}
	if err := checkOutput(buf.Bytes()); err != nil {
		return nil, fmt.Errorf("run dot: %w", err)
	}
	return buf.Bytes(), nil
}

// checkOutput says the module is broken when its answer is not json: a corrupted module can also
// answer a run with NUL bytes or nothing, without an error.
func checkOutput(out []byte) error {
	if !json.Valid(out) {
		return fmt.Errorf("%w: its output is not json (%d bytes, starting %q)", ErrBroken, len(out), clip(out, 16))
	}
	return nil
}

func clip(b []byte, n int) []byte {
	if len(b) > n {
		return b[:n]
	}
	return b
}

// classify marks err as ErrBroken when it is a WebAssembly trap (wazero's "wasm error: …") or the
// module closed under the run (Graphviz calling exit). A corrupted module can also fail first
// with a plausible parse error; that one cannot be told from a bad source, and the next run traps.
func classify(err error) error {
	msg := err.Error()
	if strings.Contains(msg, "wasm error:") || strings.Contains(msg, "module closed with") {
		return fmt.Errorf("%w: %w", ErrBroken, err)
	}
	return err
}
