// Package ollamafake is a fake Ollama server for tests. It speaks the real wire protocol of the
// native API (POST /api/chat streaming NDJSON chunks flushed one by one, POST /api/show, HEAD /
// for the heartbeat, GET /api/version and /api/tags), answers an unknown model with 404 as Ollama
// does, refuses what Ollama refuses (tools to a model without the tools capability, thinking to
// a model that cannot think, a format that is neither "json" nor a schema, images for a model
// without vision) with Ollama's status and text, and records every chat request so tests can assert on what went on the wire.
//
// Each pulled model has a ModelSpec (capabilities, context length, family, size): Config.Info
// gives them, Known describes the ready models ToolModel, ToolLessModel and VisionToolModel, and
// any other model calls tools with 40960 tokens of context. /api/tags lists the pulled models the
// most recently pulled first, each with its digest, as Ollama does; Pull and Remove change them
// while the fake runs (a model pulled again gets a new digest), and Shown tells which models
// /api/show was asked about.
//
// What the model says is decided by a Responder: a fixed script of turns (Script), a function of
// the request (Boxes draws one box per request, as an instant model; Sees reads a given Sketch in
// the request's picture, as an instant vision model), or anything a test writes.
// A Turn can be delayed (model latency), fail with an HTTP status, or be cut off before its done
// chunk. Stop and Start take the whole server down and bring it back on the same address, so a
// client sees "connection refused" as with a stopped Ollama.
//
// It is imported only from _test.go files (agent, cmd/excalibot end-to-end tests).
//
//	fake := ollamafake.New(t, ollamafake.Config{Responder: ollamafake.Boxes})
//	fake := ollamafake.New(t, ollamafake.Config{Models: []string{ollamafake.ToolLessModel},
//		Responder: ollamafake.Structured(nil)}) // answers a format's schema with an instance
//	// point the client at fake.URL(), then:
//	fake.Requests() // what the client sent
package ollamafake

import (
	"encoding/json"
	"errors"
	"io"
	"maps"
	"net"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ollama/ollama/api"
	"github.com/ollama/ollama/types/model"
)

// DefaultModel is the only model the fake has pulled unless Config.Models says otherwise.
const DefaultModel = "qwen3:8b"

// Turn is one reply of the model.
type Turn struct {
	Chunks []api.ChatResponse // streamed in order; Model and CreatedAt are filled in
	Delay  time.Duration      // wait before answering; ends early when the client leaves
	Status int                // non-zero: answer this HTTP status with Error instead of streaming
	Error  string             // the {"error": …} text of a Status answer, or an error line mid-stream
	// ErrorKey is the key of that error line mid-stream (default "error"); Ollama 0.11.3 wrote a
	// harmony parse failure under "error parsing tool call".
	ErrorKey string
	Cut      bool // end the body before the done chunk (a crashed runner)
}

// Responder decides the reply to a chat request. It is called for each request, possibly from
// several goroutines at once.
type Responder func(req api.ChatRequest) Turn

// Config sets up a fake. Zero fields get defaults.
type Config struct {
	// Models and the keys of Info are the pulled models; when both are empty, [DefaultModel].
	Models []string
	// Info describes pulled models; a model not in it is described by Known, or else calls
	// tools with 40960 tokens of context.
	Info      map[string]ModelSpec
	Responder Responder     // default: an error turn saying nothing is scripted
	Delay     time.Duration // added before every reply (realistic model latency)
}

// Server is a running fake Ollama. Create it with New; it stops itself when the test ends.
type Server struct {
	t    testing.TB
	addr string
	cfg  Config

	mu       sync.Mutex
	srv      *http.Server
	served   chan struct{} // closed when the current Serve returns
	respond  Responder
	requests []api.ChatRequest
	raw      [][]byte
	models   []pulledModel        // most recently pulled first, as /api/tags lists them
	info     map[string]ModelSpec // Config.Info, then what Pull added
	pulls    int                  // Pull calls, so each pull has its own digest and time
	shown    []string             // the names /api/show was asked about
}

// New starts a fake on a free local port.
func New(t testing.TB, cfg Config) *Server {
	t.Helper()
	cfg.Models = slices.Clone(cfg.Models)
	for m := range cfg.Info {
		if !slices.Contains(cfg.Models, m) {
			cfg.Models = append(cfg.Models, m)
		}
	}
	if len(cfg.Models) == 0 {
		cfg.Models = []string{DefaultModel}
	}
	slices.Sort(cfg.Models)
	s := &Server{t: t, cfg: cfg, respond: cfg.Responder, info: maps.Clone(cfg.Info)}
	for i, m := range cfg.Models {
		// Listed in name order: each a minute older than the one before.
		s.models = append(s.models, pulledModel{name: m, digest: digestOf(m, 0), modified: pulledAt.Add(-time.Duration(i) * time.Minute)})
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("ollamafake: listen: %v", err)
	}
	s.addr = ln.Addr().String()
	s.serve(ln)
	t.Cleanup(s.Stop)
	return s
}

// URL is the base URL to give the client (OLLAMA_HOST).
func (s *Server) URL() string { return "http://" + s.addr }

func (s *Server) serve(ln net.Listener) {
	srv := &http.Server{Handler: http.HandlerFunc(s.serveHTTP), ReadHeaderTimeout: 5 * time.Second}
	served := make(chan struct{})
	s.mu.Lock()
	s.srv, s.served = srv, served
	s.mu.Unlock()
	go func() {
		defer close(served)
		_ = srv.Serve(ln)
	}()
}

// Stop closes the listener and every open connection: requests in flight end with a cut
// stream, new ones are refused. It waits until the server has stopped.
func (s *Server) Stop() {
	s.mu.Lock()
	srv, served := s.srv, s.served
	s.srv = nil
	s.mu.Unlock()
	if srv == nil {
		return
	}
	_ = srv.Close()
	<-served
}

// Start brings a stopped server back on the same address.
func (s *Server) Start() {
	s.t.Helper()
	s.mu.Lock()
	running := s.srv != nil
	s.mu.Unlock()
	if running {
		return
	}
	var ln net.Listener
	var err error
	// The port was ours a moment ago; the kernel may take a moment to release it.
	for range 50 {
		if ln, err = net.Listen("tcp", s.addr); err == nil {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	if err != nil {
		s.t.Fatalf("ollamafake: listen again on %s: %v", s.addr, err)
	}
	s.serve(ln)
}

// SetResponder replaces the responder for the requests that follow.
func (s *Server) SetResponder(r Responder) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.respond = r
}

// Requests returns the chat requests received so far, oldest first, including those the server
// refused (unknown model, missing capability, bad format).
func (s *Server) Requests() []api.ChatRequest {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]api.ChatRequest(nil), s.requests...)
}

// Raw returns the bodies of the chat requests received so far, as sent.
func (s *Server) Raw() [][]byte {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([][]byte(nil), s.raw...)
}

func (s *Server) serveHTTP(w http.ResponseWriter, r *http.Request) {
	switch {
	case r.URL.Path == "/" && (r.Method == http.MethodHead || r.Method == http.MethodGet):
		_, _ = io.WriteString(w, "Ollama is running")
	case r.URL.Path == "/api/version":
		writeJSON(w, http.StatusOK, map[string]string{"version": "0.17.4"})
	case r.URL.Path == "/api/tags":
		s.tags(w)
	case r.URL.Path == "/api/chat" && r.Method == http.MethodPost:
		s.chat(w, r)
	case r.URL.Path == "/api/show" && r.Method == http.MethodPost:
		s.show(w, r)
	default:
		http.NotFound(w, r)
	}
}

func (s *Server) chat(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(r.Body)
	if err != nil {
		writeJSON(w, http.StatusBadRequest, map[string]string{"error": "read body: " + err.Error()})
		return
	}
	var req api.ChatRequest
	if err := json.Unmarshal(body, &req); err != nil {
		writeJSON(w, http.StatusBadRequest, map[string]string{"error": "invalid request: " + err.Error()})
		return
	}
	s.mu.Lock()
	s.requests = append(s.requests, req)
	s.raw = append(s.raw, body)
	respond := s.respond
	s.mu.Unlock()
	pulled, ok := s.pulled(req.Model)
	if !ok {
		writeJSON(w, http.StatusNotFound, map[string]string{"error": "model '" + req.Model + "' not found"})
		return
	}
	if status, msg := s.refuse(req, pulled); status != 0 {
		writeJSON(w, status, map[string]string{"error": msg})
		return
	}
	// The runner checks the format once the model is loaded; its error comes back as a 500.
	if msg := checkFormat(req.Format); msg != "" {
		writeJSON(w, http.StatusInternalServerError, map[string]string{"error": msg})
		return
	}
	if status, msg := s.checkImages(req, pulled); status != 0 {
		writeJSON(w, status, map[string]string{"error": msg})
		return
	}
	turn := Turn{Status: http.StatusInternalServerError, Error: "ollamafake: no responder set"}
	if respond != nil {
		turn = respond(req)
	}
	if !sleep(r, s.cfg.Delay+turn.Delay) {
		return
	}
	if turn.Status != 0 {
		writeJSON(w, turn.Status, map[string]string{"error": turn.Error})
		return
	}
	if req.Stream != nil && !*req.Stream {
		s.whole(w, req, turn)
		return
	}
	w.Header().Set("Content-Type", "application/x-ndjson")
	enc := json.NewEncoder(w)
	flusher, _ := w.(http.Flusher)
	for _, c := range turn.Chunks {
		if turn.Cut && c.Done {
			return
		}
		c.Model, c.CreatedAt = req.Model, time.Now().UTC()
		if err := enc.Encode(c); err != nil {
			return
		}
		if flusher != nil {
			flusher.Flush()
		}
	}
	if turn.Error != "" {
		key := turn.ErrorKey
		if key == "" {
			key = "error"
		}
		_ = enc.Encode(map[string]string{key: turn.Error})
	}
}

// whole answers a "stream": false request with the chunks merged into one object.
func (s *Server) whole(w http.ResponseWriter, req api.ChatRequest, turn Turn) {
	var out api.ChatResponse
	var content strings.Builder
	for _, c := range turn.Chunks {
		content.WriteString(c.Message.Content)
		out.Message.ToolCalls = append(out.Message.ToolCalls, c.Message.ToolCalls...)
		if c.Done {
			out.Done, out.DoneReason, out.Metrics = true, c.DoneReason, c.Metrics
		}
	}
	out.Model, out.CreatedAt = req.Model, time.Now().UTC()
	out.Message.Role, out.Message.Content = "assistant", content.String()
	writeJSON(w, http.StatusOK, out)
}

// pulled finds a pulled model by name as Ollama does: the tag defaults to latest, case does not
// matter. It returns the name the model was pulled under.
func (s *Server) pulled(name string) (string, bool) {
	want := model.ParseName(name)
	if !want.IsValid() {
		return "", false
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, m := range s.models {
		if model.ParseName(m.name).EqualFold(want) {
			return m.name, true
		}
	}
	return "", false
}

// decode reads a JSON request body, answering 400 as Ollama does when it cannot.
func decode(w http.ResponseWriter, r *http.Request, v any) bool {
	err := json.NewDecoder(r.Body).Decode(v)
	switch {
	case errors.Is(err, io.EOF):
		writeJSON(w, http.StatusBadRequest, map[string]string{"error": "missing request body"})
		return false
	case err != nil:
		writeJSON(w, http.StatusBadRequest, map[string]string{"error": err.Error()})
		return false
	}
	return true
}

// sleep waits d or until the client leaves; it reports whether to go on.
func sleep(r *http.Request, d time.Duration) bool {
	if d <= 0 {
		return true
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-r.Context().Done():
		return false
	}
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}
