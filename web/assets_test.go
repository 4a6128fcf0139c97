package web

import (
	"io/fs"
	"net/http"
	"regexp"
	"strings"
	"testing"
)

// editorScript is the hashed name of the editor bundle in this build.
func editorScript(t *testing.T) string {
	t.Helper()
	m, err := fs.Glob(dist, "editor-*.js")
	if err != nil || len(m) != 1 {
		t.Fatalf("editor bundle in ui/dist: %v %v (run go generate ./web)", m, err)
	}
	return m[0]
}

func TestEditorPage(t *testing.T) {
	e := newEnv(t, Options{})
	res := e.do(t, "GET", "/d/"+e.edit, nil, nil)
	body := readAll(t, res)
	if res.StatusCode != 200 || res.Header.Get("Content-Type") != "text/html; charset=utf-8" || res.Header.Get("Cache-Control") != "no-cache" {
		t.Fatalf("editor page: %d %q %q", res.StatusCode, res.Header.Get("Content-Type"), res.Header.Get("Cache-Control"))
	}
	// Everything the page loads must exist and come from this origin (the CSP allows nothing else),
	// and nothing may be inline.
	refs := regexp.MustCompile(`(?:src|href)="([^"]+)"`).FindAllStringSubmatch(body, -1)
	if len(refs) < 2 {
		t.Fatalf("page references %v, want a script and a stylesheet", refs)
	}
	for _, m := range refs {
		if strings.HasPrefix(m[1], "data:") {
			continue
		}
		if !strings.HasPrefix(m[1], "/assets/") {
			t.Errorf("page loads %q from outside /assets/", m[1])
			continue
		}
		if res := e.do(t, "GET", m[1], nil, nil); res.StatusCode != 200 {
			t.Errorf("GET %s = %d", m[1], res.StatusCode)
		}
	}
	if strings.Contains(body, "<script>") || strings.Contains(body, "style=") {
		t.Errorf("page has inline script or style, which the CSP blocks:\n%s", body)
	}
}

func TestAssets(t *testing.T) {
	e := newEnv(t, Options{})
	for _, tc := range []struct {
		path, ctype, cache string
		code               int
	}{
		{"/assets/" + editorScript(t), "text/javascript; charset=utf-8", "public, max-age=31536000, immutable", 200},
		{"/assets/fonts/Xiaolai/Xiaolai-Regular-019d66dcad46dc156b162d267f981c20.woff2", "font/woff2", "public, max-age=604800", 200},
		{"/assets/fonts/Xiaolai/nope.woff2", "", "", 404},
		{"/assets/editor.html", "", "", 404}, // pages only under their routes
		{"/assets/../server.go", "", "", 404},
		{"/assets/", "", "", 404},
	} {
		res := e.do(t, "GET", tc.path, nil, nil)
		if res.StatusCode != tc.code {
			t.Errorf("GET %s = %d, want %d", tc.path, res.StatusCode, tc.code)
			continue
		}
		if tc.code != 200 {
			continue
		}
		if got := res.Header.Get("Content-Type"); got != tc.ctype {
			t.Errorf("GET %s: Content-Type %q, want %q", tc.path, got, tc.ctype)
		}
		if got := res.Header.Get("Cache-Control"); got != tc.cache {
			t.Errorf("GET %s: Cache-Control %q, want %q", tc.path, got, tc.cache)
		}
		etag := res.Header.Get("ETag")
		if res2 := e.do(t, "GET", tc.path, nil, map[string]string{"If-None-Match": etag}); etag == "" || res2.StatusCode != http.StatusNotModified {
			t.Errorf("GET %s with If-None-Match %q = %d, want 304", tc.path, etag, res2.StatusCode)
		}
	}
}
