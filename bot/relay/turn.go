package relay

import (
	"context"
	"errors"
	"log/slog"
	"time"

	"github.com/excalibot/excalibot/bot"
	"github.com/excalibot/excalibot/internal/clip"
	"github.com/excalibot/excalibot/internal/logkey"
	"github.com/excalibot/excalibot/store"
)

// turn runs one turn of a thread: it records the run (taking its messages and renewing the
// thread's lease in the same commit), puts up the working signs of a drawing, has the conversation
// answer, and commits the outcome. false means this process should stop serving the thread: its
// lease went to another owner, or the store failed (and then the messages stay where they are).
func (e *Engine) turn(a bot.Adapter, t bot.Turn) bool {
	ctx, cancel := context.WithTimeout(e.threads.crew.ctx, e.opt.RunTimeout)
	defer cancel()
	log := e.log.With(logkey.Thread, t.Key.String())
	run, err := e.store.StartRun(ctx, store.StartRunRequest{Key: t.Key, Owner: e.opt.Owner, Detail: t.Detail,
		Lease: e.opt.LeaseTTL, Inbox: t.Inbox})
	switch {
	case errors.Is(err, store.ErrLeaseHeld), errors.Is(err, store.ErrConflict):
		log.Info("thread taken over by another owner; its messages are theirs", logkey.Err, err)
		return false
	case err != nil:
		log.Warn("record a run; its messages wait for the store", logkey.Err, err)
		return false
	}
	var signs *statusLine
	status := func(string) {}
	if t.Working != nil {
		// The signs stay up until the reply is posted, which may be after this turn's context ended.
		signs = e.working(context.WithoutCancel(ctx), a, *t.Working)
		signs.attach(run.ID)
		status = signs.update
	}
	started := e.opt.Now()
	o := e.conv.Answer(ctx, t, status)
	if e.threads.crew.ctx.Err() != nil && o.State != store.RunDone {
		// Shut down past the grace time: the run is left unfinished, as a crash leaves it, and the
		// thread's next holder (another replica, or the next start) redoes it. Its signs come
		// down now; the next holder's taking them down again finds nothing. A thread that lives in
		// this process's memory is adopted by that holder (bot.LocalAdapter).
		log.Warn("shutdown grace over: the run is left for the thread's next holder to redo", "run", run.ID)
		finishSigns(signs)
		if t.Working != nil {
			e.opt.Observer.RunFinished(string(store.RunInterrupted), e.opt.Now().Sub(started))
		}
		return false
	}
	ended, ok := e.commit(ctx, a, run, signs, o)
	if t.Working != nil {
		e.opt.Observer.RunFinished(ended, e.opt.Now().Sub(started))
	}
	return ok
}

// commit records the run's end with its revision and its reply (and, for a drawing, the taking
// down of its signs after the reply) in one transaction; the send loop posts them. When the
// revision conflicts, the run ends failed with a reply that says so. It returns how the run ended,
// for metrics, and false when this process should stop serving the thread.
func (e *Engine) commit(ctx context.Context, a bot.Adapter, run store.Run, signs *statusLine, o bot.Outcome) (string, bool) {
	log := e.log.With(logkey.Thread, run.Key.String(), "run", run.ID)
	// The end is recorded even when the turn's context is over (shutdown, timeout).
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
	defer cancel()
	ended := string(o.State)
	for {
		replies, err := e.replies(run.Key, a, o.Reply, signs)
		if err != nil {
			log.Error("encode a reply", logkey.Err, err)
			o = failed(store.RunFailed, err.Error(), "Sorry, I could not put my reply together. Nothing in the diagram changed; you can send the request again.")
			replies, _ = e.replies(run.Key, a, o.Reply, signs)
		}
		if signs != nil {
			signs.settle()
			// Normally the send loop takes the signs down after the reply; a reply that waits long
			// (the platform down) or is posted by another replica must not leave them up for hours.
			e.signs.hold(run.ID, signs)
		}
		_, _, err = e.store.FinishRun(ctx, store.FinishRunRequest{ID: run.ID, State: o.State,
			Detail: clip.Runes(o.Detail, 200), Save: o.Save, Replies: replies, Claim: e.opt.LeaseTTL})
		if err == nil {
			poke(e.sendWake)
			return ended, true
		}
		if signs != nil {
			e.signs.take(run.ID)
		}
		switch {
		case o.Save != nil && errors.Is(err, store.ErrConflict):
			o, ended = failed(store.RunFailed, "conflict", "The diagram was changed elsewhere (in the editor?) while I was drawing, so I did not overwrite it. Please send your request again to build on the new version."), "conflict"
			continue
		case errors.Is(err, store.ErrBadTransition):
			// Another owner took the thread over and told it; this run's result goes nowhere.
			log.Warn("run ended after its thread was taken over; its result is dropped", logkey.Err, err)
			finishSigns(signs)
			return ended, false
		}
		e.commitFailed(ctx, log, a, run, o, err)
		finishSigns(signs)
		return ended, false
	}
}

// commitFailed tells the thread directly, best effort, that its run's end could not be recorded;
// the run is left for recovery, which then does not tell the thread again (in this process).
func (e *Engine) commitFailed(ctx context.Context, log *slog.Logger, a bot.Adapter, run store.Run, o bot.Outcome, err error) {
	log.Error("record the end of a run", logkey.Err, err)
	e.signs.markTold(run.ID)
	text, _ := bot.StoreFailure("saving the diagram", err)
	if o.Reply.Error {
		text = o.Reply.Text
	}
	if serr := a.Send(ctx, run.Key, bot.Reply{Text: text, Error: true}); serr != nil {
		log.Warn("send the error reply", logkey.Err, serr)
	}
}

func failed(state store.RunState, detail, text string) bot.Outcome {
	return bot.Outcome{State: state, Detail: detail, Reply: bot.Reply{Text: text, Error: true}}
}

// replies are the outbox rows of a reply and, for a drawing, of its signs.
func (e *Engine) replies(key bot.ThreadKey, a bot.Adapter, r bot.Reply, signs *statusLine) ([]store.Outgoing, error) {
	body, err := bot.EncodeReply(r)
	if err != nil {
		return nil, err
	}
	pin := ""
	if local(a) {
		pin = e.opt.Owner
	}
	out := []store.Outgoing{{Key: key, Kind: kindReply, Body: body, Pin: pin}}
	if signs != nil {
		out = append(out, store.Outgoing{Key: key, Kind: kindSigns, Body: encodeSigns(signs.sign()), Pin: pin})
	}
	return out, nil
}

func finishSigns(s *statusLine) {
	if s != nil {
		s.finish()
	}
}
