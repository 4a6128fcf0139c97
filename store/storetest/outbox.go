package storetest

import (
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/excalibot/excalibot/store"
)

func reply(key store.ThreadKey, body string) store.Outgoing {
	return store.Outgoing{Key: key, Kind: "reply", Body: []byte(body)}
}

func outIDs(os []store.OutboxItem) []int64 {
	var out []int64
	for _, o := range os {
		out = append(out, o.ID)
	}
	return out
}

func (e *env) claimOutbox(s Store, owner string, ttl time.Duration, platforms ...string) []store.OutboxItem {
	e.t.Helper()
	if platforms == nil {
		platforms = []string{"slack"}
	}
	os, err := s.ClaimOutbox(e.t.Context(), store.ClaimOutboxRequest{Owner: owner, TTL: ttl, Limit: 10, Platforms: platforms})
	if err != nil {
		e.t.Fatalf("ClaimOutbox(%s): %v", owner, err)
	}
	return os
}

func (e *env) runState(id int64) store.RunState {
	e.t.Helper()
	all, err := e.s.Runs(e.t.Context())
	if err != nil {
		e.t.Fatal(err)
	}
	for _, r := range all {
		if r.ID == id {
			return r.State
		}
	}
	e.t.Fatalf("run %d not found", id)
	return ""
}

// testRunReplies: a run finished with replies is replying until they are posted, then takes the
// state it was finished with; its replies are posted in order, parts recorded as they go.
func testRunReplies(t *testing.T, f Factory) {
	e := newEnv(t, f, store.Options{})
	ctx, key := t.Context(), Key(1)
	b := e.another()
	m := e.accept(e.s, key, 1)
	r, err := e.s.StartRun(ctx, store.StartRunRequest{Key: key, Owner: "A", Lease: time.Minute, Inbox: []int64{m.ID}})
	if err != nil {
		t.Fatal(err)
	}
	_, _, err = e.s.FinishRun(ctx, store.FinishRunRequest{ID: r.ID, State: store.RunDone, Replies: []store.Outgoing{reply(Key(2), "x")}})
	wantErr(t, "FinishRun with a reply for another thread", err, store.ErrInvalid)
	if st := e.runState(r.ID); st != store.RunRunning {
		t.Fatalf("a refused FinishRun moved the run to %s", st)
	}
	run, th, err := e.s.FinishRun(ctx, store.FinishRunRequest{ID: r.ID, State: store.RunDone,
		Save:    &store.SaveRequest{Key: key, Scene: SceneN(1), Author: store.AuthorAgent},
		Replies: []store.Outgoing{reply(key, "picture"), {Key: key, Kind: "signs", Body: []byte("sign")}}})
	if err != nil || run.State != store.RunReplying || th == nil || th.Rev != 1 {
		t.Fatalf("FinishRun with replies: got %+v, %v, %v, want replying with revision 1", run, th, err)
	}
	if ms, _ := e.s.Inbox(ctx, key); len(ms) != 1 || ms[0].State != store.InboxDone {
		t.Fatalf("the run's message: %+v, want done (its answer is kept)", ms)
	}
	// A replying run is neither recovered nor pruned while its replies wait.
	e.clock.Advance(2 * time.Minute)
	if rec, err := e.s.RecoverRuns(ctx, store.RecoverRequest{}); err != nil || len(rec) != 0 {
		t.Fatalf("RecoverRuns took a replying run: %v, %v", cutIDs(rec), err)
	}
	got := e.claimOutbox(e.s, "A", time.Minute)
	if len(got) != 2 || got[0].Kind != "reply" || string(got[0].Body) != "picture" || got[1].Kind != "signs" || got[0].Run != r.ID {
		t.Fatalf("ClaimOutbox: got %+v, want the run's two rows in order", got)
	}
	if again := e.claimOutbox(b, "B", time.Minute); len(again) != 0 {
		t.Fatalf("B claimed rows A holds: %v", outIDs(again))
	}
	if err := e.s.RecordPosted(ctx, got[0].ID, "A", "file:F1"); err != nil {
		t.Fatal(err)
	}
	err = b.RecordPosted(ctx, got[0].ID, "B", "file:F2")
	wantErr(t, "RecordPosted by an owner without the claim", err, store.ErrLeaseHeld)
	for _, part := range []string{"", "two\nlines"} {
		err := e.s.RecordPosted(ctx, got[0].ID, "A", part)
		wantErr(t, fmt.Sprintf("RecordPosted(%q)", part), err, store.ErrInvalid)
	}
	if err := e.s.SettleOutbox(ctx, store.Settle{ID: got[0].ID, Owner: "A", State: store.OutboxSent, Part: "1700000000.000200"}); err != nil {
		t.Fatal(err)
	}
	if st := e.runState(r.ID); st != store.RunReplying {
		t.Fatalf("run after its first reply: %s, want still replying", st)
	}
	if err := e.s.SettleOutbox(ctx, store.Settle{ID: got[1].ID, Owner: "A", State: store.OutboxSent}); err != nil {
		t.Fatal(err)
	}
	if st := e.runState(r.ID); st != store.RunDone {
		t.Fatalf("run after all its replies: %s, want done", st)
	}
	out, err := e.s.Outbox(ctx, key, store.OutboxSent)
	if err != nil || len(out) != 2 || !slices.Equal(out[0].Posted, []string{"file:F1", "1700000000.000200"}) {
		t.Fatalf("sent rows: got %+v, %v, want both with the first's parts", out, err)
	}
	err = e.s.SettleOutbox(ctx, store.Settle{ID: got[1].ID, Owner: "A", State: store.OutboxSent})
	wantErr(t, "settling a sent row again", err, store.ErrLeaseHeld)

	// Replies claimed for the run's owner: its own sender posts them, unless it dies.
	r2, err := e.s.StartRun(ctx, store.StartRunRequest{Key: key, Owner: "A", Lease: time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := e.s.FinishRun(ctx, store.FinishRunRequest{ID: r2.ID, State: store.RunFailed,
		Replies: []store.Outgoing{reply(key, "sorry")}, Claim: 30 * time.Second}); err != nil {
		t.Fatal(err)
	}
	if again := e.claimOutbox(b, "B", time.Minute); len(again) != 0 {
		t.Fatalf("B claimed replies held for A: %v", outIDs(again))
	}
	mine := e.claimOutbox(e.s, "A", time.Minute)
	if len(mine) != 1 || string(mine[0].Body) != "sorry" {
		t.Fatalf("A's claim of its own run's reply: got %+v", mine)
	}
	if again := e.claimOutbox(e.s, "A", time.Minute); !slices.Equal(outIDs(again), outIDs(mine)) {
		t.Fatalf("A's second claim: got %v, want its held row again", outIDs(again))
	}
	e.clock.Advance(time.Minute) // A died before posting it
	if taken := e.claimOutbox(b, "B", time.Minute); !slices.Equal(outIDs(taken), outIDs(mine)) {
		t.Fatalf("B's claim after A's claim lapsed: got %v, want %v", outIDs(taken), outIDs(mine))
	}
	if err := b.SettleOutbox(ctx, store.Settle{ID: mine[0].ID, Owner: "B", State: store.OutboxSent}); err != nil {
		t.Fatal(err)
	}
	if st := e.runState(r2.ID); st != store.RunFailed {
		t.Fatalf("run after its reply: %s, want the failed it finished as", st)
	}
	err = e.s.SettleOutbox(ctx, store.Settle{ID: 99999, Owner: "A", State: store.OutboxSent})
	wantErr(t, "settling an unknown row", err, store.ErrNotFound)
	err = e.s.SettleOutbox(ctx, store.Settle{ID: got[1].ID, Owner: "A", State: "lost"})
	wantErr(t, "settling in an unknown state", err, store.ErrInvalid)
}

// testOutboxOrder: a thread's rows go in order: a row waiting for its next attempt holds back the
// rows behind it, a dead one does not; other threads go on meanwhile.
func testOutboxOrder(t *testing.T, f Factory) {
	e := newEnv(t, f, store.Options{})
	ctx := t.Context()
	ids, err := e.s.Enqueue(ctx, reply(Key(1), "one"), reply(Key(1), "two"), reply(Key(2), "other"), reply(Key(1), "three"))
	if err != nil || len(ids) != 4 {
		t.Fatalf("Enqueue: %v, %v", ids, err)
	}
	got := e.claimOutbox(e.s, "A", time.Minute)
	if want := []int64{ids[0], ids[1], ids[3], ids[2]}; !slices.Equal(outIDs(got), want) {
		t.Fatalf("ClaimOutbox: got %v, want thread 1's rows then thread 2's (%v)", outIDs(got), want)
	}
	// "one" fails: it waits a minute, and "two" and "three" with it.
	if err := e.s.SettleOutbox(ctx, store.Settle{ID: ids[0], Owner: "A", State: store.OutboxPending,
		Error: "slack: ratelimited", Due: e.clock.Now().Add(time.Minute)}); err != nil {
		t.Fatal(err)
	}
	if err := e.s.SettleOutbox(ctx, store.Settle{ID: ids[2], Owner: "A", State: store.OutboxSent}); err != nil {
		t.Fatal(err)
	}
	err = e.s.SettleOutbox(ctx, store.Settle{ID: ids[1], Owner: "A", State: store.OutboxSent})
	wantErr(t, "settling a row released behind a failed one", err, store.ErrLeaseHeld)
	if again := e.claimOutbox(e.another(), "B", time.Minute); len(again) != 0 {
		t.Fatalf("claimed while the thread's first row waits: %v", outIDs(again))
	}
	e.clock.Advance(time.Minute)
	got = e.claimOutbox(e.another(), "B", time.Minute)
	if !slices.Equal(outIDs(got), []int64{ids[0], ids[1], ids[3]}) || got[0].Attempts != 1 || got[0].Error != "slack: ratelimited" {
		t.Fatalf("ClaimOutbox once due: got %+v, want thread 1's rows with one failed attempt", got)
	}
	// B gives "one" up: it is kept, dead, and "two" is first now.
	b := e.another()
	if err := b.SettleOutbox(ctx, store.Settle{ID: ids[0], Owner: "B", State: store.OutboxDead, Error: "channel_not_found"}); err != nil {
		t.Fatal(err)
	}
	if err := b.SettleOutbox(ctx, store.Settle{ID: ids[1], Owner: "B", State: store.OutboxSent}); err != nil {
		t.Fatal(err)
	}
	dead, err := e.s.Outbox(ctx, Key(1), store.OutboxDead)
	if err != nil || len(dead) != 1 || dead[0].ID != ids[0] || dead[0].Error != "channel_not_found" || dead[0].Attempts != 2 {
		t.Fatalf("dead rows: got %+v, %v", dead, err)
	}
	if pend, _ := e.s.Outbox(ctx, Key(1), store.OutboxPending); !slices.Equal(outIDs(pend), []int64{ids[3]}) {
		t.Fatalf("pending rows of thread 1: got %v, want only %d", outIDs(pend), ids[3])
	}
	if _, err := e.s.Enqueue(ctx, store.Outgoing{Key: Key(1), Kind: "reply"}); err == nil {
		t.Fatal("Enqueue of an empty body: no error")
	}
}

// testOutboxClaims: a claim lapses when its owner stops renewing it, and then another sender
// takes the row over; pinned rows and other platforms are left alone.
func testOutboxClaims(t *testing.T, f Factory) {
	e := newEnv(t, f, store.Options{})
	ctx := t.Context()
	b := e.another()
	tg := store.ThreadKey{Platform: "telegram", Channel: "7"}
	ids, err := e.s.Enqueue(ctx, reply(Key(1), "one"), store.Outgoing{Key: Key(2), Kind: "reply", Body: []byte("web"), Pin: "A"}, reply(tg, "tg"))
	if err != nil {
		t.Fatal(err)
	}
	if got := e.claimOutbox(b, "B", 30*time.Second); !slices.Equal(outIDs(got), []int64{ids[0]}) {
		t.Fatalf("B's claim: got %v, want only the unpinned slack row", outIDs(got))
	}
	if got := e.claimOutbox(e.s, "A", 30*time.Second, "slack", "telegram"); !slices.Equal(outIDs(got), []int64{ids[1], ids[2]}) {
		t.Fatalf("A's claim: got %v, want its pinned row and the telegram row", outIDs(got))
	}
	for _, id := range ids[1:] {
		if err := e.s.SettleOutbox(ctx, store.Settle{ID: id, Owner: "A", State: store.OutboxSent}); err != nil {
			t.Fatal(err)
		}
	}
	for range 3 { // B renews while it posts, however long that takes
		e.clock.Advance(20 * time.Second)
		if _, err := b.RenewLeases(ctx, "B", 30*time.Second); err != nil {
			t.Fatal(err)
		}
		if got := e.claimOutbox(e.s, "A", 30*time.Second); len(got) != 0 {
			t.Fatalf("A claimed B's live row: %v", outIDs(got))
		}
	}
	if err := b.RecordPosted(ctx, ids[0], "B", "part-1"); err != nil {
		t.Fatal(err)
	}
	e.clock.Advance(31 * time.Second) // B died mid-post
	got := e.claimOutbox(e.s, "A", 30*time.Second)
	if len(got) != 1 || got[0].ID != ids[0] || !slices.Equal(got[0].Posted, []string{"part-1"}) {
		t.Fatalf("A's takeover: got %+v, want B's row with its posted part", got)
	}
	err = b.RecordPosted(ctx, ids[0], "B", "part-2")
	wantErr(t, "RecordPosted by the sender that lost the claim", err, store.ErrLeaseHeld)
	if err := e.s.SettleOutbox(ctx, store.Settle{ID: ids[0], Owner: "A", State: store.OutboxSent, Part: "part-2"}); err != nil {
		t.Fatal(err)
	}
	for _, req := range []store.ClaimOutboxRequest{{TTL: time.Minute, Limit: 1}, {Owner: "A", Limit: 1}, {Owner: "A", TTL: time.Minute}} {
		_, err := e.s.ClaimOutbox(ctx, req)
		wantErr(t, fmt.Sprintf("ClaimOutbox(%+v)", req), err, store.ErrInvalid)
	}
}

// testConcurrentOutbox: senders on several stores claim at once; every row is claimed by exactly
// one of them, and a thread's rows by one sender at a time.
func testConcurrentOutbox(t *testing.T, f Factory) {
	e := newEnv(t, f, store.Options{})
	ctx := t.Context()
	const threads, rows, senders = 8, 3, 5
	var items []store.Outgoing
	for i := range rows {
		for k := range threads {
			items = append(items, reply(Key(k), fmt.Sprint("row ", i)))
		}
	}
	if _, err := e.s.Enqueue(ctx, items...); err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	claimed := map[int64]string{}
	var wg sync.WaitGroup
	start := make(chan struct{})
	for i := range senders {
		s := e.another()
		owner := fmt.Sprint("S", i)
		wg.Go(func() {
			<-start
			for range 20 {
				got, err := s.ClaimOutbox(ctx, store.ClaimOutboxRequest{Owner: owner, TTL: time.Minute, Limit: 2, Platforms: []string{"slack"}})
				if err != nil {
					t.Error(err)
					return
				}
				for _, o := range got {
					mu.Lock()
					if by, ok := claimed[o.ID]; ok {
						t.Errorf("row %d claimed by %s and %s", o.ID, by, owner)
					}
					claimed[o.ID] = owner
					mu.Unlock()
					if err := s.SettleOutbox(ctx, store.Settle{ID: o.ID, Owner: owner, State: store.OutboxSent}); err != nil {
						t.Error(err)
					}
				}
			}
		})
	}
	close(start)
	wg.Wait()
	if len(claimed) != threads*rows {
		t.Fatalf("%d rows claimed, want %d", len(claimed), threads*rows)
	}
}

// testPruneWork: finished messages and replies older than the cutoff go; waiting ones, and their
// threads, stay.
func testPruneWork(t *testing.T, f Factory) {
	e := newEnv(t, f, store.Options{})
	ctx := t.Context()
	done := e.accept(e.s, Key(1), 1)
	r, err := e.s.StartRun(ctx, store.StartRunRequest{Key: Key(1), Owner: "A", Inbox: []int64{done.ID}})
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := e.s.FinishRun(ctx, store.FinishRunRequest{ID: r.ID, State: store.RunDone, Replies: []store.Outgoing{reply(Key(1), "r")}}); err != nil {
		t.Fatal(err)
	}
	got := e.claimOutbox(e.s, "A", time.Minute)
	if err := e.s.SettleOutbox(ctx, store.Settle{ID: got[0].ID, Owner: "A", State: store.OutboxSent}); err != nil {
		t.Fatal(err)
	}
	e.accept(e.s, Key(2), 2) // still pending
	if _, err := e.s.Enqueue(ctx, reply(Key(3), "waiting")); err != nil {
		t.Fatal(err)
	}
	e.clock.Advance(30 * 24 * time.Hour)
	st, err := e.s.Prune(ctx, e.clock.Now().Add(-24*time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	if want := (store.PruneStats{Threads: 1, Runs: 1, Inbox: 1, Outbox: 1}); st != want {
		t.Fatalf("Prune: got %+v, want %+v", st, want)
	}
	if e.pending(Key(2)) == nil {
		t.Fatal("Prune removed a pending message")
	}
	for _, k := range []store.ThreadKey{Key(2), Key(3)} {
		if _, err := e.s.Load(ctx, k); err != nil {
			t.Fatalf("Prune removed thread %s, which has work waiting: %v", k, err)
		}
	}
}
