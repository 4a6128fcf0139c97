package bot

import (
	"context"
	"errors"
	"fmt"

	"github.com/excalibot/excalibot/internal/plural"
	"github.com/excalibot/excalibot/store"
)

// Handle keeps one incoming message: checks and refusals happen here, and the message (or the
// refusal) is written to the store in the commit that claims its event ids, before Handle returns.
// The work is done later by whichever process holds the thread's lease. An error means the message
// was not kept: the adapter must not acknowledge it.
func (b *Bot) Handle(ctx context.Context, a Adapter, msg Message) error {
	if b.adapter(a.Platform()) == nil {
		b.Register(a)
	}
	b.Start()
	log := b.log.With("thread", msg.Key.String(), "event", msg.EventID, "message", msg.ID)
	req := store.AcceptRequest{Key: msg.Key, EventIDs: eventIDs(msg)}
	if local(a) {
		req.Pin = b.opt.Owner
	}
	refusal := b.admit(msg, req.EventIDs)
	if refusal != "" {
		body, err := EncodeReply(Reply{Text: refusal, Error: true})
		if err != nil {
			return err
		}
		req.Replies = []store.Outgoing{{Key: msg.Key, Kind: kindReply, Body: body}}
	} else {
		body, err := EncodeMessage(msg)
		if err != nil {
			log.Error("message dropped: it cannot be kept", "err", err)
			return nil // it would fail the same way when delivered again
		}
		req.Body = body
	}
	acc, err := b.store.Accept(ctx, req)
	if err == nil || errors.Is(err, store.ErrInvalid) || errors.Is(err, store.ErrTooLarge) {
		b.forgetAdmission(req.EventIDs)
	}
	if errors.Is(err, store.ErrInvalid) || errors.Is(err, store.ErrTooLarge) {
		log.Error("message dropped: the store refuses it, and would refuse it again", "err", err)
		return nil
	}
	if err != nil {
		log.Error("message not kept; its platform is not told it arrived, so it delivers it again", "err", err)
		return fmt.Errorf("keep the message: %w", err)
	}
	switch {
	case !acc.Fresh:
		log.Info("redelivered event ignored")
	case refusal != "":
		log.Info("message refused", "why", refusal)
		poke(b.w.sendWake)
	default:
		log.Debug("message kept", "inbox", acc.ID)
		poke(b.w.wake)
	}
	return nil
}

// admit decides whether msg is refused (too long, or beyond a rate limit) and says why. A message
// whose earlier delivery was decided on but not kept (the store failed) gets the same decision
// again, so its redeliveries do not use up the sender's rate.
func (b *Bot) admit(msg Message, ids []string) (refusal string) {
	if len(ids) > 0 {
		b.mu.Lock()
		why, ok := b.admitted[ids[0]]
		b.mu.Unlock()
		if ok {
			return why
		}
	}
	if n := len([]rune(msg.Text)); n > b.opt.MaxMessageLength {
		refusal = fmt.Sprintf("That message is %s long; I take at most %s. Please shorten it.",
			plural.Count(n, "character", ""), plural.Count(b.opt.MaxMessageLength, "character", ""))
	} else if commandOf(msg).Kind == CmdDraw {
		if ok, wait := b.userLimit.Allow(msg.Key.Platform + ":" + msg.User); !ok {
			refusal = fmt.Sprintf("You're sending requests faster than I can draw. Please try again in %s.", wait)
		} else if ok, wait := b.chatLimit.Allow(msg.Key.Platform + ":" + msg.Key.Workspace + ":" + msg.Key.Channel); !ok {
			refusal = fmt.Sprintf("This chat has sent many requests in a short time. Please try again in %s.", wait)
		}
	}
	if len(ids) > 0 {
		b.mu.Lock()
		if len(b.admitted) > 10_000 { // redeliveries come within minutes; a bound, not a cache
			clear(b.admitted)
		}
		b.admitted[ids[0]] = refusal
		b.mu.Unlock()
	}
	return refusal
}

// forgetAdmission drops the decision on a message once it is kept.
func (b *Bot) forgetAdmission(ids []string) {
	if len(ids) > 0 {
		b.mu.Lock()
		delete(b.admitted, ids[0])
		b.mu.Unlock()
	}
}

// eventIDs are the ids a message is known by (the platform's event id, its own id in the chat),
// claimed together: either seen before means a redelivery.
func eventIDs(msg Message) []string {
	ids := make([]string, 0, 2)
	if msg.EventID != "" {
		ids = append(ids, msg.Key.Platform+":event:"+msg.EventID)
	}
	if msg.ID != "" {
		ids = append(ids, msg.Key.Platform+":msg:"+msg.Key.Workspace+":"+msg.Key.Channel+":"+msg.ID)
	}
	return ids
}
