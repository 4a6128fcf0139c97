package storetest

import (
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/excalibot/excalibot/store"
)

// The methods here do in one transaction what a request used to do in several; each test checks
// the combined effect and that a failing part leaves nothing of the others behind.

func testClaimEvents(t *testing.T, f Factory) {
	e := newEnv(t, f, store.Options{EventTTL: time.Hour})
	ctx := t.Context()
	steps := []struct {
		ids     []string
		advance time.Duration
		want    bool
	}{
		{[]string{"ev:1", "msg:1"}, 0, true},
		{[]string{"ev:1", "msg:1"}, 0, false}, // redelivered
		{[]string{"ev:2", "msg:1"}, 0, false}, // same message under a second event id
		{[]string{"ev:2", "msg:2"}, 0, true},  // ev:2 was not recorded by the refused claim
		{[]string{"ev:3", "ev:3"}, 0, true},   // a repeated id is one id
		{[]string{"msg:9"}, 0, true},          // one id
	}
	for i, st := range steps {
		e.clock.Advance(st.advance)
		got, err := e.s.ClaimEvents(ctx, st.ids...)
		if err != nil || got != st.want {
			t.Fatalf("step %d: ClaimEvents(%v): got %v, %v, want %v", i, st.ids, got, err, st.want)
		}
	}
	// ClaimEvent and ClaimEvents share the ids, across replicas too.
	if got, err := e.another().ClaimEvents(ctx, "msg:2"); err != nil || got {
		t.Fatalf("ClaimEvents(msg:2) on a second store: got %v, %v, want false", got, err)
	}
	if got, err := e.s.ClaimEvents(ctx, "ev:4", "msg:2"); err != nil || got {
		t.Fatalf("ClaimEvents(ev:4, msg:2): got %v, %v, want false", got, err)
	}
	for _, ids := range [][]string{nil, {""}, {"ev:5", strings.Repeat("x", 513)}} {
		_, err := e.s.ClaimEvents(ctx, ids...)
		wantErr(t, fmt.Sprintf("ClaimEvents of %d ids with a bad one", len(ids)), err, store.ErrInvalid)
	}
	if got, err := e.s.ClaimEvents(ctx, "ev:5"); err != nil || !got {
		t.Fatalf("ev:5 after a refused claim that named it: got %v, %v, want a fresh claim", got, err)
	}
	e.clock.Advance(time.Hour) // forgotten after EventTTL
	if got, err := e.s.ClaimEvents(ctx, "ev:1", "msg:1"); err != nil || !got {
		t.Fatalf("ClaimEvents(ev:1, msg:1) after EventTTL: got %v, %v, want true", got, err)
	}
}

func testStartRun(t *testing.T, f Factory) {
	e := newEnv(t, f, store.Options{})
	ctx := t.Context()
	b := e.another()
	r, err := e.s.StartRun(ctx, store.StartRunRequest{Key: Key(1), Owner: "A", Detail: "draw a box", Lease: time.Minute})
	if err != nil || r.State != store.RunRunning || r.Key != Key(1) || r.Owner != "A" || r.Detail != "draw a box" || r.ID == 0 {
		t.Fatalf("StartRun: got %+v, %v, want a running run of A", r, err)
	}
	_, err = b.AcquireLease(ctx, Key(1), "B", time.Minute)
	wantErr(t, "B while A's run holds the lease", err, store.ErrLeaseHeld)
	// Refused for the lease: no run is recorded.
	_, err = b.StartRun(ctx, store.StartRunRequest{Key: Key(1), Owner: "B", Lease: time.Minute})
	wantErr(t, "StartRun of B while A holds the lease", err, store.ErrLeaseHeld)
	var held *store.LeaseHeldError
	if !errors.As(err, &held) || held.Owner != "A" {
		t.Fatalf("StartRun of B: got %v, want a LeaseHeldError naming A", err)
	}
	// The same owner renews its lease; without a lease, nothing is checked.
	r2, err := e.s.StartRun(ctx, store.StartRunRequest{Key: Key(1), Owner: "A", Lease: time.Minute})
	if err != nil {
		t.Fatalf("second StartRun of A: %v", err)
	}
	r3, err := b.StartRun(ctx, store.StartRunRequest{Key: Key(1), Owner: "B"})
	if err != nil {
		t.Fatalf("StartRun of B without a lease: %v", err)
	}
	all, err := e.s.Runs(ctx)
	if err != nil || !equal(ids(all), []int64{r.ID, r2.ID, r3.ID}) {
		t.Fatalf("Runs: got %v, %v, want %v", ids(all), err, []int64{r.ID, r2.ID, r3.ID})
	}
	// A started run holding its lease is not recovered; once the lease is gone, it is.
	if rec, err := e.s.RecoverRuns(ctx, store.RecoverRequest{}); err != nil || !equal(cutIDs(rec), []int64{r3.ID}) {
		t.Fatalf("RecoverRuns: got %v, %v, want only the run without a lease", cutIDs(rec), err)
	}
	for _, req := range []store.StartRunRequest{{Key: Key(2)}, {Owner: "A"}} {
		_, err := e.s.StartRun(ctx, req)
		wantErr(t, fmt.Sprintf("StartRun(%+v)", req), err, store.ErrInvalid)
	}
}

func testFinishRun(t *testing.T, f Factory) {
	e := newEnv(t, f, store.Options{})
	ctx := t.Context()
	b := e.another()
	start := func(k store.ThreadKey) store.Run {
		t.Helper()
		r, err := e.s.StartRun(ctx, store.StartRunRequest{Key: k, Owner: "A", Lease: time.Minute})
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	saveReq := func(k store.ThreadKey, base int64, n int) *store.SaveRequest {
		return &store.SaveRequest{Key: k, Base: base, Scene: SceneN(n), Author: store.AuthorAgent, Reason: "run", Memory: []byte("m")}
	}
	leaseHeld := func(k store.ThreadKey) bool {
		t.Helper()
		_, err := b.AcquireLease(ctx, k, "B", time.Minute)
		if err == nil {
			if err := b.ReleaseLease(ctx, k, "B"); err != nil {
				t.Fatal(err)
			}
			return false
		}
		if !errors.Is(err, store.ErrLeaseHeld) {
			t.Fatal(err)
		}
		return true
	}
	state := func(id int64) store.RunState {
		t.Helper()
		all, err := e.s.Runs(ctx)
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range all {
			if r.ID == id {
				return r.State
			}
		}
		t.Fatalf("run %d not found", id)
		return ""
	}

	// Done with a revision in one call; the lease stays until its owner releases it.
	r := start(Key(1))
	run, th, err := e.s.FinishRun(ctx, store.FinishRunRequest{ID: r.ID, State: store.RunDone, Detail: "revision 1", Save: saveReq(Key(1), 0, 1)})
	if err != nil || run.State != store.RunDone || run.Detail != "revision 1" || th == nil || th.Rev != 1 || string(th.Memory) != "m" {
		t.Fatalf("FinishRun with a save: got %+v, %+v, %v", run, th, err)
	}
	wantScene(t, "after FinishRun", e.load(Key(1)).Scene, SceneN(1))
	if !leaseHeld(Key(1)) {
		t.Fatal("FinishRun released the lease")
	}

	// A conflicting save: the run stays running and no revision is made.
	r = start(Key(1))
	_, th, err = e.s.FinishRun(ctx, store.FinishRunRequest{ID: r.ID, State: store.RunDone, Save: saveReq(Key(1), 0, 2)})
	wantErr(t, "FinishRun with a stale base", err, store.ErrConflict)
	if th != nil || state(r.ID) != store.RunRunning || e.load(Key(1)).Rev != 1 {
		t.Fatalf("after a failed FinishRun: thread %v, run %s, revision %d; want nothing changed", th, state(r.ID), e.load(Key(1)).Rev)
	}
	// The run then fails on its own.
	if run, th, err = e.s.FinishRun(ctx, store.FinishRunRequest{ID: r.ID, State: store.RunFailed, Detail: "conflict"}); err != nil || run.State != store.RunFailed || th != nil {
		t.Fatalf("FinishRun(failed): got %+v, %v, %v", run, th, err)
	}
	if err := e.s.ReleaseLease(ctx, Key(1), "A"); err != nil || leaseHeld(Key(1)) {
		t.Fatalf("release after the run: %v", err)
	}
	// A finished run does not finish again, and its revision is not made either.
	_, _, err = e.s.FinishRun(ctx, store.FinishRunRequest{ID: r.ID, State: store.RunDone, Save: saveReq(Key(1), 1, 3)})
	wantErr(t, "FinishRun of a finished run", err, store.ErrBadTransition)
	if got := e.load(Key(1)).Rev; got != 1 {
		t.Fatalf("a refused FinishRun saved revision %d", got)
	}

	r = start(Key(2))
	bad := []struct {
		name string
		req  store.FinishRunRequest
		want error
	}{
		{"not a final state", store.FinishRunRequest{ID: r.ID, State: store.RunRunning}, store.ErrInvalid},
		{"unknown state", store.FinishRunRequest{ID: r.ID, State: "paused"}, store.ErrInvalid},
		{"revision of another thread", store.FinishRunRequest{ID: r.ID, State: store.RunDone, Save: saveReq(Key(3), 0, 1)}, store.ErrInvalid},
		{"empty scene", store.FinishRunRequest{ID: r.ID, State: store.RunDone, Save: &store.SaveRequest{Key: Key(2), Author: store.AuthorAgent}}, store.ErrInvalid},
		{"unknown run", store.FinishRunRequest{ID: 99999, State: store.RunDone}, store.ErrNotFound},
	}
	for _, tt := range bad {
		_, _, err := e.s.FinishRun(ctx, tt.req)
		wantErr(t, "FinishRun: "+tt.name, err, tt.want)
	}
	if st := state(r.ID); st != store.RunRunning {
		t.Fatalf("after refused FinishRuns the run is %s, want running", st)
	}
	for _, k := range []store.ThreadKey{Key(2), Key(3)} {
		if _, err := e.s.Load(ctx, k); !errors.Is(err, store.ErrNotFound) {
			t.Fatalf("a refused FinishRun created thread %s: %v", k, err)
		}
	}
	// Interrupted (shutdown), seen from the second replica.
	if run, _, err = b.FinishRun(ctx, store.FinishRunRequest{ID: r.ID, State: store.RunInterrupted}); err != nil || run.State != store.RunInterrupted {
		t.Fatalf("FinishRun(interrupted): got %+v, %v", run, err)
	}
}

// testConcurrentStartRuns: replicas racing to start a run on one thread under its lease, and to
// claim one message under two event ids; exactly one wins each race.
func testConcurrentStartRuns(t *testing.T, f Factory) {
	e := newEnv(t, f, store.Options{})
	stores := []Store{e.s, e.another()}
	ctx := t.Context()
	const racers, races = 8, 5
	for race := range races {
		var wg sync.WaitGroup
		runs := make([]error, racers)
		claims := make([]bool, racers)
		start := make(chan struct{})
		for r := range racers {
			s := stores[r%2]
			wg.Go(func() {
				<-start
				_, runs[r] = s.StartRun(ctx, store.StartRunRequest{Key: Key(race), Owner: fmt.Sprintf("replica%d", r), Lease: time.Minute})
				var err error
				// Every racer has its own event id for the same message, as Slack's two events for one post.
				claims[r], err = s.ClaimEvents(ctx, fmt.Sprintf("ev:%d:%d", race, r), fmt.Sprintf("msg:%d", race))
				if err != nil {
					t.Errorf("ClaimEvents: %v", err)
				}
			})
		}
		close(start)
		wg.Wait()
		var started, claimed int
		for r := range racers {
			switch err := runs[r]; {
			case err == nil:
				started++
			case !errors.Is(err, store.ErrLeaseHeld):
				t.Fatalf("race %d: StartRun: got %v, want success or ErrLeaseHeld", race, err)
			}
			if claims[r] {
				claimed++
			}
		}
		if started != 1 || claimed != 1 {
			t.Fatalf("race %d: %d started a run and %d claimed the message, want 1 and 1", race, started, claimed)
		}
	}
	all, err := e.s.Runs(ctx)
	if err != nil || len(all) != races {
		t.Fatalf("Runs: got %d, %v, want %d: a refused StartRun left a run behind", len(all), err, races)
	}
}

func testCreateLinks(t *testing.T, f Factory) {
	e := newEnv(t, f, store.Options{})
	ctx := t.Context()
	key := Key(1)
	e.save(key, 0, SceneN(1))
	exp := e.clock.Now().Add(time.Hour)
	tokens, links, err := e.s.CreateLinks(ctx, key, exp, store.LinkEdit, store.LinkView)
	if err != nil || len(tokens) != 2 || len(links) != 2 || tokens[0] == tokens[1] {
		t.Fatalf("CreateLinks: got %d tokens, %d links, %v; want 2 distinct", len(tokens), len(links), err)
	}
	for i, kind := range []store.LinkKind{store.LinkEdit, store.LinkView} {
		l, err := e.another().ResolveLink(ctx, tokens[i])
		if err != nil || l.Kind != kind || l.Key != key || !l.Expires.Equal(exp) || l.ID != links[i].ID {
			t.Fatalf("link %d: resolved %+v, %v; want %s of %s until %v, id %s", i, l, err, kind, key, exp, links[i].ID)
		}
	}
	// All or none: one bad kind, or a thread that does not exist, and nothing is made.
	_, _, err = e.s.CreateLinks(ctx, key, time.Time{}, store.LinkEdit, "admin")
	wantErr(t, "CreateLinks with a bad kind", err, store.ErrInvalid)
	_, _, err = e.s.CreateLinks(ctx, key, time.Time{})
	wantErr(t, "CreateLinks of no kind", err, store.ErrInvalid)
	_, _, err = e.s.CreateLinks(ctx, Key(2), time.Time{}, store.LinkEdit, store.LinkView)
	wantErr(t, "CreateLinks without thread", err, store.ErrNotFound)
	if n, err := e.s.RevokeLinks(ctx, key, ""); err != nil || n != 2 {
		t.Fatalf("RevokeLinks: got %d, %v, want the 2 links made, no more", n, err)
	}
}
