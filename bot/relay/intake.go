package relay

import (
	"context"
	"errors"
	"fmt"

	"github.com/excalibot/excalibot/bot"
	"github.com/excalibot/excalibot/internal/logkey"
	"github.com/excalibot/excalibot/store"
)

// Handle keeps one incoming message: the conversation's refusal (if any) is decided here, and the
// message (or the refusal) is written to the store in the commit that claims its event ids, before
// Handle returns. The work is done later by whichever process holds the thread's lease. An error
// means the message was not kept: the adapter must not acknowledge it.
func (e *Engine) Handle(ctx context.Context, a bot.Adapter, msg bot.Message) error {
	log := e.log.With(logkey.Thread, msg.Key.String(), "event", msg.EventID, "message", msg.ID)
	req := store.AcceptRequest{Key: msg.Key, EventIDs: eventIDs(msg), Index: msg.Index}
	if local(a) {
		req.Pin = e.opt.Owner
	}
	// A second delivery of a kept message (Slack sends a mention as app_mention and as message)
	// is dropped before the conversation charges the sender's rate for it. A store that cannot
	// answer here still gets Accept, which decides.
	if len(req.EventIDs) > 0 {
		if seen, err := e.store.SeenEvents(ctx, req.EventIDs...); err == nil && seen {
			log.Info("redelivered event ignored")
			return nil
		}
	}
	refusal := msg.Refusal
	if refusal == "" {
		refusal = e.admit(msg, req.EventIDs)
	}
	if refusal != "" {
		body, err := bot.EncodeReply(bot.Reply{Text: refusal, Error: true, ReplyTo: msg.ID})
		if err != nil {
			return err
		}
		req.Replies = []store.Outgoing{{Key: msg.Key, Kind: kindReply, Body: body}}
	} else {
		body, err := bot.EncodeMessage(msg)
		if err != nil {
			log.Error("message dropped: it cannot be kept", logkey.Err, err)
			return nil // it would fail the same way when delivered again
		}
		req.Body = body
	}
	acc, err := e.store.Accept(ctx, req)
	if err == nil || errors.Is(err, store.ErrInvalid) || errors.Is(err, store.ErrTooLarge) {
		e.forgetAdmission(req.EventIDs)
	}
	if errors.Is(err, store.ErrInvalid) || errors.Is(err, store.ErrTooLarge) {
		log.Error("message dropped: the store refuses it, and would refuse it again", logkey.Err, err)
		return nil
	}
	if err != nil {
		log.Error("message not kept; its platform is not told it arrived, so it delivers it again", logkey.Err, err)
		return fmt.Errorf("keep the message: %w", err)
	}
	switch {
	case !acc.Fresh:
		log.Info("redelivered event ignored")
	case refusal != "":
		log.Info("message refused", "why", refusal)
		poke(e.sendWake)
	default:
		log.Debug("message kept", "inbox", acc.ID)
		poke(e.wake)
	}
	if e.adapter(a.Platform()) == nil {
		log.Warn("message kept for a platform this process does not serve; another process answers it", logkey.Platform, a.Platform())
	}
	return nil
}

// admit asks the conversation whether msg is refused. A message whose earlier delivery was decided
// on but not kept (the store failed) gets the same decision again, so its redeliveries do not use
// up the sender's rate.
func (e *Engine) admit(msg bot.Message, ids []string) string {
	if len(ids) > 0 {
		e.mu.Lock()
		why, ok := e.admitted[ids[0]]
		e.mu.Unlock()
		if ok {
			return why
		}
	}
	refusal := e.conv.Admit(msg)
	if len(ids) > 0 {
		e.mu.Lock()
		if len(e.admitted) > 10_000 { // redeliveries come within minutes; a bound, not a cache
			clear(e.admitted)
		}
		e.admitted[ids[0]] = refusal
		e.mu.Unlock()
	}
	return refusal
}

// forgetAdmission drops the decision on a message once it is kept.
func (e *Engine) forgetAdmission(ids []string) {
	if len(ids) > 0 {
		e.mu.Lock()
		delete(e.admitted, ids[0])
		e.mu.Unlock()
	}
}

// eventIDs are the ids a message is known by (the platform's event id, its own id in the chat),
// claimed together: either seen before means a redelivery.
func eventIDs(msg bot.Message) []string {
	ids := make([]string, 0, 2)
	if msg.EventID != "" {
		ids = append(ids, msg.Key.Platform+":event:"+msg.EventID)
	}
	if msg.ID != "" {
		ids = append(ids, msg.Key.Platform+":msg:"+msg.Key.Workspace+":"+msg.Key.Channel+":"+msg.ID)
	}
	return ids
}

// Edited is called when a person saved the thread's diagram in the editor: the thread hears of it
// when Options.NotifyEdits is set, through the outbox. The next run is told what changed by the
// agent's memory.
func (e *Engine) Edited(ctx context.Context, key store.ThreadKey, rev int64) {
	if !e.opt.NotifyEdits {
		return
	}
	a := e.adapter(key.Platform)
	if a == nil {
		return
	}
	text := fmt.Sprintf("The diagram was edited in the browser (revision %d). Reply here to continue from it.", rev)
	if err := e.tell(ctx, a, key, bot.Reply{Text: text}); err != nil {
		e.log.Warn("tell thread about browser edit", logkey.Thread, key.String(), logkey.Err, err)
	}
}

// tell queues a reply of no run (a notice) for a thread of adapter a.
func (e *Engine) tell(ctx context.Context, a bot.Adapter, key bot.ThreadKey, r bot.Reply) error {
	body, err := bot.EncodeReply(r)
	if err != nil {
		return err
	}
	it := store.Outgoing{Key: key, Kind: kindReply, Body: body}
	if local(a) {
		it.Pin = e.opt.Owner
	}
	if _, err := e.store.Enqueue(ctx, it); err != nil {
		return fmt.Errorf("queue a reply: %w", err)
	}
	poke(e.sendWake)
	return nil
}
