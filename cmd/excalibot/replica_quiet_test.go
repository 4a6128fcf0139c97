package main

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/excalibot/excalibot/internal/waitfor"
	"github.com/excalibot/excalibot/store"
)

// workLeft says what the store still holds to do for the traffic's threads, or "": messages
// waiting or being drawn, runs not finished, replies not posted. With none left no replica has
// anything to post for those threads: a message acknowledged twice would be in the inbox, a reply
// queued twice in the outbox. It reads the stages in the order work moves through them (inbox,
// runs, outbox), so work moving on between two reads is still seen in the later one.
func (tr *traffic) workLeft(ctx context.Context) string {
	st := tr.c.st
	keys := map[store.ThreadKey]*rthread{}
	for _, th := range tr.ths {
		th.mu.Lock()
		k := tr.key(th)
		th.mu.Unlock()
		keys[k] = th
	}
	for k, th := range keys {
		if in, err := st.Inbox(ctx, k, store.InboxPending, store.InboxTaken); err != nil || len(in) > 0 {
			return fmt.Sprintf("%s: %d messages in the inbox (%v)", th, len(in), err)
		}
	}
	runs, err := st.Runs(ctx, store.RunQueued, store.RunRunning, store.RunReplying)
	if err != nil {
		return err.Error()
	}
	for _, r := range runs {
		if th, ok := keys[r.Key]; ok {
			return fmt.Sprintf("%s: run %d of %s is %s", th, r.ID, r.Owner, r.State)
		}
	}
	for k, th := range keys {
		if out, err := st.Outbox(ctx, k, store.OutboxPending); err != nil || len(out) > 0 {
			return fmt.Sprintf("%s: %d replies to post (%v)", th, len(out), err)
		}
	}
	return ""
}

// waitQuiet waits up to d until the store holds nothing left to do for the traffic's threads, and
// reports whether it came to that; t fails when it did not.
func (tr *traffic) waitQuiet(t *testing.T, d time.Duration) bool {
	t.Helper()
	var left string
	ok := waitfor.Within(d, func() bool {
		left = tr.workLeft(t.Context())
		return left == ""
	})
	if !ok {
		t.Errorf("waited %s for the replicas to have nothing left to do; %s", d, left)
	}
	return ok
}
