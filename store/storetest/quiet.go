package storetest

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/excalibot/excalibot/internal/waitfor"
	"github.com/excalibot/excalibot/store"
)

// WorkStore is what WaitQuiet reads of the store.
type WorkStore interface {
	Inbox(ctx context.Context, key store.ThreadKey, states ...store.InboxState) ([]store.InboxMessage, error)
	Runs(ctx context.Context, states ...store.RunState) ([]store.Run, error)
	Outbox(ctx context.Context, key store.ThreadKey, states ...store.OutboxState) ([]store.OutboxItem, error)
}

// Queue is the work engine as WaitQuiet sees it: how much it still serves in this process.
type Queue interface {
	QueueDepth() (waiting, active int)
}

// WaitQuiet waits until nothing is left to do for the threads of keys: no message waiting or
// being drawn, no run unfinished, no reply to post, and the engine serving no thread. A message
// kept twice, or a reply queued twice, would have been posted by then, so a test can count what
// the thread holds. Every message must have been handed over (acknowledged) before.
func WaitQuiet(t *testing.T, st WorkStore, q Queue, keys ...store.ThreadKey) {
	t.Helper()
	var left string
	waitfor.Until(t, 20*time.Second, "nothing left to do", func() bool {
		left = WorkLeft(st, q, keys)
		return left == ""
	}, func() string { return left })
}

// WorkLeft says what is left to do, or "". It reads the stages in the order work moves through
// them (inbox, runs, outbox), so work moving on between two reads is still seen in the later one.
func WorkLeft(st WorkStore, q Queue, keys []store.ThreadKey) string {
	ctx := context.Background()
	for _, k := range keys {
		if in, err := st.Inbox(ctx, k, store.InboxPending, store.InboxTaken); err != nil || len(in) > 0 {
			return fmt.Sprintf("%s: %d messages in the inbox (%v)", k, len(in), err)
		}
	}
	runs, err := st.Runs(ctx, store.RunQueued, store.RunRunning, store.RunReplying)
	if err != nil {
		return err.Error()
	}
	for _, r := range runs {
		for _, k := range keys {
			if r.Key == k {
				return fmt.Sprintf("%s: run %d is %s", k, r.ID, r.State)
			}
		}
	}
	for _, k := range keys {
		if out, err := st.Outbox(ctx, k, store.OutboxPending); err != nil || len(out) > 0 {
			return fmt.Sprintf("%s: %d replies to post (%v)", k, len(out), err)
		}
	}
	if waiting, active := q.QueueDepth(); waiting+active > 0 {
		return fmt.Sprintf("the engine serves %d threads, %d messages waiting", active, waiting)
	}
	return ""
}
