package slackfake

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
)

// Sockets lists the open Socket Mode connections that got their hello, by number (1 for the first
// connection the fake accepted, 2 for the next …). Slack spreads an app's events over all of its
// connections, up to ten; DeliverOn sends over one of them.
func (s *Server) Sockets() []int {
	s.sock.mu.Lock()
	defer s.sock.mu.Unlock()
	var out []int
	for c := range s.sock.all {
		if c.live {
			out = append(out, c.id)
		}
	}
	slices.Sort(out)
	return out
}

// DeliverOn sends an event over Socket Mode connection id (see Sockets) and returns the envelope
// id, for WaitAck. It fails at once when that connection is closed: Slack then delivers over
// another one.
func (s *Server) DeliverOn(ctx context.Context, id int, ev Event, opt DeliverOptions) (string, error) {
	if err := ctx.Err(); err != nil {
		return "", err
	}
	var c *sockConn
	s.sock.mu.Lock()
	for o := range s.sock.all {
		if o.id == id && o.live {
			c = o
		}
	}
	if c != nil {
		s.sock.nextEnv++
	}
	env := fmt.Sprintf("env-%04d", s.sock.nextEnv)
	s.sock.mu.Unlock()
	if c == nil {
		return "", fmt.Errorf("slackfake: socket mode connection %d is not open", id)
	}
	err := c.writeJSON(map[string]any{
		"envelope_id": env, "payload": json.RawMessage(ev.Body), "type": "events_api",
		"accepts_response_payload": false, "retry_attempt": opt.RetryAttempt, "retry_reason": opt.RetryReason,
	})
	if err != nil {
		return "", fmt.Errorf("slackfake: send envelope over connection %d: %w", id, err)
	}
	return env, nil
}
