package web

import (
	"bytes"
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"io/fs"
	"net/http"
	"path"
	"regexp"
	"strings"
	"sync"
	"time"

	"github.com/excalibot/excalibot/render"
)

// The browser side is built by ui/build.mjs and committed, so `go build` needs no npm.
// Rebuild after changing ui/src or ui/package.json:
//
//go:generate sh -c "cd ui && npm ci --no-audit --no-fund && node build.mjs"

// ui holds editor.html and chat.html, and the scripts and styles they load under content-hashed
// names (Excalidraw with every Latin, Cyrillic and Greek font inlined is editor-*.js).
//
//go:embed ui/dist
var ui embed.FS

// dist is ui/dist; the CJK fallback font chunks come from package render's embedded copy and are
// served under fonts/.
var dist = func() fs.FS {
	sub, err := fs.Sub(ui, "ui/dist")
	if err != nil {
		panic("web: embedded ui/dist: " + err.Error()) // only for an invalid constant path
	}
	return sub
}()

// contentTypes are set explicitly: the system's MIME table may lack woff2 or map .js oddly.
var contentTypes = map[string]string{
	".html":  "text/html; charset=utf-8",
	".js":    "text/javascript; charset=utf-8",
	".css":   "text/css; charset=utf-8",
	".woff2": "font/woff2",
}

// hashed matches build output names with a content hash, e.g. editor-EM4UV7OF.js.
var hashed = regexp.MustCompile(`-[A-Z0-9]{8}\.(js|css)$`)

// asset is one file ready to serve.
type asset struct {
	body        []byte
	contentType string
	etag        string
	cache       string
}

var (
	assetsMu sync.Mutex
	assets   = map[string]*asset{} // by path under /assets/, filled on first use
)

// loadAsset reads an embedded file once. Hashed scripts never change under their name and fonts
// only with a new binary, so both may be cached for long; anything else is revalidated.
func loadAsset(name string) (*asset, bool) {
	assetsMu.Lock()
	defer assetsMu.Unlock()
	if a, ok := assets[name]; ok {
		return a, true
	}
	var (
		body  []byte
		err   error
		cache = "no-cache"
	)
	switch {
	case strings.HasPrefix(name, "fonts/"):
		body, err = fs.ReadFile(render.Fonts(), strings.TrimPrefix(name, "fonts/"))
		cache = "public, max-age=604800"
	case strings.HasSuffix(name, ".html"):
		return nil, false // pages are served by their routes, never as assets
	default:
		body, err = fs.ReadFile(dist, name)
		if hashed.MatchString(name) {
			cache = "public, max-age=31536000, immutable"
		}
	}
	ct, known := contentTypes[path.Ext(name)]
	if err != nil || !known {
		return nil, false
	}
	sum := sha256.Sum256(body)
	a := &asset{body: body, contentType: ct, etag: `"` + hex.EncodeToString(sum[:12]) + `"`, cache: cache}
	assets[name] = a
	return a, true
}

// assetHandler serves /assets/ (already stripped of the prefix).
func assetHandler() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		name := r.URL.Path
		if !fs.ValidPath(name) || name == "." {
			notFound(w)
			return
		}
		a, ok := loadAsset(name)
		if !ok {
			notFound(w)
			return
		}
		serveAsset(w, r, a)
	})
}

func serveAsset(w http.ResponseWriter, r *http.Request, a *asset) {
	h := w.Header()
	h.Set("Content-Type", a.contentType)
	h.Set("Cache-Control", a.cache)
	h.Set("ETag", a.etag)
	// ServeContent answers If-None-Match and ranges; a zero time leaves Last-Modified out.
	http.ServeContent(w, r, "", time.Time{}, bytes.NewReader(a.body))
}

// page serves one of the HTML pages. They are small and name the current hashed scripts, so
// they are revalidated on every load.
func page(name string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		body, err := fs.ReadFile(dist, name)
		if err != nil {
			http.Error(w, "the page is missing from this build (run `go generate ./web`)", http.StatusInternalServerError)
			return
		}
		sum := sha256.Sum256(body)
		serveAsset(w, r, &asset{body: body, contentType: contentTypes[".html"], etag: `"` + hex.EncodeToString(sum[:12]) + `"`, cache: "no-cache"})
	}
}

var editorPage = page("editor.html")

// ChatPage serves the chat page's HTML; the web chat adapter (bot/webchat) serves its API.
var ChatPage http.Handler = page("chat.html")

// serveEditorPage serves the editor; the page loads the scene itself from /d/{token}/scene.
func serveEditorPage(w http.ResponseWriter, r *http.Request) { editorPage(w, r) }
