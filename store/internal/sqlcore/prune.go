package sqlcore

import (
	"context"
	"database/sql"
	"fmt"
	"strings"
	"time"

	"github.com/excalibot/excalibot/store"
)

// Prune implements store.Store.
func (s *DB) Prune(ctx context.Context, before time.Time) (store.PruneStats, error) {
	var st store.PruneStats
	var owners int // not reported: an owner's row is a few bytes, kept as long as its process runs
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
	// The candidates are read (and on PostgreSQL locked) first, so a thread that gets a new revision
	// meanwhile is either pruned whole (the writer then finds it gone) or not at all.
	// A message or a reply that waits keeps its thread too.
	old := `SELECT id FROM threads WHERE updated < ?
		AND NOT EXISTS (SELECT 1 FROM leases l WHERE l.tkey = threads.tkey AND l.expires > ?)
		AND NOT EXISTS (SELECT 1 FROM inbox i WHERE i.tkey = threads.tkey AND i.state IN ('pending', 'taken'))
		AND NOT EXISTS (SELECT 1 FROM outbox o WHERE o.tkey = threads.tkey AND o.state = 'pending')` + s.d.ForUpdate
	err := s.inTx(ctx, func(tx *sql.Tx) error {
		rows, err := s.query(ctx, tx, old, cut, now)
		if err != nil {
			return fmt.Errorf("prune: find old threads: %w", err)
		}
		var ids []any
		for rows.Next() {
			var id int64
			if err := rows.Scan(&id); err != nil {
				rows.Close()
				return fmt.Errorf("prune: find old threads: %w", err)
			}
			ids = append(ids, id)
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return fmt.Errorf("prune: find old threads: %w", err)
		}
		for len(ids) > 0 {
			chunk := ids[:min(len(ids), 500)]
			ids = ids[len(chunk):]
			in := "(?" + strings.Repeat(", ?", len(chunk)-1) + ")"
			var revs, links, threads int
			for _, step := range []struct {
				n    *int
				what string
				q    string
			}{
				{&revs, "revisions", `DELETE FROM revisions WHERE thread_id IN ` + in},
				{&links, "links", `DELETE FROM links WHERE thread_id IN ` + in},
				{&threads, "threads", `DELETE FROM threads WHERE id IN ` + in},
			} {
				if err := count(tx, step.n, step.what, step.q, chunk...); err != nil {
					return err
				}
			}
			st.Revisions += revs
			st.Threads += threads
		}
		for _, step := range []struct {
			n    *int
			what string
			q    string
			arg  int64
		}{
			{&st.Runs, "runs", `DELETE FROM runs WHERE state IN ('done', 'failed', 'interrupted') AND updated < ?`, cut},
			{&st.Events, "events", `DELETE FROM events WHERE expires <= ?`, now},
			{&st.Leases, "leases", `DELETE FROM leases WHERE expires <= ?`, now},
			{&owners, "owners", `DELETE FROM owners WHERE expires < ?`, cut},
			{&st.Messages, "message threads", `DELETE FROM message_threads WHERE created < ?`, cut},
			{&st.Inbox, "inbox", `DELETE FROM inbox WHERE state IN ('done', 'interrupted', 'failed') AND updated < ?`, cut},
			{&st.Outbox, "outbox", `DELETE FROM outbox WHERE state IN ('sent', 'dead') AND updated < ?`, cut},
		} {
			if err := count(tx, step.n, step.what, step.q, step.arg); err != nil {
				return err
			}
		}
		return nil
	})
	return st, err
}
