package storetest

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/excalibot/excalibot/store"
)

// redoAll redoes every run, up to max interruptions of a message, and notices each run with its
// fate.
func redoAll(max int) store.Recovery {
	return store.Recovery{
		Redo:             func(store.Run) bool { return true },
		MaxInterruptions: max,
		Notice: func(c store.Cut) []store.Outgoing {
			return []store.Outgoing{reply(c.Key, fmt.Sprintf("run %d %s after %d", c.ID, c.Fate, c.Interruptions))}
		},
	}
}

// inboxStates is each of key's messages as "id state interruptions".
func (e *env) inboxStates(s Store, key store.ThreadKey) []string {
	e.t.Helper()
	ms, err := s.Inbox(e.t.Context(), key)
	if err != nil {
		e.t.Fatal(err)
	}
	var out []string
	for _, m := range ms {
		out = append(out, fmt.Sprintf("%d %s %d", m.ID, m.State, m.Interruptions))
	}
	return out
}

// testRedo: a run cut short by its owner's death is redone: its messages are pending again, in
// the order received, ahead of what came after, each counted once more, in the commit that
// interrupts the run; a redo cut short again reaches the bound and gives its messages up (failed,
// with the reason); the thread moves on to its next message. The dead runs' late ends change
// nothing.
func testRedo(t *testing.T, f Factory) {
	e := newEnv(t, f, store.Options{})
	ctx, key := t.Context(), Key(1)
	b, c := e.another(), e.another()
	m1, m2 := e.accept(e.s, key, 1), e.accept(e.s, key, 2)
	r1, err := e.s.StartRun(ctx, store.StartRunRequest{Key: key, Owner: "A", Detail: "draw", Lease: 30 * time.Second, Inbox: []int64{m1.ID, m2.ID}})
	if err != nil {
		t.Fatal(err)
	}
	m3 := e.accept(e.s, key, 3)
	e.clock.Advance(31 * time.Second) // A is dead

	cs, err := b.ClaimThreads(ctx, store.ClaimRequest{Owner: "B", TTL: 30 * time.Second, Limit: 1, Platforms: []string{"slack"}, Recovery: redoAll(2)})
	if err != nil || len(cs) != 1 || len(cs[0].Interrupted) != 1 {
		t.Fatalf("B's claim: got %+v, %v, want the thread with A's run", cs, err)
	}
	if got := cs[0].Interrupted[0]; got.ID != r1.ID || got.State != store.RunInterrupted || got.Fate != store.FateRedone || got.Interruptions != 1 {
		t.Fatalf("A's run after B's claim: got %+v, want run %d interrupted and redone, cut short once", got, r1.ID)
	}
	want := []string{fmt.Sprint(m1.ID, " pending 1"), fmt.Sprint(m2.ID, " pending 1"), fmt.Sprint(m3.ID, " pending 0")}
	if got := e.inboxStates(b, key); !slices.Equal(got, want) {
		t.Fatalf("inbox after the redo: got %q, want %q", got, want)
	}
	ms, err := b.Pending(ctx, key, 0)
	if err != nil || len(ms) != 3 || ms[0].Run != r1.ID || ms[1].Run != r1.ID || ms[2].Run != 0 {
		t.Fatalf("pending after the redo: got %+v, %v, want the redone messages naming run %d, then the new one", ms, err, r1.ID)
	}
	// A wakes up: its run ends nowhere.
	_, _, err = e.s.FinishRun(ctx, store.FinishRunRequest{ID: r1.ID, State: store.RunDone,
		Save: &store.SaveRequest{Key: key, Scene: SceneN(1), Author: store.AuthorAgent}, Replies: []store.Outgoing{reply(key, "A's late reply")}})
	wantErr(t, "FinishRun of the redone run", err, store.ErrBadTransition)

	// B redoes the two messages and dies too: the bound gives them up.
	r2, err := b.StartRun(ctx, store.StartRunRequest{Key: key, Owner: "B", Detail: "draw", Lease: 30 * time.Second, Inbox: []int64{m1.ID, m2.ID}})
	if err != nil {
		t.Fatal(err)
	}
	e.clock.Advance(31 * time.Second)
	rec, err := c.RecoverRuns(ctx, store.RecoverRequest{Recovery: redoAll(2)})
	if err != nil || len(rec) != 1 || rec[0].ID != r2.ID || rec[0].Fate != store.FateGivenUp || rec[0].Interruptions != 2 {
		t.Fatalf("RecoverRuns of B's redo: got %+v, %v, want run %d given up after 2", rec, err, r2.ID)
	}
	want = []string{fmt.Sprint(m1.ID, " failed 2"), fmt.Sprint(m2.ID, " failed 2"), fmt.Sprint(m3.ID, " pending 0")}
	if got := e.inboxStates(c, key); !slices.Equal(got, want) {
		t.Fatalf("inbox after the second cut: got %q, want %q", got, want)
	}
	if ms, _ := c.Inbox(ctx, key, store.InboxFailed); len(ms) != 2 || !strings.Contains(ms[0].Error, "cut short 2 times") {
		t.Fatalf("failed messages %+v, want the reason kept", ms)
	}
	out, err := c.Outbox(ctx, key)
	var bodies []string
	for _, o := range out {
		bodies = append(bodies, string(o.Body))
	}
	if wantOut := []string{fmt.Sprintf("run %d redone after 1", r1.ID), fmt.Sprintf("run %d given up after 2", r2.ID)}; err != nil || !slices.Equal(bodies, wantOut) {
		t.Fatalf("outbox: got %q, %v, want %q (nothing of A's late end)", bodies, err, wantOut)
	}
	if th, err := c.Load(ctx, key); err != nil || th.Rev != 0 {
		t.Fatalf("thread after the cut runs: %+v, %v, want no revision", th, err)
	}
	// The thread moves on: its next message is claimed and worked.
	if cs, err := c.ClaimThreads(ctx, store.ClaimRequest{Owner: "C", TTL: 30 * time.Second, Limit: 1, Platforms: []string{"slack"}, Recovery: redoAll(2)}); err != nil || len(cs) != 1 {
		t.Fatalf("C's claim of the thread: got %+v, %v", cs, err)
	}
	if got := e.pending(key); !slices.Equal(got, []int64{m3.ID}) {
		t.Fatalf("pending for C: got %v, want %v", got, m3.ID)
	}
	// Failed messages are pruned as finished ones are.
	e.clock.Advance(30 * 24 * time.Hour)
	if st, err := c.Prune(ctx, e.clock.Now().Add(-24*time.Hour)); err != nil || st.Inbox != 2 {
		t.Fatalf("Prune: got %+v, %v, want the two failed messages pruned", st, err)
	}
	if got := e.pending(key); !slices.Equal(got, []int64{m3.ID}) {
		t.Fatalf("pending after Prune: got %v, want %v", got, m3.ID)
	}
}

// testRedoWhatMayBe: only what the recovery says may be redone is: a run it refuses is told (its
// messages interrupted, still counted); a run that took no message is told; one whose messages are
// pinned to their (gone) owner is redone like any other; a run whose end committed (replying, then done) is never touched; a
// notice that cannot be queued takes the whole recovery back, messages included.
func testRedoWhatMayBe(t *testing.T, f Factory) {
	e := newEnv(t, f, store.Options{})
	ctx := t.Context()
	start := func(key store.ThreadKey, detail string, ids ...int64) store.Run {
		t.Helper()
		r, err := e.s.StartRun(ctx, store.StartRunRequest{Key: key, Owner: "A", Detail: detail, Lease: 30 * time.Second, Inbox: ids})
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	refused := e.accept(e.s, Key(1), 1)
	start(Key(1), "command: undo", refused.ID)
	start(Key(2), "draw, no message")
	pinned, err := e.s.Accept(ctx, store.AcceptRequest{Key: Key(3), Body: msgBody(3), Pin: "A"})
	if err != nil {
		t.Fatal(err)
	}
	start(Key(3), "draw pinned", pinned.ID)
	committed := e.accept(e.s, Key(4), 4)
	r4 := start(Key(4), "draw", committed.ID)
	if _, _, err := e.s.FinishRun(ctx, store.FinishRunRequest{ID: r4.ID, State: store.RunDone,
		Save: &store.SaveRequest{Key: Key(4), Scene: SceneN(1), Author: store.AuthorAgent}, Replies: []store.Outgoing{reply(Key(4), "drawn")}}); err != nil {
		t.Fatal(err)
	}
	e.clock.Advance(31 * time.Second)

	rec := redoAll(2)
	rec.Redo = func(r store.Run) bool { return !strings.HasPrefix(r.Detail, "command: ") }
	bad := rec
	bad.Notice = func(c store.Cut) []store.Outgoing { return []store.Outgoing{{Key: c.Key, Body: []byte("no kind")}} }
	_, err = e.s.RecoverRuns(ctx, store.RecoverRequest{Recovery: bad})
	wantErr(t, "RecoverRuns with a bad notice", err, store.ErrInvalid)
	if got, want := e.inboxStates(e.s, Key(1)), []string{fmt.Sprint(refused.ID, " taken 0")}; !slices.Equal(got, want) {
		t.Fatalf("a failed recovery changed messages: got %q, want %q", got, want)
	}

	cut, err := e.s.RecoverRuns(ctx, store.RecoverRequest{Recovery: rec})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, c := range cut {
		got = append(got, fmt.Sprintf("%s: %s", c.Detail, c.Fate))
	}
	if want := []string{"command: undo: told", "draw, no message: told", "draw pinned: redone"}; !slices.Equal(got, want) {
		t.Fatalf("RecoverRuns: got %q, want %q (the committed run untouched)", got, want)
	}
	for _, tt := range []struct {
		key  store.ThreadKey
		want string
	}{
		{Key(1), fmt.Sprint(refused.ID, " interrupted 1")},
		{Key(3), fmt.Sprint(pinned.ID, " pending 1")},
		{Key(4), fmt.Sprint(committed.ID, " done 0")},
	} {
		if got := e.inboxStates(e.s, tt.key); !slices.Equal(got, []string{tt.want}) {
			t.Errorf("inbox of %s: got %q, want %q", tt.key, got, tt.want)
		}
	}
	if runs, err := e.s.Runs(ctx, store.RunReplying); err != nil || !equal(ids(runs), []int64{r4.ID}) {
		t.Fatalf("replying runs: got %v, %v, want the committed run %d", ids(runs), err, r4.ID)
	}
	if th := e.load(Key(4)); th.Rev != 1 {
		t.Fatalf("the committed run's thread at revision %d, want 1", th.Rev)
	}
}

// testAdoptDeadPins: messages and replies pinned to an owner are left to it while its heartbeat is
// live (and, for an owner that never beat, for a lease's length after they were kept); once it is
// presumed dead, whoever claims the thread adopts them: they are pinned to the claimer, the claim
// names the messages, and the dead owner's pin no longer holds anything back.
func testAdoptDeadPins(t *testing.T, f Factory) {
	e := newEnv(t, f, store.Options{})
	ctx := t.Context()
	const ttl = 30 * time.Second
	b := e.another()
	claim := func(s Store, owner string) []store.Claim {
		t.Helper()
		cs, err := s.ClaimThreads(ctx, store.ClaimRequest{Owner: owner, TTL: ttl, Limit: 10, Platforms: []string{"slack"}, Recovery: redoAll(2)})
		if err != nil {
			t.Fatalf("%s's claim: %v", owner, err)
		}
		return cs
	}
	if _, err := e.s.RenewLeases(ctx, "A", ttl); err != nil { // A's heartbeat
		t.Fatal(err)
	}
	m1, err := e.s.Accept(ctx, store.AcceptRequest{Key: Key(1), Body: msgBody(1), Pin: "A"})
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range []store.ThreadKey{Key(2), Key(1)} {
		if _, err := e.s.Enqueue(ctx, store.Outgoing{Key: k, Kind: "reply", Body: []byte("owed by A"), Pin: "A"}); err != nil {
			t.Fatal(err)
		}
	}
	e.clock.Advance(20 * time.Second)
	m3, err := e.s.Accept(ctx, store.AcceptRequest{Key: Key(3), Body: msgBody(3), Pin: "N"}) // N never beat
	if err != nil {
		t.Fatal(err)
	}
	if cs := claim(b, "B"); len(cs) != 0 {
		t.Fatalf("B's claim while A beats: got %+v, want nothing", cs)
	}
	if os := e.claimOutbox(b, "B", ttl); len(os) != 0 {
		t.Fatalf("B's outbox claim while A beats: got rows %v, want none", outIDs(os))
	}

	e.clock.Advance(15 * time.Second) // A's heartbeat lapsed 5 s ago; N's message waited 15 s
	// A sender adopts a dead owner's replies only on a thread it left no message on: Key(1)'s
	// reply goes with its message, to whoever claims the thread.
	c := e.another()
	if _, err := c.RenewLeases(ctx, "C", ttl); err != nil {
		t.Fatal(err)
	}
	if os := e.claimOutbox(c, "C", ttl); len(os) != 1 || os[0].Key != Key(2) || os[0].Pin != "C" {
		t.Fatalf("C's outbox claim once A is gone: got %+v, want Key(2)'s reply only, pinned to C", os)
	}
	cs := claim(b, "B")
	if len(cs) != 1 || cs[0].Lease.Key != Key(1) || !slices.Equal(cs[0].Adopted, []int64{m1.ID}) {
		t.Fatalf("B's claim once A is gone: got %+v, want Key(1) with message %d adopted", cs, m1.ID)
	}
	os := e.claimOutbox(b, "B", ttl)
	if len(os) != 1 || os[0].Key != Key(1) || os[0].Pin != "B" {
		t.Fatalf("B's outbox claim once it adopted Key(1): got %+v, want A's reply there, pinned to B", os)
	}
	msgs, err := b.Pending(ctx, Key(1), 0)
	if err != nil || len(msgs) != 1 || msgs[0].Pin != "B" {
		t.Fatalf("Key(1)'s pending messages: got %+v, %v, want message %d pinned to B", msgs, err, m1.ID)
	}
	// A coming back finds nothing of its own left to take while B beats.
	for _, o := range []struct {
		s     Store
		owner string
	}{{e.s, "A"}, {b, "B"}} {
		if _, err := o.s.RenewLeases(ctx, o.owner, ttl); err != nil {
			t.Fatal(err)
		}
	}
	if err := b.ReleaseLease(ctx, Key(1), "B"); err != nil {
		t.Fatal(err)
	}
	if cs := claim(e.s, "A"); len(cs) != 0 {
		t.Fatalf("A's claim after B adopted its thread: got %+v, want nothing", cs)
	}

	e.clock.Advance(16 * time.Second) // N's message waited a lease's length: N is presumed dead
	cs = claim(b, "B")
	var keys []store.ThreadKey
	for _, c := range cs {
		keys = append(keys, c.Lease.Key)
		if c.Lease.Key == Key(3) && !slices.Equal(c.Adopted, []int64{m3.ID}) {
			t.Fatalf("Key(3)'s claim: adopted %v, want %d", c.Adopted, m3.ID)
		}
	}
	if !slices.Contains(keys, Key(3)) {
		t.Fatalf("B's claim once N's message waited a lease: got %v, want Key(3)", keys)
	}

	// A process that knows it is the only one alive (SQLite, at start) takes what every other
	// owner left pinned at once, even a message kept a moment ago by one that never beat.
	m4, err := e.s.Accept(ctx, store.AcceptRequest{Key: Key(4), Body: msgBody(4), Pin: "Q"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := e.s.RecoverRuns(ctx, store.RecoverRequest{Recovery: redoAll(2), SoleOwner: "S"}); err != nil {
		t.Fatal(err)
	}
	adopted := map[store.ThreadKey][]int64{}
	for _, c := range claim(e.s, "S") {
		adopted[c.Lease.Key] = c.Adopted
	}
	if got := adopted[Key(4)]; !slices.Equal(got, []int64{m4.ID}) {
		t.Fatalf("the sole owner's claim: adopted %v on Key(4), want message %d (all claims: %v)", got, m4.ID, adopted)
	}
}
