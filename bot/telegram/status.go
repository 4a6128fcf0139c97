package telegram

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"time"

	tg "github.com/go-telegram/bot"
	"github.com/go-telegram/bot/models"

	"github.com/excalibot/excalibot/bot"
	"github.com/excalibot/excalibot/internal/logkey"
)

// Working signs: a chat action shows for about 5 s, so it is repeated. Status edits come spaced
// by the engine (Telegram allows about one message per second per chat).
const (
	actionEvery = 4 * time.Second
	statusStart = bot.WorkingText
)

// status is the working sign of one request: the upload_photo chat action, repeated by a goroutine
// that also applies status edits, and a status message that Finish deletes.
type status struct {
	a      *Adapter
	d      dest
	msgID  int // the status message; 0 when it could not be sent
	poke   chan struct{}
	stop   chan struct{}
	done   chan struct{}
	finish sync.Once

	mu      sync.Mutex
	pending string // latest text asked for by Update
}

var (
	_ bot.SignedStatus = (*status)(nil)
	_ bot.SignClearer  = (*Adapter)(nil)
)

// Working implements bot.Adapter. It shows the chat action and posts the status message as a reply
// to msg, then keeps the action alive until Finish. Failing to show the signs is logged, not
// returned: the work itself can go on.
func (a *Adapter) Working(ctx context.Context, msg bot.Message) (bot.Status, error) {
	d, err := destOf(msg.Key)
	if err != nil {
		return nil, err
	}
	if id, err := strconv.Atoi(msg.ID); err == nil && id > 0 {
		d.replyTo = id
	}
	s := &status{a: a, d: d, poke: make(chan struct{}, 1), stop: make(chan struct{}), done: make(chan struct{})}
	s.action(ctx)
	// No 429 retry: waiting out a rate limit here would hold up the work the status is about.
	sctx, cancel := context.WithTimeout(ctx, a.signTimeout())
	sent, err := a.client.SendMessage(sctx, &tg.SendMessageParams{
		ChatID: d.chat, MessageThreadID: d.topic, ReplyParameters: d.reply(), Text: statusStart,
		DisableNotification: true,
	})
	cancel()
	if err != nil {
		a.log.Warn("telegram: status message not sent", logkey.Chat, d.chat, logkey.Err, err)
	} else {
		s.msgID = sent.ID
		// No commit carries the status message's entry: it is written to the index here, so a
		// reply to the status reaching another replica finds the thread.
		if d.thread != "" {
			a.setThread(ctx, d.chat, msgRef(sent.ID), d.thread)
		}
	}
	go s.loop(ctx)
	return s, nil
}

func (s *status) action(ctx context.Context) {
	ctx, cancel := context.WithTimeout(ctx, s.a.signTimeout())
	defer cancel()
	_, err := s.a.client.SendChatAction(ctx, &tg.SendChatActionParams{
		ChatID: s.d.chat, MessageThreadID: s.d.topic, Action: models.ChatActionUploadPhoto,
	})
	if err != nil && ctx.Err() == nil {
		s.a.log.Debug("telegram: chat action failed", logkey.Chat, s.d.chat, logkey.Err, err)
	}
}

// loop repeats the chat action and applies status edits, the latest text asked for, until Finish
// or until ctx ends.
func (s *status) loop(ctx context.Context) {
	defer close(s.done)
	tick := time.NewTicker(s.a.actionEvery)
	defer tick.Stop()
	var shown string
	for {
		select {
		case <-s.stop:
			return
		case <-ctx.Done():
			return
		case <-tick.C:
			s.action(ctx)
			continue
		case <-s.poke:
		}
		s.mu.Lock()
		text := s.pending
		s.mu.Unlock()
		if text == "" || text == shown || s.msgID == 0 {
			continue
		}
		shown = text
		s.edit(ctx, text)
	}
}

func (s *status) edit(ctx context.Context, text string) {
	ctx, cancel := context.WithTimeout(ctx, s.a.signTimeout())
	defer cancel()
	// No 429 retry here: the next step's edit replaces this one anyway.
	_, err := s.a.client.EditMessageText(ctx, &tg.EditMessageTextParams{ChatID: s.d.chat, MessageID: s.msgID, Text: text})
	if err != nil && !strings.Contains(err.Error(), "message is not modified") && ctx.Err() == nil {
		s.a.log.Debug("telegram: status edit failed", logkey.Chat, s.d.chat, logkey.Err, err)
	}
}

// Update implements bot.Status. It returns at once; the edit is applied by the status goroutine.
func (s *status) Update(_ context.Context, text string) error {
	text, _ = split(bot.StatusLine(strings.TrimSpace(text)), maxText)
	s.mu.Lock()
	s.pending = text
	s.mu.Unlock()
	select {
	case s.poke <- struct{}{}:
	default: // a poke is already waiting; it will read the latest text
	}
	return nil
}

// Finish implements bot.Status: it stops the chat action, waits for the goroutine and deletes
// the status message.
func (s *status) Finish(ctx context.Context) error {
	var err error
	s.finish.Do(func() {
		close(s.stop)
		<-s.done
		if s.msgID != 0 {
			err = s.a.deleteStatus(ctx, s.d.chat, s.msgID)
		}
	})
	return err
}

// Sign implements bot.SignedStatus: the status message's id (the chat is in the thread key), or
// "" when it could not be sent. The chat action needs no taking down: it lapses by itself.
func (s *status) Sign() string {
	if s.msgID == 0 {
		return ""
	}
	return strconv.Itoa(s.msgID)
}

// ClearSign implements bot.SignClearer: it deletes the status message of a run that a dead process
// left behind.
func (a *Adapter) ClearSign(ctx context.Context, key bot.ThreadKey, sign string) error {
	d, err := destOf(key)
	if err != nil {
		return err
	}
	id, err := strconv.Atoi(sign)
	if err != nil || id <= 0 {
		return fmt.Errorf("telegram: %q is not a status message id", sign)
	}
	return a.deleteStatus(ctx, d.chat, id)
}

// deleteStatus deletes status message id of chat; one already gone is no error.
func (a *Adapter) deleteStatus(ctx context.Context, chat int64, id int) error {
	err := a.call(ctx, "deleteMessage", func(ctx context.Context) error {
		_, err := a.client.DeleteMessage(ctx, &tg.DeleteMessageParams{ChatID: chat, MessageID: id})
		return err
	})
	if err != nil && strings.Contains(err.Error(), "message to delete not found") {
		return nil // someone removed it already
	}
	return err
}

// signTimeout bounds each call for the working signs: they are best effort, and the run waits
// for Working before it starts, so a slow Telegram must not hold the drawing up for long.
func (a *Adapter) signTimeout() time.Duration { return min(a.cfg.RequestTimeout, 10*time.Second) }

var (
	_ bot.SignedStatus = (*status)(nil)
	_ bot.SignClearer  = (*Adapter)(nil)
)
