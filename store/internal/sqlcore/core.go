// Package sqlcore is the one implementation of store.Store over database/sql, shared by store/sqlite
// and store/postgres. The two differ only in what a Dialect describes: placeholders, row locks,
// migrations and how the migration step is serialised between processes.
package sqlcore

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"path"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/excalibot/excalibot/store"
)

// Dialect is what differs between database engines.
type Dialect struct {
	Name string // "sqlite" or "postgres", for messages
	// Dollar placeholders ($1, $2 …) instead of "?".
	Dollar bool
	// ForUpdate is appended to the SELECT that reads a thread before changing it: " FOR UPDATE" on
	// PostgreSQL, where concurrent writers must queue on the row. SQLite needs nothing: its write
	// transactions start with BEGIN IMMEDIATE and so already run one at a time.
	ForUpdate string
	// SkipLocked makes the claims of threads and replies lock the rows they take and skip rows
	// another claimer has locked (FOR UPDATE … SKIP LOCKED, PostgreSQL), so replicas claiming at
	// once get different work without waiting for each other. SQLite's single writer needs none.
	SkipLocked bool
	// Migrations holds NNNN_name.sql files, applied in order.
	Migrations fs.FS
	// SerialWrites makes writers of this process queue on a mutex. SQLite allows one writer at a
	// time anyway, and waiting on a mutex is cheaper and fairer than its busy-timeout polling.
	SerialWrites bool
	// SingleProcess says that no other process can use the database at once (the SQLite store
	// locks its file), which DB.SingleProcess reports to callers.
	SingleProcess bool
	// LockMigrations, when set, runs first in the migration transaction to keep two processes
	// starting at once from migrating together.
	LockMigrations func(ctx context.Context, tx *sql.Tx) error
}

// DB implements store.Store.
type DB struct {
	db  *sql.DB
	d   Dialect
	opt store.Options
	log *slog.Logger
	wmu sync.Mutex // held by writers when d.SerialWrites
}

// New wraps an open database. Call Migrate before use.
func New(db *sql.DB, d Dialect, opt store.Options, log *slog.Logger) *DB {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &DB{db: db, d: d, opt: opt.WithDefaults(), log: log}
}

// SQL returns the underlying database, for tests and benchmarks.
func (s *DB) SQL() *sql.DB { return s.db }

// SingleProcess implements store.Store.
func (s *DB) SingleProcess() bool { return s.d.SingleProcess }

// Ping implements store.Store: a query that reads no table, so it costs the database nothing and
// still goes through a pooled connection as every other call does.
func (s *DB) Ping(ctx context.Context) error {
	var one int
	if err := s.row(ctx, s.db, "SELECT 1").Scan(&one); err != nil {
		return fmt.Errorf("ping %s store: %w", s.d.Name, err)
	}
	return nil
}

// Close closes the database.
func (s *DB) Close() error { return s.db.Close() }

// rebind turns "?" placeholders into "$n" for PostgreSQL. Queries here contain no "?" in literals.
func (s *DB) rebind(q string) string {
	if !s.d.Dollar {
		return q
	}
	var b strings.Builder
	n := 0
	for _, r := range q {
		if r == '?' {
			n++
			b.WriteString("$" + strconv.Itoa(n))
			continue
		}
		b.WriteRune(r)
	}
	return b.String()
}

type execer interface {
	ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error)
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
}

func (s *DB) exec(ctx context.Context, e execer, q string, args ...any) (sql.Result, error) {
	return e.ExecContext(ctx, s.rebind(q), args...)
}

func (s *DB) query(ctx context.Context, e execer, q string, args ...any) (*sql.Rows, error) {
	return e.QueryContext(ctx, s.rebind(q), args...)
}

func (s *DB) row(ctx context.Context, e execer, q string, args ...any) *sql.Row {
	return e.QueryRowContext(ctx, s.rebind(q), args...)
}

// lockWrite takes the write mutex when the dialect wants writes serialised; call the result to
// release it.
func (s *DB) lockWrite() func() {
	if !s.d.SerialWrites {
		return func() {}
	}
	s.wmu.Lock()
	return s.wmu.Unlock
}

// inTx runs fn in a transaction and commits it, or rolls back when fn fails.
func (s *DB) inTx(ctx context.Context, fn func(tx *sql.Tx) error) error {
	defer s.lockWrite()()
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("begin: %w", err)
	}
	if err := fn(tx); err != nil {
		_ = tx.Rollback()
		return err
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("commit: %w", err)
	}
	return nil
}

func (s *DB) now() int64 { return s.opt.Now().UnixMilli() }

func ms(t time.Time) int64 {
	if t.IsZero() {
		return 0
	}
	return t.UnixMilli()
}

func tm(v int64) time.Time {
	if v == 0 {
		return time.Time{}
	}
	return time.UnixMilli(v).UTC()
}

type migration struct {
	version int
	name    string
	sql     string
}

func (s *DB) migrations() ([]migration, error) {
	entries, err := fs.ReadDir(s.d.Migrations, ".")
	if err != nil {
		return nil, fmt.Errorf("read embedded migrations: %w", err)
	}
	var out []migration
	for _, e := range entries {
		name := e.Name()
		if path.Ext(name) != ".sql" {
			continue
		}
		num, _, ok := strings.Cut(name, "_")
		v, err := strconv.Atoi(num)
		if !ok || err != nil || v <= 0 {
			return nil, fmt.Errorf("embedded migration %q: name must start with a positive number and '_'", name)
		}
		b, err := fs.ReadFile(s.d.Migrations, name)
		if err != nil {
			return nil, fmt.Errorf("read embedded migration %s: %w", name, err)
		}
		out = append(out, migration{version: v, name: name, sql: string(b)})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].version < out[j].version })
	for i, m := range out {
		if m.version != i+1 {
			return nil, fmt.Errorf("embedded migrations: want version %d, found %s", i+1, m.name)
		}
	}
	return out, nil
}

// Migrate brings the schema up to date in one transaction, and refuses a database whose schema is
// newer than the migrations this program embeds (an older binary must not write a newer schema).
func (s *DB) Migrate(ctx context.Context) error {
	ms, err := s.migrations()
	if err != nil {
		return err
	}
	return s.inTx(ctx, func(tx *sql.Tx) error {
		if s.d.LockMigrations != nil {
			if err := s.d.LockMigrations(ctx, tx); err != nil {
				return fmt.Errorf("lock for migration: %w", err)
			}
		}
		if _, err := tx.ExecContext(ctx, `CREATE TABLE IF NOT EXISTS schema_version (
			version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied BIGINT NOT NULL)`); err != nil {
			return fmt.Errorf("create schema_version: %w", err)
		}
		var have int
		if err := tx.QueryRowContext(ctx, `SELECT COALESCE(MAX(version), 0) FROM schema_version`).Scan(&have); err != nil {
			return fmt.Errorf("read schema version: %w", err)
		}
		if have > len(ms) {
			return &store.SchemaTooNewError{Have: have, Known: len(ms)}
		}
		for _, m := range ms[have:] {
			if _, err := tx.ExecContext(ctx, m.sql); err != nil {
				return fmt.Errorf("apply migration %s: %w", m.name, err)
			}
			if _, err := s.exec(ctx, tx, `INSERT INTO schema_version (version, name, applied) VALUES (?, ?, ?)`,
				m.version, m.name, s.now()); err != nil {
				return fmt.Errorf("record migration %s: %w", m.name, err)
			}
			s.log.Info("store: applied migration", "dialect", s.d.Name, "migration", m.name)
		}
		return nil
	})
}

// SchemaVersion reports the version recorded in the database.
func (s *DB) SchemaVersion(ctx context.Context) (int, error) {
	var v int
	err := s.db.QueryRowContext(ctx, `SELECT COALESCE(MAX(version), 0) FROM schema_version`).Scan(&v)
	return v, err
}

// notFound wraps store.ErrNotFound with what was missing.
func notFound(what string, key store.ThreadKey) error {
	return fmt.Errorf("%s %s: %w", what, key, store.ErrNotFound)
}

func isNoRows(err error) bool { return errors.Is(err, sql.ErrNoRows) }
