package postgres_test

import (
	"os"
	"path/filepath"
	"testing"
	"testing/fstest"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/stdlib"

	"github.com/excalibot/excalibot/store"
	"github.com/excalibot/excalibot/store/internal/sqlcore"
	"github.com/excalibot/excalibot/store/postgres"
	"github.com/excalibot/excalibot/store/storetest"
)

// TestUpgradeFromV1: a database made by a program that knew only schema version 1 is migrated when
// this one opens it, and keeps its threads, links and events.
func TestUpgradeFromV1(t *testing.T) {
	needServer(t)
	v1sql, err := os.ReadFile("migrations/0001_init.sql")
	if err != nil {
		t.Fatal(err)
	}
	dsn, err := server.CreateDB(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := pgx.ParseConfig(dsn)
	if err != nil {
		t.Fatal(err)
	}
	old := sqlcore.New(stdlib.OpenDB(*cfg), sqlcore.Dialect{Name: "postgres", Dollar: true, ForUpdate: " FOR UPDATE",
		Migrations: fstest.MapFS{"0001_init.sql": {Data: v1sql}}}, store.Options{}, nil)
	if err := old.Migrate(t.Context()); err != nil {
		t.Fatal(err)
	}
	if v, err := old.SchemaVersion(t.Context()); err != nil || v != 1 {
		t.Fatalf("old database: got schema version %d, %v, want 1", v, err)
	}
	var cur *postgres.Store
	storetest.Upgrade(t, old, func() storetest.Store {
		if cur, err = postgres.Open(t.Context(), dsn, store.Options{}, nil); err != nil {
			t.Fatalf("open the v1 database: %v", err)
		}
		t.Cleanup(func() { cur.Close() })
		return cur
	})
	all, _ := filepath.Glob("migrations/*.sql")
	if v, err := cur.SchemaVersion(t.Context()); err != nil || v != len(all) || v < 2 {
		t.Fatalf("after upgrade: got schema version %d, %v, want %d", v, err, len(all))
	}
}
