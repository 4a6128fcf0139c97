package sqlcore

import (
	"context"
	"database/sql"
	"fmt"
	"strings"

	"github.com/excalibot/excalibot/store"
)

// maxOutboxBody bounds one outbox row: a reply with its picture, the .excalidraw file and an
// export, each far below this.
const maxOutboxBody = 64 << 20

const outboxCols = `id, tkey, kind, body, run_id, pin, state, posted, attempts, due, last_error, created, updated`

func scanOutbox(sc interface{ Scan(...any) error }) (store.OutboxItem, error) {
	var o store.OutboxItem
	var tkey, state, posted string
	var due, created, updated int64
	if err := sc.Scan(&o.ID, &tkey, &o.Kind, &o.Body, &o.Run, &o.Pin, &state, &posted, &o.Attempts, &due,
		&o.Error, &created, &updated); err != nil {
		return o, err
	}
	key, err := store.ParseThreadKey(tkey)
	if err != nil {
		return o, fmt.Errorf("outbox row %d: stored %w", o.ID, err)
	}
	o.Key, o.State, o.Due, o.Created, o.Updated = key, store.OutboxState(state), tm(due), tm(created), tm(updated)
	if posted != "" {
		o.Posted = strings.Split(posted, "\n")
	}
	return o, nil
}

// checkOutgoing rejects items that cannot be queued for thread key ("" key: any thread).
func (s *DB) checkOutgoing(key store.ThreadKey, items []store.Outgoing) error {
	for i, it := range items {
		if err := it.Key.Validate(); err != nil {
			return fmt.Errorf("outbox item %d: %w", i+1, err)
		}
		if key != (store.ThreadKey{}) && it.Key != key {
			return fmt.Errorf("%w: outbox item %d is for %s, not %s", store.ErrInvalid, i+1, it.Key, key)
		}
		if it.Kind == "" || len(it.Body) == 0 {
			return fmt.Errorf("%w: outbox item %d needs a kind and a body", store.ErrInvalid, i+1)
		}
		if err := store.CheckSize("reply", it.Body, maxOutboxBody); err != nil {
			return fmt.Errorf("outbox item %d: %w", i+1, err)
		}
	}
	return nil
}

// insertOutgoing queues checked items inside tx, for run (0: none), claimed by owner until exp
// when owner is set, and returns their ids.
func (s *DB) insertOutgoing(ctx context.Context, tx *sql.Tx, items []store.Outgoing, run int64, owner string, exp int64) ([]int64, error) {
	touched := map[store.ThreadKey]bool{}
	var ids []int64
	for _, it := range items {
		if !touched[it.Key] {
			if err := s.touchThread(ctx, tx, it.Key); err != nil {
				return nil, err
			}
			touched[it.Key] = true
		}
		now := s.now()
		var id int64
		err := s.row(ctx, tx, `INSERT INTO outbox (tkey, platform, kind, body, run_id, pin, state, due, claim_owner, claim_expires, created, updated)
			VALUES (?, ?, ?, ?, ?, ?, 'pending', ?, ?, ?, ?, ?) RETURNING id`,
			it.Key.String(), it.Key.Platform, it.Kind, it.Body, run, it.Pin, now, owner, exp, now, now).Scan(&id)
		if err != nil {
			return nil, fmt.Errorf("queue a reply in %s: %w", it.Key, err)
		}
		ids = append(ids, id)
	}
	return ids, nil
}

// Enqueue implements store.Store.
func (s *DB) Enqueue(ctx context.Context, items ...store.Outgoing) ([]int64, error) {
	if len(items) == 0 {
		return nil, nil
	}
	if err := s.checkOutgoing(store.ThreadKey{}, items); err != nil {
		return nil, fmt.Errorf("enqueue: %w", err)
	}
	var ids []int64
	err := s.inTx(ctx, func(tx *sql.Tx) error {
		var err error
		ids, err = s.insertOutgoing(ctx, tx, items, 0, "", 0)
		return err
	})
	return ids, err
}

// ClaimOutbox implements store.Store.
func (s *DB) ClaimOutbox(ctx context.Context, req store.ClaimOutboxRequest) ([]store.OutboxItem, error) {
	if err := checkClaim(req.Owner, req.TTL, req.Limit); err != nil {
		return nil, fmt.Errorf("claim outbox: %w", err)
	}
	plat, pargs, ok := platformIn("o.platform", req.Platforms)
	if !ok {
		return nil, nil
	}
	// Each thread's first pending row, when it may be posted now.
	q := `SELECT ` + prefixed("o.", outboxCols) + ` FROM outbox o
		WHERE o.state = 'pending'` + plat + ` AND o.due <= ? AND (o.claim_expires <= ? OR o.claim_owner = ?) AND (o.pin IN ('', ?) OR (` + deadPin("o.pin", "o.created") + ` AND NOT EXISTS (SELECT 1 FROM inbox i
			WHERE i.tkey = o.tkey AND i.pin = o.pin AND i.state IN ('pending', 'taken'))))
		AND NOT EXISTS (SELECT 1 FROM outbox p WHERE p.tkey = o.tkey AND p.state = 'pending' AND p.id < o.id)
		ORDER BY o.id LIMIT ?`
	if s.d.SkipLocked {
		q += ` FOR UPDATE OF o SKIP LOCKED`
	}
	var out []store.OutboxItem
	err := s.inTx(ctx, func(tx *sql.Tx) error {
		out = nil
		now := s.now()
		grace := now - req.TTL.Milliseconds()
		heads, err := s.collectOutbox(ctx, tx, q, append(pargs, now, now, req.Owner, req.Owner, req.Owner, now, grace, req.Limit)...)
		if err != nil {
			return fmt.Errorf("claim outbox: %w", err)
		}
		exp := now + req.TTL.Milliseconds()
		for _, h := range heads {
			// Pinned to an owner presumed dead (the query says so) that left no message to
			// answer on the thread: a thread with such messages is adopted whole by ClaimThreads,
			// so its replies and its answers go to the same process's memory.
			if h.Pin != "" && h.Pin != req.Owner {
				if err := s.adoptReplies(ctx, tx, h.Key, req.Owner, now, grace); err != nil {
					return fmt.Errorf("claim outbox: %w", err)
				}
				h.Pin = req.Owner
			}
			// The rows behind the head follow it while they are due and free; the first that is
			// not stops the thread there. Nobody else claims them: they are not first.
			rest, err := s.collectOutbox(ctx, tx, `SELECT `+outboxCols+` FROM outbox
				WHERE tkey = ? AND state = 'pending' AND id > ? ORDER BY id`, h.Key.String(), h.ID)
			if err != nil {
				return fmt.Errorf("claim outbox: %w", err)
			}
			take := []store.OutboxItem{h}
			for _, r := range rest {
				if ms(r.Due) > now || (r.Pin != "" && r.Pin != req.Owner) || s.claimedElsewhere(ctx, tx, r.ID, req.Owner, now) {
					break
				}
				take = append(take, r)
			}
			for _, r := range take {
				// A row the owner holds for at least half the ttl more keeps its claim as it is
				// (no write); any other gets a fresh one, so no claim lapses while it is posted.
				if _, err := s.exec(ctx, tx, `UPDATE outbox SET claim_owner = ?, claim_expires = ?
					WHERE id = ? AND NOT (claim_owner = ? AND claim_expires > ?)`,
					req.Owner, exp, r.ID, req.Owner, now+req.TTL.Milliseconds()/2); err != nil {
					return fmt.Errorf("claim outbox row %d: %w", r.ID, err)
				}
			}
			out = append(out, take...)
		}
		return nil
	})
	return out, err
}

// claimedElsewhere reports whether row id is claimed, live, by another owner.
func (s *DB) claimedElsewhere(ctx context.Context, tx *sql.Tx, id int64, owner string, now int64) bool {
	var by string
	var exp int64
	if err := s.row(ctx, tx, `SELECT claim_owner, claim_expires FROM outbox WHERE id = ?`, id).Scan(&by, &exp); err != nil {
		return true
	}
	return exp > now && by != owner
}

func prefixed(p, cols string) string {
	parts := strings.Split(cols, ", ")
	for i := range parts {
		parts[i] = p + parts[i]
	}
	return strings.Join(parts, ", ")
}

func (s *DB) collectOutbox(ctx context.Context, e execer, q string, args ...any) ([]store.OutboxItem, error) {
	rows, err := s.query(ctx, e, q, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []store.OutboxItem
	for rows.Next() {
		o, err := scanOutbox(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, o)
	}
	return out, rows.Err()
}

func checkPart(part string) error {
	if part == "" || len(part) > 256 || strings.ContainsAny(part, "\n") {
		return fmt.Errorf("%w: a posted part's id must be 1 to 256 bytes on one line, got %q", store.ErrInvalid, part)
	}
	return nil
}

// claimedRow is what a change to a claimed outbox row needs to know of it.
type claimedRow struct {
	key store.ThreadKey
	run int64
}

// claimed reads row id inside tx for a change by owner (on PostgreSQL it locks the row): ErrNotFound
// for an unknown row, ErrLeaseHeld when owner no longer holds it or it is no longer pending.
func (s *DB) claimed(ctx context.Context, tx *sql.Tx, id int64, owner string) (claimedRow, error) {
	var r claimedRow
	var tkey, state, by string
	err := s.row(ctx, tx, `SELECT tkey, run_id, state, claim_owner FROM outbox WHERE id = ?`+s.d.ForUpdate, id).
		Scan(&tkey, &r.run, &state, &by)
	if isNoRows(err) {
		return r, fmt.Errorf("outbox row %d: %w", id, store.ErrNotFound)
	}
	if err != nil {
		return r, fmt.Errorf("read outbox row %d: %w", id, err)
	}
	if r.key, err = store.ParseThreadKey(tkey); err != nil {
		return r, fmt.Errorf("outbox row %d: stored %w", id, err)
	}
	if by != owner || state != string(store.OutboxPending) {
		return r, fmt.Errorf("outbox row %d is %s and claimed by %q, not %q: %w", id, state, by, owner,
			&store.LeaseHeldError{Key: r.key, Owner: by})
	}
	return r, nil
}

// appendPart records part as posted for row id inside tx.
func (s *DB) appendPart(ctx context.Context, tx *sql.Tx, id int64, part string) error {
	if _, err := s.exec(ctx, tx, `UPDATE outbox SET posted = CASE WHEN posted = '' THEN ? ELSE posted || ? END, updated = ?
		WHERE id = ?`, part, "\n"+part, s.now(), id); err != nil {
		return fmt.Errorf("record a posted part of outbox row %d: %w", id, err)
	}
	return nil
}

// RecordPosted implements store.Store.
func (s *DB) RecordPosted(ctx context.Context, id int64, owner, part string, index ...store.MessageThread) error {
	if err := checkPart(part); err != nil {
		return fmt.Errorf("record posted part of outbox row %d: %w", id, err)
	}
	if err := checkIndex(index); err != nil {
		return fmt.Errorf("record posted part of outbox row %d: %w", id, err)
	}
	return s.inTx(ctx, func(tx *sql.Tx) error {
		if _, err := s.claimed(ctx, tx, id, owner); err != nil {
			return err
		}
		if err := s.appendPart(ctx, tx, id, part); err != nil {
			return err
		}
		return s.fileMessages(ctx, tx, index...)
	})
}

// SettleOutbox implements store.Store.
func (s *DB) SettleOutbox(ctx context.Context, st store.Settle) error {
	switch st.State {
	case store.OutboxSent, store.OutboxDead, store.OutboxPending:
	default:
		return fmt.Errorf("settle outbox row %d: %w: unknown state %q", st.ID, store.ErrInvalid, st.State)
	}
	if st.Part != "" {
		if err := checkPart(st.Part); err != nil {
			return fmt.Errorf("settle outbox row %d: %w", st.ID, err)
		}
	}
	return s.inTx(ctx, func(tx *sql.Tx) error {
		o, err := s.claimed(ctx, tx, st.ID, st.Owner)
		if err != nil {
			return err
		}
		if st.Part != "" {
			if err := s.appendPart(ctx, tx, st.ID, st.Part); err != nil {
				return err
			}
		}
		now := s.now()
		switch st.State {
		case store.OutboxPending:
			if _, err := s.exec(ctx, tx, `UPDATE outbox SET attempts = attempts + 1, due = ?, last_error = ?,
				claim_owner = '', claim_expires = 0, updated = ? WHERE id = ?`, ms(st.Due), st.Error, now, st.ID); err != nil {
				return fmt.Errorf("reschedule outbox row %d: %w", st.ID, err)
			}
			// The rows behind it wait too; let whoever posts the thread next claim them afresh.
			if _, err := s.exec(ctx, tx, `UPDATE outbox SET claim_owner = '', claim_expires = 0
				WHERE tkey = ? AND state = 'pending' AND id > ? AND claim_owner = ?`, o.key.String(), st.ID, st.Owner); err != nil {
				return fmt.Errorf("release the rows behind outbox row %d: %w", st.ID, err)
			}
			return nil
		case store.OutboxDead:
			if _, err := s.exec(ctx, tx, `UPDATE outbox SET state = 'dead', attempts = attempts + 1, last_error = ?,
				claim_owner = '', claim_expires = 0, updated = ? WHERE id = ?`, st.Error, now, st.ID); err != nil {
				return fmt.Errorf("give up outbox row %d: %w", st.ID, err)
			}
		default:
			// The last failed attempt's error stays, for whoever reads the row later.
			if _, err := s.exec(ctx, tx, `UPDATE outbox SET state = 'sent', last_error = CASE WHEN ? = '' THEN last_error ELSE ? END,
				claim_owner = '', claim_expires = 0, updated = ? WHERE id = ?`, st.Error, st.Error, now, st.ID); err != nil {
				return fmt.Errorf("settle outbox row %d: %w", st.ID, err)
			}
		}
		if o.run == 0 {
			return nil
		}
		// The run's last reply settled: it takes the state it finished with, or failed when a
		// reply could not be posted.
		if _, err := s.exec(ctx, tx, `UPDATE runs SET
				state = CASE WHEN EXISTS (SELECT 1 FROM outbox d WHERE d.run_id = runs.id AND d.state = 'dead') THEN 'failed' ELSE outcome END,
				updated = ?
			WHERE id = ? AND state = 'replying' AND NOT EXISTS (SELECT 1 FROM outbox p WHERE p.run_id = runs.id AND p.state = 'pending')`,
			now, o.run); err != nil {
			return fmt.Errorf("end run %d after its replies: %w", o.run, err)
		}
		return nil
	})
}

// Outbox lists a thread's rows in the given states (every state when none), in id order. Tests
// use it (storetest.Inspector).
func (s *DB) Outbox(ctx context.Context, key store.ThreadKey, states ...store.OutboxState) ([]store.OutboxItem, error) {
	if err := key.Validate(); err != nil {
		return nil, err
	}
	q := `SELECT ` + outboxCols + ` FROM outbox WHERE tkey = ?`
	args := []any{key.String()}
	if len(states) > 0 {
		q += ` AND state IN (?` + strings.Repeat(`, ?`, len(states)-1) + `)`
		for _, st := range states {
			args = append(args, string(st))
		}
	}
	out, err := s.collectOutbox(ctx, s.db, q+` ORDER BY id`, args...)
	if err != nil {
		return nil, fmt.Errorf("list outbox of %s: %w", key, err)
	}
	return out, nil
}
