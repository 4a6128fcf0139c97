package main

import (
	"fmt"
	"net/http"
	"path"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/go-telegram/bot/models"

	"github.com/excalibot/excalibot/bot/telegram/tgfake"
	"github.com/excalibot/excalibot/config"
)

const (
	tgToken   = "424242:e2e-token"
	tgSecret  = "e2e-webhook-secret"
	tgWorking = "Working on it…"
)

// tgDriver plays people talking to the bot in groups of a fake Telegram with privacy mode on: a
// mention starts a thread, replies to the bot continue it (a reply chain is a thread). In webhook
// mode the fake delivers every update to serve's webhook at once.
type tgDriver struct {
	fake    *tgfake.Server
	webhook bool

	mu    sync.Mutex
	chats map[int64]bool
}

func newTelegram(t *testing.T) *tgDriver {
	fake := tgfake.New(tgToken)
	t.Cleanup(fake.Close)
	return &tgDriver{fake: fake, chats: map[int64]bool{}}
}

// configure points serve at the fake; webhook mode needs the address serve will listen on.
func (d *tgDriver) configure(c *config.Config, webhookAddr string) {
	c.TelegramToken, c.TelegramAPIURL = tgToken, d.fake.URL
	if webhookAddr != "" {
		d.webhook = true
		c.TelegramMode, c.TelegramWebhookSecret = "webhook", tgSecret
		c.Listen, c.PublicURL = webhookAddr, "http://"+webhookAddr
	}
}

// ready waits until the bot registered its webhook (webhook mode) or polls (polling mode).
func (d *tgDriver) ready(t *testing.T) {
	t.Helper()
	waitFor(t, "the Telegram adapter to start", func() bool {
		if d.webhook {
			return d.fake.Webhook().URL != ""
		}
		return len(d.fake.Calls("getUpdates")) > 0
	}, func() string { return fmt.Sprintf("calls %d", len(d.fake.Calls(""))) })
}

func (d *tgDriver) userID(n int) int64 { return 7000 + int64(n) }

// groupID is the group a user talks in: a group per user keeps the per-chat rate limit of one
// scenario out of the others, except that users 5 and up share one, so two threads at once run
// side by side in the same group.
func (d *tgDriver) groupID(user int) int64 { return -7000 - int64(min(user, 5)) }

func (d *tgDriver) send(t *testing.T, p tgfake.Post) tgfake.Sent {
	t.Helper()
	d.mu.Lock()
	if !d.chats[p.Chat] {
		d.chats[p.Chat] = true
		d.fake.AddChat(models.Chat{ID: p.Chat, Type: models.ChatTypeGroup, Title: fmt.Sprintf("Group %d", p.Chat)})
	}
	d.mu.Unlock()
	sent := d.fake.Send(p)
	d.checkDelivery(t, sent)
	return sent
}

func (d *tgDriver) checkDelivery(t *testing.T, sent tgfake.Sent) {
	t.Helper()
	if sent.UpdateID == 0 {
		t.Fatalf("message %d never reached the bot (privacy mode)", sent.MessageID)
	}
	if d.webhook && (sent.WebhookErr != nil || sent.WebhookStatus != http.StatusOK) {
		t.Fatalf("webhook delivery of update %d: %d %v, want 200", sent.UpdateID, sent.WebhookStatus, sent.WebhookErr)
	}
}

func (d *tgDriver) from(user int) models.User {
	return models.User{ID: d.userID(user), FirstName: fmt.Sprintf("User%d", user)}
}

// start asks the bot in the user's group with /draw (or posts a file mentioning it): a new thread
// rooted at that message, even when the user already has a diagram there (a plain mention would
// go on with it).
func (d *tgDriver) start(t *testing.T, user int, text string, file *upload) *chatThread {
	t.Helper()
	p := tgfake.Post{Chat: d.groupID(user), From: d.from(user), Text: "/draw " + text}
	if file != nil {
		p.Text = strings.TrimSpace("@draw_bot " + text)
		p.Document = &tgfake.Upload{Name: file.Name, Data: file.Data}
	}
	sent := d.send(t, p)
	return &chatThread{chat: strconv.FormatInt(p.Chat, 10), root: strconv.Itoa(sent.MessageID), last: sent.UpdateID}
}

// say replies to the bot's latest picture in the thread (or its latest message when there is no
// picture), as people continue a thread in a group.
//
// The adapter files each message it sent under its thread right after Telegram confirms it, so
// a reply sent the instant a message shows up can miss that record and start a new thread. The
// picture is filed before the .excalidraw file that follows it is sent, so replying to it is safe
// once the answer is complete. A text answer is filed before its run's status message is deleted
// (the working signs come down after the reply), so replying to it is safe once that is seen.
func (d *tgDriver) say(t *testing.T, th *chatThread, user int, text string) {
	t.Helper()
	var photo, last int
	for _, m := range d.thread(th) {
		if m.FromBot {
			last = m.ID
			if m.Kind == "photo" {
				photo = m.ID
			}
		}
	}
	to := photo
	if to == 0 {
		to = last
		waitFor(t, "the status message deleted after the text answer", func() bool { return d.statusGoneAfter(th, last) },
			func() string { return fmt.Sprintf("%+v", d.fake.Messages(d.chatID(th))) })
	}
	if to == 0 {
		t.Fatalf("no message of the bot in thread %s/%s to reply to", th.chat, th.root)
	}
	sent := d.send(t, tgfake.Post{Chat: d.chatID(th), From: d.from(user), Text: text, ReplyTo: to})
	th.last = sent.UpdateID
}

func (d *tgDriver) redeliver(t *testing.T, th *chatThread) {
	t.Helper()
	d.checkDelivery(t, d.fake.Redeliver(th.last.(int64)))
}

func (d *tgDriver) chatID(th *chatThread) int64 {
	id, err := strconv.ParseInt(th.chat, 10, 64)
	if err != nil {
		panic(err)
	}
	return id
}

// thread is the reply chain from th's root: the messages that reply to a message in it.
// statusGoneAfter reports whether the thread's last status message sent before message id is
// deleted: the working signs of the run that sent id are down.
func (d *tgDriver) statusGoneAfter(th *chatThread, id int) bool {
	root, _ := strconv.Atoi(th.root)
	in := map[int]bool{root: true}
	var status *tgfake.Message
	for _, m := range d.fake.Messages(d.chatID(th)) {
		if m.ID == root || in[m.ReplyTo] {
			in[m.ID] = true
			if m.FromBot && m.ID < id && m.Kind == "text" && (m.Text == tgWorking || len(m.Edits) > 0) {
				status = &m
			}
		}
	}
	return status != nil && status.Deleted
}

func (d *tgDriver) thread(th *chatThread) []tgfake.Message {
	root, _ := strconv.Atoi(th.root)
	in := map[int]bool{root: true}
	var out []tgfake.Message
	for _, m := range d.fake.Messages(d.chatID(th)) {
		if m.ID == root || in[m.ReplyTo] {
			in[m.ID] = true
			if !m.Deleted {
				out = append(out, m)
			}
		}
	}
	return out
}

func (d *tgDriver) replies(th *chatThread) (answers []answer, texts []string, busy bool) {
	for _, m := range d.thread(th) {
		if !m.FromBot {
			continue
		}
		if m.Text != "" {
			texts = append(texts, m.Text)
		}
		switch {
		case m.Kind == "text" && (m.Text == tgWorking || len(m.Edits) > 0):
			busy = true // the status message; deleted when the run ends
		case m.Kind == "photo":
			answers = append(answers, answer{PNG: m.File.Data, Text: m.Text})
		case m.Kind == "document" && path.Ext(m.File.Name) == ".excalidraw":
			if n := len(answers); n > 0 && answers[n-1].Excalidraw == nil {
				answers[n-1].Excalidraw = m.File.Data
			} else {
				answers = append(answers, answer{Excalidraw: m.File.Data, Text: m.Text})
			}
		}
	}
	return answers, texts, busy
}

func (d *tgDriver) workingShown(th *chatThread) bool {
	action, status := false, false
	for _, c := range d.fake.Calls("sendChatAction") {
		action = action || (c.Fields["chat_id"] == th.chat && c.Fields["action"] == "upload_photo" && c.Code == http.StatusOK)
	}
	for _, c := range d.fake.Calls("sendMessage") {
		status = status || (c.Fields["chat_id"] == th.chat && c.Fields["text"] == tgWorking)
	}
	return action && status
}
