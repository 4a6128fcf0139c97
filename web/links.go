package web

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/excalibot/excalibot/store"
)

// ThreadLinks returns the edit and view links of a thread for a chat reply. Tokens are random
// (the store makes them, 256 bits, and keeps only their hash); this process remembers the ones it
// made so every reply in a thread carries the same links. After a restart a thread gets new
// links; the old ones keep working until reset revokes them or they expire.
func (s *Server) ThreadLinks(ctx context.Context, th *store.Thread) (edit, view string, err error) {
	key := th.Key
	k := key.String()
	now := s.opt.Now()
	s.linksMu.Lock()
	l, ok := s.links[k]
	s.linksMu.Unlock()
	if ok && (l.expires.IsZero() || now.Add(time.Hour).Before(l.expires)) && s.live(ctx, l.edit) {
		return s.linkURL(l.edit), s.linkURL(l.view), nil
	}
	var expires time.Time
	if s.opt.LinkTTL > 0 {
		expires = now.Add(s.opt.LinkTTL)
	}
	// Both links in one commit: this runs while the reply's picture renders.
	tokens, _, err := s.st.CreateLinks(ctx, key, expires, store.LinkEdit, store.LinkView)
	if err != nil {
		return "", "", fmt.Errorf("create edit and view links: %w", err)
	}
	et, vt := tokens[0], tokens[1]
	s.linksMu.Lock()
	if len(s.links) > 50_000 { // bound the cache; a dropped thread just gets fresh links
		clear(s.links)
	}
	s.links[k] = threadLinks{edit: et, view: vt, expires: expires}
	s.linksMu.Unlock()
	return s.linkURL(et), s.linkURL(vt), nil
}

// live reports whether a remembered token still resolves (reset revokes links).
func (s *Server) live(ctx context.Context, token string) bool {
	_, err := s.st.ResolveLink(ctx, token)
	return err == nil
}

func (s *Server) linkURL(token string) string { return s.baseURL(nil) + "/d/" + token }

// resolve finds the link of a token, with one error for every way a token can be wrong.
func (s *Server) resolve(ctx context.Context, token string) (store.Link, error) {
	if len(token) < 20 || len(token) > 128 || strings.ContainsAny(token, "./") {
		return store.Link{}, errNotFound
	}
	l, err := s.st.ResolveLink(ctx, token)
	switch {
	case err == nil:
		return l, nil
	case errors.Is(err, store.ErrNotFound), errors.Is(err, store.ErrLinkExpired), errors.Is(err, store.ErrLinkRevoked):
		return store.Link{}, errNotFound
	default:
		return store.Link{}, err
	}
}
