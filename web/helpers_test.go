package web

import (
	"bytes"
	"context"
	"image"
	"image/color"
	"image/png"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/excalibot/excalibot/render/export"
	"github.com/excalibot/excalibot/scene"
	"github.com/excalibot/excalibot/store"
	"github.com/excalibot/excalibot/store/sqlite"
	"github.com/excalibot/excalibot/store/storetest"
)

// clock is a settable time source shared by the store and the server.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *clock) Add(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}

// pngRenderer draws a real (tiny) PNG or an SVG naming the scene's size, so downloads are valid
// files without Chromium; the browser tests use the real page.
type pngRenderer struct{ err error }

func (f pngRenderer) Render(ctx context.Context, sc *scene.Scene, doc []byte, format export.Format, dark bool) ([]byte, error) {
	if f.err != nil {
		return nil, f.err
	}
	if format == "svg" {
		return []byte(`<svg xmlns="http://www.w3.org/2000/svg" width="10" height="10"><rect width="10" height="10"/></svg>`), nil
	}
	img := image.NewRGBA(image.Rect(0, 0, 4, 3))
	img.Set(1, 1, color.Black)
	var b bytes.Buffer
	err := png.Encode(&b, img)
	return b.Bytes(), err
}

// recordingNotifier remembers browser saves.
type recordingNotifier struct {
	mu   sync.Mutex
	revs []int64
}

func (n *recordingNotifier) Edited(ctx context.Context, key store.ThreadKey, rev int64) {
	n.mu.Lock()
	n.revs = append(n.revs, rev)
	n.mu.Unlock()
}

type env struct {
	st     *sqlite.Store
	srv    *Server
	ts     *httptest.Server
	clock  *clock
	notify *recordingNotifier
	key    store.ThreadKey
	edit   string // tokens
	view   string
}

var testKey = store.ThreadKey{Platform: "test", Workspace: "w", Channel: "c", Thread: "t1"}

// newEnv starts the server over a real SQLite store with one thread at revision 1 and its links.
func newEnv(t testing.TB, opt Options) *env {
	t.Helper()
	ctx := context.Background()
	clk := &clock{t: time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)}
	st, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "web.db"), store.Options{Now: clk.Now}, nil)
	if err != nil {
		t.Fatalf("open store: %v", err)
	}
	t.Cleanup(func() { st.Close() })
	if opt.Now == nil {
		opt.Now = clk.Now
	}
	n := &recordingNotifier{}
	srv := New(st, pngRenderer{}, n, nil, opt, nil)
	ts := httptest.NewServer(srv.Handler())
	t.Cleanup(ts.Close)
	e := &env{st: st, srv: srv, ts: ts, clock: clk, notify: n, key: testKey}
	if _, err := st.Save(ctx, store.SaveRequest{Key: testKey, Base: 0, Scene: sampleScene(t), Author: store.AuthorAgent, Reason: "test"}); err != nil {
		t.Fatalf("save first revision: %v", err)
	}
	if e.edit, _, err = storetest.CreateLink(ctx, st, testKey, store.LinkEdit, time.Time{}); err != nil {
		t.Fatal(err)
	}
	if e.view, _, err = storetest.CreateLink(ctx, st, testKey, store.LinkView, time.Time{}); err != nil {
		t.Fatal(err)
	}
	return e
}

// sampleScene is a small labelled flow: three boxes joined by arrows.
func sampleScene(t testing.TB) []byte {
	t.Helper()
	sc := scene.New()
	var ids []string
	for i, label := range []string{"Browser", "excalibot", "Store"} {
		e := scene.NewElement(scene.Rectangle)
		e.ID = []string{"browser", "bot", "store"}[i]
		e.X, e.Y, e.Width, e.Height = float64(i*260), 0, 180, 90
		e.BackgroundColor = []string{"#a5d8ff", "#b2f2bb", "#ffec99"}[i]
		if _, err := sc.Add(e); err != nil {
			t.Fatal(err)
		}
		if _, err := sc.SetLabel(e.ID, label); err != nil {
			t.Fatal(err)
		}
		ids = append(ids, e.ID)
	}
	for i := 0; i+1 < len(ids); i++ {
		a := scene.NewElement(scene.Arrow)
		a.StartBinding = &scene.Binding{ElementID: ids[i]}
		a.EndBinding = &scene.Binding{ElementID: ids[i+1]}
		if _, err := sc.Add(a); err != nil {
			t.Fatal(err)
		}
	}
	doc, err := sc.Encode()
	if err != nil {
		t.Fatal(err)
	}
	return doc
}

func (e *env) rev(t testing.TB) *store.Thread {
	t.Helper()
	th, err := e.st.Load(context.Background(), e.key)
	if err != nil {
		t.Fatalf("load thread: %v", err)
	}
	return th
}

// do sends a request to the test server.
func (e *env) do(t *testing.T, method, path string, body []byte, hdr map[string]string) *http.Response {
	t.Helper()
	req, err := http.NewRequest(method, e.ts.URL+path, bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	res, err := e.ts.Client().Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, path, err)
	}
	t.Cleanup(func() { res.Body.Close() })
	return res
}
