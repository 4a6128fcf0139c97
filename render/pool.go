package render

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/css"
	"github.com/chromedp/cdproto/dom"
	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/chromedp"

	"github.com/excalibot/excalibot/internal/logkey"
)

// tab is one page of the browser with the render page loaded and its fonts warm. A tab is used by
// one render at a time; chromedp actions on one tab must not run concurrently.
type tab struct {
	b      *browser
	ctx    context.Context
	cancel context.CancelFunc
}

// openTab opens a tab on b and loads the render page. Like the browser's, the tab's first action
// must run without a deadline (it would close the tab later), so a timer bounds it.
func (r *Renderer) openTab(b *browser) (*tab, error) {
	ctx, cancel := chromedp.NewContext(b.ctx)
	timer := time.AfterFunc(r.cfg.StartTimeout, cancel)
	err := chromedp.Do(ctx, chromedp.Navigate(r.srv.url))
	if err == nil {
		err = quiet(ctx)
	}
	if err == nil {
		_, err = chromedp.Run(ctx, chromedp.Evaluate[bool]("ExcalidrawRender.whenReady()", chromedp.EvalAwaitPromise))
	}
	var p practiceReply
	if err == nil && r.cfg.PracticeRenders > 0 {
		p, err = chromedp.Run(ctx, chromedp.Evaluate[practiceReply](
			fmt.Sprintf("ExcalidrawRender.practice(%d)", r.cfg.PracticeRenders), chromedp.EvalAwaitPromise))
		if err == nil {
			err = p.pageError()
		}
	}
	if !timer.Stop() {
		err = fmt.Errorf("no answer within %s (%v)", r.cfg.StartTimeout, err)
	}
	if err != nil {
		cancel()
		return nil, fmt.Errorf("load render page: %w", err)
	}
	t := &tab{b: b, ctx: ctx, cancel: cancel}
	r.watchConsole(t)
	r.log.Debug("render tab ready", "practice_renders", p.Rounds, "practice_ms", p.MS)
	return t, nil
}

// quiet turns off the CDP domains chromedp enables on every tab that a render page does not use.
// With Network on, each request the page makes (a job, a picture) sends Go half a dozen events that
// chromedp decodes, and a request body that is not a Blob is copied into them whole; DOM and CSS
// report changes to a document that renders never touch. Runtime (evaluate, console), Log (CSP
// violations) and Page stay.
func quiet(ctx context.Context) error {
	for _, cmd := range []cdp.Command[cdp.Empty, cdp.Empty]{network.Disable, css.Disable, dom.Disable} {
		if _, err := chromedp.Call(ctx, cmd, cdp.Empty{}); err != nil {
			return fmt.Errorf("%s: %w", cmd.Method, err)
		}
	}
	return nil
}

// practiceReply is the page's answer to practice(rounds).
type practiceReply struct {
	pageReply
	Rounds int     `json:"rounds"`
	MS     float64 `json:"ms"`
}

// watchConsole copies the page's console errors and uncaught exceptions into the log at debug
// level (a CSP violation shows up here). The goroutine ends with the tab.
func (r *Renderer) watchConsole(t *tab) {
	console := chromedp.Console(t.ctx)
	r.wg.Add(1)
	go func() {
		defer r.wg.Done()
		for m, err := range console {
			if err != nil {
				return
			}
			if m.Type != "log" && m.Type != "info" && m.Type != "debug" {
				r.log.Debug("render page console", "type", m.Type, "text", m.Text)
			}
		}
	}()
}

// borrow takes a warm tab, opening one (and restarting Chromium) when none is left. At most
// cfg.Tabs tabs are out at once; further callers wait for one to come back.
func (r *Renderer) borrow(ctx context.Context) (*tab, error) {
	select {
	case r.slots <- struct{}{}:
	case <-ctx.Done():
		return nil, ctx.Err()
	case <-r.closing:
		return nil, ErrClosed
	}
	r.mu.Lock()
	if r.closed {
		r.mu.Unlock()
		<-r.slots
		return nil, ErrClosed
	}
	var stale []*tab
	var t *tab
	for len(r.idle) > 0 && t == nil {
		c := r.idle[len(r.idle)-1]
		r.idle = r.idle[:len(r.idle)-1]
		if c.b == r.b && c.b.alive() {
			t = c
		} else {
			stale = append(stale, c)
		}
	}
	r.mu.Unlock()
	for _, s := range stale {
		s.cancel()
	}
	if t != nil {
		return t, nil
	}
	b, err := r.liveBrowser()
	if err == nil {
		t, err = r.openTab(b)
	}
	if err != nil {
		<-r.slots
		return nil, err
	}
	return t, nil
}

// put returns a healthy tab to the pool.
func (r *Renderer) put(t *tab) {
	r.mu.Lock()
	keep := !r.closed && t.b == r.b && t.b.alive() && len(r.idle) < r.cfg.Tabs
	if keep {
		r.idle = append(r.idle, t)
	}
	r.mu.Unlock()
	if !keep {
		t.cancel()
	}
	<-r.slots
}

// discard closes a tab that failed (hung, crashed, or its browser died) instead of reusing it.
func (r *Renderer) discard(t *tab) {
	t.cancel()
	<-r.slots
}

// liveBrowser returns the running browser, starting a new one when the old one has died.
func (r *Renderer) liveBrowser() (*browser, error) {
	r.startMu.Lock()
	defer r.startMu.Unlock()
	r.mu.Lock()
	old, closed := r.b, r.closed
	r.mu.Unlock()
	if closed {
		return nil, ErrClosed
	}
	if old != nil && old.alive() {
		return old, nil
	}
	gen := 0
	if old != nil {
		gen = old.gen + 1
		r.log.Warn("chromium is gone; restarting it", "pid", old.pid, "generation", gen)
		old.stop()
	}
	b, err := startBrowser(r.chrome, gen, r.cfg.StartTimeout, r.log)
	if err != nil {
		return nil, err
	}
	r.mu.Lock()
	if r.closed {
		r.mu.Unlock()
		b.stop()
		return nil, ErrClosed
	}
	r.b = b
	r.mu.Unlock()
	r.log.Info("chromium started", "pid", b.pid, "generation", gen)
	return b, nil
}

// warm opens the tabs the pool lacks, side by side: each loads the page and practises in its own
// renderer process, so two tabs take little longer than one on two cores. It returns the first
// failure; tabs that did open join the pool.
func (r *Renderer) warm() error {
	b, err := r.liveBrowser()
	if err != nil {
		return err
	}
	r.mu.Lock()
	missing := r.cfg.Tabs - len(r.idle)
	r.mu.Unlock()
	errs := make(chan error, max(missing, 0))
	var wg sync.WaitGroup
reserve:
	for range missing {
		select {
		case r.slots <- struct{}{}:
		default:
			break reserve // renders hold the slots; they open their own tabs
		}
		wg.Go(func() {
			t, err := r.openTab(b)
			if err != nil {
				<-r.slots
				errs <- err
				return
			}
			r.put(t)
		})
	}
	wg.Wait()
	close(errs)
	return <-errs
}

// supervise restarts Chromium as soon as it dies and re-warms the pool, so Ready recovers
// without waiting for the next render. It backs off while restarts keep failing.
func (r *Renderer) supervise() {
	defer r.wg.Done()
	backoff := time.Second
	for {
		r.mu.Lock()
		b := r.b
		r.mu.Unlock()
		select {
		case <-r.closing:
			return
		case <-b.ctx.Done():
		}
		_, err := r.liveBrowser()
		if err == nil {
			err = r.warm()
		}
		if err == nil {
			backoff = time.Second
			continue
		}
		select {
		case <-r.closing: // Close killed the browser under the restart: not an error
			return
		default:
		}
		r.log.Error("restart chromium", logkey.Err, err, "retry_in", backoff)
		select {
		case <-r.closing:
			return
		case <-time.After(backoff):
		}
		backoff = min(2*backoff, 30*time.Second)
	}
}
