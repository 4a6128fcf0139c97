package sqlite_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/excalibot/excalibot/store"
	"github.com/excalibot/excalibot/store/sqlite"
	"github.com/excalibot/excalibot/store/storetest"
)

func TestMain(m *testing.M) {
	// The durability test re-runs this binary as the writer it kills.
	if os.Getenv(storetest.ChildEnv) != "" {
		storetest.DurabilityChild(func(opt store.Options) (store.Store, error) {
			return sqlite.Open(context.Background(), os.Getenv(storetest.ChildEnv), opt, nil)
		})
		return
	}
	if path := os.Getenv(lockChildEnv); path != "" {
		os.Exit(lockChild(path))
	}
	os.Exit(m.Run())
}

// factory makes a new database file per test.
func factory(t testing.TB) storetest.Opener {
	path := filepath.Join(t.TempDir(), "sub", "dir", "excalibot.db") // Open creates directories
	return func(t testing.TB, opt store.Options) storetest.Store {
		s, err := sqlite.Open(t.Context(), path, opt, nil)
		if err != nil {
			t.Fatalf("open %s: %v", path, err)
		}
		t.Cleanup(func() {
			if err := s.Close(); err != nil {
				t.Errorf("close: %v", err)
			}
		})
		return s
	}
}

func TestConformance(t *testing.T) { storetest.Run(t, factory) }

// TestDurability kills a writer process with SIGKILL mid-stream; every acknowledged revision must
// be in the file, which must pass SQLite's integrity check.
func TestDurability(t *testing.T) {
	path := filepath.Join(t.TempDir(), "durable.db")
	open := func(opt store.Options) (store.Store, error) { return sqlite.Open(t.Context(), path, opt, nil) }
	storetest.Durability(t, path, 300, nil, nil, open)
	s, err := sqlite.Open(t.Context(), path, store.Options{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	var res string
	if err := s.SQL().QueryRowContext(t.Context(), "PRAGMA integrity_check").Scan(&res); err != nil || res != "ok" {
		t.Fatalf("integrity_check: got %q, %v, want ok", res, err)
	}
}

func BenchmarkStore(b *testing.B) {
	storetest.Bench(b, func(t testing.TB) storetest.Opener { return factory(t) })
}

func BenchmarkWork(b *testing.B) {
	storetest.BenchWork(b, func(t testing.TB) storetest.Opener { return factory(t) })
}
