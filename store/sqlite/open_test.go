package sqlite_test

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/excalibot/excalibot/store"
	"github.com/excalibot/excalibot/store/sqlite"
	"github.com/excalibot/excalibot/store/storetest"
)

func TestDefaultPath(t *testing.T) {
	home := t.TempDir()
	tests := []struct {
		name, xdg, want string
	}{
		{"XDG", "/data/x", "/data/x/excalibot/excalibot.db"},
		{"NoXDG", "", filepath.Join(home, ".local/share/excalibot/excalibot.db")},
		{"RelativeXDGIgnored", "rel/dir", filepath.Join(home, ".local/share/excalibot/excalibot.db")},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Setenv("HOME", home)
			t.Setenv("XDG_DATA_HOME", tt.xdg)
			got, err := sqlite.DefaultPath()
			if err != nil || got != tt.want {
				t.Fatalf("DefaultPath: got %q, %v, want %q", got, err, tt.want)
			}
		})
	}
}

// TestOpenFreshMachine: with no configuration the store creates its directories and file.
func TestOpenFreshMachine(t *testing.T) {
	xdg := filepath.Join(t.TempDir(), "nothing", "here", "yet")
	t.Setenv("XDG_DATA_HOME", xdg)
	s, err := sqlite.Open(t.Context(), "", store.Options{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	want := filepath.Join(xdg, "excalibot", "excalibot.db")
	if s.Path() != want {
		t.Fatalf("Path: got %q, want %q", s.Path(), want)
	}
	if _, err := s.Save(t.Context(), store.SaveRequest{Key: storetest.Key(1), Scene: []byte("{}"), Author: store.AuthorImport}); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(want); err != nil {
		t.Fatalf("database file: %v", err)
	}
	var mode string
	if err := s.SQL().QueryRowContext(t.Context(), "PRAGMA journal_mode").Scan(&mode); err != nil || mode != "wal" {
		t.Fatalf("journal_mode: got %q, %v, want wal", mode, err)
	}
}

func TestOpenBadPath(t *testing.T) {
	blocker := filepath.Join(t.TempDir(), "file")
	if err := os.WriteFile(blocker, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{filepath.Join(blocker, "sub", "x.db"), "/tmp/a?b.db", ":memory:", "file:x.db"} {
		if _, err := sqlite.Open(t.Context(), p, store.Options{}, nil); err == nil {
			t.Errorf("Open(%q): got no error", p)
		}
	}
}

// TestSchemaTooNew: a database migrated by a newer program is refused, with a message saying what
// to do, and left untouched.
func TestSchemaTooNew(t *testing.T) {
	path := filepath.Join(t.TempDir(), "x.db")
	s, err := sqlite.Open(t.Context(), path, store.Options{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	v, err := s.SchemaVersion(t.Context())
	if err != nil || v < 1 {
		t.Fatalf("SchemaVersion: got %d, %v", v, err)
	}
	if _, err := s.SQL().ExecContext(t.Context(), `INSERT INTO schema_version (version, name, applied) VALUES (?, 'future', 0)`, v+1); err != nil {
		t.Fatal(err)
	}
	s.Close()
	_, err = sqlite.Open(t.Context(), path, store.Options{}, nil)
	if !errors.Is(err, store.ErrSchemaTooNew) {
		t.Fatalf("Open: got %v, want ErrSchemaTooNew", err)
	}
	var tn *store.SchemaTooNewError
	if !errors.As(err, &tn) || tn.Have != v+1 || tn.Known != v || !strings.Contains(err.Error(), "newer excalibot") {
		t.Fatalf("Open: got %v, want a SchemaTooNewError naming versions %d and %d", err, v+1, v)
	}
}

// TestLinkTokensHashed: the database never holds a token, only its hash.
func TestLinkTokensHashed(t *testing.T) {
	path := filepath.Join(t.TempDir(), "x.db")
	s, err := sqlite.Open(t.Context(), path, store.Options{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	key := storetest.Key(1)
	if _, err := s.Save(t.Context(), store.SaveRequest{Key: key, Scene: []byte("{}"), Author: store.AuthorImport}); err != nil {
		t.Fatal(err)
	}
	tok, _, err := storetest.CreateLink(t.Context(), s, key, store.LinkEdit, time.Time{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.SQL().ExecContext(t.Context(), "PRAGMA wal_checkpoint(TRUNCATE)"); err != nil {
		t.Fatal(err)
	}
	s.Close()
	if b, _ := os.ReadFile(path); !bytes.Contains(b, []byte(key.String())) {
		t.Fatal("the database file does not hold the thread key either: this test reads the wrong file")
	}
	for _, f := range []string{path, path + "-wal"} {
		b, err := os.ReadFile(f)
		if err != nil && !os.IsNotExist(err) {
			t.Fatal(err)
		}
		if bytes.Contains(b, []byte(tok)) {
			t.Fatalf("%s holds the link token in clear", f)
		}
	}
}
