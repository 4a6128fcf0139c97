package storetest

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/excalibot/excalibot/store"
)

func testLinks(t *testing.T, f Factory) {
	e := newEnv(t, f, store.Options{})
	ctx, key := t.Context(), Key(1)
	_, _, err := CreateLink(ctx, e.s, key, store.LinkEdit, time.Time{})
	wantErr(t, "CreateLink on a missing thread", err, store.ErrNotFound)
	e.save(key, 0, SceneN(1))
	_, _, err = CreateLink(ctx, e.s, key, "admin", time.Time{})
	wantErr(t, "CreateLink of an unknown kind", err, store.ErrInvalid)

	edit, el, err := CreateLink(ctx, e.s, key, store.LinkEdit, time.Time{})
	if err != nil {
		t.Fatal(err)
	}
	view, _, err := CreateLink(ctx, e.s, key, store.LinkView, e.clock.Now().Add(time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	if len(edit) < 40 || edit == view {
		t.Fatalf("tokens %q and %q: want two distinct tokens of at least 40 characters", edit, view)
	}
	l, err := e.s.ResolveLink(ctx, edit)
	if err != nil {
		t.Fatal(err)
	}
	if l.Key != key || l.Kind != store.LinkEdit || l.ID != el.ID || !l.Expires.IsZero() || !l.Revoked.IsZero() {
		t.Fatalf("ResolveLink(edit): got %+v, want %+v", l, el)
	}
	if l, err = e.s.ResolveLink(ctx, view); err != nil || l.Kind != store.LinkView {
		t.Fatalf("ResolveLink(view): got %+v, %v", l, err)
	}
	_, err = e.s.ResolveLink(ctx, edit+"x")
	wantErr(t, "ResolveLink of an unknown token", err, store.ErrNotFound)

	e.clock.Advance(time.Hour)
	_, err = e.s.ResolveLink(ctx, view)
	wantErr(t, "ResolveLink of an expired link", err, store.ErrLinkExpired)
	if _, err = e.s.ResolveLink(ctx, edit); err != nil {
		t.Fatalf("a link without expiry expired: %v", err)
	}

	edit2, _, err := CreateLink(ctx, e.s, key, store.LinkEdit, time.Time{})
	if err != nil {
		t.Fatal(err)
	}
	n, err := e.s.RevokeLinks(ctx, key, store.LinkView)
	if err != nil || n != 1 {
		t.Fatalf("RevokeLinks(view): got %d, %v, want 1", n, err)
	}
	if _, err = e.s.ResolveLink(ctx, edit); err != nil {
		t.Fatalf("revoking view links revoked an edit link: %v", err)
	}
	n, err = e.s.RevokeLinks(ctx, key, "")
	if err != nil || n != 2 {
		t.Fatalf("RevokeLinks(all): got %d, %v, want 2", n, err)
	}
	for _, tok := range []string{edit, edit2} {
		_, err = e.s.ResolveLink(ctx, tok)
		wantErr(t, "ResolveLink of a revoked link", err, store.ErrLinkRevoked)
	}
}

func testPing(t *testing.T, f Factory) {
	e := newEnv(t, f, store.Options{})
	if err := e.s.Ping(t.Context()); err != nil {
		t.Fatalf("Ping of an open store: %v", err)
	}
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	if err := e.s.Ping(ctx); !errors.Is(err, context.Canceled) {
		t.Fatalf("Ping with a canceled context: got %v, want context.Canceled", err)
	}
}

func testEvents(t *testing.T, f Factory) {
	e := newEnv(t, f, store.Options{EventTTL: time.Hour})
	ctx := t.Context()
	steps := []struct {
		id      string
		advance time.Duration
		want    bool
	}{
		{"Ev1", 0, true},
		{"Ev1", 0, false},
		{"Ev2", 0, true},
		{"Ev1", 59 * time.Minute, false},
		{"Ev1", time.Minute, true}, // an hour after the first claim it is forgotten
		{"Ev1", 0, false},
		{"Ev2", 0, true},
	}
	for i, st := range steps {
		e.clock.Advance(st.advance)
		got, err := e.s.ClaimEvents(ctx, st.id)
		if err != nil || got != st.want {
			t.Fatalf("step %d: ClaimEvents(%s): got %v, %v, want %v", i, st.id, got, err, st.want)
		}
	}
	// A second replica sees the same ids.
	if got, err := e.another().ClaimEvents(ctx, "Ev1"); err != nil || got {
		t.Fatalf("ClaimEvent on a second store: got %v, %v, want false", got, err)
	}
}

func testLease(t *testing.T, f Factory) {
	e := newEnv(t, f, store.Options{})
	ctx, key := t.Context(), Key(1)
	b := e.another() // replica B; e.s is replica A
	la, err := e.s.AcquireLease(ctx, key, "A", time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	_, err = b.AcquireLease(ctx, key, "B", time.Minute)
	wantErr(t, "B while A holds", err, store.ErrLeaseHeld)
	var held *store.LeaseHeldError
	if !errors.As(err, &held) || held.Owner != "A" || !held.Expires.Equal(la.Expires) {
		t.Fatalf("LeaseHeldError: got %+v, want owner A until %v", held, la.Expires)
	}
	e.clock.Advance(50 * time.Second)
	renewed, err := e.s.AcquireLease(ctx, key, "A", time.Minute)
	if err != nil || renewed.Generation != la.Generation || !renewed.Expires.After(la.Expires) {
		t.Fatalf("renewal: got %+v, %v, want generation %d and a later expiry", renewed, err, la.Generation)
	}
	e.clock.Advance(59 * time.Second)
	_, err = b.AcquireLease(ctx, key, "B", time.Minute)
	wantErr(t, "B before the renewed lease expires", err, store.ErrLeaseHeld)
	e.clock.Advance(time.Second) // A died: its lease runs out
	lb, err := b.AcquireLease(ctx, key, "B", time.Minute)
	if err != nil || lb.Owner != "B" || lb.Generation != la.Generation+1 {
		t.Fatalf("handover: got %+v, %v, want owner B generation %d", lb, err, la.Generation+1)
	}
	_, err = e.s.AcquireLease(ctx, key, "A", time.Minute)
	wantErr(t, "A after the handover", err, store.ErrLeaseHeld)
	if err := e.s.ReleaseLease(ctx, key, "A"); err != nil { // not A's: a no-op
		t.Fatal(err)
	}
	_, err = e.s.AcquireLease(ctx, key, "A", time.Minute)
	wantErr(t, "A after releasing a lease it does not hold", err, store.ErrLeaseHeld)
	if err := b.ReleaseLease(ctx, key, "B"); err != nil {
		t.Fatal(err)
	}
	if _, err := e.s.AcquireLease(ctx, key, "A", time.Minute); err != nil {
		t.Fatalf("A after B released: %v", err)
	}
	if _, err := e.s.AcquireLease(ctx, Key(2), "A", time.Minute); err != nil {
		t.Fatal(err)
	}
	if n, err := e.s.ReleaseOwner(ctx, "A"); err != nil || n != 2 {
		t.Fatalf("ReleaseOwner: got %d, %v, want 2", n, err)
	}
	if _, err := b.AcquireLease(ctx, Key(2), "B", time.Minute); err != nil {
		t.Fatalf("B after ReleaseOwner(A): %v", err)
	}
}

func testRuns(t *testing.T, f Factory) {
	e := newEnv(t, f, store.Options{})
	ctx := t.Context()
	mustLease := func(k store.ThreadKey, owner string) {
		if _, err := e.s.AcquireLease(ctx, k, owner, time.Minute); err != nil {
			t.Fatal(err)
		}
	}
	mustLease(Key(1), "A")
	r1, err := e.s.CreateRun(ctx, Key(1), "A", "draw a pipeline")
	if err != nil || r1.State != store.RunQueued || r1.Key != Key(1) || r1.Detail != "draw a pipeline" {
		t.Fatalf("CreateRun: got %+v, %v", r1, err)
	}
	if r1, err = e.s.SetRunState(ctx, r1.ID, store.RunRunning, "step 1"); err != nil || r1.State != store.RunRunning {
		t.Fatalf("SetRunState(running): got %+v, %v", r1, err)
	}
	r2, _ := e.s.CreateRun(ctx, Key(2), "B", "no lease: B crashed before taking it")
	if err := e.s.SetRunSign(ctx, r2.ID, "status message 42"); err != nil {
		t.Fatalf("SetRunSign: %v", err)
	}
	if err := e.s.SetRunSign(ctx, r2.ID+1000, "x"); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("SetRunSign of an unknown run: got %v, want ErrNotFound", err)
	}
	mustLease(Key(3), "C")
	r3, _ := e.s.CreateRun(ctx, Key(3), "B", "lease held by someone else")
	r4, _ := e.s.CreateRun(ctx, Key(1), "A", "finished")
	if _, err := e.s.SetRunState(ctx, r4.ID, store.RunDone, "ok"); err != nil {
		t.Fatal(err)
	}

	rec, err := e.s.RecoverRuns(ctx, store.RecoverRequest{})
	if err != nil {
		t.Fatal(err)
	}
	if got := cutIDs(rec); !equal(got, []int64{r2.ID, r3.ID}) {
		t.Fatalf("RecoverRuns: got runs %v, want %v", got, []int64{r2.ID, r3.ID})
	}
	for _, r := range rec {
		if r.State != store.RunInterrupted {
			t.Fatalf("recovered run %d: got state %s, want interrupted", r.ID, r.State)
		}
	}
	if got := rec[0].Sign; got != "status message 42" {
		t.Errorf("recovered run %d: got sign %q, want the one set (the restarted process takes it down)", rec[0].ID, got)
	}
	if got := rec[1].Sign; got != "" {
		t.Errorf("recovered run %d: got sign %q, want none", rec[1].ID, got)
	}
	if rec, _ = e.s.RecoverRuns(ctx, store.RecoverRequest{}); len(rec) != 0 {
		t.Fatalf("second RecoverRuns: got %v, want none", cutIDs(rec))
	}
	e.clock.Advance(time.Minute) // A's lease runs out: A is presumed dead
	rec, err = e.s.RecoverRuns(ctx, store.RecoverRequest{})
	if err != nil || !equal(cutIDs(rec), []int64{r1.ID}) || rec[0].Detail != "step 1" {
		t.Fatalf("RecoverRuns after A's lease expired: got %+v, %v, want run %d", rec, err, r1.ID)
	}
	all, err := e.s.Runs(ctx)
	if err != nil || !equal(ids(all), []int64{r1.ID, r2.ID, r3.ID, r4.ID}) {
		t.Fatalf("Runs(): got %v, %v", ids(all), err)
	}
	done, err := e.s.Runs(ctx, store.RunDone, store.RunFailed)
	if err != nil || !equal(ids(done), []int64{r4.ID}) {
		t.Fatalf("Runs(done, failed): got %v, %v", ids(done), err)
	}
}

func testRunTransitions(t *testing.T, f Factory) {
	e := newEnv(t, f, store.Options{})
	ctx := t.Context()
	tests := []struct {
		path []store.RunState // states set in turn after queued
		ok   bool             // whether the last step is allowed
	}{
		{[]store.RunState{store.RunRunning}, true},
		{[]store.RunState{store.RunRunning, store.RunRunning}, true},
		{[]store.RunState{store.RunRunning, store.RunDone}, true},
		{[]store.RunState{store.RunRunning, store.RunFailed}, true},
		{[]store.RunState{store.RunInterrupted}, true},
		{[]store.RunState{store.RunFailed}, true},
		{[]store.RunState{store.RunRunning, store.RunQueued}, false},
		{[]store.RunState{store.RunDone, store.RunRunning}, false},
		{[]store.RunState{store.RunFailed, store.RunDone}, false},
		{[]store.RunState{store.RunInterrupted, store.RunRunning}, false},
	}
	for _, tt := range tests {
		r, err := e.s.CreateRun(ctx, Key(1), "A", "")
		if err != nil {
			t.Fatal(err)
		}
		for i, st := range tt.path {
			_, err = e.s.SetRunState(ctx, r.ID, st, "")
			last := i == len(tt.path)-1
			if !last && err != nil {
				t.Fatalf("%v: step %s: %v", tt.path, st, err)
			}
		}
		if tt.ok && err != nil {
			t.Errorf("%v: got %v, want allowed", tt.path, err)
		}
		if !tt.ok && !errors.Is(err, store.ErrBadTransition) {
			t.Errorf("%v: got %v, want ErrBadTransition", tt.path, err)
		}
	}
	_, err := e.s.SetRunState(ctx, 99999, store.RunDone, "")
	wantErr(t, "SetRunState of an unknown run", err, store.ErrNotFound)
}

func testPrune(t *testing.T, f Factory) {
	e := newEnv(t, f, store.Options{EventTTL: time.Hour})
	ctx := t.Context()
	oldKey, leasedKey, newKey := Key(1), Key(2), Key(3)
	for _, k := range []store.ThreadKey{oldKey, leasedKey} {
		e.save(k, 0, SceneN(1))
		e.save(k, 1, SceneN(2))
	}
	oldTok, _, err := CreateLink(ctx, e.s, oldKey, store.LinkEdit, time.Time{})
	if err != nil {
		t.Fatal(err)
	}
	oldRun, _ := e.s.CreateRun(ctx, oldKey, "A", "")
	if _, err := e.s.SetRunState(ctx, oldRun.ID, store.RunDone, ""); err != nil {
		t.Fatal(err)
	}
	liveRun, _ := e.s.CreateRun(ctx, oldKey, "A", "still queued")
	if _, err := e.s.ClaimEvents(ctx, "old-event"); err != nil {
		t.Fatal(err)
	}
	e.clock.Advance(30 * 24 * time.Hour)
	cutoff := e.clock.Now().Add(-7 * 24 * time.Hour)
	e.save(newKey, 0, SceneN(1))
	if _, err := e.s.ClaimEvents(ctx, "new-event"); err != nil {
		t.Fatal(err)
	}
	if _, err := e.s.AcquireLease(ctx, leasedKey, "B", time.Minute); err != nil {
		t.Fatal(err)
	}

	st, err := e.s.Prune(ctx, cutoff)
	if err != nil {
		t.Fatal(err)
	}
	want := store.PruneStats{Threads: 1, Revisions: 2, Runs: 1, Events: 1}
	if st != want {
		t.Fatalf("Prune: got %+v, want %+v", st, want)
	}
	_, err = e.s.Load(ctx, oldKey)
	wantErr(t, "Load of a pruned thread", err, store.ErrNotFound)
	_, err = e.s.ResolveLink(ctx, oldTok)
	wantErr(t, "ResolveLink of a pruned thread", err, store.ErrNotFound)
	for _, k := range []store.ThreadKey{leasedKey, newKey} {
		if _, err := e.s.Load(ctx, k); err != nil {
			t.Fatalf("Load of kept thread %s: %v", k, err)
		}
	}
	runs, _ := e.s.Runs(ctx)
	if !equal(ids(runs), []int64{liveRun.ID}) {
		t.Fatalf("runs after Prune: got %v, want %v", ids(runs), []int64{liveRun.ID})
	}
	if got, _ := e.s.ClaimEvents(ctx, "new-event"); got {
		t.Fatal("Prune forgot a live event id")
	}
	e.clock.Advance(time.Hour) // B's lease has run out: nobody works on leasedKey any more
	want = store.PruneStats{Threads: 1, Revisions: 2, Leases: 1, Events: 1}
	if st, err = e.s.Prune(ctx, cutoff); err != nil || st != want {
		t.Fatalf("second Prune: got %+v, %v, want %+v", st, err, want)
	}
	_, err = e.s.Load(ctx, leasedKey)
	wantErr(t, "Load of an old thread whose lease ran out", err, store.ErrNotFound)
	if _, err := e.s.Load(ctx, newKey); err != nil {
		t.Fatalf("Load of a thread newer than the cutoff: %v", err)
	}
}

func ids(rs []store.Run) []int64 {
	var out []int64
	for _, r := range rs {
		out = append(out, r.ID)
	}
	return out
}

func cutIDs(cs []store.Cut) []int64 {
	var out []int64
	for _, c := range cs {
		out = append(out, c.ID)
	}
	return out
}

func equal(a, b []int64) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}
