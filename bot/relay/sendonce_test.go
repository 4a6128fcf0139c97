package relay

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/excalibot/excalibot/bot"
	"github.com/excalibot/excalibot/store"
	"github.com/excalibot/excalibot/store/sqlite"
	"github.com/excalibot/excalibot/store/storetest"
)

// overlapStore forces the interleaving that once posted a reply twice: a claim that returns a
// row this process is posting (a claim returns the rows its owner holds) comes back only after
// that post has settled, when the thread no longer looks busy.
type overlapStore struct {
	*sqlite.Store
	claims chan struct{} // poked as each claim begins

	mu      sync.Mutex
	settled map[int64]chan struct{} // rows claimed once; closed when their attempt settles
}

func (s *overlapStore) ClaimOutbox(ctx context.Context, req store.ClaimOutboxRequest) ([]store.OutboxItem, error) {
	select {
	case s.claims <- struct{}{}:
	default:
	}
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

// overlappedSender posts once the send loop's next claim is under way, so that claim overlaps
// the post (or after a second: a post that no claim follows).
type overlappedSender struct {
	*recorder
	claims chan struct{}
}

func (s overlappedSender) Send(ctx context.Context, key bot.ThreadKey, r bot.Reply) error {
	select {
	case <-s.claims:
	case <-time.After(time.Second):
	}
	return s.recorder.Send(ctx, key, r)
}

// TestRepliesPostedOnce: a reply is posted once even when a claim of the send loop overlaps its
// post and returns after the post settled.
func TestRepliesPostedOnce(t *testing.T) {
	clock := storetest.NewClock()
	sq := openStore(t, "", clock)
	st := &overlapStore{Store: sq, claims: make(chan struct{}, 1), settled: map[int64]chan struct{}{}}
	rec := newRecorder()
	a := overlappedSender{rec, st.claims}
	e := start(t, st, newConv(sq), a, testOptions("a", clock))
	texts := []string{"one", "two", "three"} // each a turn of its own, each answered differently
	for i, text := range texts {
		say(t, e, a, thread, string(rune('a'+i)), text)
	}
	for range texts {
		await(t, "a reply", rec.sent)
	}
	e.Close(context.Background()) // a second post of any reply is out by now
	seen := map[string]int{}
	for _, text := range rec.texts(thread) {
		seen[text]++
	}
	if got := len(rec.texts(thread)); got != len(texts) || len(seen) != len(texts) {
		for text, k := range seen {
			t.Logf("posted %d times: %.60q", k, text)
		}
		t.Errorf("%d replies posted (%d different) for %d messages, want one each", got, len(seen), len(texts))
	}
}
