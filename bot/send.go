package bot

import (
	"context"
	"fmt"
	"log/slog"
	"slices"
	"time"

	"github.com/excalibot/excalibot/store"
)

// Replies reach a thread through the store's outbox: a run's replies are queued with its end, and
// the send loop of any process that has the platform's adapter posts them, in order per thread,
// with retries. A reply the platform refuses for now waits (its rate limit's retry_after, or a
// backoff doubling from Options.RetryBase up to maxBackoff); one that fails for good, or for longer
// than Options.ReplyGiveUp, is kept as dead and logged.

const (
	maxBackoff     = 5 * time.Minute
	postTimeout    = 5 * time.Minute // one attempt at a reply, uploads and waits for rate limits included
	permanentTries = 3               // attempts at a reply the platform refuses for good
	signTries      = 2               // attempts at taking working signs down (best effort)
)

// enqueue queues a reply of no run (a notice) for a thread of adapter a.
func (b *Bot) enqueue(ctx context.Context, a Adapter, key ThreadKey, r Reply) error {
	body, err := EncodeReply(r)
	if err != nil {
		return err
	}
	it := store.Outgoing{Key: key, Kind: kindReply, Body: body}
	if local(a) {
		it.Pin = b.opt.Owner
	}
	if _, err := b.store.Enqueue(ctx, it); err != nil {
		return fmt.Errorf("queue a reply: %w", err)
	}
	b.Start()
	poke(b.w.sendWake)
	return nil
}

func (b *Bot) sendLoop() {
	defer b.w.loops.Done()
	ctx := b.w.sendCtx
	tick := time.NewTicker(b.opt.PollInterval)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-b.w.sendWake:
		case <-tick.C:
		}
		b.sendDue(ctx)
	}
}

// sendDue claims the replies this process may post now and posts each thread's in a goroutine of
// its own; it returns how many rows it claimed.
func (b *Bot) sendDue(ctx context.Context) int {
	// The threads being posted now are noted before the claim: the claim returns rows this owner
	// holds, so it may return a row such a thread is posting; if that post settles before the
	// rows are looked at, the thread is no longer busy, and the row would be posted twice. A
	// thread that was not busy before the claim had all its posts settled by then (sendDue is
	// the only starter of posts, and it runs in one goroutine at a time).
	b.w.mu.Lock()
	free := b.opt.MaxConcurrentSends - len(b.w.sending)
	wasBusy := make(map[ThreadKey]bool, len(b.w.sending))
	for k := range b.w.sending {
		wasBusy[k] = true
	}
	b.w.mu.Unlock()
	if free <= 0 {
		return 0
	}
	items, err := b.store.ClaimOutbox(ctx, store.ClaimOutboxRequest{Owner: b.opt.Owner, TTL: b.opt.LeaseTTL, Limit: free,
		Platforms: b.platforms()})
	if err != nil {
		if ctx.Err() == nil {
			b.log.Warn("claim replies to post", "err", err)
		}
		return 0
	}
	// The store returns each thread's rows together, in order.
	started := 0
	for i := 0; i < len(items); {
		j := i + 1
		for j < len(items) && items[j].Key == items[i].Key {
			j++
		}
		rows := items[i:j]
		key := rows[0].Key
		b.w.mu.Lock()
		busy := b.w.sending[key] || wasBusy[key]
		if !busy {
			b.w.sending[key] = true
			b.w.sends.Add(1)
		}
		b.w.mu.Unlock()
		if !busy {
			started++
			go b.postThread(key, rows)
		}
		i = j
	}
	// More may be due behind these; a round that only met threads still posting claims again when
	// they end (each post pokes), not in a loop while a slow upload lasts.
	if started > 0 {
		b.w.mu.Lock()
		full := len(b.w.sending) >= b.opt.MaxConcurrentSends
		b.w.mu.Unlock()
		if !full {
			poke(b.w.sendWake)
		}
	}
	return len(items)
}

// postThread posts a thread's claimed rows in order; a row that must wait holds back the rest.
func (b *Bot) postThread(key ThreadKey, rows []store.OutboxItem) {
	defer b.w.sends.Done()
	defer func() {
		b.w.mu.Lock()
		delete(b.w.sending, key)
		b.w.mu.Unlock()
		poke(b.w.sendWake)
	}()
	for _, it := range rows {
		if !b.post(it) {
			return
		}
	}
}

// post makes one attempt at a row and settles it; false means the thread's next rows must wait.
func (b *Bot) post(it store.OutboxItem) bool {
	log := b.log.With("thread", it.Key.String(), "outbox", it.ID, "kind", it.Kind, "attempt", it.Attempts+1)
	a := b.adapter(it.Key.Platform)
	var err error
	switch {
	case a == nil:
		err = fmt.Errorf("no adapter for platform %q in this process", it.Key.Platform)
	case it.Kind == kindReply:
		err = b.deliverReply(it, a)
	case it.Kind == kindSigns:
		err = b.takeDown(it, a)
	default:
		err = Permanent(fmt.Errorf("unknown outbox row kind %q", it.Kind))
	}
	settle := store.Settle{ID: it.ID, Owner: b.opt.Owner, State: store.OutboxSent}
	next := true
	if err != nil {
		settle, next = b.failed(it, err, log)
	}
	sctx, cancel := context.WithTimeout(context.WithoutCancel(b.w.postCtx), 10*time.Second)
	defer cancel()
	if serr := b.store.SettleOutbox(sctx, settle); serr != nil {
		// The row stays claimed until its claim lapses; then it is tried again (a reply that was
		// posted and not settled is posted once more: the remaining crash window).
		log.Error("record how a reply's attempt ended", "state", settle.State, "err", serr)
		return false
	}
	if err == nil {
		log.Debug("posted")
	}
	return next
}

func (b *Bot) deliverReply(it store.OutboxItem, a Adapter) error {
	r, err := DecodeReply(it.Body)
	if err != nil {
		return Permanent(err)
	}
	ctx, cancel := context.WithTimeout(b.w.postCtx, postTimeout)
	defer cancel()
	if ss, ok := a.(StepSender); ok {
		return ss.SendSteps(ctx, it.Key, r, slices.Clone(it.Posted), func(id string) error {
			return b.store.RecordPosted(ctx, it.ID, b.opt.Owner, id)
		})
	}
	return a.Send(ctx, it.Key, r)
}

// takeDown takes a run's working signs down once its reply is out: through the live status when
// the run ran here, else by the handle the run left (a run of a process that is gone).
func (b *Bot) takeDown(it store.OutboxItem, a Adapter) error {
	b.w.mu.Lock()
	st := b.w.live[it.Run]
	delete(b.w.live, it.Run)
	b.w.mu.Unlock()
	if st != nil && it.Run != 0 {
		st.finish()
		return nil
	}
	sign, err := decodeSigns(it.Body)
	if err != nil {
		return Permanent(err)
	}
	c, ok := a.(SignClearer)
	if sign == "" || !ok {
		return nil // nothing this process can take down
	}
	ctx, cancel := context.WithTimeout(b.w.postCtx, 30*time.Second)
	defer cancel()
	return c.ClearSign(ctx, it.Key, sign)
}

// failed decides what becomes of a row whose attempt failed: when it is tried again, or that it is
// given up. next says whether the thread's rows behind it go on now.
func (b *Bot) failed(it store.OutboxItem, err error, log *slog.Logger) (store.Settle, bool) {
	attempts := it.Attempts + 1
	now := b.opt.Now()
	s := store.Settle{ID: it.ID, Owner: b.opt.Owner, Error: err.Error()}
	if b.w.postCtx.Err() != nil {
		// Shutting down: the row goes back as it is, for another process or the next start.
		s.State, s.Due = store.OutboxPending, now
		return s, false
	}
	if it.Kind == kindSigns && attempts >= signTries {
		log.Warn("working signs not taken down; giving up on them", "err", err)
		s.State = store.OutboxSent // best effort: the reply is out, the signs must not hold the thread up
		return s, true
	}
	wait, limited := retryAfter(err)
	if !limited {
		wait = min(b.opt.RetryBase<<min(attempts-1, 20), maxBackoff)
	}
	switch {
	case isPermanent(err) && attempts >= permanentTries, now.Add(wait).Sub(it.Created) > b.opt.ReplyGiveUp:
		log.Error("reply given up: it could not be posted; it is kept in the outbox as dead", "attempts", attempts, "err", err)
		s.State = store.OutboxDead
		return s, true
	}
	log.Warn("reply not posted; trying again later", "in", wait, "rate_limited", limited, "err", err)
	s.State, s.Due = store.OutboxPending, now.Add(wait)
	return s, false
}
