package store_test

import (
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/excalibot/excalibot/store"
)

func TestThreadKeyRoundTrip(t *testing.T) {
	tests := []struct {
		key  store.ThreadKey
		want string
	}{
		{store.ThreadKey{Platform: "slack", Workspace: "T1", Channel: "C1", Thread: "1700000000.000100"}, "slack/T1/C1/1700000000.000100"},
		{store.ThreadKey{Platform: "telegram", Workspace: "-1001", Channel: "", Thread: "42"}, "telegram/-1001/-/42"},
		{store.ThreadKey{Platform: "slack", Workspace: "T1", Channel: "D1"}, "slack/T1/D1/-"}, // a DM's top level
		{store.ThreadKey{Platform: "web", Channel: "s1", Thread: "t1"}, "web/-/s1/t1"},
		{store.ThreadKey{Platform: "x", Workspace: "a/b", Channel: "50%", Thread: "c d"}, "x/a%2Fb/50%25/c%20d"},
	}
	for _, tt := range tests {
		got := tt.key.String()
		if got != tt.want {
			t.Errorf("String(%+v): got %q, want %q", tt.key, got, tt.want)
		}
		back, err := store.ParseThreadKey(got)
		if err != nil || back != tt.key {
			t.Errorf("ParseThreadKey(%q): got %+v, %v, want %+v", got, back, err, tt.key)
		}
	}
}

func TestThreadKeyInvalid(t *testing.T) {
	tests := []struct {
		name string
		key  store.ThreadKey
	}{
		{"NoPlatform", store.ThreadKey{Workspace: "T", Thread: "1"}},
		{"TooLong", store.ThreadKey{Platform: "slack", Workspace: "T", Thread: string(make([]byte, 600))}},
	}
	for _, tt := range tests {
		if err := tt.key.Validate(); !errors.Is(err, store.ErrInvalid) {
			t.Errorf("%s: got %v, want ErrInvalid", tt.name, err)
		}
	}
	for _, s := range []string{"a/b/c", "a/b/c/d/e", "slack/T/C/%zz", "slack//C/1", "-/T/C/1"} {
		if _, err := store.ParseThreadKey(s); err == nil {
			t.Errorf("ParseThreadKey(%q): got no error", s)
		}
	}
}

func TestErrorMessages(t *testing.T) {
	key := store.ThreadKey{Platform: "slack", Workspace: "T1", Channel: "C1", Thread: "9"}
	tests := []struct {
		err    error
		target error
		want   string
	}{
		{fmt.Errorf("save: %w", store.CheckSize("scene", make([]byte, 6<<20), store.DefaultMaxSceneBytes)), store.ErrTooLarge,
			"save: scene is 6.0 MB, above the limit of 5.0 MB"},
		{&store.ConflictError{Key: key, Base: 3, Now: 4}, store.ErrConflict,
			"conflict on thread slack/T1/C1/9: change based on revision 3, but the thread is at revision 4"},
		{&store.LeaseHeldError{Key: key, Owner: "pod-a", Expires: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)}, store.ErrLeaseHeld,
			`thread slack/T1/C1/9 is leased by "pod-a" until 2026-01-02T03:04:05Z`},
		{&store.SchemaTooNewError{Have: 3, Known: 1}, store.ErrSchemaTooNew,
			"database schema is at version 3 but this program knows only up to version 1: run a newer excalibot, or point it at another database"},
	}
	for _, tt := range tests {
		if got := tt.err.Error(); got != tt.want {
			t.Errorf("got %q, want %q", got, tt.want)
		}
		if !errors.Is(tt.err, tt.target) {
			t.Errorf("%q: errors.Is(%v) is false", tt.err, tt.target)
		}
	}
	if err := store.CheckSize("scene", make([]byte, 10), 10); err != nil {
		t.Errorf("CheckSize at the limit: %v", err)
	}
}

func TestOptionsDefaults(t *testing.T) {
	o := store.Options{}.WithDefaults()
	if o.MaxSceneBytes != 5<<20 || o.HistoryLimit != 50 || o.EventTTL != 24*time.Hour || o.Now == nil {
		t.Fatalf("defaults: got %+v", o)
	}
	o = store.Options{MaxSceneBytes: 7, HistoryLimit: 3, EventTTL: time.Minute}.WithDefaults()
	if o.MaxSceneBytes != 7 || o.HistoryLimit != 3 || o.EventTTL != time.Minute {
		t.Fatalf("set options overwritten: got %+v", o)
	}
}
