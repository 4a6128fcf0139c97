package sqlite_test

import (
	"database/sql"
	"os"
	"path/filepath"
	"testing"
	"testing/fstest"

	"github.com/excalibot/excalibot/store"
	"github.com/excalibot/excalibot/store/internal/sqlcore"
	"github.com/excalibot/excalibot/store/sqlite"
	"github.com/excalibot/excalibot/store/storetest"
)

// TestUpgradeFromV1: a database made by a program that knew only schema version 1 is migrated when
// this one opens it, and keeps its threads, links and events.
func TestUpgradeFromV1(t *testing.T) {
	v1sql, err := os.ReadFile("migrations/0001_init.sql")
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "v1.db")
	db, err := sql.Open("sqlite", path+"?_txlock=immediate&_foreign_keys=1")
	if err != nil {
		t.Fatal(err)
	}
	old := sqlcore.New(db, sqlcore.Dialect{Name: "sqlite", SerialWrites: true,
		Migrations: fstest.MapFS{"0001_init.sql": {Data: v1sql}}}, store.Options{}, nil)
	if err := old.Migrate(t.Context()); err != nil {
		t.Fatal(err)
	}
	if v, err := old.SchemaVersion(t.Context()); err != nil || v != 1 {
		t.Fatalf("old database: got schema version %d, %v, want 1", v, err)
	}
	var cur *sqlite.Store
	storetest.Upgrade(t, old, func() storetest.Store {
		if cur, err = sqlite.Open(t.Context(), path, store.Options{}, nil); err != nil {
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
