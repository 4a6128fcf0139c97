package main

import (
	"fmt"
	"net/http"
	"path"
	"strconv"
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

// tgDriver plays people writing to the bot in private chats of a fake Telegram: a chat is one
// thread. In webhook mode the fake delivers every update to serve's webhook at once.
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

func (d *tgDriver) send(t *testing.T, p tgfake.Post) tgfake.Sent {
	t.Helper()
	d.mu.Lock()
	if !d.chats[p.Chat] {
		d.chats[p.Chat] = true
		d.fake.AddChat(models.Chat{ID: p.Chat, Type: models.ChatTypePrivate, FirstName: p.From.FirstName})
	}
	d.mu.Unlock()
	sent := d.fake.Send(p)
	d.checkDelivery(t, sent)
	return sent
}

func (d *tgDriver) checkDelivery(t *testing.T, sent tgfake.Sent) {
	t.Helper()
	if d.webhook && (sent.WebhookErr != nil || sent.WebhookStatus != http.StatusOK) {
		t.Fatalf("webhook delivery of update %d: %d %v, want 200", sent.UpdateID, sent.WebhookStatus, sent.WebhookErr)
	}
}

func (d *tgDriver) start(t *testing.T, user int, text string, file *upload) *chatThread {
	t.Helper()
	id := d.userID(user)
	p := tgfake.Post{Chat: id, From: models.User{ID: id, FirstName: fmt.Sprintf("User%d", user)}, Text: text}
	if file != nil {
		p.Document = &tgfake.Upload{Name: file.Name, Data: file.Data}
	}
	sent := d.send(t, p)
	return &chatThread{chat: strconv.FormatInt(id, 10), last: sent.UpdateID}
}

func (d *tgDriver) say(t *testing.T, th *chatThread, user int, text string) {
	t.Helper()
	id := d.userID(user)
	sent := d.send(t, tgfake.Post{Chat: id, From: models.User{ID: id, FirstName: fmt.Sprintf("User%d", user)}, Text: text})
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

func (d *tgDriver) replies(th *chatThread) (answers []answer, texts []string, busy bool) {
	for _, m := range d.fake.BotMessages(d.chatID(th)) {
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
