package bot

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

func TestQueueOrdersAndMergesPerThread(t *testing.T) {
	q := NewQueue(4)
	release, started := make(chan struct{}), make(chan struct{})
	var mu sync.Mutex
	var got [][]int
	var wg sync.WaitGroup
	run := func(ctx context.Context, b Batch[int]) {
		defer func() {
			for range b.Items {
				wg.Done()
			}
		}()
		if b.Items[0] == 1 {
			close(started)
			<-release // hold the first job so the others pile up behind it
		}
		mu.Lock()
		got = append(got, b.Items)
		mu.Unlock()
	}
	wg.Add(4)
	waiting, err := Submit(q, key("t"), 1, run)
	if err != nil || waiting {
		t.Fatalf("first Submit: waiting=%v err=%v, want false, nil", waiting, err)
	}
	<-started
	for i := 2; i <= 4; i++ {
		waiting, err := Submit(q, key("t"), i, run)
		if err != nil || !waiting {
			t.Fatalf("Submit(%d): waiting=%v err=%v, want true, nil", i, waiting, err)
		}
	}
	if w, a := q.Depth(); w != 3 || a != 1 {
		t.Errorf("Depth() = %d waiting, %d active; want 3, 1", w, a)
	}
	close(release)
	wg.Wait()
	want := [][]int{{1}, {2, 3, 4}}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("batches = %v, want %v", got, want)
	}
	if i := q.Close(context.Background()); i != nil {
		t.Errorf("Close interrupted %v, want none", i)
	}
}

func TestQueueGlobalLimit(t *testing.T) {
	const limit, threads = 2, 8
	q := NewQueue(limit)
	var cur, peak atomic.Int32
	var wg sync.WaitGroup
	wg.Add(threads)
	for i := range threads {
		_, err := Submit(q, key(fmt.Sprint("thread-", i)), i, func(ctx context.Context, b Batch[int]) {
			defer wg.Done()
			n := cur.Add(1)
			for {
				p := peak.Load()
				if n <= p || peak.CompareAndSwap(p, n) {
					break
				}
			}
			time.Sleep(5 * time.Millisecond) // overlap so a missing limit would show
			cur.Add(-1)
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	wg.Wait()
	if p := peak.Load(); p != limit {
		t.Errorf("peak concurrency = %d, want %d", p, limit)
	}
	q.Close(context.Background())
}

func TestQueueCloseGraceAndInterrupt(t *testing.T) {
	q := NewQueue(1)
	started := make(chan struct{})
	var cancelled atomic.Bool
	var ran []string
	var mu sync.Mutex
	if _, err := Submit(q, key("slow"), "x", func(ctx context.Context, b Batch[string]) {
		close(started)
		<-ctx.Done()
		cancelled.Store(true)
	}); err != nil {
		t.Fatal(err)
	}
	<-started
	// "waiting" needs the one slot that "slow" holds, so it cannot start before the grace ends.
	if _, err := Submit(q, key("waiting"), "y", func(ctx context.Context, b Batch[string]) {
		mu.Lock()
		ran = append(ran, b.Key.Channel)
		mu.Unlock()
	}); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	var interrupted []string
	for _, k := range q.Close(ctx) {
		interrupted = append(interrupted, k.Channel)
	}
	slices.Sort(interrupted)
	if want := []string{"slow", "waiting"}; !slices.Equal(interrupted, want) {
		t.Errorf("interrupted = %v, want %v", interrupted, want)
	}
	if !cancelled.Load() {
		t.Error("running job was not cancelled after the grace period")
	}
	if len(ran) != 0 {
		t.Errorf("jobs %v ran after shutdown began", ran)
	}
	if _, err := Submit(q, key("late"), 1, func(context.Context, Batch[int]) {}); !errors.Is(err, ErrQueueClosed) {
		t.Errorf("Submit after Close: err = %v, want ErrQueueClosed", err)
	}
}

// key is a thread key for queue tests: only its identity matters.
func key(channel string) ThreadKey { return ThreadKey{Platform: "test", Channel: channel} }
