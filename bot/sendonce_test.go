package bot

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/excalibot/excalibot/store"
	"github.com/excalibot/excalibot/store/sqlite"
)

// overlapStore forces the interleaving that once posted a reply twice: a claim that returns a
// row this process is posting (a claim returns the rows its owner holds) comes back only after
// that post has settled, when the thread no longer looks busy.
type overlapStore struct {
	*sqlite.Store
	mu      sync.Mutex
	settled map[int64]chan struct{} // rows claimed once; closed when their attempt settles
}

func (s *overlapStore) ClaimOutbox(ctx context.Context, req store.ClaimOutboxRequest) ([]store.OutboxItem, error) {
	items, err := s.Store.ClaimOutbox(ctx, req)
	var wait []chan struct{}
	s.mu.Lock()
	for _, it := range items {
		if c, again := s.settled[it.ID]; again {
			wait = append(wait, c)
		} else {
			s.settled[it.ID] = make(chan struct{})
		}
	}
	s.mu.Unlock()
	for _, c := range wait {
		select {
		case <-c:
		case <-time.After(500 * time.Millisecond): // a row claimed before and left waiting: no post to wait for
		}
	}
	return items, err
}

func (s *overlapStore) SettleOutbox(ctx context.Context, st store.Settle) error {
	err := s.Store.SettleOutbox(ctx, st)
	s.mu.Lock()
	if c, ok := s.settled[st.ID]; ok && st.State != store.OutboxPending {
		close(c)
		delete(s.settled, st.ID)
	}
	s.mu.Unlock()
	return err
}

// slowSender posts slowly, so the send loop's next claims overlap each post.
type slowSender struct{ *recorder }

func (s slowSender) Send(ctx context.Context, key ThreadKey, r Reply) error {
	time.Sleep(60 * time.Millisecond)
	return s.recorder.Send(ctx, key, r)
}

// TestRepliesPostedOnce: a reply is posted once even when a claim of the send loop overlaps its
// post and returns after the post settled.
func TestRepliesPostedOnce(t *testing.T) {
	st := &overlapStore{Store: tempStore(t), settled: map[int64]chan struct{}{}}
	rec := newRecorder()
	b := New(st, &fakeDrawer{}, fakeRenderer{}, nil, Options{PollInterval: 5 * time.Millisecond,
		UserRatePerMinute: noRateLimit, ChatRatePerMinute: noRateLimit}, nil)
	t.Cleanup(func() { b.Close(context.Background()) })
	commands := []string{"help", "undo", "theme dark"} // each a run of its own, each answered differently
	n := len(commands)
	for i, c := range commands {
		msg := Message{Key: thread, EventID: "ev" + c, ID: string(rune('a' + i)), User: "u1", Text: c}
		if err := b.Handle(context.Background(), slowSender{rec}, msg); err != nil {
			t.Fatal(err)
		}
	}
	deadline := time.Now().Add(5 * time.Second)
	for rec.count(thread) < n && time.Now().Before(deadline) {
		time.Sleep(5 * time.Millisecond)
	}
	time.Sleep(300 * time.Millisecond) // a second post of any reply would be out by now
	rec.mu.Lock()
	defer rec.mu.Unlock()
	seen := map[string]int{}
	for _, r := range rec.replies[thread.String()] {
		seen[r.Text]++
	}
	if got := len(rec.replies[thread.String()]); got != n || len(seen) != n {
		for text, k := range seen {
			t.Logf("posted %d times: %.60q", k, text)
		}
		t.Errorf("%d replies posted (%d different) for %d commands, want one each", got, len(seen), n)
	}
}
