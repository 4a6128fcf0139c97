package relay

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/excalibot/excalibot/bot"
	"github.com/excalibot/excalibot/internal/logkey"
	"github.com/excalibot/excalibot/store"
)

// serving is the threads this process works on, each drained by a goroutine of its crew, whose
// context ends when the shutdown grace is over.
type serving struct {
	crew crew

	mu         sync.Mutex
	waiting    map[bot.ThreadKey]int  // threads served here → messages waiting behind the turn
	unreleased map[bot.ThreadKey]bool // leases to give back once the store answers again
	// adopted are messages this process took over from a dead owner's memory (store.Claim.Adopted)
	// whose adapter has not yet been told of them.
	adopted map[int64]bot.ThreadKey
}

func (s *serving) depth() (waiting, active int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, n := range s.waiting {
		waiting += n
	}
	return waiting, len(s.waiting)
}

// claiming is the claim loop: it takes threads with waiting messages, on a wake-up or a timer, and
// recovers the runs of owners that are gone.
func (e *Engine) claiming(ctx context.Context) {
	tick := time.NewTicker(e.opt.PollInterval)
	defer tick.Stop()
	// A dead owner's run with nothing waiting behind it is found by this pass: a thread hears of
	// it at most a lease and a sixth of one after the owner's last heartbeat.
	recoverEvery := max(e.opt.LeaseTTL/6, e.opt.PollInterval)
	lastRecover := time.Now()
	for {
		select {
		case <-ctx.Done():
			return
		case <-e.wake:
		case <-tick.C:
		}
		if time.Since(lastRecover) >= recoverEvery {
			lastRecover = time.Now()
			if err := e.recoverRuns(ctx, store.RecoverRequest{Recovery: e.recovery()}); err != nil && ctx.Err() == nil {
				e.log.Warn("recover interrupted runs", logkey.Err, err)
			}
		}
		e.claim(ctx)
	}
}

func (e *Engine) recoverRuns(ctx context.Context, req store.RecoverRequest) error {
	cuts, err := e.store.RecoverRuns(ctx, req)
	if err != nil {
		return fmt.Errorf("recover interrupted runs: %w", err)
	}
	redone := false
	for _, c := range cuts {
		e.logCut(c, "its owner is gone")
		redone = redone || c.Fate == store.FateRedone
	}
	if len(cuts) > 0 {
		poke(e.sendWake)
	}
	if redone {
		poke(e.wake)
	}
	return nil
}

// logCut says what became of a run another owner left unfinished.
func (e *Engine) logCut(c store.Cut, why string) {
	log := e.log.With(logkey.Thread, c.Key.String(), "run", c.ID, "owner", c.Owner, "interruptions", c.Interruptions)
	switch c.Fate {
	case store.FateRedone:
		log.Warn("run cut short: " + why + "; its messages are redone")
	case store.FateGivenUp:
		log.Error("request given up: its runs were cut short too often; the thread is told", "max", e.opt.MaxInterruptions)
	default:
		log.Warn("run cut short: " + why + "; it cannot be redone, and the thread is told")
	}
}

// recovery is what becomes of runs found cut short: a drawing is redone by whoever holds the
// thread next, unless its thread heard of its failure already, it began longer ago than replies
// are retried, or its messages were cut short Options.MaxInterruptions times.
func (e *Engine) recovery() store.Recovery {
	return store.Recovery{
		Redo: func(r store.Run) bool {
			return !e.signs.toldOf(r.ID) && e.opt.Now().Sub(r.Created) < e.opt.ReplyGiveUp && e.conv.Redoable(r)
		},
		MaxInterruptions: e.opt.MaxInterruptions,
		Notice:           e.notice,
	}
}

// notice is what a thread hears, through the outbox, of a run its owner left unfinished: the run's
// working signs come down; then, unless its work is redone, the conversation says what happened.
func (e *Engine) notice(c store.Cut) []store.Outgoing {
	if e.signs.wasTold(c.ID) {
		return nil // its thread heard of the failure already, directly
	}
	var out []store.Outgoing
	if c.Sign != "" {
		out = append(out, store.Outgoing{Key: c.Key, Kind: kindSigns, Body: encodeSigns(c.Sign)})
	}
	var r bot.Reply
	switch c.Fate {
	case store.FateRedone:
		return out
	case store.FateGivenUp:
		r = e.conv.GivenUp(c.Run, c.Interruptions)
	default:
		r = e.conv.Interrupted(c.Run)
	}
	if body, err := bot.EncodeReply(r); err == nil {
		out = append(out, store.Outgoing{Key: c.Key, Kind: kindReply, Body: body})
	}
	return out
}

// claim takes as many threads as this process has room for.
func (e *Engine) claim(ctx context.Context) {
	_, active := e.threads.depth()
	free := e.opt.MaxConcurrentRuns - active
	if free <= 0 || e.closing.Load() {
		return
	}
	claims, err := e.store.ClaimThreads(ctx, store.ClaimRequest{Owner: e.opt.Owner, TTL: e.opt.LeaseTTL, Limit: free,
		Platforms: e.platforms(), Recovery: e.recovery()})
	if err != nil {
		if ctx.Err() == nil {
			e.log.Warn("claim threads with waiting messages", logkey.Err, err)
		}
		return
	}
	told := false
	for _, c := range claims {
		key := c.Lease.Key
		for _, r := range c.Interrupted {
			told = true
			e.logCut(r, "its thread was taken over from an owner whose lease ran out")
		}
		if len(c.Adopted) > 0 {
			e.log.Warn("thread adopted: its messages were pinned to an owner presumed dead", logkey.Thread, key.String(), "messages", len(c.Adopted))
		}
		e.threads.mu.Lock()
		for _, id := range c.Adopted {
			e.threads.adopted[id] = key
		}
		_, already := e.threads.waiting[key] // this process's own lease, renewed: it is served already
		if !already {
			e.threads.waiting[key] = 0
			e.threads.crew.wg.Add(1)
		}
		e.threads.mu.Unlock()
		if !already {
			go e.serve(key)
		}
	}
	if told {
		poke(e.sendWake)
	}
	if len(claims) == free {
		poke(e.wake) // there may be more
	}
}

// serve drains a thread's inbox while this process holds its lease, one turn at a time.
func (e *Engine) serve(key bot.ThreadKey) {
	defer e.threads.crew.wg.Done()
	defer func() {
		e.threads.mu.Lock()
		delete(e.threads.waiting, key)
		for id, k := range e.threads.adopted {
			if k == key { // not answered here after all: whoever holds the thread next adopts them
				delete(e.threads.adopted, id)
			}
		}
		e.threads.mu.Unlock()
		poke(e.wake)
	}()
	log := e.log.With(logkey.Thread, key.String())
	ctx := context.WithoutCancel(e.threads.crew.ctx) // store calls between turns finish even on shutdown
	for {
		if e.closing.Load() {
			e.release(ctx, key) // the messages still waiting go to whoever claims the thread next
			return
		}
		msgs, err := e.store.Pending(ctx, key, 50)
		if err != nil {
			log.Warn("read the thread's waiting messages; letting the thread go", logkey.Err, err)
			e.release(ctx, key)
			return
		}
		if len(msgs) == 0 {
			released, err := e.store.ReleaseIdle(ctx, key, e.opt.Owner)
			switch {
			case errors.Is(err, store.ErrLeaseHeld):
				log.Info("thread taken over by another owner", logkey.Err, err)
				return
			case err != nil:
				log.Warn("release an idle thread", logkey.Err, err)
				e.release(ctx, key)
				return
			case released:
				return
			}
			continue // a message arrived meanwhile
		}
		a := e.adapter(key.Platform)
		if a == nil {
			log.Error("no adapter for the thread's platform; letting the thread go")
			e.release(ctx, key)
			return
		}
		e.adopt(ctx, a, msgs)
		t := e.conv.Plan(key, a, redoing(msgs))
		e.threads.mu.Lock()
		e.threads.waiting[key] = len(msgs) - len(t.Inbox)
		e.threads.mu.Unlock()
		if !e.turn(a, t) {
			e.release(ctx, key)
			return
		}
	}
}

// adopt tells a local adapter of the waiting messages this process took over from a dead owner,
// so they join this process's memory of the thread before they are answered here.
func (e *Engine) adopt(ctx context.Context, a bot.Adapter, msgs []store.InboxMessage) {
	l, ok := a.(bot.LocalAdapter)
	e.threads.mu.Lock()
	var mine []store.InboxMessage
	for _, m := range msgs {
		if _, ok := e.threads.adopted[m.ID]; ok {
			delete(e.threads.adopted, m.ID)
			mine = append(mine, m)
		}
	}
	e.threads.mu.Unlock()
	if !ok {
		return
	}
	for _, m := range mine {
		msg, err := bot.DecodeMessage(m.Key, m.Body, a)
		if err != nil {
			continue // the turn reads it again, and says why it cannot
		}
		l.Adopt(ctx, msg)
	}
}

// release gives a thread's lease back, or leaves it to the heartbeat when the store fails now.
func (e *Engine) release(ctx context.Context, key bot.ThreadKey) {
	rctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	if err := e.store.ReleaseLease(rctx, key, e.opt.Owner); err != nil {
		e.log.Warn("release a thread's lease; trying again later", logkey.Thread, key.String(), logkey.Err, err)
		e.threads.mu.Lock()
		e.threads.unreleased[key] = true
		e.threads.mu.Unlock()
	}
}

// heartbeat renews this process's leases and outbox claims (those its runs left for its own
// sender too), every third of the lease.
func (e *Engine) heartbeat(ctx context.Context) {
	tick := time.NewTicker(max(e.opt.LeaseTTL/3, 10*time.Millisecond))
	defer tick.Stop()
	for first := true; ; first = false {
		if !first {
			select {
			case <-ctx.Done():
				return
			case <-tick.C:
			}
		}
		// A lease this process let go of must not be renewed with the others.
		if !e.releaseStale(ctx) {
			continue // renewing now would keep those alive too; the store is failing anyway
		}
		if _, err := e.store.RenewLeases(ctx, e.opt.Owner, e.opt.LeaseTTL); err != nil && ctx.Err() == nil {
			e.log.Warn("renew this process's leases; other replicas take its threads over if this goes on", logkey.Err, err)
		}
	}
}

// releaseStale gives back the leases a release left behind, and reports whether none is left.
func (e *Engine) releaseStale(ctx context.Context) bool {
	e.threads.mu.Lock()
	var stale []bot.ThreadKey
	for k := range e.threads.unreleased {
		stale = append(stale, k)
	}
	e.threads.mu.Unlock()
	for _, k := range stale {
		if err := e.store.ReleaseLease(ctx, k, e.opt.Owner); err == nil {
			e.threads.mu.Lock()
			delete(e.threads.unreleased, k)
			e.threads.mu.Unlock()
		}
	}
	e.threads.mu.Lock()
	defer e.threads.mu.Unlock()
	return len(e.threads.unreleased) == 0
}

// redoing is the messages a turn may take of a thread's waiting ones: those of a run that was cut
// short are redone alone, as they were taken, so the redo answers what the run would have
// answered; others are as many as the conversation merges.
func redoing(waiting []store.InboxMessage) []store.InboxMessage {
	first := waiting[0]
	if first.Interruptions == 0 || first.Run == 0 {
		return waiting
	}
	n := 1
	for n < len(waiting) && waiting[n].Run == first.Run && waiting[n].Interruptions > 0 {
		n++
	}
	return waiting[:n]
}
