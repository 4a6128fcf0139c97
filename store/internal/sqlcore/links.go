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

// CreateLinks implements store.Store.
func (s *DB) CreateLinks(ctx context.Context, key store.ThreadKey, expires time.Time, kinds ...store.LinkKind) ([]string, []store.Link, error) {
	if len(kinds) == 0 {
		return nil, nil, fmt.Errorf("create links for %s: %w: no kind", key, store.ErrInvalid)
	}
	for _, k := range kinds {
		if err := checkLink(key, k); err != nil {
			return nil, nil, err
		}
	}
	tokens, links := make([]string, len(kinds)), make([]store.Link, len(kinds))
	err := s.inTx(ctx, func(tx *sql.Tx) error {
		for i, k := range kinds {
			var err error
			if tokens[i], links[i], err = s.createLink(ctx, tx, key, k, expires); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return nil, nil, err
	}
	return tokens, links, nil
}

func checkLink(key store.ThreadKey, kind store.LinkKind) error {
	if err := key.Validate(); err != nil {
		return err
	}
	if kind != store.LinkEdit && kind != store.LinkView {
		return fmt.Errorf("create link for %s: %w: kind %q is neither edit nor view", key, store.ErrInvalid, kind)
	}
	return nil
}

func (s *DB) createLink(ctx context.Context, e execer, key store.ThreadKey, kind store.LinkKind, expires time.Time) (string, store.Link, error) {
	buf := make([]byte, tokenBytes)
	_, _ = rand.Read(buf) // crypto/rand.Read never fails (it panics instead)
	token := base64.RawURLEncoding.EncodeToString(buf)
	hash := hashToken(token)
	now := s.now()
	res, err := s.exec(ctx, e, `INSERT INTO links (hash, thread_id, kind, created, expires)
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
