package web

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/chromedp"

	"github.com/excalibot/excalibot/scene"
	"github.com/excalibot/excalibot/store"
)

var screenshot = flag.String("screenshot", "", "write a screenshot of the editor to this file (e.g. ../docs/editor.png)")

// The browser is shared by the tests of this package and stopped by TestMain.
var browser struct {
	once   sync.Once
	ctx    context.Context
	cancel func()
	err    error
}

func TestMain(m *testing.M) {
	flag.Parse()
	code := m.Run()
	if browser.cancel != nil {
		browser.cancel()
	}
	os.Exit(code)
}

// tab opens a new tab of the shared headless Chromium, or skips the test without Chromium.
func tab(t *testing.T) context.Context {
	t.Helper()
	path := os.Getenv("EXCALIBOT_CHROME")
	if path == "" {
		path = "/usr/bin/chromium"
	}
	if _, err := exec.LookPath(path); err != nil {
		t.Skipf("skipping browser test: no Chromium at %s (set EXCALIBOT_CHROME): %v", path, err)
	}
	browser.once.Do(func() {
		opts := append(chromedp.DefaultExecAllocatorOptions[:],
			chromedp.ExecPath(path), chromedp.NoSandbox, chromedp.DisableGPU,
			chromedp.Flag("disable-component-update", true),
			chromedp.WindowSize(1280, 800))
		alloc, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
		ctx, cancel := chromedp.NewContext(alloc)
		browser.ctx, browser.cancel = ctx, func() { cancel(); cancelAlloc() }
		browser.err = chromedp.Do(ctx) // starts the browser; no timeout on this context
	})
	if browser.err != nil {
		t.Fatalf("start Chromium: %v", browser.err)
	}
	ctx, cancel := chromedp.NewContext(browser.ctx)
	t.Cleanup(cancel)
	// Open the tab now: chromedp attaches it on first use, and the page watchers would race the
	// test's first action to do so.
	if err := chromedp.Do(ctx); err != nil {
		t.Fatalf("open a tab: %v", err)
	}
	ctx, cancelT := context.WithTimeout(ctx, 90*time.Second)
	t.Cleanup(cancelT)
	return ctx
}

func run[T any](t *testing.T, ctx context.Context, what string, a chromedp.Action[T]) T {
	t.Helper()
	v, err := chromedp.Run(ctx, a)
	if err != nil {
		t.Fatalf("%s: %v", what, err)
	}
	return v
}

// poll evaluates expr until it is true, in real time: the page runs in a real browser. Errors count
// as "not yet": a reload destroys the page's JavaScript context under a running evaluation.
func poll(t *testing.T, ctx context.Context, what, expr string) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	var err error
	for time.Now().Before(deadline) {
		var ok bool
		if ok, err = chromedp.Run(ctx, chromedp.Evaluate[bool](expr)); err == nil && ok {
			return
		}
		if ctx.Err() != nil {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	state, _ := chromedp.Run(ctx, chromedp.Evaluate[string](`JSON.stringify(window.__excalibot ? window.__excalibot.state() : null) + " " + document.body.innerText.slice(0, 300)`))
	t.Fatalf("%s: waiting for %s (last error %v)\npage: %s", what, expr, err, state)
}

// pageLog records a tab's console errors and the URLs it requests.
type pageLog struct {
	mu     sync.Mutex
	errors []string
	urls   []string
}

func (p *pageLog) get() (errs, urls []string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]string{}, p.errors...), append([]string{}, p.urls...)
}

// watch starts recording; the goroutines end when the test does.
func watch(t *testing.T, tab context.Context) *pageLog {
	ctx, cancel := context.WithCancel(tab)
	p := &pageLog{}
	var wg sync.WaitGroup
	wg.Add(2)
	go func() {
		defer wg.Done()
		for m, err := range chromedp.Console(ctx) {
			if err != nil {
				return
			}
			if m.Type == "error" || m.Type == chromedp.ConsoleException {
				p.mu.Lock()
				p.errors = append(p.errors, string(m.Type)+": "+m.Text)
				p.mu.Unlock()
			}
		}
	}()
	go func() {
		defer wg.Done()
		for ev, err := range chromedp.Events(ctx, network.RequestWillBeSent) {
			if err != nil {
				return
			}
			p.mu.Lock()
			p.urls = append(p.urls, ev.Request.URL)
			p.mu.Unlock()
		}
	}()
	t.Cleanup(func() {
		cancel()
		wg.Wait()
	})
	return p
}

// cjkFallback is the CDN address Excalidraw 0.18.1 also names for its CJK font chunks. KNOWN
// ISSUE: on opening, the editor asks for all 209 Xiaolai chunks at that address (initiator "css",
// not the FontFace objects it registers: those use /assets/fonts/ and load only the chunks a CJK
// label needs, checked below). The CSP blocks them, so nothing leaves the machine. Until the cause
// is found these, and only these, are tolerated and counted.
const cjkFallback = "https://esm.sh/@excalidraw/excalidraw@0.18.1/dist/prod/fonts/Xiaolai/"

// checkOwnOrigin fails the test for requests outside the server (a CDN, excalidraw.com) and for
// console errors (a CSP violation is one), but for the known CJK fallback above.
func checkOwnOrigin(t *testing.T, p *pageLog, origin string) {
	t.Helper()
	errs, urls := p.get()
	own, cjk := 0, 0
	for _, u := range urls {
		switch {
		case strings.HasPrefix(u, origin+"/"):
			own++
		case strings.HasPrefix(u, "data:"), strings.HasPrefix(u, "blob:"):
		case strings.HasPrefix(u, cjkFallback):
			cjk++
		default:
			t.Errorf("the page requested %.120s, outside its own origin", u)
		}
	}
	if own < 3 {
		t.Errorf("only %d requests to the server seen (%v); the network log is not working", own, urls)
	}
	blocked := 0
	for _, e := range errs {
		if strings.Contains(e, "Loading the font '"+cjkFallback) && strings.Contains(e, "Content Security Policy") {
			blocked++
			continue
		}
		t.Errorf("page console: %.300s", e)
	}
	if cjk > 0 {
		t.Logf("known issue: %d CJK font requests to %s, %d reported blocked by the CSP", cjk, cjkFallback, blocked)
	}
}

type saveState struct {
	State   string `json:"state"`
	Message string `json:"message"`
	Rev     int64  `json:"rev"`
	Dirty   bool   `json:"dirty"`
}

// paintedPixels counts non-white pixels of the editor's static canvas: the scene was drawn.
const paintedPixels = `(() => {
  const c = document.querySelector("canvas.excalidraw__canvas.static");
  if (!c) return 0;
  const d = c.getContext("2d").getImageData(0, 0, c.width, c.height).data;
  let n = 0;
  for (let i = 0; i < d.length; i += 4) if (d[i] < 200 || d[i+1] < 200 || d[i+2] < 200) n++;
  return n;
})()`

// edit changes an element through Excalidraw's API as a person would: a new version of it.
func edit(id, change string) string {
	return fmt.Sprintf(`(() => {
  const api = window.__excalibot.api;
  api.updateScene({elements: api.getSceneElementsIncludingDeleted().map(e => e.id !== %q ? e :
    ({...e, %s, version: e.version + 1, versionNonce: Math.floor(Math.random() * 2**31), updated: Date.now()}))});
  return true;
})()`, id, change)
}

func TestBrowserEditor(t *testing.T) {
	t.Parallel() // each in its own tab; page loads overlap
	ctx := tab(t)
	e := newEnv(t, Options{MaxBody: 256 << 10})
	bg := context.Background()
	page := watch(t, ctx)

	// The link opens and the scene is drawn.
	start := time.Now()
	run(t, ctx, "open the edit link", chromedp.Navigate(e.ts.URL+"/d/"+e.edit))
	poll(t, ctx, "scene loaded", `!!(window.__excalibot && window.__excalibot.api && window.__excalibot.api.getSceneElements().length === 8 && window.__excalibot.state().loaded)`)
	poll(t, ctx, "scene painted", paintedPixels+` > 2000`)
	t.Logf("editor ready with the scene drawn %v after navigating", time.Since(start).Round(time.Millisecond))
	checkOwnOrigin(t, page, e.ts.URL)

	// Excalidraw's own restore() reads the download back whole.
	restored := run(t, ctx, "restore the download", chromedp.Evaluate[string](`(async () => {
  const doc = await (await fetch(location.pathname + ".excalidraw")).json();
  const r = window.__excalibot.restore(doc, null, null);
  return r.elements.length + " " + r.elements.filter(e => e.containerId).length + " " + r.elements.filter(e => e.startBinding && e.endBinding).length;
})()`, chromedp.EvalAwaitPromise))
	if restored != "8 3 2" {
		t.Errorf("restore() of the .excalidraw download: elements, labels, bound arrows = %q, want \"8 3 2\"", restored)
	}
	if st := run(t, ctx, "state", chromedp.Evaluate[saveState](`window.__excalibot.state()`)); st.State != "saved" || st.Rev != 1 {
		t.Errorf("fresh page state %+v, want saved at revision 1", st)
	}
	labels := run(t, ctx, "labels", chromedp.Evaluate[string](`window.__excalibot.api.getSceneElements().filter(e => e.type === "text").map(e => e.text).sort().join(",")`))
	if labels != "Browser,Store,excalibot" {
		t.Errorf("labels in the editor = %q", labels)
	}
	if *screenshot != "" {
		png := run(t, ctx, "screenshot", chromedp.CaptureScreenshot())
		if err := os.WriteFile(*screenshot, png, 0o644); err != nil {
			t.Fatal(err)
		}
	}

	// An edit is saved by the autosave as revision 2.
	run(t, ctx, "edit", chromedp.Evaluate[bool](edit("browser", `backgroundColor: "#ffc9c9"`)))
	poll(t, ctx, "marked unsaved", `window.__excalibot.state().state !== "saved"`)
	poll(t, ctx, "autosaved", `window.__excalibot.state().state === "saved" && window.__excalibot.state().rev === 2`)
	th := e.rev(t)
	sc, err := scene.Decode(th.Scene)
	if err != nil {
		t.Fatalf("saved scene: %v", err)
	}
	if got, ok := sc.Get("browser"); th.Rev != 2 || !ok || got.BackgroundColor != "#ffc9c9" || sc.Len() != 8 {
		t.Fatalf("store after the autosave: rev %d, %d elements, browser %+v; want rev 2 with the new colour", th.Rev, sc.Len(), got)
	}

	// The server's refusal is shown as it said it.
	run(t, ctx, "oversized edit", chromedp.Evaluate[bool](edit("store", `customData: {pad: "x".repeat(300000)}`)))
	run(t, ctx, "save button", chromedp.Click(chromedp.CSS(`[data-testid=save]`)))
	poll(t, ctx, "size error shown", `!!document.querySelector("[data-testid=error]") && document.querySelector("[data-testid=error]").innerText.includes("larger than")`)
	if th := e.rev(t); th.Rev != 2 {
		t.Errorf("oversized save stored revision %d", th.Rev)
	}

	// The bot draws meanwhile: the page's next save is refused and the page says so.
	botScene, err := sc.Encode()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := e.st.Save(bg, store.SaveRequest{Key: e.key, Base: 2, Scene: botScene, Author: store.AuthorAgent, Reason: "bot drew"}); err != nil {
		t.Fatal(err)
	}
	run(t, ctx, "shrink again", chromedp.Evaluate[bool](edit("store", `customData: {}`)))
	run(t, ctx, "save", chromedp.Evaluate[bool](`window.__excalibot.save(), true`))
	poll(t, ctx, "conflict shown", `!!document.querySelector("[data-testid=conflict]")`)
	text := run(t, ctx, "conflict text", chromedp.Text(chromedp.CSS(`[data-testid=conflict]`)))
	if !strings.Contains(text, "changed since you opened it") || !strings.Contains(text, "revision 3") {
		t.Errorf("conflict banner %q, want the reason and the new revision", text)
	}
	if th := e.rev(t); th.Rev != 3 {
		t.Errorf("after the stale save the store is at %d, want 3 (the bot's)", th.Rev)
	}
	// Reloading shows the bot's revision; nothing was overwritten.
	run(t, ctx, "reload", chromedp.Click(chromedp.CSS(`[data-testid=reload]`)))
	poll(t, ctx, "reloaded", `!!(window.__excalibot && window.__excalibot.api && window.__excalibot.state().rev === 3 && window.__excalibot.state().loaded && !document.querySelector("[data-testid=conflict]"))`)

	// A CJK label makes the page fetch the Xiaolai chunks it needs from this server.
	run(t, ctx, "CJK label", chromedp.Evaluate[bool](`(() => { const api = window.__excalibot.api;
  api.updateScene({elements: api.getSceneElementsIncludingDeleted().map(e => e.type === "text" && e.text === "Browser" ?
    {...e, text: "浏览器", originalText: "浏览器", version: e.version + 1} : e)});
  return true; })()`))
	poll(t, ctx, "CJK font loaded", `[...document.fonts].some(f => f.family === "Xiaolai" && f.status === "loaded")`)
	_, urls := page.get()
	cjk := 0
	for _, u := range urls {
		if strings.HasPrefix(u, e.ts.URL+"/assets/fonts/Xiaolai/") {
			cjk++
		}
	}
	if cjk == 0 || cjk > 10 {
		t.Errorf("%d Xiaolai chunks fetched from the server for a 3-character CJK label, want a few", cjk)
	}
}

func TestBrowserViewOnly(t *testing.T) {
	t.Parallel() // each in its own tab; page loads overlap
	ctx := tab(t)
	e := newEnv(t, Options{})
	run(t, ctx, "open the view link", chromedp.Navigate(e.ts.URL+"/d/"+e.view))
	poll(t, ctx, "scene loaded", `!!(window.__excalibot && window.__excalibot.api && window.__excalibot.api.getSceneElements().length === 8 && window.__excalibot.state().loaded)`)
	poll(t, ctx, "scene painted", paintedPixels+` > 2000`)
	type view struct {
		ViewMode bool   `json:"viewMode"`
		State    string `json:"state"`
		Button   bool   `json:"button"`
		Status   int    `json:"status"`
	}
	got := run(t, ctx, "view state", chromedp.Evaluate[view](`(async () => {
  const body = JSON.stringify({type: "excalidraw", version: 2, elements: [], appState: {}, files: {}});
  const res = await fetch(location.pathname + "/scene", {method: "PUT", headers: {"If-Match": "1"}, body});
  return {viewMode: window.__excalibot.api.getAppState().viewModeEnabled, state: window.__excalibot.state().state,
    button: !!document.querySelector("[data-testid=save]"), status: res.status};
})()`, chromedp.EvalAwaitPromise))
	if want := (view{ViewMode: true, State: "readonly", Button: false, Status: 403}); got != want {
		t.Errorf("view-only page: %+v, want %+v", got, want)
	}
	// A change made through the API is never sent.
	run(t, ctx, "edit", chromedp.Evaluate[bool](edit("bot", `backgroundColor: "#000000"`)))
	run(t, ctx, "save", chromedp.Evaluate[bool](`window.__excalibot.save(), true`))
	run(t, ctx, "wait", chromedp.Sleep(1500*time.Millisecond))
	if th := e.rev(t); th.Rev != 1 {
		t.Errorf("view-only page changed the store to revision %d", th.Rev)
	}

	// A dead link says so instead of showing an empty editor.
	run(t, ctx, "open a dead link", chromedp.Navigate(e.ts.URL+"/d/AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA"))
	if body := run(t, ctx, "404 page", chromedp.Text(chromedp.CSS("body"))); !strings.Contains(body, "not found") {
		t.Errorf("dead link page: %q", body)
	}
}
