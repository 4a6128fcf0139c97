package render

import (
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"sync/atomic"
	"time"

	"github.com/excalibot/excalibot/internal/logkey"
)

// contentSecurityPolicy makes the page unable to reach anything but its own loopback origin,
// whatever a scene asks for (image URLs, links, embeds): Chrome enforces it for every request the
// page makes. data: and blob: stay allowed because Excalidraw inlines fonts and images that way.
const contentSecurityPolicy = "default-src 'none'; " +
	"script-src 'self' 'wasm-unsafe-eval'; " +
	"style-src 'self' 'unsafe-inline'; " +
	"font-src 'self' data:; " +
	"img-src 'self' data: blob:; " +
	"connect-src 'self' data: blob:; " +
	"worker-src 'self' blob:; " +
	"base-uri 'none'; form-action 'none'; frame-src 'none'"

// server serves the embedded page on a loopback port chosen by the kernel.
type server struct {
	srv  *http.Server
	url  string // http://127.0.0.1:PORT/render.html
	done chan struct{}

	requests     atomic.Int64 // every request served, for tests and logs
	fontRequests atomic.Int64 // CJK font chunks served

	jobs jobs
}

func startServer(log *slog.Logger) (*server, error) {
	files, err := fs.Sub(dist, "web/dist")
	if err != nil {
		return nil, fmt.Errorf("open embedded page: %w", err)
	}
	if _, err := fs.Stat(files, "render.js"); err != nil {
		return nil, fmt.Errorf("embedded page is missing render.js (run `go generate ./render`): %w", err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("listen on loopback: %w", err)
	}
	s := &server{url: "http://" + ln.Addr().String() + "/render.html", done: make(chan struct{})}
	static := http.FileServerFS(files)
	mux := http.NewServeMux()
	handle := func(w http.ResponseWriter, r *http.Request) {
		s.requests.Add(1)
		if strings.HasPrefix(r.URL.Path, "/fonts/") {
			s.fontRequests.Add(1)
		}
		h := w.Header()
		h.Set("Content-Security-Policy", contentSecurityPolicy)
		h.Set("X-Content-Type-Options", "nosniff")
		// The files are embedded in this binary and never change while it runs, so every tab
		// after the first loads them from Chrome's cache.
		h.Set("Cache-Control", "public, max-age=86400, immutable")
		static.ServeHTTP(w, r)
	}
	for _, p := range []string{"GET /render.html", "GET /render.js", "GET /fonts/Xiaolai/{file}",
		"GET /mermaid.html", "GET /mermaid.js"} {
		mux.HandleFunc(p, handle)
	}
	mux.HandleFunc("GET /job/{id}", func(w http.ResponseWriter, r *http.Request) {
		s.requests.Add(1)
		s.jobs.serve(w, r)
	})
	mux.HandleFunc("POST /job/{id}", func(w http.ResponseWriter, r *http.Request) {
		s.requests.Add(1)
		s.jobs.receive(w, r)
	})
	s.srv = &http.Server{
		Handler:           mux,
		ReadHeaderTimeout: 10 * time.Second,
		ErrorLog:          slog.NewLogLogger(log.Handler(), slog.LevelDebug),
	}
	go func() {
		defer close(s.done)
		if err := s.srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			log.Error("render page server stopped", logkey.Err, err)
		}
	}()
	return s, nil
}

func (s *server) close() error {
	err := s.srv.Close()
	<-s.done
	return err
}
