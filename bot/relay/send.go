package relay

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"sync"
	"time"

	"github.com/excalibot/excalibot/bot"
	"github.com/excalibot/excalibot/internal/logkey"
	"github.com/excalibot/excalibot/store"
)

// Replies reach a thread through the store's outbox: a turn's reply is queued with its end, and
// the send loop of any process that has the platform's adapter posts it, in order per thread,
// with retries. A reply the platform refuses for now waits (its rate limit's retry_after, or a
// backoff doubling from Options.RetryBase up to maxBackoff); one that fails for good, or for longer
// than Options.ReplyGiveUp, is kept as dead and logged.

const (
	maxBackoff     = 5 * time.Minute
	postTimeout    = 5 * time.Minute // one attempt at a reply, uploads and waits for rate limits included
	permanentTries = 3               // attempts at a reply the platform refuses for good
	signTries      = 2               // attempts at taking working signs down (best effort)
)

// posting is the threads whose replies this process is posting, each by a goroutine of its crew,
// whose context ends once Close has posted what it could.
type posting struct {
	crew crew

	mu   sync.Mutex
	busy map[bot.ThreadKey]bool
}

func (p *posting) anyBusy() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return len(p.busy) > 0
}

// sending is the send loop: it posts the replies due, on a wake-up or a timer.
func (e *Engine) sending(ctx context.Context) {
	tick := time.NewTicker(e.opt.PollInterval)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-e.sendWake:
		case <-tick.C:
		}
		e.sendDue(ctx)
	}
}

// sendDue claims the replies this process may post now and posts each thread's in a goroutine of
// its own; it returns how many rows it claimed.
func (e *Engine) sendDue(ctx context.Context) int {
	// The threads being posted now are noted before the claim: the claim returns rows this owner
	// holds, so it may return a row such a thread is posting; if that post settles before the
	// rows are looked at, the thread is no longer busy, and the row would be posted twice. A
	// thread that was not busy before the claim had all its posts settled by then (sendDue is
	// the only starter of posts, and it runs in one goroutine at a time).
	e.posts.mu.Lock()
	free := e.opt.MaxConcurrentSends - len(e.posts.busy)
	wasBusy := make(map[bot.ThreadKey]bool, len(e.posts.busy))
	for k := range e.posts.busy {
		wasBusy[k] = true
	}
	e.posts.mu.Unlock()
	if free <= 0 {
		return 0
	}
	items, err := e.store.ClaimOutbox(ctx, store.ClaimOutboxRequest{Owner: e.opt.Owner, TTL: e.opt.LeaseTTL, Limit: free,
		Platforms: e.platforms()})
	if err != nil {
		if ctx.Err() == nil {
			e.log.Warn("claim replies to post", logkey.Err, err)
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
		e.posts.mu.Lock()
		busy := e.posts.busy[key] || wasBusy[key]
		if !busy {
			e.posts.busy[key] = true
			e.posts.crew.wg.Add(1)
		}
		e.posts.mu.Unlock()
		if !busy {
			started++
			go e.postThread(key, rows)
		}
		i = j
	}
	// More may be due behind these; a round that only met threads still posting claims again when
	// they end (each post pokes), not in a loop while a slow upload lasts.
	if started > 0 {
		e.posts.mu.Lock()
		full := len(e.posts.busy) >= e.opt.MaxConcurrentSends
		e.posts.mu.Unlock()
		if !full {
			poke(e.sendWake)
		}
	}
	return len(items)
}

// postThread posts a thread's claimed rows in order; a row that must wait holds back the rest.
func (e *Engine) postThread(key bot.ThreadKey, rows []store.OutboxItem) {
	defer e.posts.crew.wg.Done()
	defer func() {
		e.posts.mu.Lock()
		delete(e.posts.busy, key)
		e.posts.mu.Unlock()
		poke(e.sendWake)
	}()
	for _, it := range rows {
		if !e.post(it) {
			return
		}
	}
}

// post makes one attempt at a row and settles it; false means the thread's next rows must wait.
func (e *Engine) post(it store.OutboxItem) bool {
	log := e.log.With(logkey.Thread, it.Key.String(), "outbox", it.ID, "kind", it.Kind, "attempt", it.Attempts+1)
	a := e.adapter(it.Key.Platform)
	var err error
	switch {
	case a == nil:
		err = fmt.Errorf("no adapter for platform %q in this process", it.Key.Platform)
	case it.Kind == kindReply:
		err = e.deliver(it, a)
	case it.Kind == kindSigns:
		err = e.takeDown(it, a)
	default:
		err = bot.Permanent(fmt.Errorf("unknown outbox row kind %q", it.Kind))
	}
	settle := store.Settle{ID: it.ID, Owner: e.opt.Owner, State: store.OutboxSent}
	next := true
	if err != nil {
		settle, next = e.retry(it, err, log)
	}
	sctx, cancel := context.WithTimeout(context.WithoutCancel(e.posts.crew.ctx), 10*time.Second)
	defer cancel()
	if serr := e.store.SettleOutbox(sctx, settle); serr != nil {
		// The row stays claimed until its claim lapses; then it is tried again (a reply that was
		// posted and not settled is posted once more: the remaining crash window).
		log.Error("record how a reply's attempt ended", "state", settle.State, logkey.Err, serr)
		return false
	}
	if err == nil {
		log.Debug("posted")
	}
	return next
}

// deliver posts a reply row, going on after the steps an earlier attempt posted.
func (e *Engine) deliver(it store.OutboxItem, a bot.Adapter) error {
	r, err := bot.DecodeReply(it.Body)
	if err != nil {
		return bot.Permanent(err)
	}
	ctx, cancel := context.WithTimeout(e.posts.crew.ctx, postTimeout)
	defer cancel()
	if ss, ok := a.(bot.StepSender); ok {
		return ss.SendSteps(ctx, it.Key, r, slices.Clone(it.Posted), func(id string, index ...store.MessageThread) error {
			return e.store.RecordPosted(ctx, it.ID, e.opt.Owner, id, index...)
		})
	}
	return a.Send(ctx, it.Key, r)
}

// takeDown takes a run's working signs down once its reply is out: through the live status when
// the run ran here, else by the handle the run left (a run of a process that is gone).
func (e *Engine) takeDown(it store.OutboxItem, a bot.Adapter) error {
	if it.Run != 0 {
		if st := e.signs.take(it.Run); st != nil {
			st.finish()
			return nil
		}
	}
	sign, err := decodeSigns(it.Body)
	if err != nil {
		return bot.Permanent(err)
	}
	c, ok := a.(bot.SignClearer)
	if sign == "" || !ok {
		return nil // nothing this process can take down
	}
	ctx, cancel := context.WithTimeout(e.posts.crew.ctx, 30*time.Second)
	defer cancel()
	return c.ClearSign(ctx, it.Key, sign)
}

// retry decides what becomes of a row whose attempt failed: when it is tried again, or that it is
// given up. next says whether the thread's rows behind it go on now.
func (e *Engine) retry(it store.OutboxItem, err error, log *slog.Logger) (s store.Settle, next bool) {
	attempts := it.Attempts + 1
	now := e.opt.Now()
	s = store.Settle{ID: it.ID, Owner: e.opt.Owner, Error: err.Error()}
	if e.posts.crew.ctx.Err() != nil {
		// Shutting down: the row goes back as it is, for another process or the next start.
		s.State, s.Due = store.OutboxPending, now
		return s, false
	}
	if it.Kind == kindSigns && attempts >= signTries {
		log.Warn("working signs not taken down; giving up on them", logkey.Err, err)
		s.State = store.OutboxSent // best effort: the reply is out, the signs must not hold the thread up
		return s, true
	}
	var rl *bot.RateLimitError
	limited := errors.As(err, &rl)
	wait := min(e.opt.RetryBase<<min(attempts-1, 20), maxBackoff)
	if limited {
		wait = rl.Wait
	}
	var perm *bot.PermanentError
	if (errors.As(err, &perm) && attempts >= permanentTries) || now.Add(wait).Sub(it.Created) > e.opt.ReplyGiveUp {
		log.Error("reply given up: it could not be posted; it is kept in the outbox as dead", "attempts", attempts, logkey.Err, err)
		s.State = store.OutboxDead
		return s, true
	}
	log.Warn("reply not posted; trying again later", "in", wait, "rate_limited", limited, logkey.Err, err)
	s.State, s.Due = store.OutboxPending, now.Add(wait)
	return s, false
}
