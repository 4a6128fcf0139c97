// Package web is excalibot's HTTP side: the editable link (a hosted Excalidraw editor whose saves
// become the thread's next revision), downloads, the home page, health and metrics, and the mount
// point for the chat platforms' webhooks.
package web

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"time"

	"github.com/excalibot/excalibot/internal/httpx"
	"github.com/excalibot/excalibot/internal/logkey"
	"github.com/excalibot/excalibot/ratelimit"
	"github.com/excalibot/excalibot/render/export"
	"github.com/excalibot/excalibot/scene"
	"github.com/excalibot/excalibot/store"
)

// Store is the part of the thread store the web side uses.
type Store interface {
	Load(ctx context.Context, key store.ThreadKey) (*store.Thread, error)
	Save(ctx context.Context, req store.SaveRequest) (*store.Thread, error)
	CreateLinks(ctx context.Context, key store.ThreadKey, expires time.Time, kinds ...store.LinkKind) ([]string, []store.Link, error)
	ResolveLink(ctx context.Context, token string) (store.Link, error)
}

// Notifier is told when a person saved the diagram in the editor. Optional.
type Notifier interface {
	Edited(ctx context.Context, key store.ThreadKey, rev int64)
}

// Options configure the server. Zero fields take defaults.
type Options struct {
	// MaxBody bounds a request body (default 6 MB: a 5 MB scene plus JSON overhead).
	MaxBody int64
	// Limits bound an editor save's bytes, elements and texts, checked before it is decoded; they
	// are the ones imports have (zero fields take scene's defaults).
	Limits scene.Limits
	// TokenRate and AddrRate are requests per minute per link token and per client address
	// (defaults 120 and 300), counted by this process alone: behind a load balancer over N
	// replicas, up to N times as many get through.
	TokenRate, AddrRate float64
	// HandlerTimeout bounds every handler but streams (default 60 s: a render may take a while).
	HandlerTimeout time.Duration
	// UploadTimeout is how long an upload route (HandleUpload) may take to receive its body and
	// answer, in place of the HTTP server's read timeout and HandlerTimeout, which are set for
	// small requests (default 5 min: 20 MB at about 70 KB/s, a poor mobile link).
	UploadTimeout time.Duration
	// Checks are what /readyz and the home page ask, in order: every one must answer nil for the
	// server to be ready.
	Checks []Check
	// Model, when set, tells the home page about the model that draws. It is not a readiness
	// check: a server whose model is away still serves the editor and the chat page, which says
	// why nothing is drawn.
	Model func(ctx context.Context) ModelHealth
	// Queue, when set, is the work whose depth /metrics reports.
	Queue Queue
	Now   func() time.Time
}

func (o Options) withDefaults() Options {
	if o.MaxBody <= 0 {
		o.MaxBody = 6 << 20
	}
	if o.TokenRate <= 0 {
		o.TokenRate = 120
	}
	if o.AddrRate <= 0 {
		o.AddrRate = 300
	}
	if o.HandlerTimeout <= 0 {
		o.HandlerTimeout = 60 * time.Second
	}
	if o.UploadTimeout <= 0 {
		o.UploadTimeout = 5 * time.Minute
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	o.Limits = o.Limits.WithDefaults()
	return o
}

// Check is one readiness check: nil when the part is ready.
type Check struct {
	Name string
	Fn   func(ctx context.Context) error
}

// Server serves every HTTP route of the program.
type Server struct {
	st       Store
	render   export.Renderer
	notify   Notifier
	opt      Options
	log      *slog.Logger
	metrics  *Metrics
	mux      *http.ServeMux
	byToken  *ratelimit.Limiter
	byAddr   *ratelimit.Limiter
	editorFS http.Handler
}

// New returns the server. notify may be nil.
func New(st Store, r export.Renderer, notify Notifier, m *Metrics, opt Options, log *slog.Logger) *Server {
	opt = opt.withDefaults()
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	if m == nil {
		m = NewMetrics()
	}
	if opt.Queue != nil {
		m.watch(opt.Queue)
	}
	s := &Server{
		st: st, render: r, notify: notify, opt: opt, log: log.With("component", "web"), metrics: m,
		mux:     http.NewServeMux(),
		byToken: ratelimit.New(opt.TokenRate, int(opt.TokenRate/4)+1, opt.Now),
		byAddr:  ratelimit.New(opt.AddrRate, int(opt.AddrRate/4)+1, opt.Now),
	}
	s.routes()
	return s
}

// Handle mounts a platform webhook. It gets the body limit and the handler timeout but not the
// per-address rate limit meant for browsers: a platform posts from a few addresses (or, behind a
// proxy, one), and the handlers check each request's signature or secret themselves.
func (s *Server) Handle(pattern string, h http.Handler) {
	timed := http.TimeoutHandler(h, s.opt.HandlerTimeout, "the server took too long to answer; please try again\n")
	s.mux.Handle(pattern, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		r.Body = http.MaxBytesReader(w, r.Body, s.opt.MaxBody)
		timed.ServeHTTP(w, r)
	}))
}

// HandleBrowser mounts a route browsers call (the chat page and its API): the per-address rate
// limit and body limit every browser route has, and the handler timeout unless stream is set (an
// event stream lives as long as its tab).
func (s *Server) HandleBrowser(pattern string, h http.Handler, stream bool) {
	if !stream {
		s.mux.Handle(pattern, s.limited(h))
		return
	}
	s.mux.Handle(pattern, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if ok, wait := s.byAddr.Allow(httpx.ClientAddr(r)); !ok {
			tooMany(w, wait)
			return
		}
		h.ServeHTTP(w, r)
	}))
}

// HandleUpload mounts a browser route that takes files (the chat page's message post): as
// HandleBrowser, but its body may be up to maxBody instead of the server's MaxBody. The handler
// refuses a file over its own limit as soon as it knows, before reading it whole. The body may take
// UploadTimeout to arrive, however short the HTTP server's own read timeout is.
func (s *Server) HandleUpload(pattern string, h http.Handler, maxBody int64) {
	timed := http.TimeoutHandler(h, max(s.opt.HandlerTimeout, s.opt.UploadTimeout), "the server took too long to answer; please try again\n")
	s.mux.Handle(pattern, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if ok, wait := s.byAddr.Allow(httpx.ClientAddr(r)); !ok {
			tooMany(w, wait)
			return
		}
		rc := http.NewResponseController(w)
		deadline := time.Now().Add(s.opt.UploadTimeout)
		if err := rc.SetReadDeadline(deadline); err != nil {
			s.log.Debug("extend an upload's read deadline", logkey.Err, err) // the server's own stays
		}
		_ = rc.SetWriteDeadline(deadline.Add(s.opt.HandlerTimeout)) // the answer comes after the body
		r.Body = http.MaxBytesReader(w, r.Body, maxBody)
		timed.ServeHTTP(w, r)
	}))
}

// Handler is the root handler with security headers on every response.
func (s *Server) Handler() http.Handler { return s.headers(s.mux) }

func (s *Server) routes() {
	s.mux.Handle("GET /{$}", s.limited(http.HandlerFunc(s.home)))
	s.mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "ok\n") })
	s.mux.HandleFunc("GET /readyz", s.readyz)
	s.mux.Handle("GET /metrics", s.metrics.Handler())
	s.mux.Handle("GET /assets/", s.limited(http.StripPrefix("/assets/", assetHandler())))
	s.mux.Handle("GET /d/{name}", s.limited(http.HandlerFunc(s.getDiagram)))
	s.mux.Handle("GET /d/{token}/scene", s.limited(http.HandlerFunc(s.getScene)))
	s.mux.Handle("PUT /d/{token}/scene", s.limited(http.HandlerFunc(s.putScene)))
	s.mux.Handle("OPTIONS /d/{name}", http.HandlerFunc(s.preflight))
}

func (s *Server) readyz(w http.ResponseWriter, r *http.Request) {
	var failed []string
	for _, c := range s.runChecks(r.Context()) {
		if c.Err != nil {
			failed = append(failed, c.Name+": "+c.Err.Error())
		}
	}
	if len(failed) > 0 {
		http.Error(w, strings.Join(failed, "\n"), http.StatusServiceUnavailable)
		return
	}
	io.WriteString(w, "ready\n")
}

// contentSecurityPolicy lets the page run only its own script and talk only to its own origin.
// Excalidraw sets inline styles and draws fonts and images from data: and blob: URLs.
const contentSecurityPolicy = "default-src 'none'; script-src 'self'; style-src 'self' 'unsafe-inline'; " +
	"img-src 'self' data: blob:; font-src 'self' data:; connect-src 'self'; worker-src 'self' blob:; " +
	"manifest-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"

func (s *Server) headers(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h := w.Header()
		h.Set("Content-Security-Policy", contentSecurityPolicy)
		h.Set("Referrer-Policy", "no-referrer")
		h.Set("X-Content-Type-Options", "nosniff")
		h.Set("X-Frame-Options", "DENY")
		h.Set("Cross-Origin-Opener-Policy", "same-origin")
		next.ServeHTTP(w, r)
	})
}

// limited applies the per-address rate limit, the body limit and the handler timeout.
func (s *Server) limited(next http.Handler) http.Handler {
	timed := http.TimeoutHandler(next, s.opt.HandlerTimeout, "the server took too long to answer; please try again\n")
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if ok, wait := s.byAddr.Allow(httpx.ClientAddr(r)); !ok {
			tooMany(w, wait)
			return
		}
		r.Body = http.MaxBytesReader(w, r.Body, s.opt.MaxBody)
		timed.ServeHTTP(w, r)
	})
}

func tooMany(w http.ResponseWriter, wait time.Duration) {
	w.Header().Set("Retry-After", fmt.Sprint(int(wait.Seconds()+0.999)))
	http.Error(w, "too many requests; slow down", http.StatusTooManyRequests)
}

// errNotFound is the one answer for unknown, expired and revoked tokens, so they cannot be told apart.
var errNotFound = errors.New("not found")

func notFound(w http.ResponseWriter) { http.Error(w, "not found", http.StatusNotFound) }
