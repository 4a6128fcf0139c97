package postgres_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"sync"
	"testing"
	"time"

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
	dsn := newDatabase(t)
	return func(t testing.TB, opt store.Options) storetest.Store {
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

// TestDatabaseTime: the server's clock, read for doctor's skew check, is this machine's (the test
// server runs here).
func TestDatabaseTime(t *testing.T) {
	s, err := postgres.Open(t.Context(), newDatabase(t), store.Options{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	got, err := s.DatabaseTime(t.Context())
	if d := time.Since(got).Abs(); err != nil || d > 2*time.Second {
		t.Errorf("DatabaseTime = %v, %v: %s from this machine's clock, want within 2s", got, err, d)
	}
}

// TestDurability kills the server with SIGKILL in the middle of a stream of writes, then the writer
// process too, and restarts the server (crash recovery): every revision whose commit was
// acknowledged before the server died must be there.
func TestDurability(t *testing.T) {
	dsn := newDatabase(t)
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
	dsn := newDatabase(t)
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
	dsn := newDatabase(t)
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

func BenchmarkWork(b *testing.B) {
	storetest.BenchWork(b, func(t testing.TB) storetest.Opener { return factory(t) })
}

// TestConnectionsDropped: when the server drops every connection (a restart, a failover, an
// administrator's pg_terminate_backend), the pooled connections are dead. The first write and the
// first reads afterwards must still succeed, however briefly the connections sat idle: a statement
// that never reached the server is retried on a fresh connection instead of failing a request.
func TestConnectionsDropped(t *testing.T) {
	dsn := newDatabase(t)
	s, admin := openStore(t, dsn), openStore(t, dsn)
	ctx, key := t.Context(), storetest.Key(1)
	rev := int64(0)
	for round := 1; round <= 3; round++ {
		// Several connections in the pool, all idle, as after a burst of requests.
		var wg sync.WaitGroup
		for range 6 {
			wg.Go(func() { _, _ = s.Load(ctx, key) })
		}
		wg.Wait()
		if _, err := admin.SQL().ExecContext(ctx, `SELECT pg_terminate_backend(pid) FROM pg_stat_activity
			WHERE datname = current_database() AND pid <> pg_backend_pid()`); err != nil {
			t.Fatal(err)
		}
		th, err := s.Save(ctx, store.SaveRequest{Key: key, Base: rev, Scene: storetest.SceneN(round), Author: store.AuthorAgent})
		if err != nil {
			t.Fatalf("round %d: first save after the connections dropped: %v", round, err)
		}
		rev = th.Rev
		wg.Go(func() { _, _ = s.Load(ctx, key) }) // dirty the pool again before the reads
		wg.Wait()
		if _, err := admin.SQL().ExecContext(ctx, `SELECT pg_terminate_backend(pid) FROM pg_stat_activity
			WHERE datname = current_database() AND pid <> pg_backend_pid()`); err != nil {
			t.Fatal(err)
		}
		if th, err := s.Load(ctx, key); err != nil || th.Rev != rev {
			t.Fatalf("round %d: first load after the connections dropped: %v, %v; want rev %d", round, th, err, rev)
		}
		if h, err := s.History(ctx, key, 0); err != nil || int64(len(h)) != rev {
			t.Fatalf("round %d: history: %d revisions, %v; want %d", round, len(h), err, rev)
		}
	}
}

// newDatabase returns the DSN of a new, empty database on the test server.
func newDatabase(t testing.TB) string {
	t.Helper()
	needServer(t)
	dsn, err := server.CreateDB(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	return dsn
}

// openStore opens a store on dsn, closed when the test ends.
func openStore(t testing.TB, dsn string) *postgres.Store {
	t.Helper()
	s, err := postgres.Open(t.Context(), dsn, store.Options{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}
