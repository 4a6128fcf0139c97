package storetest

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/excalibot/excalibot/store"
)

// msgRef names one chat message in the message→thread index.
type msgRef struct{ platform, chat, msg string }

func (e *env) setMessageThread(s Store, m msgRef, thread string) {
	e.t.Helper()
	if err := s.SetMessageThread(e.t.Context(), m.platform, m.chat, m.msg, thread); err != nil {
		e.t.Fatalf("SetMessageThread(%v, %q): %v", m, thread, err)
	}
}

// wantMessageThread checks what s finds for m: want "" means no entry (ErrNotFound).
func (e *env) wantMessageThread(s Store, what string, m msgRef, want string) {
	e.t.Helper()
	got, err := s.MessageThread(e.t.Context(), m.platform, m.chat, m.msg)
	if want == "" {
		wantErr(e.t, what+": MessageThread of an unknown message", err, store.ErrNotFound)
		return
	}
	if err != nil || got != want {
		e.t.Fatalf("%s: MessageThread(%v): got %q, %v, want %q", what, m, got, err, want)
	}
}

func testMessageThreads(t *testing.T, f Factory) {
	e := newEnv(t, f, store.Options{})
	ctx := t.Context()
	a := msgRef{"telegram", "-1001", "42"}
	e.wantMessageThread(e.s, "empty index", a, "")

	e.setMessageThread(e.s, a, "0:42")
	e.wantMessageThread(e.s, "after set", a, "0:42")
	// Each part of the name counts: the same message id elsewhere is another message.
	for _, other := range []msgRef{{"slack", "-1001", "42"}, {"telegram", "-1002", "42"}, {"telegram", "-1001", "43"}} {
		e.wantMessageThread(e.s, "a different message", other, "")
	}
	b := msgRef{"telegram", "-1001", "43"}
	e.setMessageThread(e.s, b, "0:42") // a reply in the same chain
	e.setMessageThread(e.s, a, "7:40") // overwrite
	e.wantMessageThread(e.s, "after overwrite", a, "7:40")
	e.wantMessageThread(e.s, "a neighbour of the overwritten message", b, "0:42")

	// A second replica, and a restart, see the same index.
	e.wantMessageThread(e.another(), "second store", a, "7:40")
	c := msgRef{"telegram", "-1001", "44"}
	e.setMessageThread(e.another(), c, "0:42")
	e.wantMessageThread(e.s, "written by the second store", c, "0:42")

	long := strings.Repeat("x", 600)
	bad := []struct {
		name                        string
		platform, chat, msg, thread string
	}{
		{"NoPlatform", "", "1", "2", "t"},
		{"NoChat", "telegram", "", "2", "t"},
		{"NoMessage", "telegram", "1", "", "t"},
		{"NoThread", "telegram", "1", "2", ""},
		{"LongChat", "telegram", long, "2", "t"},
		{"LongThread", "telegram", "1", "2", long},
	}
	for _, tt := range bad {
		err := e.s.SetMessageThread(ctx, tt.platform, tt.chat, tt.msg, tt.thread)
		wantErr(t, "SetMessageThread "+tt.name, err, store.ErrInvalid)
		if tt.thread == "t" { // the fault is in the message's name, which lookups check too
			_, err = e.s.MessageThread(ctx, tt.platform, tt.chat, tt.msg)
			wantErr(t, "MessageThread "+tt.name, err, store.ErrInvalid)
		}
	}
}

func testMessageThreadsPrune(t *testing.T, f Factory) {
	e := newEnv(t, f, store.Options{})
	ctx := t.Context()
	old, renewed, fresh := msgRef{"telegram", "-1", "1"}, msgRef{"telegram", "-1", "2"}, msgRef{"telegram", "-1", "3"}
	e.setMessageThread(e.s, old, "0:1")
	e.setMessageThread(e.s, renewed, "0:1")
	e.clock.Advance(30 * 24 * time.Hour)
	cutoff := e.clock.Now().Add(-7 * 24 * time.Hour)
	e.setMessageThread(e.s, renewed, "0:2") // recorded again: counts from now
	e.setMessageThread(e.s, fresh, "0:1")

	st, err := e.s.Prune(ctx, cutoff)
	if want := (store.PruneStats{Messages: 1}); err != nil || st != want {
		t.Fatalf("Prune: got %+v, %v, want %+v", st, err, want)
	}
	e.wantMessageThread(e.s, "pruned", old, "")
	e.wantMessageThread(e.s, "renewed after the cutoff", renewed, "0:2")
	e.wantMessageThread(e.s, "recorded after the cutoff", fresh, "0:1")
	if st, err = e.s.Prune(ctx, cutoff); err != nil || st != (store.PruneStats{}) {
		t.Fatalf("second Prune: got %+v, %v, want nothing deleted", st, err)
	}
}

// Upgrade checks that a database made by an older program keeps everything when the current program
// opens it. old is a store on a database migrated only up to an earlier schema, without the
// message→thread index; reopen opens the same database with the current program (which migrates
// it). Upgrade closes old and returns the reopened store.
func Upgrade(t *testing.T, old Store, reopen func() Store) Store {
	t.Helper()
	ctx, key := t.Context(), Key(1)
	e := &env{t: t, s: old}
	e.save(key, 0, SceneN(1))
	e.save(key, 1, SceneN(2))
	if err := old.SetSettings(ctx, key, store.Settings{Theme: "dark"}); err != nil {
		t.Fatal(err)
	}
	tok, _, err := CreateLink(ctx, old, key, store.LinkEdit, time.Time{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := old.ClaimEvents(ctx, "Ev1"); err != nil {
		t.Fatal(err)
	}
	// The old schema really lacks the index, or this test proves nothing.
	if _, err := old.MessageThread(ctx, "telegram", "-1", "1"); err == nil || errors.Is(err, store.ErrNotFound) {
		t.Fatalf("MessageThread on the old schema: got %v, want a missing-table error", err)
	}
	if err := old.Close(); err != nil {
		t.Fatal(err)
	}

	s := reopen()
	e.s = s
	th := e.load(key)
	if th.Rev != 2 || th.Settings.Theme != "dark" {
		t.Fatalf("thread after upgrade: got revision %d, settings %+v, want revision 2, dark", th.Rev, th.Settings)
	}
	wantScene(t, "scene after upgrade", th.Scene, SceneN(2))
	if h, err := s.History(ctx, key, 0); err != nil || len(h) != 2 {
		t.Fatalf("History after upgrade: got %d revisions, %v, want 2", len(h), err)
	}
	if l, err := s.ResolveLink(ctx, tok); err != nil || l.Key != key {
		t.Fatalf("ResolveLink after upgrade: got %+v, %v", l, err)
	}
	if fresh, err := s.ClaimEvents(ctx, "Ev1"); err != nil || fresh {
		t.Fatalf("ClaimEvent of an event claimed before the upgrade: got %v, %v, want false", fresh, err)
	}
	m := msgRef{"telegram", "-1", "1"}
	e.wantMessageThread(s, "after upgrade", m, "")
	e.setMessageThread(s, m, "0:1")
	e.wantMessageThread(s, "after upgrade", m, "0:1")
	return s
}

// testIndexWithCommits: index entries given to Accept and RecordPosted are recorded in their
// commit, and only then: a redelivery, a refused claim or an invalid entry records none.
func testIndexWithCommits(t *testing.T, f Factory) {
	e := newEnv(t, f, store.Options{})
	ctx := t.Context()
	key := store.ThreadKey{Platform: "telegram", Workspace: "-1001", Channel: "-1001", Thread: "0:42"}
	entry := func(msg string) store.MessageThread {
		return store.MessageThread{Platform: "telegram", Chat: "-1001", Msg: msg, Thread: "0:42"}
	}
	acc, err := e.s.Accept(ctx, store.AcceptRequest{Key: key, EventIDs: []string{"u1"}, Body: msgBody(1),
		Index: []store.MessageThread{entry("42"), entry("last:0:7")}})
	if err != nil || !acc.Fresh {
		t.Fatalf("Accept: %+v, %v", acc, err)
	}
	b := e.another()
	e.wantMessageThread(b, "a request's entry, kept with it", msgRef{"telegram", "-1001", "42"}, "0:42")
	e.wantMessageThread(b, "its sender's last", msgRef{"telegram", "-1001", "last:0:7"}, "0:42")
	if acc, err := e.s.Accept(ctx, store.AcceptRequest{Key: key, EventIDs: []string{"u1"}, Body: msgBody(1),
		Index: []store.MessageThread{entry("77")}}); err != nil || acc.Fresh {
		t.Fatalf("redelivery: %+v, %v", acc, err)
	}
	e.wantMessageThread(b, "a redelivery's entry", msgRef{"telegram", "-1001", "77"}, "")
	_, err = e.s.Accept(ctx, store.AcceptRequest{Key: key, Body: msgBody(2), Index: []store.MessageThread{{Platform: "telegram", Chat: "-1001", Msg: "78"}}})
	wantErr(t, "Accept with an entry without a thread", err, store.ErrInvalid)

	ids, err := e.s.Enqueue(ctx, store.Outgoing{Key: key, Kind: "reply", Body: []byte("picture")})
	if err != nil {
		t.Fatal(err)
	}
	if got := e.claimOutbox(e.s, "A", time.Minute, "telegram"); len(got) != 1 {
		t.Fatalf("claim: %v", outIDs(got))
	}
	if err := e.s.RecordPosted(ctx, ids[0], "B", "43", entry("43")); !errors.Is(err, store.ErrLeaseHeld) {
		t.Fatalf("RecordPosted by another owner: %v, want ErrLeaseHeld", err)
	}
	e.wantMessageThread(b, "the entry of a refused record", msgRef{"telegram", "-1001", "43"}, "")
	if err := e.s.RecordPosted(ctx, ids[0], "A", "43", entry("43")); err != nil {
		t.Fatal(err)
	}
	e.wantMessageThread(b, "a posted message's entry, kept with its record", msgRef{"telegram", "-1001", "43"}, "0:42")
}
