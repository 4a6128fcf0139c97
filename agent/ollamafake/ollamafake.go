// Package ollamafake is a fake Ollama server for tests. It speaks the real wire protocol of the
// native API (POST /api/chat streaming NDJSON chunks flushed one by one, HEAD / for the
// heartbeat, GET /api/version and /api/tags), answers an unknown model with 404 as Ollama does,
// and records every chat request so tests can assert on what went on the wire.
//
// What the model says is decided by a Responder: a fixed script of turns (Script), a function of
// the request (Boxes draws one box per request, as an instant model), or anything a test writes.
// A Turn can be delayed (model latency), fail with an HTTP status, or be cut off before its done
// chunk. Stop and Start take the whole server down and bring it back on the same address, so a
// client sees "connection refused" as with a stopped Ollama.
//
// It is imported only from _test.go files (agent, cmd/excalibot end-to-end tests).
//
//	fake := ollamafake.New(t, ollamafake.Config{Responder: ollamafake.Boxes})
//	// point the client at fake.URL(), then:
//	fake.Requests() // what the client sent
package ollamafake

import (
	"encoding/json"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ollama/ollama/api"
)

// DefaultModel is the only model the fake has pulled unless Config.Models says otherwise.
const DefaultModel = "qwen3:8b"

// Turn is one reply of the model.
type Turn struct {
	Chunks []api.ChatResponse // streamed in order; Model and CreatedAt are filled in
	Delay  time.Duration      // wait before answering; ends early when the client leaves
	Status int                // non-zero: answer this HTTP status with Error instead of streaming
	Error  string             // the {"error": …} text of a Status answer, or an error line mid-stream
	Cut    bool               // end the body before the done chunk (a crashed runner)
}

// Responder decides the reply to a chat request. It is called for each request, possibly from
// several goroutines at once.
type Responder func(req api.ChatRequest) Turn

// Config sets up a fake. Zero fields get defaults.
type Config struct {
	Models    []string      // pulled models; default [DefaultModel]
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
}

// New starts a fake on a free local port.
func New(t testing.TB, cfg Config) *Server {
	t.Helper()
	if len(cfg.Models) == 0 {
		cfg.Models = []string{DefaultModel}
	}
	s := &Server{t: t, cfg: cfg, respond: cfg.Responder}
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

// Requests returns the chat requests received so far, oldest first.
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
		var models []api.ListModelResponse
		for _, m := range s.cfg.Models {
			models = append(models, api.ListModelResponse{Name: m, Model: m, ModifiedAt: time.Now().UTC()})
		}
		writeJSON(w, http.StatusOK, api.ListResponse{Models: models})
	case r.URL.Path == "/api/chat" && r.Method == http.MethodPost:
		s.chat(w, r)
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
	if !s.has(req.Model) {
		writeJSON(w, http.StatusNotFound, map[string]string{"error": "model '" + req.Model + "' not found"})
		return
	}
	s.mu.Lock()
	s.requests = append(s.requests, req)
	s.raw = append(s.raw, body)
	respond := s.respond
	s.mu.Unlock()
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
		_ = enc.Encode(map[string]string{"error": turn.Error})
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

func (s *Server) has(model string) bool {
	for _, m := range s.cfg.Models {
		if m == model || strings.TrimSuffix(m, ":latest") == model {
			return true
		}
	}
	return false
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
