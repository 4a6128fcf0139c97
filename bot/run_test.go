package bot

import (
	"context"
	"errors"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/excalibot/excalibot/store"
	"github.com/excalibot/excalibot/store/sqlite"
)

// countingStore records the store's writes in order; each is one transaction.
type countingStore struct {
	*sqlite.Store
	single bool

	mu     sync.Mutex
	writes []string
}

func (c *countingStore) add(w string) {
	c.mu.Lock()
	c.writes = append(c.writes, w)
	c.mu.Unlock()
}

func (c *countingStore) took() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return slices.Clone(c.writes)
}

func (c *countingStore) SingleProcess() bool { return c.single }

func (c *countingStore) Save(ctx context.Context, req store.SaveRequest) (*store.Thread, error) {
	c.add("Save")
	return c.Store.Save(ctx, req)
}

func (c *countingStore) SetMemory(ctx context.Context, key store.ThreadKey, memory []byte) error {
	c.add("SetMemory")
	return c.Store.SetMemory(ctx, key, memory)
}

func (c *countingStore) ClaimEvents(ctx context.Context, ids ...string) (bool, error) {
	c.add("ClaimEvents")
	return c.Store.ClaimEvents(ctx, ids...)
}

func (c *countingStore) StartRun(ctx context.Context, req store.StartRunRequest) (store.Run, error) {
	c.add("StartRun")
	return c.Store.StartRun(ctx, req)
}

func (c *countingStore) FinishRun(ctx context.Context, req store.FinishRunRequest) (store.Run, *store.Thread, error) {
	c.add("FinishRun")
	return c.Store.FinishRun(ctx, req)
}

func (c *countingStore) ReleaseLease(ctx context.Context, key store.ThreadKey, owner string) error {
	c.add("ReleaseLease")
	return c.Store.ReleaseLease(ctx, key, owner)
}

// TestRequestCommits: a drawing request that makes a revision costs three commits on a store only
// this process uses, and one more (the lease's release) on a store shared by replicas.
func TestRequestCommits(t *testing.T) {
	tests := []struct {
		single bool
		want   []string
	}{
		{true, []string{"ClaimEvents", "StartRun", "FinishRun"}},
		{false, []string{"ClaimEvents", "StartRun", "FinishRun", "ReleaseLease"}},
	}
	for _, tt := range tests {
		st, err := sqlite.Open(context.Background(), filepath.Join(t.TempDir(), "bot.db"), store.Options{}, nil)
		if err != nil {
			t.Fatal(err)
		}
		cs := &countingStore{Store: st, single: tt.single}
		rec := newRecorder()
		b := New(cs, &fakeDrawer{}, fakeRenderer{}, nil, Options{}, nil)
		b.Handle(context.Background(), rec, Message{Key: thread, EventID: "e1", ID: "1", Text: "draw a box"})
		rec.wait(t, 1)
		b.Close(context.Background()) // the run's last steps after the reply are done too
		if got := cs.took(); !slices.Equal(got, tt.want) {
			t.Errorf("single process %v: writes %v, want %v", tt.single, got, tt.want)
		}
		th, err := st.Load(context.Background(), thread)
		if err != nil || th.Rev != 1 {
			t.Errorf("single process %v: thread %+v, %v; want revision 1", tt.single, th, err)
		}
		runs, err := st.Runs(context.Background(), store.RunDone)
		if err != nil || len(runs) != 1 {
			t.Errorf("single process %v: done runs %v, %v; want 1", tt.single, runs, err)
		}
		if _, err := st.AcquireLease(context.Background(), thread, "other", time.Minute); err != nil {
			t.Errorf("single process %v: lease left behind: %v", tt.single, err)
		}
		st.Close()
	}
}

// TestSharedStoreTakesTheLease: with replicas on one database, a run holds the thread's lease
// while it draws, so another replica's run of the thread waits.
func TestSharedStoreTakesTheLease(t *testing.T) {
	st := tempStore(t)
	d := &fakeDrawer{block: make(chan struct{})}
	b := New(&countingStore{Store: st}, d, fakeRenderer{}, nil, Options{}, nil)
	rec := newRecorder()
	b.Handle(context.Background(), rec, Message{Key: thread, EventID: "e1", ID: "1", Text: "draw a box"})
	for len(func() []string { d.mu.Lock(); defer d.mu.Unlock(); return d.prompts }()) == 0 {
		time.Sleep(time.Millisecond)
	}
	_, err := st.StartRun(context.Background(), store.StartRunRequest{Key: thread, Owner: "replica2", Lease: time.Minute})
	if !errors.Is(err, store.ErrLeaseHeld) {
		t.Errorf("another replica's run while drawing: got %v, want ErrLeaseHeld", err)
	}
	close(d.block)
	rec.wait(t, 1)
	b.Close(context.Background())
	if _, err := st.StartRun(context.Background(), store.StartRunRequest{Key: thread, Owner: "replica2", Lease: time.Minute}); err != nil {
		t.Errorf("another replica's run after the reply: %v", err)
	}
}

// TestStoredSceneUnreadable: a stored scene that does not decode is a sentence for the user that
// says how to go on, not a crash; a thread without a scene yet is a new drawing.
func TestStoredSceneUnreadable(t *testing.T) {
	if _, err := storedScene(&store.Thread{Scene: []byte("{broken")}); err == nil || !strings.Contains(err.Error(), "say reset") {
		t.Errorf("err = %v, want advice to reset", err)
	}
	if sc, err := storedScene(&store.Thread{}); sc != nil || err != nil {
		t.Errorf("no scene yet: %v, %v; want nil, nil", sc, err)
	}
}
