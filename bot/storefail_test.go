package bot

import (
	"context"
	"errors"
	"log/slog"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/excalibot/excalibot/store"
	"github.com/excalibot/excalibot/store/sqlite"
)

// downStore is a store whose database stops answering when down is set: every write and the loads
// fail with a driver's error, as a PostgreSQL behind a dropped connection does.
type downStore struct {
	*sqlite.Store
	down atomic.Bool
}

var errDriver = errors.New("begin: write failed: write unix ->/run/postgresql/.s.PGSQL.5432: broken pipe")

func (d *downStore) Load(ctx context.Context, key store.ThreadKey) (*store.Thread, error) {
	if d.down.Load() {
		return nil, errDriver
	}
	return d.Store.Load(ctx, key)
}

func (d *downStore) Undo(ctx context.Context, key store.ThreadKey, from int64) (*store.Thread, error) {
	if d.down.Load() {
		return nil, errDriver
	}
	return d.Store.Undo(ctx, key, from)
}

// TestStoreDownSaysSoPlainly: when the database fails, the thread hears that in plain words (not a
// driver's message), the operator's log gets the driver's words, and nothing stored changes.
func TestStoreDownSaysSoPlainly(t *testing.T) {
	st := tempStore(t)
	ds := &downStore{Store: st}
	var logs strings.Builder
	h := &harness{t: t, store: st, rec: newRecorder(), drawer: &fakeDrawer{}}
	h.bot = New(ds, h.drawer, fakeRenderer{}, nil, Options{}, slog.New(slog.NewTextHandler(&logs, nil)))

	h.say(thread, "draw a box")
	h.rec.wait(t, 1)
	before := h.rev(t, thread)
	ds.down.Store(true)
	for _, text := range []string{"make it red", "undo"} {
		h.say(thread, text)
		h.rec.wait(t, 1)
		r := h.rec.last(thread)
		if !r.Error || !strings.Contains(r.Text, "my database did not answer") || !strings.Contains(r.Text, "Nothing in the diagram changed") {
			t.Errorf("%q: reply %q; want the database named in plain words", text, r.Text)
		}
		if strings.Contains(r.Text, "broken pipe") || strings.Contains(r.Text, "PGSQL") {
			t.Errorf("%q: reply %q carries the driver's message", text, r.Text)
		}
	}
	if !strings.Contains(logs.String(), "broken pipe") {
		t.Errorf("the log lacks the driver's error:\n%s", logs.String())
	}
	ds.down.Store(false)
	after := h.rev(t, thread)
	if after.Rev != before.Rev || string(after.Scene) != string(before.Scene) {
		t.Errorf("the thread changed while the database was down: rev %d → %d", before.Rev, after.Rev)
	}
}
