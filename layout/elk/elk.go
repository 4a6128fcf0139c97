// Package elk lays a layout.Graph out with the Eclipse Layout Kernel's layered algorithm
// (elkjs, ELK compiled to JavaScript), run in goja, a JavaScript engine written in Go: no
// browser, no cgo, no network. It is measured beside the own layout and plain dot
// (internal/corpus, docs/diagram-quality.md) and drawn through graph.Options.Layout; no package
// of the program links it, so the bot's binary and its start-up carry neither the engine nor the
// 1.6 MB script.
//
// ELK is asked as people use it: one layered layout of the whole hierarchy
// (hierarchyHandling INCLUDE_CHILDREN, so edges between nested groups are routed with the rest),
// orthogonal routes, every edge label placed by ELK on its edge, the gaps of the other engines
// (layout.DefaultNodeSep between nodes of a layer, layout.DefaultRankSep between layers), groups
// padded as plain dot pads its clusters, and no fitting to a screen.
//
// Starting the engine (compiling the script, running it, creating ELK) costs about a second and
// is done once per process, on the first Layout; the runtime is then reused, one layout at a time.
package elk

import (
	"context"
	_ "embed"
	"errors"
	"fmt"
	"sync"

	"github.com/dop251/goja"
)

// elkjs's bundle is built by js/build.mjs and committed, so `go build` needs no npm. Rebuild
// after changing js/package.json:
//
//go:generate sh -c "cd js && npm ci --no-audit --no-fund && node build.mjs"

//go:embed js/dist/elk.bundled.js
var bundle string

// prelude gives the bundle what a browser would: console, self and setTimeout. elkjs's
// in-process worker hands messages over with setTimeout(…, 0): those callbacks are queued here
// and run by the Go side (drain), since goja settles promises only when a call from Go returns.
const prelude = `
var console = {log: function() {}, warn: function() {}, error: function() {}, err: function() {}};
var self = this;
var __elkTimers = [];
function setTimeout(fn) { __elkTimers.push(fn); return __elkTimers.length; }
function clearTimeout() {}
`

// glue creates ELK and starts one layout whose answer lands in __elkOut or __elkErr.
const glue = `
var __elk = new ELK();
var __elkOut, __elkErr;
function __elkStart(graph) {
	__elkOut = undefined; __elkErr = undefined;
	__elk.layout(JSON.parse(graph)).then(
		function (r) { __elkOut = JSON.stringify(r); },
		function (e) { __elkErr = String(e && e.message || e); });
}
function __elkNextTimer() { return __elkTimers.shift(); }
`

// maxTimers bounds the callbacks one layout may queue: a few per message in practice, so a
// number past this means something keeps rescheduling itself.
const maxTimers = 10000

var (
	compileOnce sync.Once
	program     *goja.Program
	compileErr  error

	mu  sync.Mutex // a goja runtime is not safe for concurrent use
	run *runtime   // nil until the first layout, and again after an interrupted one

	// startedHook, when set (by tests), is called once a layout has started in the script.
	startedHook func()
)

// runtime is one started engine: the bundle run, ELK created, the glue's functions at hand.
type runtime struct {
	vm    *goja.Runtime
	start goja.Callable
	next  goja.Callable
}

func compile() (*goja.Program, error) {
	compileOnce.Do(func() {
		program, compileErr = goja.Compile("elk.bundled.js", bundle, false)
	})
	return program, compileErr
}

// start makes a runtime with elkjs loaded and ELK created.
func start() (*runtime, error) {
	p, err := compile()
	if err != nil {
		return nil, fmt.Errorf("compile elkjs: %w", err)
	}
	return startWith(p)
}

// startWith makes a runtime running the compiled bundle p.
func startWith(p *goja.Program) (*runtime, error) {
	vm := goja.New()
	if _, err := vm.RunString(prelude); err != nil {
		return nil, fmt.Errorf("prepare the runtime: %w", err)
	}
	if _, err := vm.RunProgram(p); err != nil {
		return nil, fmt.Errorf("run elkjs: %w", err)
	}
	if _, err := vm.RunString(glue); err != nil {
		return nil, fmt.Errorf("create ELK: %w", err)
	}
	r := &runtime{vm: vm}
	var ok bool
	if r.start, ok = goja.AssertFunction(vm.Get("__elkStart")); !ok {
		return nil, errors.New("create ELK: no __elkStart")
	}
	if r.next, ok = goja.AssertFunction(vm.Get("__elkNextTimer")); !ok {
		return nil, errors.New("create ELK: no __elkNextTimer")
	}
	// ELK registers its algorithms through the worker on creation: let that settle now.
	if err := r.drain(); err != nil {
		return nil, fmt.Errorf("create ELK: %w", err)
	}
	return r, nil
}

// Start starts the engine now rather than on the first Layout (compiling the script and
// creating ELK), so its cost can be paid, or measured, apart from a layout's.
func Start() error {
	mu.Lock()
	defer mu.Unlock()
	if run != nil {
		return nil
	}
	r, err := start()
	if err != nil {
		return err
	}
	run = r
	return nil
}

// drain runs the queued timer callbacks until none is left.
func (r *runtime) drain() error {
	for range maxTimers {
		v, err := r.next(goja.Undefined())
		if err != nil {
			return err
		}
		fn, ok := goja.AssertFunction(v)
		if !ok {
			return nil // the queue is empty
		}
		if _, err := fn(goja.Undefined()); err != nil {
			return err
		}
	}
	return fmt.Errorf("more than %d timer callbacks queued", maxTimers)
}

// layoutJSON runs one ELK layout of the graph in ELK's JSON format and returns ELK's answer.
// ctx interrupts the script; the runtime is then dropped, since an interrupted script can leave
// ELK half-way, and the next layout starts a new one.
func layoutJSON(ctx context.Context, graph []byte) ([]byte, error) {
	mu.Lock()
	defer mu.Unlock()
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if run == nil {
		r, err := start()
		if err != nil {
			return nil, err
		}
		run = r
	}
	r := run
	stop := context.AfterFunc(ctx, func() { r.vm.Interrupt(context.Cause(ctx)) })
	out, err := func() ([]byte, error) {
		if _, err := r.start(goja.Undefined(), r.vm.ToValue(string(graph))); err != nil {
			return nil, err
		}
		if startedHook != nil {
			startedHook()
		}
		if err := r.drain(); err != nil {
			return nil, err
		}
		if e := r.vm.Get("__elkErr"); e != nil && !goja.IsUndefined(e) {
			return nil, fmt.Errorf("elk: %s", e.String())
		}
		o := r.vm.Get("__elkOut")
		if o == nil || goja.IsUndefined(o) {
			return nil, errors.New("elk gave no answer")
		}
		return []byte(o.String()), nil
	}()
	if !stop() {
		// The interrupt fired (or is firing): this runtime is not to be trusted again.
		run = nil
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
	}
	var ie *goja.InterruptedError
	if errors.As(err, &ie) {
		run = nil
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
	}
	return out, err
}
