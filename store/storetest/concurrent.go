package storetest

import (
	"bytes"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/excalibot/excalibot/store"
)

// testConcurrentCAS: many writers on two stores (two replicas) save on the same base revision at
// once; exactly one wins each round.
func testConcurrentCAS(t *testing.T, f Factory) {
	e := newEnv(t, f, store.Options{})
	stores := []Store{e.s, e.another()}
	ctx, key := t.Context(), Key(1)
	e.save(key, 0, SceneN(0))
	const writers, rounds = 8, 10
	for round := 1; round <= rounds; round++ {
		var wg sync.WaitGroup
		errs := make([]error, writers)
		start := make(chan struct{})
		for w := range writers {
			wg.Go(func() {
				<-start
				_, errs[w] = stores[w%2].Save(ctx, store.SaveRequest{Key: key, Base: int64(round), Scene: SceneN(round*100 + w), Author: store.AuthorAgent})
			})
		}
		close(start)
		wg.Wait()
		wins := 0
		for w, err := range errs {
			switch {
			case err == nil:
				wins++
			case !errors.Is(err, store.ErrConflict):
				t.Fatalf("round %d writer %d: got %v, want success or ErrConflict", round, w, err)
			}
		}
		if wins != 1 {
			t.Fatalf("round %d: %d writers won the same compare-and-swap, want exactly 1", round, wins)
		}
	}
	if th := e.load(key); th.Rev != rounds+1 || th.Head != rounds+1 {
		t.Fatalf("after %d rounds: got rev %d head %d, want %d", rounds, th.Rev, th.Head, rounds+1)
	}
}

// testConcurrentWriters: writers on two stores loop load → save on one thread, retrying on
// conflict. Every acknowledged revision must be kept with its own content, numbers must run 1..n
// without gap or duplicate, and each revision's parent must be the one before it.
func testConcurrentWriters(t *testing.T, f Factory) {
	e := newEnv(t, f, store.Options{HistoryLimit: 1000})
	stores := []Store{e.s, e.another()}
	ctx, key := t.Context(), Key(1)
	const writers, each = 6, 15
	var mu sync.Mutex
	acked := map[int64][]byte{}
	var wg sync.WaitGroup
	errc := make(chan error, writers)
	for w := range writers {
		s := stores[w%2]
		wg.Go(func() {
			for i := 0; i < each; {
				var base int64
				th, err := s.Load(ctx, key)
				switch {
				case err == nil:
					base = th.Rev
				case !errors.Is(err, store.ErrNotFound):
					errc <- err
					return
				}
				scene := fmt.Appendf(nil, `{"writer":%d,"i":%d}`, w, i)
				th, err = s.Save(ctx, store.SaveRequest{Key: key, Base: base, Scene: scene, Author: store.AuthorEditor})
				if errors.Is(err, store.ErrConflict) {
					continue
				}
				if err != nil {
					errc <- fmt.Errorf("writer %d: %w", w, err)
					return
				}
				mu.Lock()
				if _, dup := acked[th.Rev]; dup {
					mu.Unlock()
					errc <- fmt.Errorf("revision %d acknowledged twice", th.Rev)
					return
				}
				acked[th.Rev] = scene
				mu.Unlock()
				i++
			}
		})
	}
	wg.Wait()
	close(errc)
	for err := range errc {
		t.Fatal(err)
	}
	n := int64(writers * each)
	if len(acked) != int(n) {
		t.Fatalf("got %d acknowledged revisions, want %d", len(acked), n)
	}
	h, err := e.s.History(ctx, key, 10000)
	if err != nil {
		t.Fatal(err)
	}
	if int64(len(h)) != n {
		t.Fatalf("History: got %d revisions, want %d", len(h), n)
	}
	for i, r := range h {
		rev := n - int64(i)
		if r.Rev != rev || r.Parent != rev-1 {
			t.Fatalf("History[%d]: got rev %d parent %d, want %d %d", i, r.Rev, r.Parent, rev, rev-1)
		}
		got, err := e.s.Revision(ctx, key, rev)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got.Scene, acked[rev]) {
			t.Fatalf("revision %d: got %q, want the acknowledged %q", rev, got.Scene, acked[rev])
		}
	}
}

// testConcurrentClaims: replicas racing to claim one event id or one thread's lease; exactly one
// wins each race.
func testConcurrentClaims(t *testing.T, f Factory) {
	e := newEnv(t, f, store.Options{})
	stores := []Store{e.s, e.another()}
	ctx := t.Context()
	const racers, races = 8, 5
	for race := range races {
		var wg sync.WaitGroup
		events := make([]bool, racers)
		leases := make([]error, racers)
		start := make(chan struct{})
		for r := range racers {
			s := stores[r%2]
			wg.Go(func() {
				<-start
				var err error
				events[r], err = s.ClaimEvents(ctx, fmt.Sprintf("Ev%d", race))
				if err != nil {
					t.Errorf("ClaimEvent: %v", err)
				}
				_, leases[r] = s.AcquireLease(ctx, Key(race), fmt.Sprintf("replica%d", r), time.Minute)
			})
		}
		close(start)
		wg.Wait()
		var claimed, leased int
		for r := range racers {
			if events[r] {
				claimed++
			}
			switch err := leases[r]; {
			case err == nil:
				leased++
			case !errors.Is(err, store.ErrLeaseHeld):
				t.Fatalf("race %d: AcquireLease: got %v, want success or ErrLeaseHeld", race, err)
			}
		}
		if claimed != 1 || leased != 1 {
			t.Fatalf("race %d: %d claimed the event and %d got the lease, want 1 and 1", race, claimed, leased)
		}
	}
}
