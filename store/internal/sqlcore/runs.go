package sqlcore

import (
	"cmp"
	"context"
	"database/sql"
	"fmt"
	"slices"
	"strings"

	"github.com/excalibot/excalibot/store"
)

const runCols = `id, tkey, owner, state, detail, sign, created, updated`

func scanRun(sc interface{ Scan(...any) error }) (store.Run, error) {
	var r store.Run
	var tkey, state string
	var created, updated int64
	if err := sc.Scan(&r.ID, &tkey, &r.Owner, &state, &r.Detail, &r.Sign, &created, &updated); err != nil {
		return r, err
	}
	key, err := store.ParseThreadKey(tkey)
	if err != nil {
		return r, fmt.Errorf("run %d: stored %w", r.ID, err)
	}
	r.Key, r.State, r.Created, r.Updated = key, store.RunState(state), tm(created), tm(updated)
	return r, nil
}

// CreateRun records a queued run of the thread by owner. Tests use it (storetest.Inspector); the
// program's runs start at once (StartRun).
func (s *DB) CreateRun(ctx context.Context, key store.ThreadKey, owner, detail string) (store.Run, error) {
	defer s.lockWrite()()
	if err := checkRun(key, owner); err != nil {
		return store.Run{}, err
	}
	return s.insertRun(ctx, s.db, key, owner, store.RunQueued, detail)
}

func checkRun(key store.ThreadKey, owner string) error {
	if err := key.Validate(); err != nil {
		return err
	}
	if owner == "" {
		return fmt.Errorf("create run on %s: %w: no owner", key, store.ErrInvalid)
	}
	return nil
}

func (s *DB) insertRun(ctx context.Context, e execer, key store.ThreadKey, owner string, state store.RunState, detail string) (store.Run, error) {
	now := s.now()
	r, err := scanRun(s.row(ctx, e, `INSERT INTO runs (tkey, owner, state, detail, created, updated)
		VALUES (?, ?, ?, ?, ?, ?) RETURNING `+runCols, key.String(), owner, string(state), detail, now, now))
	if err != nil {
		return r, fmt.Errorf("create run on %s: %w", key, err)
	}
	return r, nil
}

// StartRun implements store.Store.
func (s *DB) StartRun(ctx context.Context, req store.StartRunRequest) (store.Run, error) {
	if err := checkRun(req.Key, req.Owner); err != nil {
		return store.Run{}, err
	}
	var out store.Run
	err := s.inTx(ctx, func(tx *sql.Tx) error {
		if req.Lease > 0 {
			if _, err := s.acquireLease(ctx, tx, req.Key, req.Owner, req.Lease); err != nil {
				return err
			}
		}
		var err error
		out, err = s.insertRun(ctx, tx, req.Key, req.Owner, store.RunRunning, req.Detail)
		if err != nil {
			return err
		}
		return s.takeMessages(ctx, tx, req.Key, out.ID, req.Inbox)
	})
	return out, err
}

// FinishRun implements store.Store.
func (s *DB) FinishRun(ctx context.Context, req store.FinishRunRequest) (store.Run, *store.Thread, error) {
	if !req.State.Final() {
		return store.Run{}, nil, fmt.Errorf("finish run %d: %w: %q is not a final state", req.ID, store.ErrInvalid, req.State)
	}
	if req.Save != nil {
		if err := s.checkSave(*req.Save); err != nil {
			return store.Run{}, nil, fmt.Errorf("finish run %d: %w", req.ID, err)
		}
	}
	if err := s.checkOutgoing(store.ThreadKey{}, req.Replies); err != nil {
		return store.Run{}, nil, fmt.Errorf("finish run %d: %w", req.ID, err)
	}
	var run store.Run
	var th *store.Thread
	err := s.inTx(ctx, func(tx *sql.Tx) error {
		// The run moves first, so a failing save below must take that move back with it. A run
		// with replies waits for them in state replying and ends as req.State once they are sent.
		state := req.State
		if len(req.Replies) > 0 {
			state = store.RunReplying
		}
		r, err := s.setRunState(ctx, tx, req.ID, state, req.Detail)
		if err != nil {
			return err
		}
		if req.Save != nil {
			if req.Save.Key != r.Key {
				return fmt.Errorf("finish run %d of %s: %w: its revision is for %s", req.ID, r.Key, store.ErrInvalid, req.Save.Key)
			}
			t, err := s.saveTx(ctx, tx, *req.Save)
			if err != nil {
				return err
			}
			th = &t
		}
		if len(req.Replies) > 0 {
			if err := s.checkOutgoing(r.Key, req.Replies); err != nil {
				return fmt.Errorf("finish run %d: %w", req.ID, err)
			}
			if _, err := s.exec(ctx, tx, `UPDATE runs SET outcome = ? WHERE id = ?`, string(req.State), req.ID); err != nil {
				return fmt.Errorf("finish run %d: %w", req.ID, err)
			}
			owner, exp := "", int64(0)
			if req.Claim > 0 {
				owner, exp = r.Owner, s.now()+req.Claim.Milliseconds()
			}
			if _, err := s.insertOutgoing(ctx, tx, req.Replies, req.ID, owner, exp); err != nil {
				return err
			}
		}
		msgState := store.InboxDone
		if req.State == store.RunInterrupted {
			msgState = store.InboxInterrupted
		}
		if _, err := s.exec(ctx, tx, `UPDATE inbox SET state = ?, updated = ? WHERE run_id = ? AND state = 'taken'`,
			string(msgState), s.now(), req.ID); err != nil {
			return fmt.Errorf("finish the messages of run %d: %w", req.ID, err)
		}
		run = r
		return nil
	})
	if err != nil {
		return store.Run{}, nil, err
	}
	return run, th, nil
}

// allowed says which states a run may move to from each state. Staying in a non-final state is
// allowed so the bot can update the detail.
var allowed = map[store.RunState][]store.RunState{
	store.RunQueued:   {store.RunQueued, store.RunRunning, store.RunReplying, store.RunDone, store.RunFailed, store.RunInterrupted},
	store.RunRunning:  {store.RunRunning, store.RunReplying, store.RunDone, store.RunFailed, store.RunInterrupted},
	store.RunReplying: {store.RunDone, store.RunFailed, store.RunInterrupted},
}

func canMove(from, to store.RunState) bool {
	for _, s := range allowed[from] {
		if s == to {
			return true
		}
	}
	return false
}

// SetRunState moves a run to a new state. ErrNotFound for an unknown run, ErrBadTransition when
// the run already finished (done, failed, interrupted) or the move goes backwards. Tests use it
// (storetest.Inspector); the program ends runs with FinishRun.
func (s *DB) SetRunState(ctx context.Context, id int64, state store.RunState, detail string) (store.Run, error) {
	var out store.Run
	err := s.inTx(ctx, func(tx *sql.Tx) error {
		var err error
		out, err = s.setRunState(ctx, tx, id, state, detail)
		return err
	})
	return out, err
}

// setRunState moves run id inside tx (SetRunState, FinishRun).
func (s *DB) setRunState(ctx context.Context, tx *sql.Tx, id int64, state store.RunState, detail string) (store.Run, error) {
	if !state.Valid() {
		return store.Run{}, fmt.Errorf("set run %d: %w: unknown state %q", id, store.ErrInvalid, state)
	}
	r, err := scanRun(s.row(ctx, tx, `SELECT `+runCols+` FROM runs WHERE id = ?`+s.d.ForUpdate, id))
	if isNoRows(err) {
		return r, fmt.Errorf("run %d: %w", id, store.ErrNotFound)
	}
	if err != nil {
		return r, fmt.Errorf("read run %d: %w", id, err)
	}
	if !canMove(r.State, state) {
		return r, fmt.Errorf("run %d: %w: %s to %s", id, store.ErrBadTransition, r.State, state)
	}
	now := s.now()
	if _, err := s.exec(ctx, tx, `UPDATE runs SET state = ?, detail = ?, updated = ? WHERE id = ?`,
		string(state), detail, now, id); err != nil {
		return r, fmt.Errorf("update run %d: %w", id, err)
	}
	r.State, r.Detail, r.Updated = state, detail, tm(now)
	return r, nil
}

// SetRunSign implements store.Store.
func (s *DB) SetRunSign(ctx context.Context, id int64, sign string) error {
	defer s.lockWrite()()
	res, err := s.exec(ctx, s.db, `UPDATE runs SET sign = ? WHERE id = ?`, sign, id)
	if err != nil {
		return fmt.Errorf("set sign of run %d: %w", id, err)
	}
	if n, err := res.RowsAffected(); err != nil {
		return fmt.Errorf("set sign of run %d: %w", id, err)
	} else if n == 0 {
		return fmt.Errorf("set sign of run %d: %w", id, store.ErrNotFound)
	}
	return nil
}

// RecoverRuns implements store.Store.
func (s *DB) RecoverRuns(ctx context.Context, req store.RecoverRequest) ([]store.Cut, error) {
	var out []store.Cut
	err := s.inTx(ctx, func(tx *sql.Tx) error {
		if req.SoleOwner != "" {
			if _, err := s.exec(ctx, tx, `DELETE FROM leases WHERE owner <> ?`, req.SoleOwner); err != nil {
				return fmt.Errorf("end the leases of other owners: %w", err)
			}
			if _, err := s.exec(ctx, tx, `UPDATE outbox SET claim_owner = '', claim_expires = 0
				WHERE state = 'pending' AND claim_owner <> '' AND claim_owner <> ?`, req.SoleOwner); err != nil {
				return fmt.Errorf("end the outbox claims of other owners: %w", err)
			}
			// Their pins too: what a previous process left pinned to itself is taken over at once,
			// whether or not it lived long enough to beat.
			for _, q := range []string{
				`UPDATE owners SET expires = 0 WHERE owner <> ?`,
				`INSERT INTO owners (owner, expires) SELECT DISTINCT pin, 0 FROM inbox
					WHERE state = 'pending' AND pin <> '' AND pin <> ? ON CONFLICT (owner) DO NOTHING`,
				`INSERT INTO owners (owner, expires) SELECT DISTINCT pin, 0 FROM outbox
					WHERE state = 'pending' AND pin <> '' AND pin <> ? ON CONFLICT (owner) DO NOTHING`,
			} {
				if _, err := s.exec(ctx, tx, q, req.SoleOwner); err != nil {
					return fmt.Errorf("end the heartbeats of other owners: %w", err)
				}
			}
		}
		var err error
		out, err = s.interruptRuns(ctx, tx, `NOT EXISTS (SELECT 1 FROM leases l
			WHERE l.tkey = runs.tkey AND l.owner = runs.owner AND l.expires > ?)`, []any{s.now()}, req.Recovery)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("recover runs: %w", err)
	}
	return out, nil
}

// Runs lists runs in the given states (all states when none), oldest first. Tests use it
// (storetest.Inspector).
func (s *DB) Runs(ctx context.Context, states ...store.RunState) ([]store.Run, error) {
	q := `SELECT ` + runCols + ` FROM runs`
	var args []any
	if len(states) > 0 {
		q += ` WHERE state IN (?` + strings.Repeat(`, ?`, len(states)-1) + `)`
		for _, st := range states {
			args = append(args, string(st))
		}
	}
	rows, err := s.query(ctx, s.db, q+` ORDER BY id`, args...)
	if err != nil {
		return nil, fmt.Errorf("list runs: %w", err)
	}
	out, err := collectRuns(rows)
	if err != nil {
		return nil, fmt.Errorf("list runs: %w", err)
	}
	return out, nil
}

func collectRuns(rows *sql.Rows) ([]store.Run, error) {
	defer rows.Close()
	var out []store.Run
	for rows.Next() {
		r, err := scanRun(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, r)
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	// UPDATE … RETURNING gives rows in no promised order.
	slices.SortFunc(out, func(a, b store.Run) int { return cmp.Compare(a.ID, b.ID) })
	return out, nil
}
