package web

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"image/png"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/excalibot/excalibot/links"
	"github.com/excalibot/excalibot/scene"
	"github.com/excalibot/excalibot/store"
	"github.com/excalibot/excalibot/store/storetest"
)

func readAll(t *testing.T, r *http.Response) string {
	t.Helper()
	b, err := io.ReadAll(r.Body)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestHeadersOnEveryResponse(t *testing.T) {
	e := newEnv(t, Options{})
	for _, path := range []string{"/healthz", "/d/" + e.edit, "/d/nope-nope-nope-nope-nope", "/assets/editor.html", "/metrics"} {
		res := e.do(t, "GET", path, nil, nil)
		for k, want := range map[string]string{
			"Content-Security-Policy": contentSecurityPolicy,
			"Referrer-Policy":         "no-referrer",
			"X-Content-Type-Options":  "nosniff",
			"X-Frame-Options":         "DENY",
		} {
			if got := res.Header.Get(k); got != want {
				t.Errorf("GET %s: %s = %q, want %q", path, k, got, want)
			}
		}
	}
	if !strings.Contains(contentSecurityPolicy, "script-src 'self';") || strings.Contains(contentSecurityPolicy, "unsafe-eval") {
		t.Errorf("CSP allows more than the page's own scripts: %s", contentSecurityPolicy)
	}
}

func TestHealthReadyMetrics(t *testing.T) {
	if res := newEnv(t, Options{}).do(t, "GET", "/readyz", nil, nil); res.StatusCode != 200 {
		t.Errorf("readyz with no checks = %d", res.StatusCode)
	}
	var renderer error
	e := newEnv(t, Options{Checks: []Check{{Name: "renderer", Fn: func(context.Context) error { return renderer }}},
		Queue: depth{waiting: 2, active: 1}})
	if res := e.do(t, "GET", "/healthz", nil, nil); res.StatusCode != 200 {
		t.Errorf("healthz = %d", res.StatusCode)
	}
	if res := e.do(t, "GET", "/readyz", nil, nil); res.StatusCode != 200 {
		t.Errorf("readyz with a passing check = %d", res.StatusCode)
	}
	renderer = errors.New("warming up")
	res := e.do(t, "GET", "/readyz", nil, nil)
	if body := readAll(t, res); res.StatusCode != 503 || !strings.Contains(body, "renderer: warming up") {
		t.Errorf("readyz with a failing check = %d %q, want 503 naming the check", res.StatusCode, body)
	}
	// One save so a counter has a sample.
	e.do(t, "PUT", "/d/"+e.edit+"/scene", sampleScene(t), map[string]string{"If-Match": "1"})
	res = e.do(t, "GET", "/metrics", nil, nil)
	body := readAll(t, res)
	if res.StatusCode != 200 || !strings.Contains(body, "# TYPE") {
		t.Errorf("metrics = %d, body without Prometheus text:\n%.300s", res.StatusCode, body)
	}
	for _, want := range []string{"excalibot_queue_waiting 2\n", "excalibot_queue_active 1\n"} {
		if !strings.Contains(body, want) {
			t.Errorf("metrics lack %q", want)
		}
	}
}

// depth is a Queue of fixed depth.
type depth struct{ waiting, active int }

func (d depth) QueueDepth() (int, int) { return d.waiting, d.active }

func TestDeadTokensAreIndistinguishable(t *testing.T) {
	e := newEnv(t, Options{})
	ctx := context.Background()
	expiring, _, err := storetest.CreateLink(ctx, e.st, e.key, store.LinkEdit, e.clock.Now().Add(time.Minute))
	if err != nil {
		t.Fatal(err)
	}
	revoked, _, err := storetest.CreateLink(ctx, e.st, e.key, store.LinkView, time.Time{})
	if err != nil {
		t.Fatal(err)
	}
	// Revoke only view links: make a fresh edit/view pair for the live checks afterwards.
	if _, err := e.st.RevokeLinks(ctx, e.key, store.LinkView); err != nil {
		t.Fatal(err)
	}
	e.clock.Add(2 * time.Minute)
	tokens := map[string]string{
		"unknown": "AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA",
		"short":   "abc",
		"expired": expiring,
		"revoked": revoked,
	}
	var bodies []string
	for name, tok := range tokens {
		for _, path := range []string{"/d/" + tok, "/d/" + tok + "/scene", "/d/" + tok + ".excalidraw", "/d/" + tok + ".png"} {
			res := e.do(t, "GET", path, nil, nil)
			body := readAll(t, res)
			if res.StatusCode != 404 {
				t.Errorf("%s token: GET %s = %d, want 404", name, path, res.StatusCode)
			}
			bodies = append(bodies, body)
		}
		res := e.do(t, "PUT", "/d/"+tok+"/scene", sampleScene(t), map[string]string{"If-Match": "1"})
		if res.StatusCode != 404 {
			t.Errorf("%s token: PUT = %d, want 404", name, res.StatusCode)
		}
		bodies = append(bodies, readAll(t, res))
	}
	for _, b := range bodies {
		if b != bodies[0] {
			t.Errorf("dead tokens answered differently: %q vs %q", b, bodies[0])
		}
	}
	if res := e.do(t, "GET", "/d/"+e.edit+"/scene", nil, nil); res.StatusCode != 200 {
		t.Errorf("live edit token = %d, want 200", res.StatusCode)
	}
	if res := e.do(t, "GET", "/d/"+e.edit+".gif", nil, nil); res.StatusCode != 404 {
		t.Errorf("unknown download format = %d, want 404", res.StatusCode)
	}
}

func TestGetScene(t *testing.T) {
	e := newEnv(t, Options{})
	for _, tc := range []struct {
		name    string
		token   string
		canEdit bool
	}{{"edit", e.edit, true}, {"view", e.view, false}} {
		res := e.do(t, "GET", "/d/"+tc.token+"/scene", nil, nil)
		var doc sceneDoc
		if err := json.NewDecoder(res.Body).Decode(&doc); err != nil {
			t.Fatalf("%s: decode: %v", tc.name, err)
		}
		if doc.Rev != 1 || doc.CanEdit != tc.canEdit || res.Header.Get("Cache-Control") != "no-store" {
			t.Errorf("%s: rev %d canEdit %v cache %q, want 1 %v no-store", tc.name, doc.Rev, doc.CanEdit, res.Header.Get("Cache-Control"), tc.canEdit)
		}
		sc, err := scene.Decode(doc.Scene)
		if err != nil || sc.Len() != 8 { // 3 boxes, 3 labels, 2 arrows
			t.Errorf("%s: scene decode: %v, %d elements, want 8", tc.name, err, sc.Len())
		}
	}
}

func TestPutScene(t *testing.T) {
	e := newEnv(t, Options{MaxBody: 64 << 10})
	good := sampleScene(t)
	big := bytes.Repeat([]byte("x"), 65<<10)
	for _, tc := range []struct {
		name    string
		token   string
		ifMatch string
		body    []byte
		code    int
		rev     int64 // in the reply
		errText string
		stored  int64 // thread revision afterwards
	}{
		{"save", e.edit, "1", good, 200, 2, "", 2},
		{"stale", e.edit, "1", good, 409, 2, "changed since you opened it", 2},
		{"quoted etag", e.edit, `"2"`, good, 200, 3, "", 3},
		{"view only", e.view, "3", good, 403, 0, "view-only", 3},
		{"no If-Match", e.edit, "", good, 428, 0, "If-Match", 3},
		{"not a scene", e.edit, "3", []byte(`{"type":"something"}`), 400, 0, "", 3},
		{"not JSON", e.edit, "3", []byte(`<html>`), 400, 0, "", 3},
		{"too large", e.edit, "3", big, 413, 0, "larger than 64 KB", 3}, // not "0 MB",
	} {
		hdr := map[string]string{"Content-Type": "application/json"}
		if tc.ifMatch != "" {
			hdr["If-Match"] = tc.ifMatch
		}
		res := e.do(t, "PUT", "/d/"+tc.token+"/scene", tc.body, hdr)
		var got saveReply
		if err := json.NewDecoder(res.Body).Decode(&got); err != nil {
			t.Fatalf("%s: reply is not JSON: %v", tc.name, err)
		}
		if res.StatusCode != tc.code || got.Rev != tc.rev || !strings.Contains(got.Error, tc.errText) {
			t.Errorf("%s: got %d %+v, want %d rev %d error containing %q", tc.name, res.StatusCode, got, tc.code, tc.rev, tc.errText)
		}
		if tc.code >= 400 && got.Error == "" {
			t.Errorf("%s: refusal without a message", tc.name)
		}
		if th := e.rev(t); th.Rev != tc.stored {
			t.Errorf("%s: stored revision %d, want %d", tc.name, th.Rev, tc.stored)
		}
	}
	hist, err := e.st.History(context.Background(), e.key, 1)
	if err != nil || len(hist) != 1 || hist[0].Author != store.AuthorEditor {
		t.Errorf("newest revision %+v (%v), want one made by %q", hist, err, store.AuthorEditor)
	}
	if got := e.notify.revs; len(got) != 2 || got[0] != 2 || got[1] != 3 {
		t.Errorf("notifier saw %v, want [2 3]", got)
	}
}

func TestDownloads(t *testing.T) {
	e := newEnv(t, Options{})
	for _, tc := range []struct {
		ext, ctype string
		cors       bool
		check      func([]byte) error
	}{
		{"excalidraw", "application/vnd.excalidraw+json", true, func(b []byte) error { _, err := scene.Decode(b); return err }},
		{"png", "image/png", false, func(b []byte) error { _, err := png.Decode(bytes.NewReader(b)); return err }},
		{"svg", "image/svg+xml", false, func(b []byte) error {
			if !bytes.HasPrefix(b, []byte("<svg")) {
				return errors.New("not an SVG")
			}
			return nil
		}},
	} {
		res := e.do(t, "GET", "/d/"+e.view+"."+tc.ext, nil, nil)
		body := []byte(readAll(t, res))
		if res.StatusCode != 200 || res.Header.Get("Content-Type") != tc.ctype {
			t.Errorf("%s: %d %q, want 200 %q", tc.ext, res.StatusCode, res.Header.Get("Content-Type"), tc.ctype)
		}
		if want := `attachment; filename="diagram-r1.` + tc.ext + `"`; res.Header.Get("Content-Disposition") != want {
			t.Errorf("%s: Content-Disposition %q, want %q", tc.ext, res.Header.Get("Content-Disposition"), want)
		}
		if got := res.Header.Get("Access-Control-Allow-Origin") == "*"; got != tc.cors {
			t.Errorf("%s: cross-origin readable %v, want %v", tc.ext, got, tc.cors)
		}
		if err := tc.check(body); err != nil {
			t.Errorf("%s: invalid file: %v", tc.ext, err)
		}
	}
	res := e.do(t, "OPTIONS", "/d/"+e.view+".excalidraw", nil, map[string]string{"Origin": "https://excalidraw.com", "Access-Control-Request-Method": "GET"})
	if res.StatusCode != 204 || res.Header.Get("Access-Control-Allow-Origin") != "*" {
		t.Errorf("preflight = %d %q, want 204 *", res.StatusCode, res.Header.Get("Access-Control-Allow-Origin"))
	}
	if res := e.do(t, "OPTIONS", "/d/"+e.view+".png", nil, nil); res.StatusCode != 404 {
		t.Errorf("preflight for png = %d, want 404", res.StatusCode)
	}
}

func TestRenderFailureKeepsExcalidrawDownload(t *testing.T) {
	e := newEnv(t, Options{})
	e.srv.render = pngRenderer{err: errors.New("chromium crashed")}
	res := e.do(t, "GET", "/d/"+e.view+".png", nil, nil)
	if body := readAll(t, res); res.StatusCode != 503 || !strings.Contains(body, ".excalidraw download still works") || strings.Contains(body, "chromium") {
		t.Errorf("png with a broken renderer = %d %q, want 503 with advice and no internals", res.StatusCode, body)
	}
	if res := e.do(t, "GET", "/d/"+e.view+".excalidraw", nil, nil); res.StatusCode != 200 {
		t.Errorf(".excalidraw with a broken renderer = %d", res.StatusCode)
	}
}

func TestRateLimits(t *testing.T) {
	e := newEnv(t, Options{TokenRate: 4, AddrRate: 1000})
	codes := map[int]int{}
	var retry string
	for range 6 {
		res := e.do(t, "GET", "/d/"+e.view+"/scene", nil, nil)
		codes[res.StatusCode]++
		if res.StatusCode == 429 {
			retry = res.Header.Get("Retry-After")
		}
	}
	if codes[200] != 2 || codes[429] != 4 || retry == "" { // burst = rate/4 + 1
		t.Errorf("per-token limit: %v, Retry-After %q; want 2×200, 4×429 with Retry-After", codes, retry)
	}
	// Another token is not limited by the first one.
	if res := e.do(t, "GET", "/d/"+e.edit+"/scene", nil, nil); res.StatusCode != 200 {
		t.Errorf("other token = %d, want 200", res.StatusCode)
	}

	e = newEnv(t, Options{TokenRate: 1000, AddrRate: 4})
	codes = map[int]int{}
	for range 4 {
		codes[e.do(t, "GET", "/assets/"+editorScript(t), nil, nil).StatusCode]++
	}
	if codes[200] != 2 || codes[429] != 2 {
		t.Errorf("per-address limit: %v, want 2×200, 2×429", codes)
	}
	// Platform webhooks are not under the browsers' per-address limit (they check signatures).
	e.srv.Handle("POST /hook", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}))
	for i := range 10 {
		if res := e.do(t, "POST", "/hook", nil, nil); res.StatusCode != 200 {
			t.Fatalf("webhook request %d = %d, want 200", i, res.StatusCode)
		}
	}
}

func TestHandlerTimeout(t *testing.T) {
	e := newEnv(t, Options{HandlerTimeout: 50 * time.Millisecond})
	block := make(chan struct{})
	defer close(block)
	e.srv.Handle("GET /slow", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-block:
		case <-r.Context().Done():
		}
	}))
	res := e.do(t, "GET", "/slow", nil, nil)
	if body := readAll(t, res); res.StatusCode != 503 || !strings.Contains(body, "took too long") {
		t.Errorf("slow handler = %d %q, want 503", res.StatusCode, body)
	}
}

// TestThreadLinks: the links a reply carries are stable, distinct, served here, and made anew after
// a reset revoked them.
func TestThreadLinks(t *testing.T) {
	e := newEnv(t, Options{})
	ctx := context.Background()
	lk := links.NewEditor(e.st, e.ts.URL, 0, e.clock.Now)
	edit, view, err := lk.ThreadLinks(ctx, &store.Thread{Key: e.key})
	if err != nil {
		t.Fatal(err)
	}
	edit2, view2, _ := lk.ThreadLinks(ctx, &store.Thread{Key: e.key})
	if edit != edit2 || view != view2 || !strings.HasPrefix(edit, e.ts.URL+"/d/") || edit == view {
		t.Errorf("links %q %q then %q %q: want stable, distinct, under %s/d/", edit, view, edit2, view2, e.ts.URL)
	}
	if res := e.do(t, "GET", strings.TrimPrefix(view, e.ts.URL)+"/scene", nil, nil); res.StatusCode != 200 {
		t.Errorf("view link = %d", res.StatusCode)
	}
	// reset revokes the links: the server notices and makes new ones.
	if _, err := e.st.RevokeLinks(ctx, e.key, ""); err != nil {
		t.Fatal(err)
	}
	edit3, _, err := lk.ThreadLinks(ctx, &store.Thread{Key: e.key})
	if err != nil || edit3 == edit {
		t.Errorf("after revoke: %q, %v; want a new link", edit3, err)
	}
}
