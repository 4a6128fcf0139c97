package render

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/excalibot/excalibot/internal/waitfor"
)

func TestNoChrome(t *testing.T) {
	_, err := New(context.Background(), Config{ChromePath: "/nonexistent/chromium"}, nil)
	if !errors.Is(err, ErrNoChrome) {
		t.Fatalf("err = %v, want ErrNoChrome", err)
	}
	if !strings.Contains(err.Error(), "apt-get install chromium") {
		t.Errorf("err = %q, want an install hint", err)
	}
}

// chromePID is the pid of the renderer's current Chromium.
func chromePID(t *testing.T, r *Renderer) int {
	t.Helper()
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.b == nil || r.b.pid == 0 {
		t.Fatal("no chromium pid")
	}
	return r.b.pid
}

// profileDir reads --user-data-dir from the command line of pid.
func profileDir(t *testing.T, pid int) string {
	t.Helper()
	cmd, err := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
	if err != nil {
		t.Skipf("skipping: cannot read /proc (not Linux?): %v", err)
	}
	for _, arg := range strings.Split(string(cmd), "\x00") {
		if dir, ok := strings.CutPrefix(arg, "--user-data-dir="); ok {
			return dir
		}
	}
	t.Fatalf("chromium %d has no --user-data-dir", pid)
	return ""
}

// processesUsing lists the pids whose command line mentions dir (Chromium and its children).
func processesUsing(dir string) []int {
	var pids []int
	procs, _ := filepath.Glob("/proc/[0-9]*/cmdline")
	for _, p := range procs {
		b, err := os.ReadFile(p)
		if err == nil && strings.Contains(string(b), dir) {
			var pid int
			fmt.Sscanf(p, "/proc/%d/cmdline", &pid)
			pids = append(pids, pid)
		}
	}
	return pids
}

// assertCloseLeavesNothing closes r and checks that no Chromium process and no profile is left.
func assertCloseLeavesNothing(t *testing.T, r *Renderer) {
	t.Helper()
	pid := chromePID(t, r)
	dir := profileDir(t, pid)
	if n := len(processesUsing(dir)); n < 2 {
		t.Fatalf("found %d Chromium processes with the profile %s before Close, want several", n, dir)
	}
	if err := r.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	if err := syscall.Kill(pid, 0); !errors.Is(err, syscall.ESRCH) {
		t.Errorf("chromium %d still exists after Close (kill 0: %v)", pid, err)
	}
	if left := processesUsing(dir); len(left) > 0 {
		t.Errorf("processes %v still use %s after Close", left, dir)
	}
	if _, err := os.Stat(dir); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("profile %s still exists after Close (stat: %v)", dir, err)
	}
	if _, err := r.PNG(testCtx(t), readFile(t, "testdata/shapes.excalidraw"), Options{}); !errors.Is(err, ErrClosed) {
		t.Errorf("PNG after Close: err = %v, want ErrClosed", err)
	}
	if err := r.Ready(); !errors.Is(err, ErrClosed) {
		t.Errorf("Ready after Close = %v, want ErrClosed", err)
	}
}

// TestChromeKilled kills Chromium with SIGKILL between renders and during one; the next render
// must succeed either way, on a new Chromium. Closing the renderer after all that leaves no
// process and no profile behind.
func TestChromeKilled(t *testing.T) {
	r := own(t, Config{Tabs: 2})
	var killed []string // profiles of the killed browsers
	defer func() {
		for _, dir := range killed {
			if _, err := os.Stat(dir); !errors.Is(err, os.ErrNotExist) {
				t.Errorf("profile %s of a killed chromium is still there (stat: %v)", dir, err)
			}
		}
	}()
	kill := func(pid int) {
		killed = append(killed, profileDir(t, pid))
		if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
			t.Fatal(err)
		}
	}
	doc := readFile(t, "testdata/shapes.excalidraw")
	if _, err := r.PNG(testCtx(t), doc, Options{}); err != nil {
		t.Fatal(err)
	}

	t.Run("between renders", func(t *testing.T) {
		pid := chromePID(t, r)
		kill(pid)
		b, err := r.PNG(testCtx(t), doc, Options{})
		if err != nil {
			t.Fatalf("render after kill: %v", err)
		}
		decodePNG(t, b)
		if got := chromePID(t, r); got == pid {
			t.Errorf("still on chromium %d after it was killed", pid)
		}
	})

	t.Run("during a render", func(t *testing.T) {
		pid := chromePID(t, r)
		// The page answers only after 1.5 s, so the kill lands mid-render; the retry runs
		// the same expression on the restarted Chromium.
		expr := fmt.Sprintf(`new Promise(ok => setTimeout(ok, 1500)).then(() => ExcalidrawRender.png(JSON.parse(%s), %s))`,
			mustLiteral(t, doc), `{"scale":1,"background":true,"padding":20,"embedScene":false,"maxSideSum":10000,"maxAspect":20,"maxBytes":10485760}`)
		killed = append(killed, profileDir(t, pid))
		timer := time.AfterFunc(300*time.Millisecond, func() { syscall.Kill(pid, syscall.SIGKILL) })
		defer timer.Stop()
		var rep struct {
			pageReply
			PNG string `json:"png"`
		}
		if err := r.call(testCtx(t), expr, &rep); err != nil {
			t.Fatalf("render during kill: %v", err)
		}
		if rep.PNG == "" {
			t.Error("no PNG")
		}
		if got := chromePID(t, r); got == pid {
			t.Errorf("still on chromium %d after it was killed", pid)
		}
	})

	// The supervisor restarts a killed Chromium without waiting for a render.
	t.Run("ready again", func(t *testing.T) {
		pid := chromePID(t, r)
		kill(pid)
		waitfor.Until(t, 60*time.Second, "ready on a new Chromium after the kill",
			func() bool { return r.Ready() == nil && chromePID(t, r) != pid },
			func() string { return fmt.Sprintf("ready: %v", r.Ready()) })
	})

	t.Run("close", func(t *testing.T) { assertCloseLeavesNothing(t, r) })
}

func mustLiteral(t *testing.T, doc []byte) string {
	lit, _, err := sceneLiteral(doc)
	if err != nil {
		t.Fatal(err)
	}
	return lit
}

// TestHungScript: a page script that never returns, or spins, gives a timeout error, and the
// pool renders normally afterwards.
func TestHungScript(t *testing.T) {
	r := own(t, Config{Tabs: 2, RenderTimeout: 2 * time.Second})
	doc := readFile(t, "testdata/shapes.excalidraw")
	for _, tt := range []struct{ name, expr string }{
		{"promise never settles", `new Promise(() => {})`},
		{"busy loop", `(() => { for (;;) {} })()`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var rep struct{ pageReply }
			start := time.Now()
			err := r.call(testCtx(t), tt.expr, &rep)
			if !errors.Is(err, ErrTimeout) {
				t.Fatalf("err = %v, want ErrTimeout", err)
			}
			t.Logf("timed out after %s (two attempts)", time.Since(start).Round(time.Millisecond))
			var wg sync.WaitGroup
			errs := make(chan error, 4)
			for range 4 {
				wg.Go(func() {
					_, err := r.PNG(testCtx(t), doc, Options{Scale: 1})
					errs <- err
				})
			}
			wg.Wait()
			close(errs)
			for err := range errs {
				if err != nil {
					t.Errorf("render after the hang: %v", err)
				}
			}
			if err := r.Ready(); err != nil {
				t.Errorf("Ready = %v", err)
			}
		})
	}
}

func TestParallelRenders(t *testing.T) {
	r := shared(t)
	docs := [][]byte{readFile(t, "testdata/shapes.excalidraw"), gridScene(30)}
	var wg sync.WaitGroup
	var failed atomic.Int32
	for i := range 20 {
		wg.Go(func() {
			b, err := r.PNG(testCtx(t), docs[i%2], Options{Scale: 1, Dark: i%3 == 0})
			if err == nil {
				_, err = embeddedScene(b)
			}
			if err != nil {
				failed.Add(1)
				t.Errorf("render %d: %v", i, err)
			}
		})
	}
	wg.Wait()
	if n := failed.Load(); n > 0 {
		t.Errorf("%d of 20 parallel renders failed", n)
	}
}

// TestNoOutsideRequests proves the render page reaches nothing outside itself. An "outside"
// server on another loopback port counts every request it gets. A scene points an image, a link
// and an embed at it, and page scripts fetch it, load it as an image and as a font. Then a plain
// tab opens the outside server's URL directly: that request must arrive, which shows the counter
// would have seen the others.
func TestNoOutsideRequests(t *testing.T) {
	r := shared(t)
	var hits atomic.Int64
	outside := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		hits.Add(1)
		t.Logf("outside server got %s %s", req.Method, req.URL)
		w.Header().Set("Access-Control-Allow-Origin", "*")
		fmt.Fprint(w, "hello")
	}))
	defer outside.Close()
	u := outside.URL

	doc := sceneDoc([]map[string]any{
		element("img", "image", 0, 0, 100, 100, map[string]any{"fileId": "f1", "status": "saved", "scale": []int{1, 1}}),
		element("emb", "embeddable", 150, 0, 200, 100, map[string]any{"link": u + "/embed"}),
		element("box", "rectangle", 0, 150, 100, 100, map[string]any{"link": u + "/link"}),
	})
	doc = []byte(strings.Replace(string(doc), `"files":{}`,
		`"files":{"f1":{"id":"f1","mimeType":"image/png","dataURL":"`+u+`/image.png","created":1}}`, 1))
	if _, err := r.PNG(testCtx(t), doc, Options{}); err != nil {
		t.Fatalf("PNG: %v", err)
	}
	if _, err := r.SVG(testCtx(t), doc, Options{}); err != nil {
		t.Fatalf("SVG: %v", err)
	}
	for _, expr := range []string{
		fmt.Sprintf(`fetch(%q).then(() => "fetched", e => "blocked: " + e)`, u+"/fetch"),
		fmt.Sprintf(`new Promise(ok => { const i = new Image(); i.onload = () => ok("loaded"); i.onerror = () => ok("blocked"); i.src = %q; })`, u+"/img"),
		fmt.Sprintf(`new FontFace("x", "url(%s)").load().then(() => "loaded", () => "blocked")`, u+"/font.woff2"),
		`fetch("http://example.com/").then(() => "fetched", e => "blocked: " + e)`,
	} {
		got := evalInTab[string](t, r, expr)
		if !strings.HasPrefix(got, "blocked") {
			t.Errorf("%s = %q, want blocked", expr, got)
		}
	}
	// Real time: Chromium would send a stray request on its own schedule, and nothing tells that it
	// will not; one that slipped through arrives well within this.
	time.Sleep(200 * time.Millisecond)
	if n := hits.Load(); n != 0 {
		t.Fatalf("the outside server got %d requests from the render page, want 0", n)
	}

	// Positive control: a tab that is not the render page can reach the outside server.
	r.mu.Lock()
	bctx := r.b.ctx
	r.mu.Unlock()
	tctx, cancel := chromedp.NewContext(bctx)
	defer cancel()
	if err := chromedp.Do(tctx, chromedp.Navigate(u+"/control")); err != nil {
		t.Fatalf("control navigation: %v", err)
	}
	if n := hits.Load(); n == 0 {
		t.Error("the control request did not reach the outside server; the counter proves nothing")
	}
}

// TestTabsPractise checks that a tab has done its practice renders before the pool lends it, and
// none when practice is off; the page counts them.
func TestTabsPractise(t *testing.T) {
	for _, tc := range []struct {
		name     string
		practice int
		want     int
	}{
		{"default", DefaultPracticeRenders, DefaultPracticeRenders},
		{"off", -1, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := own(t, Config{Tabs: 1, PracticeRenders: tc.practice})
			ctx := testCtx(t)
			tb, err := r.borrow(ctx)
			if err != nil {
				t.Fatal(err)
			}
			raw, err := r.evalOn(ctx, tb, "ExcalidrawRender.practiced()", "the test")
			r.put(tb)
			if err != nil {
				t.Fatal(err)
			}
			if got := strings.TrimSpace(string(raw)); got != fmt.Sprint(tc.want) {
				t.Errorf("practice renders done = %s, want %d", got, tc.want)
			}
			// The tab still renders a real scene correctly after practising.
			png, err := r.PNG(ctx, gridScene(6), Options{Scale: 1})
			if err != nil {
				t.Fatal(err)
			}
			if img := decodePNG(t, png); ink(img) == 0 {
				t.Error("picture after practice has no ink")
			}
		})
	}
}

// TestTabsQuiet: a pooled tab sends no Network events while it renders (chromedp enables the
// domain on every tab, and each of the page's requests would otherwise reach Go as events to
// decode), though every render makes requests: the picture's upload at least.
func TestTabsQuiet(t *testing.T) {
	r := own(t, Config{Tabs: 1})
	ctx := testCtx(t)
	tb, err := r.borrow(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var events atomic.Int64 // any Network event: requestWillBeSent, responseReceived …
	lctx, stop := context.WithCancel(tb.ctx)
	// Listen, unlike Events, is subscribed when it returns, so no render can slip past it.
	if err := chromedp.Listen(lctx, func(ev any) {
		if strings.HasPrefix(fmt.Sprintf("%T", ev), "*network.") {
			events.Add(1)
		}
	}); err != nil {
		t.Fatal(err)
	}
	r.put(tb)
	requests := r.srv.requests.Load()
	for range 2 { // one tab: both renders run on the tab listened to
		if _, err := r.PNG(ctx, gridScene(30), Options{}); err != nil {
			t.Fatal(err)
		}
	}
	stop()
	if n := r.srv.requests.Load() - requests; n < 2 {
		t.Fatalf("the page made %d requests in two renders, want at least 2 (the control)", n)
	}
	if n := events.Load(); n != 0 {
		t.Errorf("got %d Network events from the tab, want 0", n)
	}
}
