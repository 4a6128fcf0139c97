package slackfake

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"sync"
	"time"

	"github.com/gorilla/websocket"
)

// sockets tracks Socket Mode connections: the current one receives envelopes, and every one is
// closed by Server.Close (hijacked connections are beyond httptest.Server.Close).
type sockets struct {
	mu        sync.Mutex
	all       map[*sockConn]bool
	current   *sockConn
	connected chan struct{} // closed and replaced on each new connection
	count     int           // connections so far
	acks      map[string]time.Time
	ackSignal chan struct{} // closed and replaced on each ack
	nextEnv   int
	wg        sync.WaitGroup
}

type sockConn struct {
	ws   *websocket.Conn
	wmu  sync.Mutex // gorilla allows one writer at a time
	done chan struct{}
	id   int  // the connection's number, in the order they were opened (see spread.go)
	live bool // hello was sent: envelopes may follow
}

func (c *sockConn) writeJSON(v any) error {
	c.wmu.Lock()
	defer c.wmu.Unlock()
	_ = c.ws.SetWriteDeadline(time.Now().Add(5 * time.Second))
	return c.ws.WriteJSON(v)
}

func (k *sockets) init() {
	k.all = map[*sockConn]bool{}
	k.connected = make(chan struct{})
	k.acks = map[string]time.Time{}
	k.ackSignal = make(chan struct{})
}

func (k *sockets) closeAll() {
	k.mu.Lock()
	defer k.mu.Unlock()
	for c := range k.all {
		_ = c.ws.Close()
	}
}

func (k *sockets) wait() { k.wg.Wait() }

// serveSocket is the Socket Mode websocket: hello, then envelopes from Deliver, pings every
// PingInterval, and acks read back.
func (s *Server) serveSocket(w http.ResponseWriter, r *http.Request) {
	ws, err := upgrader.Upgrade(w, r, nil)
	if err != nil {
		return
	}
	k := &s.sock
	c := &sockConn{ws: ws, done: make(chan struct{})}
	k.mu.Lock()
	k.all[c] = true
	k.count++
	c.id = k.count
	k.wg.Add(1)
	k.mu.Unlock()
	defer k.wg.Done()
	defer func() {
		k.mu.Lock()
		delete(k.all, c)
		if k.current == c {
			k.current = nil
		}
		k.mu.Unlock()
		_ = ws.Close()
	}()

	err = c.writeJSON(map[string]any{
		"type": "hello", "num_connections": 1,
		"debug_info":      map[string]any{"host": "fake-slack", "build_number": 1, "approximate_connection_time": 18060},
		"connection_info": map[string]any{"app_id": s.cfg.AppID},
	})
	if err != nil {
		return
	}
	k.mu.Lock()
	k.current = c
	c.live = true
	close(k.connected)
	k.connected = make(chan struct{})
	k.mu.Unlock()

	var pinger sync.WaitGroup
	defer pinger.Wait()
	defer close(c.done)
	pinger.Go(func() {
		t := time.NewTicker(s.cfg.PingInterval)
		defer t.Stop()
		for {
			select {
			case <-c.done:
				return
			case <-t.C:
				if ws.WriteControl(websocket.PingMessage, []byte("ping"), time.Now().Add(time.Second)) != nil {
					return
				}
			}
		}
	})
	for {
		var ack struct {
			EnvelopeID string          `json:"envelope_id"`
			Payload    json.RawMessage `json:"payload"`
		}
		if err := ws.ReadJSON(&ack); err != nil {
			return
		}
		if ack.EnvelopeID == "" {
			continue
		}
		k.mu.Lock()
		k.acks[ack.EnvelopeID] = time.Now()
		close(k.ackSignal)
		k.ackSignal = make(chan struct{})
		k.mu.Unlock()
	}
}

// Connections is how many Socket Mode connections were opened so far.
func (s *Server) Connections() int {
	s.sock.mu.Lock()
	defer s.sock.mu.Unlock()
	return s.sock.count
}

// WaitConnected waits until a Socket Mode connection is open.
func (s *Server) WaitConnected(ctx context.Context) error {
	_, err := s.currentSocket(ctx)
	return err
}

func (s *Server) currentSocket(ctx context.Context) (*sockConn, error) {
	for {
		s.sock.mu.Lock()
		c, wait := s.sock.current, s.sock.connected
		s.sock.mu.Unlock()
		if c != nil {
			return c, nil
		}
		select {
		case <-ctx.Done():
			return nil, fmt.Errorf("slackfake: no socket mode connection: %w", ctx.Err())
		case <-wait:
		}
	}
}

// DeliverOptions mark a redelivery, as Slack does when an envelope was not acked in time.
type DeliverOptions struct {
	RetryAttempt int
	RetryReason  string // e.g. "timeout"
}

// Deliver sends an event over the Socket Mode connection (waiting for one to be open) and
// returns the envelope id; WaitAck waits for the client to acknowledge it.
func (s *Server) Deliver(ctx context.Context, ev Event, opt DeliverOptions) (string, error) {
	c, err := s.currentSocket(ctx)
	if err != nil {
		return "", err
	}
	s.sock.mu.Lock()
	s.sock.nextEnv++
	env := fmt.Sprintf("env-%04d", s.sock.nextEnv)
	s.sock.mu.Unlock()
	err = c.writeJSON(map[string]any{
		"envelope_id": env, "payload": json.RawMessage(ev.Body), "type": "events_api",
		"accepts_response_payload": false, "retry_attempt": opt.RetryAttempt, "retry_reason": opt.RetryReason,
	})
	if err != nil {
		return "", fmt.Errorf("slackfake: send envelope: %w", err)
	}
	return env, nil
}

// WaitAck waits until the client acknowledged the envelope.
func (s *Server) WaitAck(ctx context.Context, envelopeID string) error {
	for {
		s.sock.mu.Lock()
		_, ok := s.sock.acks[envelopeID]
		sig := s.sock.ackSignal
		s.sock.mu.Unlock()
		if ok {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("slackfake: envelope %s not acked: %w", envelopeID, ctx.Err())
		case <-sig:
		}
	}
}

// Acked reports whether the envelope was acknowledged.
func (s *Server) Acked(envelopeID string) bool {
	s.sock.mu.Lock()
	defer s.sock.mu.Unlock()
	_, ok := s.sock.acks[envelopeID]
	return ok
}

// Disconnect asks the client to reconnect, as Slack does every few hours ("refresh_requested").
func (s *Server) Disconnect(ctx context.Context) error {
	c, err := s.currentSocket(ctx)
	if err != nil {
		return err
	}
	s.sock.mu.Lock()
	if s.sock.current == c {
		s.sock.current = nil
	}
	s.sock.mu.Unlock()
	err = c.writeJSON(map[string]any{"type": "disconnect", "reason": "refresh_requested",
		"debug_info": map[string]any{"host": "fake-slack"}})
	if err != nil && !errors.Is(err, websocket.ErrCloseSent) {
		return fmt.Errorf("slackfake: send disconnect: %w", err)
	}
	return nil
}
