package sqlcore

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"database/sql"
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"time"

	"github.com/excalibot/excalibot/store"
)

// tokenBytes of randomness per link: 256 bits, so tokens cannot be guessed or enumerated.
const tokenBytes = 32

func hashToken(token string) []byte {
	h := sha256.Sum256([]byte(token))
	return h[:]
}

func linkID(hash []byte) string { return hex.EncodeToString(hash[:8]) }

// CreateLink implements store.Store.
func (s *DB) CreateLink(ctx context.Context, key store.ThreadKey, kind store.LinkKind, expires time.Time) (string, store.Link, error) {
	defer s.lockWrite()()
	if err := key.Validate(); err != nil {
		return "", store.Link{}, err
	}
	if kind != store.LinkEdit && kind != store.LinkView {
		return "", store.Link{}, fmt.Errorf("create link for %s: %w: kind %q is neither edit nor view", key, store.ErrInvalid, kind)
	}
	buf := make([]byte, tokenBytes)
	_, _ = rand.Read(buf) // crypto/rand.Read never fails (it panics instead)
	token := base64.RawURLEncoding.EncodeToString(buf)
	hash := hashToken(token)
	now := s.now()
	res, err := s.exec(ctx, s.db, `INSERT INTO links (hash, thread_id, kind, created, expires)
		SELECT ?, id, ?, ?, ? FROM threads WHERE tkey = ?`, hash, string(kind), now, ms(expires), key.String())
	if err != nil {
		return "", store.Link{}, fmt.Errorf("create link for %s: %w", key, err)
	}
	if n, err := res.RowsAffected(); err != nil {
		return "", store.Link{}, fmt.Errorf("create link for %s: %w", key, err)
	} else if n == 0 {
		return "", store.Link{}, fmt.Errorf("create link: %w", notFound("thread", key))
	}
	return token, store.Link{ID: linkID(hash), Key: key, Kind: kind, Created: tm(now), Expires: tm(ms(expires))}, nil
}

// ResolveLink implements store.Store.
func (s *DB) ResolveLink(ctx context.Context, token string) (store.Link, error) {
	hash := hashToken(token)
	l := store.Link{ID: linkID(hash)}
	var tkey, kind string
	var created, expires, revoked int64
	err := s.row(ctx, s.db, `SELECT t.tkey, l.kind, l.created, l.expires, l.revoked
		FROM links l JOIN threads t ON t.id = l.thread_id WHERE l.hash = ?`, hash).
		Scan(&tkey, &kind, &created, &expires, &revoked)
	if isNoRows(err) {
		return l, fmt.Errorf("link %s: %w", l.ID, store.ErrNotFound)
	}
	if err != nil {
		return l, fmt.Errorf("resolve link %s: %w", l.ID, err)
	}
	key, err := store.ParseThreadKey(tkey)
	if err != nil {
		return l, fmt.Errorf("resolve link %s: stored %w", l.ID, err)
	}
	l.Key, l.Kind, l.Created, l.Expires, l.Revoked = key, store.LinkKind(kind), tm(created), tm(expires), tm(revoked)
	switch {
	case revoked != 0:
		return l, fmt.Errorf("link %s of %s: %w", l.ID, key, store.ErrLinkRevoked)
	case expires != 0 && s.now() >= expires:
		return l, fmt.Errorf("link %s of %s: %w", l.ID, key, store.ErrLinkExpired)
	}
	return l, nil
}

// RevokeLinks implements store.Store.
func (s *DB) RevokeLinks(ctx context.Context, key store.ThreadKey, kind store.LinkKind) (int, error) {
	defer s.lockWrite()()
	if err := key.Validate(); err != nil {
		return 0, err
	}
	q := `UPDATE links SET revoked = ? WHERE revoked = 0 AND thread_id IN (SELECT id FROM threads WHERE tkey = ?)`
	args := []any{s.now(), key.String()}
	if kind != "" {
		q += ` AND kind = ?`
		args = append(args, string(kind))
	}
	res, err := s.exec(ctx, s.db, q, args...)
	if err != nil {
		return 0, fmt.Errorf("revoke links of %s: %w", key, err)
	}
	n, err := res.RowsAffected()
	if err != nil {
		return 0, fmt.Errorf("revoke links of %s: %w", key, err)
	}
	return int(n), nil
}

// ClaimEvent implements store.Store.
func (s *DB) ClaimEvent(ctx context.Context, eventID string) (bool, error) {
	defer s.lockWrite()()
	if eventID == "" || len(eventID) > 512 {
		return false, fmt.Errorf("claim event: %w: id must be 1 to 512 bytes, got %d", store.ErrInvalid, len(eventID))
	}
	now := s.now()
	// An expired row is taken over as if it were absent; a live one makes the statement a no-op.
	res, err := s.exec(ctx, s.db, `INSERT INTO events (id, expires) VALUES (?, ?)
		ON CONFLICT (id) DO UPDATE SET expires = excluded.expires WHERE events.expires <= ?`,
		eventID, now+s.opt.EventTTL.Milliseconds(), now)
	if err != nil {
		return false, fmt.Errorf("claim event %q: %w", eventID, err)
	}
	n, err := res.RowsAffected()
	if err != nil {
		return false, fmt.Errorf("claim event %q: %w", eventID, err)
	}
	return n == 1, nil
}

// AcquireLease implements store.Store.
func (s *DB) AcquireLease(ctx context.Context, key store.ThreadKey, owner string, ttl time.Duration) (store.Lease, error) {
	defer s.lockWrite()()
	if err := key.Validate(); err != nil {
		return store.Lease{}, err
	}
	if owner == "" || ttl <= 0 {
		return store.Lease{}, fmt.Errorf("lease %s: %w: need an owner and a positive ttl", key, store.ErrInvalid)
	}
	now := s.now()
	exp := now + ttl.Milliseconds()
	var gen int64
	err := s.row(ctx, s.db, `INSERT INTO leases (tkey, owner, expires, generation) VALUES (?, ?, ?, 1)
		ON CONFLICT (tkey) DO UPDATE SET owner = excluded.owner, expires = excluded.expires,
			generation = CASE WHEN leases.owner = excluded.owner THEN leases.generation ELSE leases.generation + 1 END
		WHERE leases.owner = excluded.owner OR leases.expires <= ?
		RETURNING generation`, key.String(), owner, exp, now).Scan(&gen)
	if err == nil {
		return store.Lease{Key: key, Owner: owner, Expires: tm(exp), Generation: gen}, nil
	}
	if !isNoRows(err) {
		return store.Lease{}, fmt.Errorf("acquire lease on %s: %w", key, err)
	}
	held := &store.LeaseHeldError{Key: key}
	var hexp int64
	err = s.row(ctx, s.db, `SELECT owner, expires FROM leases WHERE tkey = ?`, key.String()).Scan(&held.Owner, &hexp)
	if err != nil && !isNoRows(err) { // released meanwhile: still report it as held, the caller retries
		return store.Lease{}, fmt.Errorf("read lease on %s: %w", key, err)
	}
	held.Expires = tm(hexp)
	return store.Lease{}, held
}

// ReleaseLease implements store.Store.
func (s *DB) ReleaseLease(ctx context.Context, key store.ThreadKey, owner string) error {
	defer s.lockWrite()()
	if err := key.Validate(); err != nil {
		return err
	}
	if _, err := s.exec(ctx, s.db, `DELETE FROM leases WHERE tkey = ? AND owner = ?`, key.String(), owner); err != nil {
		return fmt.Errorf("release lease on %s: %w", key, err)
	}
	return nil
}

// ReleaseOwner implements store.Store.
func (s *DB) ReleaseOwner(ctx context.Context, owner string) (int, error) {
	defer s.lockWrite()()
	res, err := s.exec(ctx, s.db, `DELETE FROM leases WHERE owner = ?`, owner)
	if err != nil {
		return 0, fmt.Errorf("release leases of %q: %w", owner, err)
	}
	n, err := res.RowsAffected()
	return int(n), err
}

// Prune implements store.Store.
func (s *DB) Prune(ctx context.Context, before time.Time) (store.PruneStats, error) {
	var st store.PruneStats
	cut, now := ms(before), s.now()
	count := func(tx *sql.Tx, n *int, what, q string, args ...any) error {
		res, err := s.exec(ctx, tx, q, args...)
		if err != nil {
			return fmt.Errorf("prune %s: %w", what, err)
		}
		m, err := res.RowsAffected()
		if err != nil {
			return fmt.Errorf("prune %s: %w", what, err)
		}
		*n = int(m)
		return nil
	}
	// A thread someone holds a live lease on is being worked on, however old its last change.
	const old = `SELECT id FROM threads WHERE updated < ? AND NOT EXISTS
		(SELECT 1 FROM leases l WHERE l.tkey = threads.tkey AND l.expires > ?)`
	err := s.inTx(ctx, func(tx *sql.Tx) error {
		var links int
		steps := []struct {
			n    *int
			what string
			q    string
			args []any
		}{
			{&st.Revisions, "revisions", `DELETE FROM revisions WHERE thread_id IN (` + old + `)`, []any{cut, now}},
			{&links, "links", `DELETE FROM links WHERE thread_id IN (` + old + `)`, []any{cut, now}},
			{&st.Threads, "threads", `DELETE FROM threads WHERE id IN (` + old + `)`, []any{cut, now}},
			{&st.Runs, "runs", `DELETE FROM runs WHERE state IN ('done', 'failed', 'interrupted') AND updated < ?`, []any{cut}},
			{&st.Events, "events", `DELETE FROM events WHERE expires <= ?`, []any{now}},
			{&st.Leases, "leases", `DELETE FROM leases WHERE expires <= ?`, []any{now}},
		}
		for _, step := range steps {
			if err := count(tx, step.n, step.what, step.q, step.args...); err != nil {
				return err
			}
		}
		return nil
	})
	return st, err
}
