// Package sqlite is the store for one process: an embedded SQLite file through the pure-Go driver
// modernc.org/sqlite (no cgo), in WAL mode with synchronous=FULL so an acknowledged revision survives a
// crash or a power cut. One process uses a file at a time: Open locks it (PATH.lock) and refuses a
// file another process holds, so the store can promise callers that no one else works on a thread.
package sqlite

import (
	"context"
	"database/sql"
	"embed"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"net/url"
	"os"
	"path/filepath"
	"strings"

	_ "modernc.org/sqlite" // registers the "sqlite" database/sql driver

	"github.com/excalibot/excalibot/store"
	"github.com/excalibot/excalibot/store/internal/sqlcore"
)

//go:embed migrations/*.sql
var migrations embed.FS

// Store is a store.Store in one SQLite file.
type Store struct {
	*sqlcore.DB
	path    string
	release func() error // the process's lock on the file
}

var _ store.Store = (*Store)(nil)

// BusyTimeoutMS is how long a writer waits for another writer (another connection or process)
// before giving up with "database is locked".
const BusyTimeoutMS = 10000

// DefaultPath is where the database lives when none is configured: $XDG_DATA_HOME/excalibot/excalibot.db,
// or ~/.local/share/excalibot/excalibot.db.
func DefaultPath() (string, error) {
	dir := os.Getenv("XDG_DATA_HOME")
	if dir == "" || !filepath.IsAbs(dir) { // the XDG spec says to ignore relative values
		home, err := os.UserHomeDir()
		if err != nil {
			return "", fmt.Errorf("default store path: no XDG_DATA_HOME and no home directory: %w", err)
		}
		dir = filepath.Join(home, ".local", "share")
	}
	return filepath.Join(dir, "excalibot", "excalibot.db"), nil
}

// Open opens (creating it and its directory if needed) the database at path, "" meaning
// DefaultPath(), and migrates it. It refuses a database made by a newer program with
// store.ErrSchemaTooNew.
func Open(ctx context.Context, path string, opt store.Options, log *slog.Logger) (*Store, error) {
	if path == "" {
		p, err := DefaultPath()
		if err != nil {
			return nil, err
		}
		path = p
	}
	if path == ":memory:" || strings.HasPrefix(path, "file:") {
		// Each pooled connection would get its own empty in-memory database.
		return nil, fmt.Errorf("open sqlite store: %q: give a file path (tests: a file in t.TempDir())", path)
	}
	if strings.ContainsAny(path, "?#") {
		return nil, fmt.Errorf("open sqlite store: path %q must not contain '?' or '#'", path)
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return nil, fmt.Errorf("open sqlite store: create directory: %w", err)
	}
	release, err := acquire(path)
	if err != nil {
		return nil, fmt.Errorf("open sqlite store %s: %w", path, err)
	}
	st, err := open(ctx, path, opt, log)
	if err != nil {
		release()
		return nil, err
	}
	st.release = release
	return st, nil
}

func open(ctx context.Context, path string, opt store.Options, log *slog.Logger) (*Store, error) {
	q := url.Values{}
	q.Set("_busy_timeout", fmt.Sprint(BusyTimeoutMS))
	q.Set("_journal_mode", "WAL")
	q.Set("_synchronous", "FULL")
	q.Set("_foreign_keys", "1")
	// Every transaction here writes, so take the write lock at BEGIN: a deferred transaction that
	// upgrades later can fail with SQLITE_BUSY at once instead of waiting for the busy timeout.
	q.Set("_txlock", "immediate")
	db, err := sql.Open("sqlite", path+"?"+q.Encode())
	if err != nil {
		return nil, fmt.Errorf("open sqlite store %s: %w", path, err)
	}
	sub, err := fs.Sub(migrations, "migrations")
	if err != nil {
		db.Close()
		return nil, fmt.Errorf("open sqlite store: %w", err)
	}
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	core := sqlcore.New(db, sqlcore.Dialect{Name: "sqlite", SerialWrites: true, SingleProcess: true, Migrations: sub}, opt, log.With("store", path))
	if err := core.Migrate(ctx); err != nil {
		db.Close()
		if errors.Is(err, store.ErrSchemaTooNew) {
			return nil, fmt.Errorf("open sqlite store %s: %w", path, err)
		}
		return nil, fmt.Errorf("open sqlite store %s: migrate: %w", path, err)
	}
	return &Store{DB: core, path: path}, nil
}

// Close closes the database and gives up the process's lock on it.
func (s *Store) Close() error {
	return errors.Join(s.DB.Close(), s.release())
}

// Path is the database file.
func (s *Store) Path() string { return s.path }
