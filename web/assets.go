package web

import "net/http"

// TEMPORARY until the editor bundle lands (web/ui): the page and assets are served from the
// embedded build of web/ui/dist.

func serveEditorPage(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	w.Write([]byte("<!doctype html><title>excalibot editor</title><p>The editor bundle is not built yet.</p>"))
}

func assetHandler() http.Handler { return http.NotFoundHandler() }
