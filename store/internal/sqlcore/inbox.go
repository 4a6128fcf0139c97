package sqlcore

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/excalibot/excalibot/store"
)

// maxInboxBody bounds one kept message: its text is limited by the bot long before this, and its
// files are kept as references, not contents.
const maxInboxBody = 1 << 20

const inboxCols = `id, tkey, body, state, run_id, pin, interruptions, error, created`

func scanInbox(sc interface{ Scan(...any) error }) (store.InboxMessage, error) {
	var m store.InboxMessage
	var tkey, state string
	var created int64
	if err := sc.Scan(&m.ID, &tkey, &m.Body, &state, &m.Run, &m.Pin, &m.Interruptions, &m.Error, &created); err != nil {
		return m, err
	}
	key, err := store.ParseThreadKey(tkey)
	if err != nil {
		return m, fmt.Errorf("inbox message %d: stored %w", m.ID, err)
	}
	m.Key, m.State, m.Created = key, store.InboxState(state), tm(created)
	return m, nil
}

// touchThread creates the thread's row if needed and marks it active. On PostgreSQL the upsert
// holds the row until the end of tx, so the inbox and outbox rows two transactions add to one
// thread get their ids in the order the transactions commit.
func (s *DB) touchThread(ctx context.Context, tx *sql.Tx, key store.ThreadKey) error {
	now := s.now()
	_, err := s.exec(ctx, tx, `INSERT INTO threads (tkey, created, updated) VALUES (?, ?, ?)
		ON CONFLICT (tkey) DO UPDATE SET updated = excluded.updated`, key.String(), now, now)
	if err != nil {
		return fmt.Errorf("record thread %s: %w", key, err)
	}
	return nil
}

// Accept implements store.Store.
func (s *DB) Accept(ctx context.Context, req store.AcceptRequest) (store.Accepted, error) {
	if err := req.Key.Validate(); err != nil {
		return store.Accepted{}, fmt.Errorf("accept message: %w", err)
	}
	for _, id := range req.EventIDs {
		if err := checkEventID(id); err != nil {
			return store.Accepted{}, fmt.Errorf("accept message in %s: %w", req.Key, err)
		}
	}
	if req.Body != nil {
		if len(req.Body) == 0 {
			return store.Accepted{}, fmt.Errorf("accept message in %s: %w: empty body", req.Key, store.ErrInvalid)
		}
		if err := store.CheckSize("message", req.Body, maxInboxBody); err != nil {
			return store.Accepted{}, fmt.Errorf("accept message in %s: %w", req.Key, err)
		}
	}
	if err := s.checkOutgoing(req.Key, req.Replies); err != nil {
		return store.Accepted{}, fmt.Errorf("accept message in %s: %w", req.Key, err)
	}
	if err := checkIndex(req.Index); err != nil {
		return store.Accepted{}, fmt.Errorf("accept message in %s: %w", req.Key, err)
	}
	ids := slices.Compact(slices.Sorted(slices.Values(req.EventIDs)))
	var out store.Accepted
	err := s.inTx(ctx, func(tx *sql.Tx) error {
		for _, id := range ids {
			fresh, err := s.claimEvent(ctx, tx, id)
			if err != nil {
				return err
			}
			if !fresh {
				return errSeen
			}
		}
		if err := s.touchThread(ctx, tx, req.Key); err != nil {
			return err
		}
		if req.Body != nil {
			now := s.now()
			err := s.row(ctx, tx, `INSERT INTO inbox (tkey, platform, body, state, pin, created, updated)
				VALUES (?, ?, ?, 'pending', ?, ?, ?) RETURNING id`,
				req.Key.String(), req.Key.Platform, req.Body, req.Pin, now, now).Scan(&out.ID)
			if err != nil {
				return fmt.Errorf("queue message in %s: %w", req.Key, err)
			}
		}
		replies := slices.Clone(req.Replies)
		for i := range replies {
			if replies[i].Pin == "" {
				replies[i].Pin = req.Pin
			}
		}
		if _, err := s.insertOutgoing(ctx, tx, replies, 0, "", 0); err != nil {
			return err
		}
		if err := s.fileMessages(ctx, tx, req.Index...); err != nil {
			return err
		}
		out.Fresh = true
		return nil
	})
	if errors.Is(err, errSeen) {
		return store.Accepted{}, nil
	}
	if err != nil {
		return store.Accepted{}, err
	}
	return out, nil
}

// platformIn is "AND <col> IN (?, …)" for the platforms, with their arguments; false when there is
// none, so the query would match nothing.
func platformIn(col string, platforms []string) (string, []any, bool) {
	if len(platforms) == 0 {
		return "", nil, false
	}
	args := make([]any, len(platforms))
	for i, p := range platforms {
		args[i] = p
	}
	return ` AND ` + col + ` IN (?` + strings.Repeat(`, ?`, len(platforms)-1) + `)`, args, true
}

func checkClaim(owner string, ttl time.Duration, limit int) error {
	if owner == "" || ttl <= 0 || limit <= 0 {
		return fmt.Errorf("%w: a claim needs an owner, a positive ttl and a positive limit", store.ErrInvalid)
	}
	return nil
}

// ClaimThreads implements store.Store.
func (s *DB) ClaimThreads(ctx context.Context, req store.ClaimRequest) ([]store.Claim, error) {
	if err := checkClaim(req.Owner, req.TTL, req.Limit); err != nil {
		return nil, fmt.Errorf("claim threads: %w", err)
	}
	plat, pargs, ok := platformIn("i.platform", req.Platforms)
	if !ok {
		return nil, nil
	}
	now := s.now()
	q := `SELECT t.tkey FROM threads t
		WHERE t.tkey IN (SELECT i.tkey FROM inbox i WHERE i.state = 'pending' AND (i.pin IN ('', ?) OR ` + deadPin("i.pin", "i.created") + `)` + plat + `)
		AND NOT EXISTS (SELECT 1 FROM leases l WHERE l.tkey = t.tkey AND (l.expires > ? OR l.owner = ?))
		ORDER BY (SELECT MIN(i.id) FROM inbox i WHERE i.tkey = t.tkey AND i.state = 'pending')
		LIMIT ?`
	if s.d.SkipLocked {
		q += ` FOR UPDATE OF t SKIP LOCKED`
	}
	grace := now - req.TTL.Milliseconds()
	args := append(append([]any{req.Owner, req.Owner, now, grace}, pargs...), now, req.Owner, req.Limit)
	var out []store.Claim
	err := s.inTx(ctx, func(tx *sql.Tx) error {
		out = nil
		rows, err := s.query(ctx, tx, q, args...)
		if err != nil {
			return fmt.Errorf("claim threads: find threads: %w", err)
		}
		var keys []store.ThreadKey
		for rows.Next() {
			var tkey string
			if err := rows.Scan(&tkey); err != nil {
				rows.Close()
				return fmt.Errorf("claim threads: %w", err)
			}
			k, err := store.ParseThreadKey(tkey)
			if err != nil {
				rows.Close()
				return fmt.Errorf("claim threads: stored %w", err)
			}
			keys = append(keys, k)
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return fmt.Errorf("claim threads: %w", err)
		}
		for _, k := range keys {
			l, err := s.acquireLease(ctx, tx, k, req.Owner, req.TTL)
			if errors.Is(err, store.ErrLeaseHeld) {
				continue // taken between the query and now
			}
			if err != nil {
				return err
			}
			// Runs of other owners left on the thread belong to holders whose lease is gone.
			runs, err := s.interruptRuns(ctx, tx, `tkey = ? AND owner <> ?`, []any{k.String(), req.Owner}, req.Recovery)
			if err != nil {
				return err
			}
			adopted, err := s.adopt(ctx, tx, k, req.Owner, now, grace)
			if err != nil {
				return err
			}
			out = append(out, store.Claim{Lease: l, Interrupted: runs, Adopted: adopted})
		}
		return nil
	})
	return out, err
}

// interruptRuns marks the queued and running runs matching cond interrupted, decides with rec
// what becomes of the messages each took (pending again, interrupted or failed; each counted as
// cut short once more), and queues the replies rec.Notice makes for each.
func (s *DB) interruptRuns(ctx context.Context, tx *sql.Tx, cond string, args []any, rec store.Recovery) ([]store.Cut, error) {
	now := s.now()
	rows, err := s.query(ctx, tx, `UPDATE runs SET state = 'interrupted', updated = ?
		WHERE state IN ('queued', 'running') AND `+cond+` RETURNING `+runCols, append([]any{now}, args...)...)
	if err != nil {
		return nil, fmt.Errorf("interrupt runs: %w", err)
	}
	runs, err := collectRuns(rows)
	if err != nil {
		return nil, fmt.Errorf("interrupt runs: %w", err)
	}
	out := make([]store.Cut, 0, len(runs))
	for _, r := range runs {
		var taken, most int
		if err := s.row(ctx, tx, `SELECT COUNT(*), COALESCE(MAX(interruptions), 0)
			FROM inbox WHERE run_id = ? AND state = 'taken'`, r.ID).Scan(&taken, &most); err != nil {
			return nil, fmt.Errorf("read the messages of run %d: %w", r.ID, err)
		}
		c := store.Cut{Run: r, Fate: store.FateTold, Interruptions: most + 1}
		// Messages pinned to the run's owner are redone too: the owner is gone, and whoever
		// takes the thread next adopts them (ClaimThreads).
		if taken > 0 && rec.Redo != nil && rec.Redo(r) {
			c.Fate = store.FateRedone
			if c.Interruptions >= rec.MaxInterruptions {
				c.Fate = store.FateGivenUp
			}
		}
		state, why := store.InboxInterrupted, ""
		switch c.Fate {
		case store.FateRedone:
			state = store.InboxPending // run_id stays: the run whose messages are redone together
		case store.FateGivenUp:
			state = store.InboxFailed
			why = fmt.Sprintf("its runs were cut short %d times (the process working on it stopped or died)", c.Interruptions)
		}
		if _, err := s.exec(ctx, tx, `UPDATE inbox SET state = ?, error = ?, interruptions = interruptions + 1, updated = ?
			WHERE run_id = ? AND state = 'taken'`, string(state), why, now, r.ID); err != nil {
			return nil, fmt.Errorf("interrupt the messages of run %d: %w", r.ID, err)
		}
		out = append(out, c)
		if rec.Notice == nil {
			continue
		}
		items := rec.Notice(c)
		if err := s.checkOutgoing(r.Key, items); err != nil {
			return nil, fmt.Errorf("notice of run %d: %w", r.ID, err)
		}
		if _, err := s.insertOutgoing(ctx, tx, items, 0, "", 0); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// Pending implements store.Store.
func (s *DB) Pending(ctx context.Context, key store.ThreadKey, limit int) ([]store.InboxMessage, error) {
	if err := key.Validate(); err != nil {
		return nil, err
	}
	q := `SELECT ` + inboxCols + ` FROM inbox WHERE tkey = ? AND state = 'pending' ORDER BY id`
	args := []any{key.String()}
	if limit > 0 {
		q += ` LIMIT ?`
		args = append(args, limit)
	}
	return s.listInbox(ctx, key, q, args...)
}

// Inbox lists a thread's messages in the given states (every state when none), in the order
// received. Tests use it (storetest.Inspector).
func (s *DB) Inbox(ctx context.Context, key store.ThreadKey, states ...store.InboxState) ([]store.InboxMessage, error) {
	if err := key.Validate(); err != nil {
		return nil, err
	}
	q := `SELECT ` + inboxCols + ` FROM inbox WHERE tkey = ?`
	args := []any{key.String()}
	if len(states) > 0 {
		q += ` AND state IN (?` + strings.Repeat(`, ?`, len(states)-1) + `)`
		for _, st := range states {
			args = append(args, string(st))
		}
	}
	return s.listInbox(ctx, key, q+` ORDER BY id`, args...)
}

func (s *DB) listInbox(ctx context.Context, key store.ThreadKey, q string, args ...any) ([]store.InboxMessage, error) {
	rows, err := s.query(ctx, s.db, q, args...)
	if err != nil {
		return nil, fmt.Errorf("list inbox of %s: %w", key, err)
	}
	defer rows.Close()
	var out []store.InboxMessage
	for rows.Next() {
		m, err := scanInbox(rows)
		if err != nil {
			return nil, fmt.Errorf("list inbox of %s: %w", key, err)
		}
		out = append(out, m)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("list inbox of %s: %w", key, err)
	}
	return out, nil
}

// takeMessages gives the pending messages ids of key to run id inside tx (StartRun).
func (s *DB) takeMessages(ctx context.Context, tx *sql.Tx, key store.ThreadKey, run int64, ids []int64) error {
	ids = slices.Compact(slices.Sorted(slices.Values(ids)))
	if len(ids) == 0 {
		return nil
	}
	args := []any{run, s.now(), key.String()}
	for _, id := range ids {
		args = append(args, id)
	}
	res, err := s.exec(ctx, tx, `UPDATE inbox SET state = 'taken', run_id = ?, updated = ?
		WHERE tkey = ? AND state = 'pending' AND id IN (?`+strings.Repeat(`, ?`, len(ids)-1)+`)`, args...)
	if err != nil {
		return fmt.Errorf("take messages of %s: %w", key, err)
	}
	n, err := res.RowsAffected()
	if err != nil {
		return fmt.Errorf("take messages of %s: %w", key, err)
	}
	if int(n) != len(ids) {
		return fmt.Errorf("take messages of %s: %w: %d of the %d messages are not pending there", key, store.ErrConflict, len(ids)-int(n), len(ids))
	}
	return nil
}

// ReleaseIdle implements store.Store.
func (s *DB) ReleaseIdle(ctx context.Context, key store.ThreadKey, owner string) (bool, error) {
	defer s.lockWrite()()
	if err := key.Validate(); err != nil {
		return false, err
	}
	res, err := s.exec(ctx, s.db, `DELETE FROM leases WHERE tkey = ? AND owner = ?
		AND NOT EXISTS (SELECT 1 FROM inbox WHERE tkey = ? AND state = 'pending')`, key.String(), owner, key.String())
	if err != nil {
		return false, fmt.Errorf("release idle lease on %s: %w", key, err)
	}
	if n, err := res.RowsAffected(); err != nil {
		return false, fmt.Errorf("release idle lease on %s: %w", key, err)
	} else if n == 1 {
		return true, nil
	}
	held := &store.LeaseHeldError{Key: key}
	var exp int64
	err = s.row(ctx, s.db, `SELECT owner, expires FROM leases WHERE tkey = ?`, key.String()).Scan(&held.Owner, &exp)
	switch {
	case isNoRows(err):
		return true, nil // nobody's lease: nothing to release
	case err != nil:
		return false, fmt.Errorf("read lease on %s: %w", key, err)
	case held.Owner != owner:
		held.Expires = tm(exp)
		return false, held
	}
	return false, nil // messages wait: the owner goes on
}

// RenewLeases implements store.Store.
func (s *DB) RenewLeases(ctx context.Context, owner string, ttl time.Duration) (int, error) {
	if owner == "" || ttl <= 0 {
		return 0, fmt.Errorf("renew leases: %w: need an owner and a positive ttl", store.ErrInvalid)
	}
	var n int64
	err := s.inTx(ctx, func(tx *sql.Tx) error {
		now := s.now()
		exp := now + ttl.Milliseconds()
		if _, err := s.exec(ctx, tx, `INSERT INTO owners (owner, expires) VALUES (?, ?)
			ON CONFLICT (owner) DO UPDATE SET expires = excluded.expires`, owner, exp); err != nil {
			return fmt.Errorf("record the heartbeat of %q: %w", owner, err)
		}
		res, err := s.exec(ctx, tx, `UPDATE leases SET expires = ? WHERE owner = ? AND expires > ?`, exp, owner, now)
		if err != nil {
			return fmt.Errorf("renew leases of %q: %w", owner, err)
		}
		if n, err = res.RowsAffected(); err != nil {
			return fmt.Errorf("renew leases of %q: %w", owner, err)
		}
		if _, err := s.exec(ctx, tx, `UPDATE outbox SET claim_expires = ?
			WHERE claim_owner = ? AND claim_expires > ? AND state = 'pending'`, exp, owner, now); err != nil {
			return fmt.Errorf("renew outbox claims of %q: %w", owner, err)
		}
		return nil
	})
	return int(n), err
}

// deadPin is the condition that col, the pin of a row created at createdCol, names an owner other
// than the caller that is presumed dead: it has no live heartbeat (RenewLeases), and either had one
// that lapsed or the row waited at least a lease's length (an owner that has just started may not
// have beaten yet). Its arguments are the caller, now and now minus the lease's length.
func deadPin(col, createdCol string) string {
	return `(` + col + ` <> '' AND ` + col + ` <> ? AND NOT EXISTS (SELECT 1 FROM owners w WHERE w.owner = ` + col +
		` AND w.expires > ?) AND (EXISTS (SELECT 1 FROM owners w WHERE w.owner = ` + col + `) OR ` + createdCol + ` <= ?))`
}

// adopt pins to owner the waiting messages and replies of a thread it holds that were pinned to an
// owner presumed dead, and returns the messages' ids: a thread living in one process's memory (the
// web chat's) goes on in the memory of the process that took it over.
func (s *DB) adopt(ctx context.Context, tx *sql.Tx, key store.ThreadKey, owner string, now, grace int64) ([]int64, error) {
	rows, err := s.query(ctx, tx, `UPDATE inbox SET pin = ?, updated = ?
		WHERE tkey = ? AND state = 'pending' AND `+deadPin("pin", "created")+` RETURNING id`,
		owner, now, key.String(), owner, now, grace)
	if err != nil {
		return nil, fmt.Errorf("adopt the waiting messages of %s: %w", key, err)
	}
	var ids []int64
	for rows.Next() {
		var id int64
		if err := rows.Scan(&id); err != nil {
			rows.Close()
			return nil, fmt.Errorf("adopt the waiting messages of %s: %w", key, err)
		}
		ids = append(ids, id)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("adopt the waiting messages of %s: %w", key, err)
	}
	slices.Sort(ids)
	if err := s.adoptReplies(ctx, tx, key, owner, now, grace); err != nil {
		return nil, err
	}
	return ids, nil
}

// adoptReplies pins to owner a thread's waiting replies pinned to an owner presumed dead.
func (s *DB) adoptReplies(ctx context.Context, tx *sql.Tx, key store.ThreadKey, owner string, now, grace int64) error {
	if _, err := s.exec(ctx, tx, `UPDATE outbox SET pin = ?, updated = ?
		WHERE tkey = ? AND state = 'pending' AND `+deadPin("pin", "created"),
		owner, now, key.String(), owner, now, grace); err != nil {
		return fmt.Errorf("adopt the waiting replies of %s: %w", key, err)
	}
	return nil
}
