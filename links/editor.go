// Package links makes the links a chat reply carries for a thread's diagram: this server's editor
// and view links (Editor), or excalidraw.com share links (Share). It is made before the bot and
// the web server: the bot puts its links into replies, the web server serves what they point at,
// and neither needs the other for it.
package links

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/excalibot/excalibot/store"
)

// Store mints and resolves link tokens; the store packages satisfy it.
type Store interface {
	CreateLinks(ctx context.Context, key store.ThreadKey, expires time.Time, kinds ...store.LinkKind) ([]string, []store.Link, error)
	ResolveLink(ctx context.Context, token string) (store.Link, error)
}

// Editor makes a thread's edit and view links to this server's editor (/d/TOKEN). Tokens are
// random (the store makes them, 256 bits, and keeps only their hash); the Editor remembers the
// ones it made so every reply in a thread carries the same links. After a restart a thread gets
// new links; the old ones keep working until reset revokes them or they expire.
type Editor struct {
	st  Store
	ttl time.Duration
	now func() time.Time

	base string

	mu   sync.Mutex
	made map[store.ThreadKey]tokens // tokens made by this process, reused in replies
}

type tokens struct {
	edit, view string // raw tokens
	expires    time.Time
}

// NewEditor returns links under base, the address people open this server at (the public URL,
// e.g. https://draw.example.com, or the listener's). ttl > 0 makes new links expire after that
// long; now may be nil (time.Now).
func NewEditor(st Store, base string, ttl time.Duration, now func() time.Time) *Editor {
	if now == nil {
		now = time.Now
	}
	return &Editor{st: st, base: strings.TrimRight(base, "/"), ttl: ttl, now: now, made: map[store.ThreadKey]tokens{}}
}

// URL is the link of a token.
func (e *Editor) URL(token string) string { return e.base + "/d/" + token }

// ThreadLinks returns the edit and view links of a thread for a chat reply.
func (e *Editor) ThreadLinks(ctx context.Context, th *store.Thread) (edit, view string, err error) {
	now := e.now()
	e.mu.Lock()
	t, ok := e.made[th.Key]
	e.mu.Unlock()
	if ok && (t.expires.IsZero() || now.Add(time.Hour).Before(t.expires)) && e.live(ctx, t.edit) {
		return e.URL(t.edit), e.URL(t.view), nil
	}
	var expires time.Time
	if e.ttl > 0 {
		expires = now.Add(e.ttl)
	}
	// Both links in one commit: this runs while the reply's picture renders.
	made, _, err := e.st.CreateLinks(ctx, th.Key, expires, store.LinkEdit, store.LinkView)
	if err != nil {
		return "", "", fmt.Errorf("create edit and view links: %w", err)
	}
	e.mu.Lock()
	if len(e.made) > 50_000 { // bound the memory; a dropped thread just gets fresh links
		clear(e.made)
	}
	e.made[th.Key] = tokens{edit: made[0], view: made[1], expires: expires}
	e.mu.Unlock()
	return e.URL(made[0]), e.URL(made[1]), nil
}

// live reports whether a remembered token still resolves (reset revokes links).
func (e *Editor) live(ctx context.Context, token string) bool {
	_, err := e.st.ResolveLink(ctx, token)
	return err == nil
}
