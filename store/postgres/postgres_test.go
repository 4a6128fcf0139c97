package postgres_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"testing"

	"github.com/excalibot/excalibot/internal/pgtest"
	"github.com/excalibot/excalibot/store"
	"github.com/excalibot/excalibot/store/postgres"
	"github.com/excalibot/excalibot/store/storetest"
)

// server is the one PostgreSQL server of this test binary; nil when the binaries are missing.
var (
	server  *pgtest.Server
	skipWhy string
)

func TestMain(m *testing.M) {
	if dsn := os.Getenv(storetest.ChildEnv); dsn != "" {
		storetest.DurabilityChild(func(opt store.Options) (store.Store, error) {
			return postgres.Open(context.Background(), dsn, opt, nil)
		})
		return
	}
	os.Exit(run(m))
}

func run(m *testing.M) int {
	s, err := pgtest.Start(context.Background())
	switch {
	case errors.Is(err, pgtest.ErrNoServer):
		skipWhy = err.Error()
	case err != nil:
		fmt.Fprintln(os.Stderr, "start PostgreSQL for the tests:", err)
		return 1
	default:
		server = s
		defer func() {
			if err := s.Stop(); err != nil {
				fmt.Fprintln(os.Stderr, err)
			}
		}()
	}
	return m.Run()
}

func needServer(t testing.TB) {
	t.Helper()
	if server == nil {
		t.Skip("skipping PostgreSQL tests: " + skipWhy)
	}
}

// factory creates a new database per test on the shared server.
func factory(t testing.TB) storetest.Opener {
	needServer(t)
	dsn, err := server.CreateDB(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	return func(t testing.TB, opt store.Options) store.Store {
		s, err := postgres.Open(t.Context(), dsn, opt, nil)
		if err != nil {
			t.Fatalf("open: %v", err)
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

// TestSharedByReplicas: several processes use one PostgreSQL database, so callers must keep leases.
func TestSharedByReplicas(t *testing.T) {
	s := factory(t)(t, store.Options{})
	if s.SingleProcess() {
		t.Fatal("SingleProcess: got true, want false")
	}
}

// TestDurability kills the server with SIGKILL in the middle of a stream of writes, then the writer
// process too, and restarts the server (crash recovery): every revision whose commit was
// acknowledged before the server died must be there.
func TestDurability(t *testing.T) {
	needServer(t)
	dsn, err := server.CreateDB(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	open := func(opt store.Options) (store.Store, error) { return postgres.Open(t.Context(), dsn, opt, nil) }
	crash := func() {
		if err := server.Kill(); err != nil {
			t.Fatal(err)
		}
	}
	recover := func() {
		if err := server.Restart(t.Context()); err != nil {
			t.Fatal(err)
		}
	}
	storetest.Durability(t, dsn, 300, crash, recover, open)
}

// TestSchemaTooNew: a database migrated by a newer program is refused and left untouched.
func TestSchemaTooNew(t *testing.T) {
	needServer(t)
	dsn, err := server.CreateDB(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	s, err := postgres.Open(t.Context(), dsn, store.Options{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	v, err := s.SchemaVersion(t.Context())
	if err != nil || v < 1 {
		t.Fatalf("SchemaVersion: got %d, %v", v, err)
	}
	if _, err := s.SQL().ExecContext(t.Context(), `INSERT INTO schema_version (version, name, applied) VALUES ($1, 'future', 0)`, v+1); err != nil {
		t.Fatal(err)
	}
	s.Close()
	_, err = postgres.Open(t.Context(), dsn, store.Options{}, nil)
	var tn *store.SchemaTooNewError
	if !errors.Is(err, store.ErrSchemaTooNew) || !errors.As(err, &tn) || tn.Have != v+1 || tn.Known != v {
		t.Fatalf("Open: got %v, want ErrSchemaTooNew naming versions %d and %d", err, v+1, v)
	}
}

// TestConcurrentMigrate: replicas starting at once on an empty database all come up.
func TestConcurrentMigrate(t *testing.T) {
	needServer(t)
	dsn, err := server.CreateDB(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	const n = 4
	errs := make(chan error, n)
	for range n {
		go func() {
			s, err := postgres.Open(t.Context(), dsn, store.Options{}, nil)
			if err == nil {
				s.Close()
			}
			errs <- err
		}()
	}
	for range n {
		if err := <-errs; err != nil {
			t.Errorf("Open: %v", err)
		}
	}
}

func TestOpenBadDSN(t *testing.T) {
	tests := []struct{ name, dsn string }{
		{"Garbage", "postgres://%zz"},
		{"NoServer", "host=/nonexistent/dir dbname=x connect_timeout=2"},
	}
	for _, tt := range tests {
		if _, err := postgres.Open(t.Context(), tt.dsn, store.Options{}, nil); err == nil {
			t.Errorf("%s: Open(%q): got no error", tt.name, tt.dsn)
		}
	}
}

func BenchmarkStore(b *testing.B) {
	storetest.Bench(b, func(t testing.TB) storetest.Opener { return factory(t) })
}
