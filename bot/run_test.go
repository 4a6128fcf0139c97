package bot

import (
	"context"
	"errors"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/excalibot/excalibot/store"
	"github.com/excalibot/excalibot/store/sqlite"
)

// countingStore records the store's transactions that write, in order.
type countingStore struct {
	*sqlite.Store

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

func (c *countingStore) Save(ctx context.Context, req store.SaveRequest) (*store.Thread, error) {
	c.add("Save")
	return c.Store.Save(ctx, req)
}

func (c *countingStore) SetMemory(ctx context.Context, key store.ThreadKey, memory []byte) error {
	c.add("SetMemory")
	return c.Store.SetMemory(ctx, key, memory)
}

func (c *countingStore) Accept(ctx context.Context, req store.AcceptRequest) (store.Accepted, error) {
	c.add("Accept")
	return c.Store.Accept(ctx, req)
}

// ClaimThreads writes only when it claims a thread.
func (c *countingStore) ClaimThreads(ctx context.Context, req store.ClaimRequest) ([]store.Claim, error) {
	cs, err := c.Store.ClaimThreads(ctx, req)
	if len(cs) > 0 {
		c.add("ClaimThreads")
	}
	return cs, err
}

func (c *countingStore) StartRun(ctx context.Context, req store.StartRunRequest) (store.Run, error) {
	c.add("StartRun")
	return c.Store.StartRun(ctx, req)
}

func (c *countingStore) FinishRun(ctx context.Context, req store.FinishRunRequest) (store.Run, *store.Thread, error) {
	c.add("FinishRun")
	return c.Store.FinishRun(ctx, req)
}

func (c *countingStore) RecordPosted(ctx context.Context, id int64, owner, part string) error {
	c.add("RecordPosted")
	return c.Store.RecordPosted(ctx, id, owner, part)
}

func (c *countingStore) SettleOutbox(ctx context.Context, st store.Settle) error {
	c.add("SettleOutbox")
	return c.Store.SettleOutbox(ctx, st)
}

func (c *countingStore) ReleaseIdle(ctx context.Context, key store.ThreadKey, owner string) (bool, error) {
	c.add("ReleaseIdle")
	return c.Store.ReleaseIdle(ctx, key, owner)
}

func (c *countingStore) ReleaseLease(ctx context.Context, key store.ThreadKey, owner string) error {
	c.add("ReleaseLease")
	return c.Store.ReleaseLease(ctx, key, owner)
}

// TestRequestCommits: the store writes of a drawing request that makes a revision, from the
// message to the posted picture: the message kept, the thread claimed, the run started, its
// revision and reply with its end, the reply posted, the signs taken down, the thread let go. The
// outbox claim writes nothing: the run's end holds its replies for this process already.
func TestRequestCommits(t *testing.T) {
	st := tempStore(t)
	cs := &countingStore{Store: st}
	rec := newRecorder()
	b := New(cs, &fakeDrawer{}, fakeRenderer{}, nil, Options{}, nil)
	if err := b.Handle(context.Background(), rec, Message{Key: thread, EventID: "e1", ID: "1", Text: "draw a box"}); err != nil {
		t.Fatal(err)
	}
	rec.wait(t, 1)
	b.Close(context.Background()) // the run's last steps after the reply are done too
	got := cs.took()
	slices.Sort(got)
	want := []string{"Accept", "ClaimThreads", "FinishRun", "ReleaseIdle", "SettleOutbox", "SettleOutbox", "StartRun"}
	if !slices.Equal(got, want) {
		t.Errorf("writes %v, want %v", got, want)
	}
	th, err := st.Load(context.Background(), thread)
	if err != nil || th.Rev != 1 {
		t.Errorf("thread %+v, %v; want revision 1", th, err)
	}
	if runs, err := st.Runs(context.Background(), store.RunDone); err != nil || len(runs) != 1 {
		t.Errorf("done runs %v, %v; want 1", runs, err)
	}
	if _, err := st.AcquireLease(context.Background(), thread, "other", time.Minute); err != nil {
		t.Errorf("lease left behind: %v", err)
	}
}

// TestSharedStoreTakesTheLease: with replicas on one database, a run holds the thread's lease
// while it draws, so another replica's run of the thread waits.
func TestSharedStoreTakesTheLease(t *testing.T) {
	st := tempStore(t)
	d := &fakeDrawer{block: make(chan struct{})}
	b := New(st, d, fakeRenderer{}, nil, Options{}, nil)
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
