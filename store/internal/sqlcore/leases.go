package sqlcore

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/excalibot/excalibot/store"
)

// errSeen rolls back ClaimEvents when one of its ids was claimed before.
var errSeen = errors.New("event seen before")

// ClaimEvents claims, in one transaction, the ids one incoming message is known by, as Accept
// does: true when none was seen within Options.EventTTL, and then all are recorded; false when any
// was, and then none is. Tests use it (storetest.Inspector); the program claims ids with Accept.
func (s *DB) ClaimEvents(ctx context.Context, eventIDs ...string) (bool, error) {
	if len(eventIDs) == 0 {
		return false, fmt.Errorf("claim events: %w: no id", store.ErrInvalid)
	}
	for _, id := range eventIDs {
		if err := checkEventID(id); err != nil {
			return false, err
		}
	}
	// One order for every caller: two transactions claiming overlapping ids on PostgreSQL then
	// wait for each other instead of deadlocking.
	ids := slices.Compact(slices.Sorted(slices.Values(eventIDs)))
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
		return nil
	})
	if errors.Is(err, errSeen) {
		return false, nil
	}
	return err == nil, err
}

// SeenEvents reports whether a live claim of any of eventIDs exists: a delivery of a message the
// store has already kept (or refused). It writes nothing.
func (s *DB) SeenEvents(ctx context.Context, eventIDs ...string) (bool, error) {
	now := s.now()
	for _, id := range eventIDs {
		var one int
		err := s.row(ctx, s.db, `SELECT 1 FROM events WHERE id = ? AND expires > ?`, id, now).Scan(&one)
		if isNoRows(err) {
			continue
		}
		if err != nil {
			return false, fmt.Errorf("look up event %q: %w", id, err)
		}
		return true, nil
	}
	return false, nil
}

func checkEventID(id string) error {
	if id == "" || len(id) > 512 {
		return fmt.Errorf("claim event: %w: id must be 1 to 512 bytes, got %d", store.ErrInvalid, len(id))
	}
	return nil
}

// claimEvent records eventID unless a live claim of it exists, and says whether it did.
func (s *DB) claimEvent(ctx context.Context, e execer, eventID string) (bool, error) {
	now := s.now()
	// An expired row is taken over as if it were absent; a live one makes the statement a no-op.
	res, err := s.exec(ctx, e, `INSERT INTO events (id, expires) VALUES (?, ?)
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

// AcquireLease gives owner the thread's lease for ttl, or renews it when owner already holds it.
// ErrLeaseHeld (as *store.LeaseHeldError) while another owner's lease has not expired. Tests use it
// (storetest.Inspector); the program takes leases with ClaimThreads and StartRun.
func (s *DB) AcquireLease(ctx context.Context, key store.ThreadKey, owner string, ttl time.Duration) (store.Lease, error) {
	defer s.lockWrite()()
	if err := checkLease(key, owner, ttl); err != nil {
		return store.Lease{}, err
	}
	return s.acquireLease(ctx, s.db, key, owner, ttl)
}

func checkLease(key store.ThreadKey, owner string, ttl time.Duration) error {
	if err := key.Validate(); err != nil {
		return err
	}
	if owner == "" || ttl <= 0 {
		return fmt.Errorf("lease %s: %w: need an owner and a positive ttl", key, store.ErrInvalid)
	}
	return nil
}

// acquireLease takes or renews owner's lease, alone or inside a transaction (StartRun).
func (s *DB) acquireLease(ctx context.Context, e execer, key store.ThreadKey, owner string, ttl time.Duration) (store.Lease, error) {
	now := s.now()
	exp := now + ttl.Milliseconds()
	var gen int64
	err := s.row(ctx, e, `INSERT INTO leases (tkey, owner, expires, generation) VALUES (?, ?, ?, 1)
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
	err = s.row(ctx, e, `SELECT owner, expires FROM leases WHERE tkey = ?`, key.String()).Scan(&held.Owner, &hexp)
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

// ReleaseOwner ends every lease of owner, as if its process had died long ago. Tests use it
// (storetest.Inspector): each process has an owner name of its own, so it has no predecessor to
// release.
func (s *DB) ReleaseOwner(ctx context.Context, owner string) (int, error) {
	defer s.lockWrite()()
	res, err := s.exec(ctx, s.db, `DELETE FROM leases WHERE owner = ?`, owner)
	if err != nil {
		return 0, fmt.Errorf("release leases of %q: %w", owner, err)
	}
	n, err := res.RowsAffected()
	return int(n), err
}
