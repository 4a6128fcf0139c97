package tgfake

import "strings"

// outageTimes marks the failures Down queues: far more calls than any test makes, until Up.
const outageTimes = 1 << 30

// Down makes every call of the given methods (e.g. "sendPhoto") answer 502 Bad Gateway, as the Bot
// API does while Telegram is down, until Up. Failures queued with Fail before Down come first.
func (s *Server) Down(methods ...string) {
	for _, m := range methods {
		s.Fail(m, Failure{Code: 502, Description: "Bad Gateway", Times: outageTimes})
	}
}

// Up ends the outages Down began; failures queued with Fail stay.
func (s *Server) Up() {
	s.mu.Lock()
	defer s.mu.Unlock()
	for m, q := range s.failures {
		kept := q[:0]
		for _, f := range q {
			if f.Times < outageTimes/2 || f.Code != 502 {
				kept = append(kept, f)
			}
		}
		s.failures[strings.ToLower(m)] = kept
	}
}
