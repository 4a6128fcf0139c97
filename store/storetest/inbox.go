package storetest

import (
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/excalibot/excalibot/store"
)

// msgBody is a distinct inbox body.
func msgBody(n int) []byte { return fmt.Appendf(nil, `{"text":"message %d"}`, n) }

func (e *env) accept(s Store, key store.ThreadKey, n int, eventIDs ...string) store.Accepted {
	e.t.Helper()
	a, err := s.Accept(e.t.Context(), store.AcceptRequest{Key: key, EventIDs: eventIDs, Body: msgBody(n)})
	if err != nil || !a.Fresh || a.ID == 0 {
		e.t.Fatalf("Accept(message %d): got %+v, %v, want a fresh message", n, a, err)
	}
	return a
}

func (e *env) pending(key store.ThreadKey) []int64 {
	e.t.Helper()
	ms, err := e.s.Pending(e.t.Context(), key, 0)
	if err != nil {
		e.t.Fatalf("Pending: %v", err)
	}
	return msgIDs(ms)
}

func msgIDs(ms []store.InboxMessage) []int64 {
	var out []int64
	for _, m := range ms {
		out = append(out, m.ID)
	}
	return out
}

func testAccept(t *testing.T, f Factory) {
	e := newEnv(t, f, store.Options{EventTTL: time.Hour})
	ctx, key := t.Context(), Key(1)
	a1 := e.accept(e.s, key, 1, "ev:1", "msg:1")
	// The thread is known from its first message on, before any revision.
	th := e.load(key)
	if th.Rev != 0 || th.Scene != nil {
		t.Fatalf("thread after its first message: got revision %d, scene %q, want revision 0 without a scene", th.Rev, th.Scene)
	}
	for _, ids := range [][]string{{"ev:1", "msg:1"}, {"ev:2", "msg:1"}} {
		got, err := e.another().Accept(ctx, store.AcceptRequest{Key: key, EventIDs: ids, Body: msgBody(1)})
		if err != nil || got.Fresh || got.ID != 0 {
			t.Fatalf("Accept of a redelivery %v: got %+v, %v, want not fresh", ids, got, err)
		}
	}
	a2 := e.accept(e.s, key, 2) // no ids: no de-duplication
	a3 := e.accept(e.another(), key, 3, "ev:2", "msg:3")
	if got, want := e.pending(key), []int64{a1.ID, a2.ID, a3.ID}; !slices.Equal(got, want) {
		t.Fatalf("Pending: got %v, want %v in the order accepted", got, want)
	}
	ms, err := e.s.Pending(ctx, key, 2)
	if err != nil || len(ms) != 2 || string(ms[0].Body) != string(msgBody(1)) || ms[0].Key != key || ms[0].State != store.InboxPending {
		t.Fatalf("Pending(limit 2): got %+v, %v", ms, err)
	}

	// A refusal: nothing queued in the inbox, the reply in the outbox, the ids claimed.
	refusal := store.Outgoing{Key: key, Kind: "reply", Body: []byte("too long")}
	got, err := e.s.Accept(ctx, store.AcceptRequest{Key: key, EventIDs: []string{"ev:9"}, Replies: []store.Outgoing{refusal}})
	if err != nil || !got.Fresh || got.ID != 0 {
		t.Fatalf("Accept of a refusal: got %+v, %v, want fresh with no message", got, err)
	}
	if n := len(e.pending(key)); n != 3 {
		t.Fatalf("a refusal queued a message: %d pending", n)
	}
	out, err := e.s.Outbox(ctx, key)
	if err != nil || len(out) != 1 || out[0].Kind != "reply" || string(out[0].Body) != "too long" || out[0].State != store.OutboxPending {
		t.Fatalf("outbox after a refusal: got %+v, %v", out, err)
	}
	if got, _ := e.s.ClaimEvents(ctx, "ev:9"); got {
		t.Fatal("the refusal's event id was not claimed")
	}

	// Bad requests record nothing, not even their event ids.
	bad := []struct {
		name string
		req  store.AcceptRequest
		want error
	}{
		{"no platform", store.AcceptRequest{Key: store.ThreadKey{Channel: "c"}, EventIDs: []string{"ev:bad"}, Body: msgBody(1)}, store.ErrInvalid},
		{"empty body", store.AcceptRequest{Key: key, EventIDs: []string{"ev:bad"}, Body: []byte{}}, store.ErrInvalid},
		{"body above 1 MB", store.AcceptRequest{Key: key, EventIDs: []string{"ev:bad"}, Body: make([]byte, 1<<20+1)}, store.ErrTooLarge},
		{"bad event id", store.AcceptRequest{Key: key, EventIDs: []string{"ev:bad", strings.Repeat("x", 513)}, Body: msgBody(1)}, store.ErrInvalid},
		{"reply for another thread", store.AcceptRequest{Key: key, EventIDs: []string{"ev:bad"}, Body: msgBody(1),
			Replies: []store.Outgoing{{Key: Key(2), Kind: "reply", Body: []byte("x")}}}, store.ErrInvalid},
		{"reply without a kind", store.AcceptRequest{Key: key, EventIDs: []string{"ev:bad"},
			Replies: []store.Outgoing{{Key: key, Body: []byte("x")}}}, store.ErrInvalid},
	}
	for _, tt := range bad {
		_, err := e.s.Accept(ctx, tt.req)
		wantErr(t, "Accept with "+tt.name, err, tt.want)
	}
	if got, err := e.s.ClaimEvents(ctx, "ev:bad"); err != nil || !got {
		t.Fatalf("a refused Accept claimed its event id: %v, %v", got, err)
	}
	if n := len(e.pending(key)); n != 3 {
		t.Fatalf("refused Accepts queued messages: %d pending, want 3", n)
	}
}

// testAcceptOrder: replicas accept messages of one thread at once while readers watch its
// pending messages; a reader must never see a message before an earlier-numbered one of the same
// thread (ids follow the order of the commits, so draining in id order is draining in order).
func testAcceptOrder(t *testing.T, f Factory) {
	e := newEnv(t, f, store.Options{})
	stores := []Store{e.s, e.another(), e.another()}
	ctx, key := t.Context(), Key(1)
	const writers, each = 6, 10
	var wg sync.WaitGroup
	stop := make(chan struct{})
	var mu sync.Mutex
	var seen [][]int64
	for r := range 2 {
		wg.Go(func() {
			for {
				select {
				case <-stop:
					return
				default:
				}
				ms, err := stores[r].Pending(ctx, key, 0)
				if err != nil {
					t.Error(err)
					return
				}
				mu.Lock()
				seen = append(seen, msgIDs(ms))
				mu.Unlock()
			}
		})
	}
	var writes sync.WaitGroup
	for w := range writers {
		writes.Go(func() {
			for i := range each {
				if _, err := stores[w%len(stores)].Accept(ctx, store.AcceptRequest{Key: key, Body: msgBody(w*100 + i)}); err != nil {
					t.Error(err)
					return
				}
			}
		})
	}
	writes.Wait()
	close(stop)
	wg.Wait()
	all := e.pending(key)
	if len(all) != writers*each {
		t.Fatalf("%d messages pending, want %d", len(all), writers*each)
	}
	for _, ids := range seen {
		if len(ids) == 0 {
			continue
		}
		last := ids[len(ids)-1]
		for _, id := range all {
			if id < last && !slices.Contains(ids, id) {
				t.Fatalf("a reader saw message %d before message %d of the same thread (saw %v)", last, id, ids)
			}
		}
	}
}

func testClaimThreads(t *testing.T, f Factory) {
	e := newEnv(t, f, store.Options{})
	ctx := t.Context()
	b := e.another()
	claim := func(s Store, owner string, limit int, platforms ...string) []store.ThreadKey {
		t.Helper()
		if platforms == nil {
			platforms = []string{"slack"}
		}
		cs, err := s.ClaimThreads(ctx, store.ClaimRequest{Owner: owner, TTL: time.Minute, Limit: limit, Platforms: platforms})
		if err != nil {
			t.Fatalf("ClaimThreads(%s): %v", owner, err)
		}
		var out []store.ThreadKey
		for _, c := range cs {
			if c.Lease.Owner != owner || len(c.Interrupted) != 0 {
				t.Fatalf("ClaimThreads(%s): got %+v", owner, c)
			}
			out = append(out, c.Lease.Key)
		}
		return out
	}
	if got := claim(e.s, "A", 5); len(got) != 0 {
		t.Fatalf("claims without messages: %v", got)
	}
	e.accept(e.s, Key(2), 1)
	e.accept(e.s, Key(1), 2)
	e.accept(e.s, Key(2), 3)
	tg := store.ThreadKey{Platform: "telegram", Channel: "42"}
	e.accept(e.s, tg, 4)
	if _, err := e.s.Accept(ctx, store.AcceptRequest{Key: Key(3), Body: msgBody(5), Pin: "A"}); err != nil {
		t.Fatal(err)
	}
	// The thread with the oldest pending message comes first; a leased thread is not claimed again.
	if got := claim(e.s, "A", 1); !slices.Equal(got, []store.ThreadKey{Key(2)}) {
		t.Fatalf("A's first claim: got %v, want %v", got, Key(2))
	}
	if got := claim(b, "B", 5); !slices.Equal(got, []store.ThreadKey{Key(1)}) {
		t.Fatalf("B's claim: got %v, want only %v (Key 2 is A's; Key 3 is pinned to A; telegram is not B's)", got, Key(1))
	}
	if got := claim(e.s, "A", 5); !slices.Equal(got, []store.ThreadKey{Key(3)}) {
		t.Fatalf("A's second claim: got %v, want the thread pinned to A", got)
	}
	if got := claim(b, "B", 5, "telegram"); !slices.Equal(got, []store.ThreadKey{tg}) {
		t.Fatalf("B's claim of telegram: got %v, want %v", got, tg)
	}
	if got := claim(b, "B", 5, "web"); len(got) != 0 {
		t.Fatalf("claim of a platform without messages: %v", got)
	}
	for _, req := range []store.ClaimRequest{{TTL: time.Minute, Limit: 1}, {Owner: "A", Limit: 1}, {Owner: "A", TTL: time.Minute}} {
		_, err := e.s.ClaimThreads(ctx, req)
		wantErr(t, fmt.Sprintf("ClaimThreads(%+v)", req), err, store.ErrInvalid)
	}

	// The holder drains the thread; with nothing pending its lease goes, and another can claim it.
	if released, err := e.s.ReleaseIdle(ctx, Key(2), "A"); err != nil || released {
		t.Fatalf("ReleaseIdle with messages pending: got %v, %v, want false", released, err)
	}
	_, err := b.ReleaseIdle(ctx, Key(2), "B")
	wantErr(t, "ReleaseIdle of a lease B does not hold", err, store.ErrLeaseHeld)
	r, err := e.s.StartRun(ctx, store.StartRunRequest{Key: Key(2), Owner: "A", Lease: time.Minute, Inbox: e.pending(Key(2))})
	if err != nil {
		t.Fatal(err)
	}
	if released, err := e.s.ReleaseIdle(ctx, Key(2), "A"); err != nil || !released {
		t.Fatalf("ReleaseIdle of a drained thread: got %v, %v, want true", released, err)
	}
	if released, err := e.s.ReleaseIdle(ctx, Key(2), "A"); err != nil || !released {
		t.Fatalf("ReleaseIdle without a lease: got %v, %v, want true (nothing to release)", released, err)
	}
	if _, _, err := e.s.FinishRun(ctx, store.FinishRunRequest{ID: r.ID, State: store.RunDone}); err != nil {
		t.Fatal(err)
	}
	e.accept(e.s, Key(2), 6)
	if got := claim(b, "B", 5); !slices.Equal(got, []store.ThreadKey{Key(2)}) {
		t.Fatalf("B's claim after A released: got %v, want %v", got, Key(2))
	}
}

// testTakeover: a holder that stops renewing loses its thread to the next claimer, whose claim
// interrupts the dead run (and its message) and queues the notice before anything else.
func testTakeover(t *testing.T, f Factory) {
	e := newEnv(t, f, store.Options{})
	ctx, key := t.Context(), Key(1)
	b := e.another()
	first := e.accept(e.s, key, 1)
	cs, err := e.s.ClaimThreads(ctx, store.ClaimRequest{Owner: "A", TTL: 30 * time.Second, Limit: 1, Platforms: []string{"slack"}})
	if err != nil || len(cs) != 1 {
		t.Fatalf("A's claim: %+v, %v", cs, err)
	}
	run, err := e.s.StartRun(ctx, store.StartRunRequest{Key: key, Owner: "A", Detail: "draw", Lease: 30 * time.Second, Inbox: []int64{first.ID}})
	if err != nil {
		t.Fatal(err)
	}
	second := e.accept(b, key, 2)
	notice := store.Recovery{Notice: func(r store.Cut) []store.Outgoing {
		return []store.Outgoing{{Key: r.Key, Kind: "reply", Body: fmt.Appendf(nil, "run %d was interrupted", r.ID)}}
	}}
	claimB := func() []store.Claim {
		t.Helper()
		cs, err := b.ClaimThreads(ctx, store.ClaimRequest{Owner: "B", TTL: 30 * time.Second, Limit: 5, Platforms: []string{"slack"}, Recovery: notice})
		if err != nil {
			t.Fatal(err)
		}
		return cs
	}
	// A renews while it works: B gets nothing, however long the run takes.
	for range 4 {
		e.clock.Advance(20 * time.Second)
		if n, err := e.s.RenewLeases(ctx, "A", 30*time.Second); err != nil || n != 1 {
			t.Fatalf("RenewLeases(A): got %d, %v, want 1", n, err)
		}
		if cs := claimB(); len(cs) != 0 {
			t.Fatalf("B claimed A's live thread: %+v", cs)
		}
		if rec, err := b.RecoverRuns(ctx, store.RecoverRequest{Recovery: notice}); err != nil || len(rec) != 0 {
			t.Fatalf("B recovered A's live run: %v, %v", cutIDs(rec), err)
		}
	}
	// A dies: its lease runs out, and a renewal after that does not bring it back, nor does A's
	// own claim (its run may still be going on there).
	e.clock.Advance(31 * time.Second)
	if n, err := e.s.RenewLeases(ctx, "A", 30*time.Second); err != nil || n != 0 {
		t.Fatalf("RenewLeases of an expired lease: got %d, %v, want 0", n, err)
	}
	if cs, err := e.s.ClaimThreads(ctx, store.ClaimRequest{Owner: "A", TTL: 30 * time.Second, Limit: 5, Platforms: []string{"slack"}}); err != nil || len(cs) != 0 {
		t.Fatalf("A's claim of its own lapsed lease: got %+v, %v, want none", cs, err)
	}
	cs = claimB()
	if len(cs) != 1 || cs[0].Lease.Owner != "B" || len(cs[0].Interrupted) != 1 || cs[0].Interrupted[0].ID != run.ID ||
		cs[0].Interrupted[0].State != store.RunInterrupted {
		t.Fatalf("B's takeover: got %+v, want the thread with A's run %d interrupted", cs, run.ID)
	}
	ms, err := b.Inbox(ctx, key)
	if err != nil || len(ms) != 2 || ms[0].State != store.InboxInterrupted || ms[0].Run != run.ID || ms[1].State != store.InboxPending || ms[1].ID != second.ID {
		t.Fatalf("inbox after the takeover: got %+v, %v, want A's message interrupted and B's pending", ms, err)
	}
	out, err := b.Outbox(ctx, key)
	if err != nil || len(out) != 1 || string(out[0].Body) != fmt.Sprintf("run %d was interrupted", run.ID) {
		t.Fatalf("outbox after the takeover: got %+v, %v, want the notice", out, err)
	}
	// A wakes up: its run ends nowhere, its lease is B's.
	_, _, err = e.s.FinishRun(ctx, store.FinishRunRequest{ID: run.ID, State: store.RunDone,
		Save: &store.SaveRequest{Key: key, Scene: SceneN(1), Author: store.AuthorAgent}})
	wantErr(t, "FinishRun of the run B took over", err, store.ErrBadTransition)
	if th := e.load(key); th.Rev != 0 {
		t.Fatalf("the taken-over run saved revision %d", th.Rev)
	}
	_, err = e.s.StartRun(ctx, store.StartRunRequest{Key: key, Owner: "A", Lease: 30 * time.Second, Inbox: []int64{second.ID}})
	wantErr(t, "A's next run on B's thread", err, store.ErrLeaseHeld)
	if ms := e.pending(key); !slices.Equal(ms, []int64{second.ID}) {
		t.Fatalf("a refused StartRun took messages: pending %v", ms)
	}
}

// testStartRunInbox: a run takes exactly the pending messages it names, or none.
func testStartRunInbox(t *testing.T, f Factory) {
	e := newEnv(t, f, store.Options{})
	ctx := t.Context()
	m1, m2 := e.accept(e.s, Key(1), 1), e.accept(e.s, Key(1), 2)
	other := e.accept(e.s, Key(2), 3)
	for _, ids := range [][]int64{{m1.ID, other.ID}, {m1.ID, 99999}} {
		_, err := e.s.StartRun(ctx, store.StartRunRequest{Key: Key(1), Owner: "A", Lease: time.Minute, Inbox: ids})
		wantErr(t, fmt.Sprintf("StartRun taking %v", ids), err, store.ErrConflict)
	}
	if runs, _ := e.s.Runs(ctx); len(runs) != 0 {
		t.Fatalf("refused StartRuns recorded runs %v", ids(runs))
	}
	if got := e.pending(Key(1)); !slices.Equal(got, []int64{m1.ID, m2.ID}) {
		t.Fatalf("refused StartRuns took messages: pending %v", got)
	}
	r, err := e.s.StartRun(ctx, store.StartRunRequest{Key: Key(1), Owner: "A", Lease: time.Minute, Inbox: []int64{m1.ID, m2.ID}})
	if err != nil {
		t.Fatal(err)
	}
	_, err = e.s.StartRun(ctx, store.StartRunRequest{Key: Key(1), Owner: "A", Lease: time.Minute, Inbox: []int64{m2.ID}})
	wantErr(t, "a second run taking a taken message", err, store.ErrConflict)
	if _, _, err := e.s.FinishRun(ctx, store.FinishRunRequest{ID: r.ID, State: store.RunFailed}); err != nil {
		t.Fatal(err)
	}
	r2, err := e.s.StartRun(ctx, store.StartRunRequest{Key: Key(2), Owner: "A", Lease: time.Minute, Inbox: []int64{other.ID}})
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := e.s.FinishRun(ctx, store.FinishRunRequest{ID: r2.ID, State: store.RunInterrupted}); err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		key  store.ThreadKey
		want []store.InboxState
	}{{Key(1), []store.InboxState{store.InboxDone, store.InboxDone}}, {Key(2), []store.InboxState{store.InboxInterrupted}}} {
		ms, err := e.s.Inbox(ctx, tt.key)
		var got []store.InboxState
		for _, m := range ms {
			got = append(got, m.State)
		}
		if err != nil || !slices.Equal(got, tt.want) {
			t.Fatalf("inbox of %s after its run: got %v, %v, want %v", tt.key, got, err, tt.want)
		}
	}
	if ms, err := e.s.Inbox(ctx, Key(1), store.InboxPending); err != nil || len(ms) != 0 {
		t.Fatalf("Inbox(pending): got %v, %v, want none", ms, err)
	}
}

// testConcurrentClaimThreads: replicas claim at once from many threads with messages; each thread
// goes to exactly one of them.
func testConcurrentClaimThreads(t *testing.T, f Factory) {
	e := newEnv(t, f, store.Options{})
	ctx := t.Context()
	const threads, replicas = 24, 6
	for i := range threads {
		e.accept(e.s, Key(i), i)
	}
	var mu sync.Mutex
	got := map[store.ThreadKey][]string{}
	var wg sync.WaitGroup
	start := make(chan struct{})
	for r := range replicas {
		s := e.another()
		owner := fmt.Sprint("R", r)
		wg.Go(func() {
			<-start
			for {
				cs, err := s.ClaimThreads(ctx, store.ClaimRequest{Owner: owner, TTL: time.Minute, Limit: 3, Platforms: []string{"slack"}})
				if err != nil {
					t.Error(err)
					return
				}
				if len(cs) == 0 {
					return
				}
				mu.Lock()
				for _, c := range cs {
					got[c.Lease.Key] = append(got[c.Lease.Key], owner)
				}
				mu.Unlock()
			}
		})
	}
	close(start)
	wg.Wait()
	if len(got) != threads {
		t.Fatalf("%d threads claimed, want %d", len(got), threads)
	}
	for k, owners := range got {
		if len(owners) != 1 {
			t.Fatalf("thread %s claimed by %v, want exactly one replica", k, owners)
		}
	}
}

// testRecoverRunsTells: runs whose lease ran out are interrupted with their messages and the
// notice is queued in the same commit; a live lease is left alone.
func testRecoverRunsTells(t *testing.T, f Factory) {
	e := newEnv(t, f, store.Options{})
	ctx := t.Context()
	m1, m2 := e.accept(e.s, Key(1), 1), e.accept(e.s, Key(2), 2)
	dead, err := e.s.StartRun(ctx, store.StartRunRequest{Key: Key(1), Owner: "A", Lease: 30 * time.Second, Inbox: []int64{m1.ID}})
	if err != nil {
		t.Fatal(err)
	}
	e.clock.Advance(20 * time.Second)
	live, err := e.another().StartRun(ctx, store.StartRunRequest{Key: Key(2), Owner: "B", Lease: 30 * time.Second, Inbox: []int64{m2.ID}})
	if err != nil {
		t.Fatal(err)
	}
	e.clock.Advance(11 * time.Second) // A's lease is over, B's is not
	notice := store.Recovery{Notice: func(r store.Cut) []store.Outgoing {
		return []store.Outgoing{{Key: r.Key, Kind: "reply", Body: []byte("interrupted: " + r.Detail)}}
	}}
	rec, err := e.s.RecoverRuns(ctx, store.RecoverRequest{Recovery: notice})
	if err != nil || !equal(cutIDs(rec), []int64{dead.ID}) || rec[0].Fate != store.FateTold {
		t.Fatalf("RecoverRuns: got %+v, %v, want only A's run %d, told", rec, err, dead.ID)
	}
	if ms, _ := e.s.Inbox(ctx, Key(1)); len(ms) != 1 || ms[0].State != store.InboxInterrupted {
		t.Fatalf("A's message after recovery: %+v, want interrupted", ms)
	}
	if ms, _ := e.s.Inbox(ctx, Key(2)); len(ms) != 1 || ms[0].State != store.InboxTaken || ms[0].Run != live.ID {
		t.Fatalf("B's message after recovery: %+v, want still taken by run %d", ms, live.ID)
	}
	out, err := e.s.Outbox(ctx, Key(1))
	if err != nil || len(out) != 1 || string(out[0].Body) != "interrupted: " {
		t.Fatalf("outbox after recovery: %+v, %v", out, err)
	}
	if out, _ := e.s.Outbox(ctx, Key(2)); len(out) != 0 {
		t.Fatalf("a notice was queued for B's live run: %+v", out)
	}
	// The sole owner alive (a caller that knows it): every other owner's live work is taken over
	// now, leases and outbox claims included.
	if _, err := e.s.Enqueue(ctx, reply(Key(3), "held by B")); err != nil {
		t.Fatal(err)
	}
	held := e.claimOutbox(e.another(), "B", time.Hour) // the first notice and this row
	if len(held) != 2 {
		t.Fatalf("B's claim: %v", outIDs(held))
	}
	rec, err = e.s.RecoverRuns(ctx, store.RecoverRequest{Recovery: notice, SoleOwner: "C"})
	if err != nil || !equal(cutIDs(rec), []int64{live.ID}) {
		t.Fatalf("RecoverRuns for the sole owner C: got %v, %v, want B's run %d", cutIDs(rec), err, live.ID)
	}
	if _, err := e.s.AcquireLease(ctx, Key(2), "C", time.Minute); err != nil {
		t.Fatalf("B's lease after the sole owner's recovery: %v", err)
	}
	if got := e.claimOutbox(e.s, "C", time.Minute); len(got) != 3 {
		t.Fatalf("C's claim after the recovery: %v, want B's two rows and the notice of B's run", outIDs(got))
	}
	// A notice that cannot be queued takes the whole recovery back.
	third, err := e.s.StartRun(ctx, store.StartRunRequest{Key: Key(4), Owner: "D", Lease: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	e.clock.Advance(time.Minute)
	_, err = e.s.RecoverRuns(ctx, store.RecoverRequest{Recovery: store.Recovery{Notice: func(r store.Cut) []store.Outgoing {
		return []store.Outgoing{{Key: r.Key, Body: []byte("no kind")}}
	}}})
	wantErr(t, "RecoverRuns with a bad notice", err, store.ErrInvalid)
	if runs, _ := e.s.Runs(ctx, store.RunRunning); !equal(ids(runs), []int64{third.ID}) {
		t.Fatalf("a failed recovery changed runs: running %v", ids(runs))
	}
}

// testSeenEvents: SeenEvents says whether a kept message's event id is claimed, on any store of
// the database, until its claim expires; it claims nothing itself.
func testSeenEvents(t *testing.T, f Factory) {
	e := newEnv(t, f, store.Options{EventTTL: time.Hour})
	ctx := t.Context()
	seen := func(s Store, what string, want bool, ids ...string) {
		t.Helper()
		if got, err := s.SeenEvents(ctx, ids...); err != nil || got != want {
			t.Fatalf("SeenEvents %s: got %v, %v, want %v", what, got, err, want)
		}
	}
	seen(e.s, "before any message", false, "ev:a")
	seen(e.s, "asked twice", false, "ev:a") // asking claims nothing
	e.accept(e.s, Key(1), 1, "ev:a", "ev:b")
	seen(e.s, "of a kept message", true, "ev:a")
	seen(e.s, "of its second id", true, "ev:x", "ev:b")
	seen(e.another(), "on a second store", true, "ev:b")
	seen(e.s, "of another message", false, "ev:c")
	e.clock.Advance(time.Hour)
	seen(e.s, "once its claim expired", false, "ev:a")
}
