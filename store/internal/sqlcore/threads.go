package sqlcore

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"

	"github.com/excalibot/excalibot/store"
)

const threadCols = `id, rev, head, memory, settings, created, updated`

// threadRow is a thread as read before a change.
type threadRow struct {
	id int64
	th store.Thread
}

func scanThread(sc interface{ Scan(...any) error }, key store.ThreadKey, extra ...any) (threadRow, error) {
	var r threadRow
	var settings string
	var created, updated int64
	dest := append([]any{&r.id, &r.th.Rev, &r.th.Head, &r.th.Memory, &settings, &created, &updated}, extra...)
	if err := sc.Scan(dest...); err != nil {
		return r, err
	}
	if err := json.Unmarshal([]byte(settings), &r.th.Settings); err != nil {
		return r, fmt.Errorf("decode settings of thread %s: %w", key, err)
	}
	r.th.Key, r.th.Created, r.th.Updated = key, tm(created), tm(updated)
	return r, nil
}

// lockThread reads a thread for a change; on PostgreSQL it also locks the row until the end of tx.
func (s *DB) lockThread(ctx context.Context, tx *sql.Tx, key store.ThreadKey) (threadRow, error) {
	r, err := scanThread(s.row(ctx, tx, `SELECT `+threadCols+` FROM threads WHERE tkey = ?`+s.d.ForUpdate, key.String()), key)
	if isNoRows(err) {
		return r, notFound("thread", key)
	}
	if err != nil {
		return r, fmt.Errorf("read thread %s: %w", key, err)
	}
	return r, nil
}

// Load implements store.Store.
func (s *DB) Load(ctx context.Context, key store.ThreadKey) (*store.Thread, error) {
	if err := key.Validate(); err != nil {
		return nil, err
	}
	var scene []byte
	r, err := scanThread(s.row(ctx, s.db, `SELECT t.id, t.rev, t.head, t.memory, t.settings, t.created, t.updated, r.scene
		FROM threads t LEFT JOIN revisions r ON r.thread_id = t.id AND r.rev = t.rev
		WHERE t.tkey = ?`, key.String()), key, &scene)
	if isNoRows(err) {
		return nil, notFound("thread", key)
	}
	if err != nil {
		return nil, fmt.Errorf("load thread %s: %w", key, err)
	}
	r.th.Scene = scene
	return &r.th, nil
}

// Exists implements store.Store.
func (s *DB) Exists(ctx context.Context, key store.ThreadKey) (bool, error) {
	if err := key.Validate(); err != nil {
		return false, err
	}
	var one int
	err := s.row(ctx, s.db, `SELECT 1 FROM threads WHERE tkey = ?`, key.String()).Scan(&one)
	if isNoRows(err) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("look up thread %s: %w", key, err)
	}
	return true, nil
}

// Save implements store.Store.
func (s *DB) Save(ctx context.Context, req store.SaveRequest) (*store.Thread, error) {
	if err := s.checkSave(req); err != nil {
		return nil, err
	}
	var out store.Thread
	err := s.inTx(ctx, func(tx *sql.Tx) error {
		var err error
		out, err = s.saveTx(ctx, tx, req)
		return err
	})
	if err != nil {
		return nil, err
	}
	return &out, nil
}

// checkSave rejects a request Save would refuse whatever the database holds.
func (s *DB) checkSave(req store.SaveRequest) error {
	if err := req.Key.Validate(); err != nil {
		return err
	}
	if len(req.Scene) == 0 {
		return fmt.Errorf("save thread %s: %w: empty scene", req.Key, store.ErrInvalid)
	}
	if req.Author == "" {
		return fmt.Errorf("save thread %s: %w: revision has no author", req.Key, store.ErrInvalid)
	}
	if err := store.CheckSize("scene", req.Scene, s.opt.MaxSceneBytes); err != nil {
		return fmt.Errorf("save thread %s: %w", req.Key, err)
	}
	if err := store.CheckSize("memory", req.Memory, s.opt.MaxSceneBytes); err != nil {
		return fmt.Errorf("save thread %s: %w", req.Key, err)
	}
	return nil
}

// saveTx makes the revision of a checked request inside tx (Save, FinishRun).
func (s *DB) saveTx(ctx context.Context, tx *sql.Tx, req store.SaveRequest) (store.Thread, error) {
	now := s.now()
	if req.Base == 0 {
		// A concurrent creator makes this a no-op; the revision check below then decides.
		if _, err := s.exec(ctx, tx, `INSERT INTO threads (tkey, created, updated) VALUES (?, ?, ?)
			ON CONFLICT (tkey) DO NOTHING`, req.Key.String(), now, now); err != nil {
			return store.Thread{}, fmt.Errorf("create thread %s: %w", req.Key, err)
		}
	}
	r, err := s.lockThread(ctx, tx, req.Key)
	if err != nil {
		return store.Thread{}, err
	}
	if r.th.Rev != req.Base {
		return store.Thread{}, &store.ConflictError{Key: req.Key, Base: req.Base, Now: r.th.Rev}
	}
	rev := r.th.Head + 1
	if _, err := s.exec(ctx, tx, `INSERT INTO revisions (thread_id, rev, parent, author, reason, scene, created)
		VALUES (?, ?, ?, ?, ?, ?, ?)`, r.id, rev, r.th.Rev, string(req.Author), req.Reason, req.Scene, now); err != nil {
		return store.Thread{}, fmt.Errorf("insert revision %d of %s: %w", rev, req.Key, err)
	}
	mem := r.th.Memory
	if req.Memory != nil {
		mem = req.Memory
	}
	if _, err := s.exec(ctx, tx, `UPDATE threads SET rev = ?, head = ?, memory = ?, updated = ? WHERE id = ?`,
		rev, rev, mem, now, r.id); err != nil {
		return store.Thread{}, fmt.Errorf("advance thread %s to revision %d: %w", req.Key, rev, err)
	}
	// Keep the newest HistoryLimit revisions; rev itself is always among them.
	if _, err := s.exec(ctx, tx, `DELETE FROM revisions WHERE thread_id = ? AND rev <= ?`,
		r.id, rev-int64(s.opt.HistoryLimit)); err != nil {
		return store.Thread{}, fmt.Errorf("drop old revisions of %s: %w", req.Key, err)
	}
	out := r.th
	out.Rev, out.Head, out.Memory, out.Scene, out.Updated = rev, rev, mem, req.Scene, tm(now)
	return out, nil
}

// Undo implements store.Store.
func (s *DB) Undo(ctx context.Context, key store.ThreadKey, from int64) (*store.Thread, error) {
	return s.move(ctx, key, from, true)
}

// Redo implements store.Store.
func (s *DB) Redo(ctx context.Context, key store.ThreadKey, from int64) (*store.Thread, error) {
	return s.move(ctx, key, from, false)
}

// move shifts the thread's cursor to the parent of from (undo) or to from's newest child (redo).
func (s *DB) move(ctx context.Context, key store.ThreadKey, from int64, undo bool) (*store.Thread, error) {
	if err := key.Validate(); err != nil {
		return nil, err
	}
	var out store.Thread
	err := s.inTx(ctx, func(tx *sql.Tx) error {
		r, err := s.lockThread(ctx, tx, key)
		if err != nil {
			return err
		}
		if r.th.Rev != from {
			return &store.ConflictError{Key: key, Base: from, Now: r.th.Rev}
		}
		var to int64
		var scene []byte
		if undo {
			var parent int64
			err := s.row(ctx, tx, `SELECT parent FROM revisions WHERE thread_id = ? AND rev = ?`, r.id, from).Scan(&parent)
			if isNoRows(err) || parent == 0 {
				return fmt.Errorf("undo on %s at revision %d: %w", key, from, store.ErrNothingToUndo)
			}
			if err != nil {
				return fmt.Errorf("read revision %d of %s: %w", from, key, err)
			}
			err = s.row(ctx, tx, `SELECT rev, scene FROM revisions WHERE thread_id = ? AND rev = ?`, r.id, parent).Scan(&to, &scene)
			if isNoRows(err) {
				return fmt.Errorf("undo on %s at revision %d: %w: revision %d is older than the %d kept",
					key, from, store.ErrNothingToUndo, parent, s.opt.HistoryLimit)
			}
			if err != nil {
				return fmt.Errorf("read revision %d of %s: %w", parent, key, err)
			}
		} else {
			err := s.row(ctx, tx, `SELECT rev, scene FROM revisions WHERE thread_id = ? AND parent = ?
				ORDER BY rev DESC LIMIT 1`, r.id, from).Scan(&to, &scene)
			if isNoRows(err) {
				return fmt.Errorf("redo on %s at revision %d: %w", key, from, store.ErrNothingToRedo)
			}
			if err != nil {
				return fmt.Errorf("find redo of revision %d of %s: %w", from, key, err)
			}
		}
		now := s.now()
		if _, err := s.exec(ctx, tx, `UPDATE threads SET rev = ?, updated = ? WHERE id = ?`, to, now, r.id); err != nil {
			return fmt.Errorf("move thread %s to revision %d: %w", key, to, err)
		}
		out = r.th
		out.Rev, out.Scene, out.Updated = to, scene, tm(now)
		return nil
	})
	if err != nil {
		return nil, err
	}
	return &out, nil
}

// Revision implements store.Store.
func (s *DB) Revision(ctx context.Context, key store.ThreadKey, rev int64) (*store.Revision, error) {
	if err := key.Validate(); err != nil {
		return nil, err
	}
	var out store.Revision
	var author string
	var created, cur int64
	err := s.row(ctx, s.db, `SELECT r.rev, r.parent, r.author, r.reason, r.scene, r.created, t.rev
		FROM revisions r JOIN threads t ON t.id = r.thread_id WHERE t.tkey = ? AND r.rev = ?`, key.String(), rev).
		Scan(&out.Rev, &out.Parent, &author, &out.Reason, &out.Scene, &created, &cur)
	if isNoRows(err) {
		return nil, fmt.Errorf("revision %d of thread %s: %w", rev, key, store.ErrNotFound)
	}
	if err != nil {
		return nil, fmt.Errorf("read revision %d of %s: %w", rev, key, err)
	}
	out.Author, out.Size, out.Created, out.Current = store.Author(author), len(out.Scene), tm(created), cur == out.Rev
	return &out, nil
}

// History implements store.Store.
func (s *DB) History(ctx context.Context, key store.ThreadKey, limit int) ([]store.Revision, error) {
	if err := key.Validate(); err != nil {
		return nil, err
	}
	var id, cur int64
	err := s.row(ctx, s.db, `SELECT id, rev FROM threads WHERE tkey = ?`, key.String()).Scan(&id, &cur)
	if isNoRows(err) {
		return nil, notFound("thread", key)
	}
	if err != nil {
		return nil, fmt.Errorf("read thread %s: %w", key, err)
	}
	if limit <= 0 {
		limit = s.opt.HistoryLimit
	}
	rows, err := s.query(ctx, s.db, `SELECT rev, parent, author, reason, length(scene), created FROM revisions
		WHERE thread_id = ? ORDER BY rev DESC LIMIT ?`, id, limit)
	if err != nil {
		return nil, fmt.Errorf("list revisions of %s: %w", key, err)
	}
	defer rows.Close()
	var out []store.Revision
	for rows.Next() {
		var r store.Revision
		var author string
		var created int64
		if err := rows.Scan(&r.Rev, &r.Parent, &author, &r.Reason, &r.Size, &created); err != nil {
			return nil, fmt.Errorf("scan revision of %s: %w", key, err)
		}
		r.Author, r.Created, r.Current = store.Author(author), tm(created), r.Rev == cur
		out = append(out, r)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("list revisions of %s: %w", key, err)
	}
	return out, nil
}

// SetMemory implements store.Store.
func (s *DB) SetMemory(ctx context.Context, key store.ThreadKey, memory []byte) error {
	defer s.lockWrite()()
	if err := key.Validate(); err != nil {
		return err
	}
	if err := store.CheckSize("memory", memory, s.opt.MaxSceneBytes); err != nil {
		return fmt.Errorf("set memory of %s: %w", key, err)
	}
	if memory == nil {
		memory = []byte{} // nil would mean SQL NULL; an empty memory is still a memory
	}
	now := s.now()
	_, err := s.exec(ctx, s.db, `INSERT INTO threads (tkey, memory, created, updated) VALUES (?, ?, ?, ?)
		ON CONFLICT (tkey) DO UPDATE SET memory = excluded.memory, updated = excluded.updated`,
		key.String(), memory, now, now)
	if err != nil {
		return fmt.Errorf("set memory of %s: %w", key, err)
	}
	return nil
}

// SetSettings implements store.Store.
func (s *DB) SetSettings(ctx context.Context, key store.ThreadKey, st store.Settings) error {
	defer s.lockWrite()()
	if err := key.Validate(); err != nil {
		return err
	}
	b, err := json.Marshal(st)
	if err != nil {
		return fmt.Errorf("encode settings of %s: %w", key, err)
	}
	now := s.now()
	_, err = s.exec(ctx, s.db, `INSERT INTO threads (tkey, settings, created, updated) VALUES (?, ?, ?, ?)
		ON CONFLICT (tkey) DO UPDATE SET settings = excluded.settings, updated = excluded.updated`,
		key.String(), string(b), now, now)
	if err != nil {
		return fmt.Errorf("set settings of %s: %w", key, err)
	}
	return nil
}
