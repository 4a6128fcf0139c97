package slackfake

import (
	"encoding/json"
	"net/http"
	"net/url"
	"slices"
	"sync"
	"sync/atomic"
	"time"
)

// gate holds Web API calls until the test lets them through, and answers them as an outage does:
// the tests stop the bot between saving a revision and posting its reply with it, and make Slack
// unavailable for a while.
type gate struct {
	mu    sync.Mutex
	holds []*Hold
	down  map[string]bool // methods answering 503; "" stands for every method
}

// Hold is a set of Web API calls kept waiting: made by Server.Hold, ended by Release.
type Hold struct {
	s        *Server
	method   string
	match    func(url.Values) bool
	arrived  chan struct{} // closed when the first call waits
	release  chan struct{} // closed by Release
	once     sync.Once     // closes arrived
	rel      sync.Once     // closes release
	waiting  atomic.Int32  // calls waiting now
	arrivals atomic.Int32  // calls that ever waited
}

// Hold keeps the calls of method whose form match accepts (every call when match is nil) waiting,
// as a Slack that has not answered yet: until Release, which lets them go on as usual, or until
// their client goes away (a killed process), in which case nothing happens, as for a request that
// never reached Slack. The server learns that a client left a moment after it did: wait for
// Waiting to drop before Release, or the call may still go through.
func (s *Server) Hold(method string, match func(form url.Values) bool) *Hold {
	h := &Hold{s: s, method: method, match: match, arrived: make(chan struct{}), release: make(chan struct{})}
	s.gate.mu.Lock()
	s.gate.holds = append(s.gate.holds, h)
	s.gate.mu.Unlock()
	return h
}

// Arrived is closed once a call is waiting in the hold.
func (h *Hold) Arrived() <-chan struct{} { return h.arrived }

// Arrivals is how many calls have waited in the hold, those gone on or given up included.
func (h *Hold) Arrivals() int { return int(h.arrivals.Load()) }

// Waiting is how many calls wait in the hold now.
func (h *Hold) Waiting() int { return int(h.waiting.Load()) }

// Release lets the waiting calls go on and ends the hold for later ones.
func (h *Hold) Release() {
	h.rel.Do(func() { close(h.release) })
	g := &h.s.gate
	g.mu.Lock()
	g.holds = slices.DeleteFunc(g.holds, func(o *Hold) bool { return o == h })
	g.mu.Unlock()
}

// Down makes the given Web API methods (every method when none is given) answer HTTP 503, as
// Slack does during an outage, until Up.
func (s *Server) Down(methods ...string) {
	s.gate.mu.Lock()
	defer s.gate.mu.Unlock()
	if s.gate.down == nil {
		s.gate.down = map[string]bool{}
	}
	if len(methods) == 0 {
		methods = []string{""}
	}
	for _, m := range methods {
		s.gate.down[m] = true
	}
}

// Up ends every outage that Down began.
func (s *Server) Up() {
	s.gate.mu.Lock()
	defer s.gate.mu.Unlock()
	clear(s.gate.down)
}

// gated applies the holds and outages to a call; true means it was answered (or its client left)
// and must go no further. A call refused by an outage is recorded with its status.
func (s *Server) gated(w http.ResponseWriter, r *http.Request, method string) bool {
	g := &s.gate
	g.mu.Lock()
	down := g.down[method] || g.down[""]
	var hold *Hold
	for _, h := range g.holds {
		if h.method == method && (h.match == nil || h.match(r.Form)) {
			hold = h
			break
		}
	}
	g.mu.Unlock()
	if down {
		s.mu.Lock()
		s.calls = append(s.calls, Call{Method: method, Form: r.Form, Status: http.StatusServiceUnavailable, At: time.Now()})
		s.mu.Unlock()
		w.Header().Set("Content-Type", "application/json; charset=utf-8")
		w.WriteHeader(http.StatusServiceUnavailable)
		_ = json.NewEncoder(w).Encode(map[string]any{"ok": false, "error": "service_unavailable"})
		return true
	}
	if hold == nil {
		return false
	}
	hold.arrivals.Add(1)
	hold.waiting.Add(1)
	defer hold.waiting.Add(-1)
	hold.once.Do(func() { close(hold.arrived) })
	select {
	case <-hold.release:
		return r.Context().Err() != nil // a client that left meanwhile gets nothing done
	case <-r.Context().Done():
		return true
	}
}
