package main

import (
	"context"
	"fmt"
	"net/http"
	"path"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-telegram/bot/models"
	"github.com/ollama/ollama/api"

	"github.com/excalibot/excalibot/agent/ollamafake"
	"github.com/excalibot/excalibot/bot/slack/slackfake"
	"github.com/excalibot/excalibot/bot/telegram/tgfake"
	"github.com/excalibot/excalibot/config"
	"github.com/excalibot/excalibot/diagram/outline"
	"github.com/excalibot/excalibot/internal/waitfor"
)

// slackDriver plays people in a fake Slack workspace, delivering their events over Socket Mode
// or, when events is set, as signed Events API requests to serve.
type slackDriver struct {
	fake   *slackfake.Server
	events string // the Events API URL; empty in Socket Mode

	mu       sync.Mutex
	channels int
}

const slackWorking = "Working on it…"

func newSlack(t *testing.T) *slackDriver {
	return &slackDriver{fake: slackfake.New(t, slackfake.Config{})}
}

// configure points serve at the fake in mode ("socket" or "events").
func (d *slackDriver) configure(c *config.Config, mode string) {
	fc := d.fake.Config()
	c.SlackBotToken, c.SlackAppToken, c.SlackSigningSecret = fc.BotToken, fc.AppToken, fc.SigningSecret
	c.SlackAPIURL, c.SlackMode = d.fake.APIURL(), mode
}

// ready waits until the bot can receive: its Socket Mode connection is open, or (Events API)
// serve answers Slack's URL verification.
func (d *slackDriver) ready(t *testing.T, e *e2e) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), e2eWait)
	defer cancel()
	if d.events == "" {
		if err := d.fake.WaitConnected(ctx); err != nil {
			t.Fatalf("Socket Mode connection: %v", err)
		}
		return
	}
	resp, err := d.fake.DeliverHTTP(ctx, d.events, slackfake.URLVerificationBody("e2e-challenge"), slackfake.HTTPOptions{})
	if err != nil || resp.Status != http.StatusOK || !strings.Contains(resp.Body, "e2e-challenge") {
		t.Fatalf("URL verification: %d %q %v, want 200 with the challenge", resp.Status, resp.Body, err)
	}
}

func (d *slackDriver) user(n int) string { return fmt.Sprintf("U0E2E%02d", n) }

func (d *slackDriver) start(t *testing.T, user int, text string, file *upload) *chatThread {
	t.Helper()
	d.mu.Lock()
	d.channels++
	ch := fmt.Sprintf("C0E2E%03d", d.channels) // a channel per thread: the per-chat limit stays out of the way
	d.mu.Unlock()
	m := slackfake.UserMessage{Channel: ch, User: d.user(user), Text: "<@U0BOT> " + text}
	if file != nil {
		m.Files = []slackfake.UploadedFile{{Name: file.Name, MIME: "application/json", Content: file.Data}}
	}
	p := d.fake.Post(m)
	d.deliver(t, p.Events, 0) // app_mention and message: one request, as from Slack
	return &chatThread{chat: ch, root: p.TS, last: p.Events}
}

func (d *slackDriver) say(t *testing.T, th *chatThread, user int, text string) {
	t.Helper()
	p := d.fake.Post(slackfake.UserMessage{Channel: th.chat, ThreadTS: th.root, User: d.user(user), Text: text})
	d.deliver(t, p.Events, 0)
	th.last = p.Events
}

func (d *slackDriver) redeliver(t *testing.T, th *chatThread) {
	t.Helper()
	d.deliver(t, th.last.([]slackfake.Event), 1)
}

func (d *slackDriver) deliver(t *testing.T, evs []slackfake.Event, retry int) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), e2eWait)
	defer cancel()
	for _, ev := range evs {
		if d.events != "" {
			// Slack retries a 5xx, and the adapter answers 503 until its Run has learned who the
			// bot is: the first event may come just before that.
			var resp slackfake.Response
			var err error
			waitfor.Within(e2eWait, func() bool {
				resp, err = d.fake.DeliverHTTP(ctx, d.events, ev.Body, slackfake.HTTPOptions{RetryNum: retry})
				return err != nil || resp.Status != http.StatusServiceUnavailable
			})
			if err != nil || resp.Status != http.StatusOK {
				t.Fatalf("deliver %s over HTTP: %d %q %v, want 200", ev.Type, resp.Status, resp.Body, err)
			}
			continue
		}
		opt := slackfake.DeliverOptions{RetryAttempt: retry}
		if retry > 0 {
			opt.RetryReason = "timeout"
		}
		env, err := d.fake.Deliver(ctx, ev, opt)
		if err == nil {
			err = d.fake.WaitAck(ctx, env)
		}
		if err != nil {
			t.Fatalf("deliver %s over Socket Mode: %v", ev.Type, err)
		}
	}
}

func (d *slackDriver) replies(th *chatThread) (answers []answer, texts []string, busy bool) {
	if at, ok := d.fake.Assistant(th.chat, th.root); ok && at.Status != "" {
		busy = true // the native status of an assistant thread
	}
	for _, m := range d.fake.Thread(th.chat, th.root) {
		if m.BotID == "" {
			busy = busy || len(d.fake.Reactions(th.chat, m.TS)) > 0
			continue
		}
		if len(m.Files) == 0 && (m.Text == slackWorking || m.Edits > 0) {
			busy = true // the status line; it is deleted when the run ends
			continue
		}
		if m.Text != "" {
			texts = append(texts, m.Text)
		}
		if len(m.Files) == 0 {
			continue
		}
		a := answer{Text: m.Text}
		for _, f := range m.Files {
			switch path.Ext(f.Name) {
			case ".png":
				a.PNG = f.Content
			case ".excalidraw":
				a.Excalidraw = f.Content
			}
		}
		answers = append(answers, a)
	}
	return answers, texts, busy
}

func (d *slackDriver) workingShown(th *chatThread) bool {
	reacted, status := false, false
	for _, c := range d.fake.Calls("reactions.add") {
		reacted = reacted || (c.Form.Get("channel") == th.chat && c.Form.Get("name") == "eyes" && c.Status == http.StatusOK)
	}
	for _, c := range d.fake.Calls("chat.postMessage") {
		status = status || (c.Form.Get("channel") == th.chat && c.Form.Get("thread_ts") == th.root && c.Form.Get("text") == slackWorking)
	}
	return reacted && status
}

// openAssistant starts a thread of the AI app surface, as a person opening excalibot from the top
// bar does, and delivers its event.
func (d *slackDriver) openAssistant(t *testing.T, user int) *chatThread {
	t.Helper()
	d.mu.Lock()
	d.channels++
	ch := fmt.Sprintf("D0E2E%03d", d.channels)
	d.mu.Unlock()
	p := d.fake.StartAssistantThread(slackfake.AssistantStart{User: d.user(user), Channel: ch, Context: "C0E2E001"})
	d.deliver(t, p.Events, 0)
	return &chatThread{chat: ch, root: p.TS, last: p.Events}
}

// slackAssistant is the AI app surface through the whole bot: the suggested prompts when the
// thread opens, a request there drawn with Slack's native status instead of a reaction and a
// status line, the status cleared once the picture is in.
func slackAssistant(t *testing.T, d *slackDriver) {
	th := d.openAssistant(t, 12)
	var at slackfake.AssistantThread
	waitFor(t, "the suggested prompts", func() bool {
		at, _ = d.fake.Assistant(th.chat, th.root)
		return len(at.Prompts) > 0
	}, func() string { return fmt.Sprintf("%+v", at) })
	if len(at.Prompts) != 1 || len(at.Prompts[0].Prompts) != 3 {
		t.Fatalf("suggested prompts = %+v, want 3 offered once", at.Prompts)
	}
	d.say(t, th, 12, "draw a deploy pipeline")
	a := waitAnswers(t, d, th, 1, "Drew a box for: draw a deploy pipeline.")[0]
	if got := labels(t, a); !slices.Equal(got, []string{"draw a deploy pipeline"}) {
		t.Errorf("labels = %q, want [draw a deploy pipeline]", got)
	}
	// Slack clears the status when the reply is posted; the bot clears it too when the run ends.
	waitFor(t, "the status cleared by the bot", func() bool {
		at, _ = d.fake.Assistant(th.chat, th.root)
		return len(at.Statuses) >= 2 && at.Statuses[len(at.Statuses)-1] == ""
	}, func() string { return fmt.Sprintf("statuses %q", at.Statuses) })
	if at.Statuses[0] != "is drawing…" || at.Status != "" {
		t.Errorf("statuses = %q (now %q), want \"is drawing…\" first and none at the end", at.Statuses, at.Status)
	}
	// The chat is titled after the diagram when it has a title, the title its files are named by.
	var picture string
	for _, m := range d.fake.Thread(th.chat, th.root) {
		for _, f := range m.Files {
			if path.Ext(f.Name) == ".png" {
				picture = f.Name
			}
		}
	}
	title := ""
	if len(at.Titles) > 0 {
		title = at.Titles[len(at.Titles)-1]
	}
	if want := outline.FileBase(title, 1) + ".png"; picture != want {
		t.Errorf("picture %q with chat titles %q; want the picture named %q after the title", picture, at.Titles, want)
	}
	for _, c := range d.fake.Calls("reactions.add") {
		if c.Form.Get("channel") == th.chat {
			t.Errorf("a reaction in the assistant thread: %v", c.Form)
		}
	}
	for _, c := range d.fake.Calls("chat.postMessage") {
		if c.Form.Get("channel") == th.chat && c.Form.Get("text") == slackWorking {
			t.Error("a status line was posted in the assistant thread")
		}
	}
}

// slackAltText: every picture the bot posted carries alt text that names what it shows (the
// instant model draws one box labelled with the request).
func slackAltText(t *testing.T, d *slackDriver) {
	th := d.start(t, 13, "draw a message queue", nil)
	waitAnswers(t, d, th, 1, "Drew a box for: draw a message queue.")
	var pictures, without []string
	for _, f := range d.fake.Files() {
		if f.User != d.fake.Config().BotUserID || path.Ext(f.Name) != ".png" {
			continue
		}
		pictures = append(pictures, f.Name)
		if f.Alt == "" {
			without = append(without, f.Name)
		}
	}
	if len(pictures) == 0 {
		t.Fatal("no pictures posted")
	}
	if len(without) > 0 {
		t.Errorf("%d of the %d pictures posted have no alt text: %q", len(without), len(pictures), without)
	}
	for _, m := range d.fake.Thread(th.chat, th.root) {
		for _, f := range m.Files {
			if path.Ext(f.Name) == ".png" && !strings.Contains(f.Alt, "draw a message queue") {
				t.Errorf("alt text of %s = %q, want it to name the box \"draw a message queue\"", f.Name, f.Alt)
			}
		}
	}
}

// slackDrawThread: "draw this thread" in a channel thread the bot was not part of reads the
// people's messages above it (names from users.info, the bot and other bots left out) and hands
// them to the model; the reply says how many it used.
func slackDrawThread(t *testing.T, e *e2e, d *slackDriver) {
	ana, bruno := d.user(14), d.user(15)
	d.fake.AddUser(slackfake.User{ID: ana, Name: "ana", RealName: "Ana Lima", DisplayName: "Ana"})
	d.fake.AddUser(slackfake.User{ID: bruno, Name: "bruno", RealName: "Bruno Costa"})
	d.mu.Lock()
	d.channels++
	ch := fmt.Sprintf("C0E2E%03d", d.channels)
	d.mu.Unlock()
	root := d.fake.Post(slackfake.UserMessage{Channel: ch, User: ana, Text: "Requests go from the web app to the API."})
	d.deliver(t, root.Events, 0) // no mention: not for the bot
	th := &chatThread{chat: ch, root: root.TS}
	for _, m := range []slackfake.UserMessage{
		{Channel: ch, ThreadTS: root.TS, User: bruno, Text: "The API keeps orders in Postgres."},
		{Channel: ch, ThreadTS: root.TS, User: "U0E2ECI", BotID: "B0E2ECI", Text: "build 812 passed"},
		{Channel: ch, ThreadTS: root.TS, User: ana, Text: "And <@" + bruno + "> wants a Redis cache in front of it."},
	} {
		d.deliver(t, d.fake.Post(m).Events, 0)
	}
	before := len(e.ollama.Requests())
	req := d.fake.Post(slackfake.UserMessage{Channel: ch, ThreadTS: root.TS, User: ana, Text: "<@U0BOT> draw this thread"})
	d.deliver(t, req.Events, 0)
	waitAnswers(t, d, th, 1, "From the 3 messages above.")
	var sent strings.Builder
	for _, r := range e.ollama.Requests()[before:] {
		for _, m := range r.Messages {
			sent.WriteString(m.Content + "\n")
		}
	}
	for _, want := range []string{"Ana: Requests go from the web app to the API.", "Bruno Costa: The API keeps orders in Postgres.",
		"Ana: And @Bruno Costa wants a Redis cache in front of it."} {
		if !strings.Contains(sent.String(), want) {
			t.Errorf("the model was not given %q; it got:\n%s", want, sent.String())
		}
	}
	if strings.Contains(sent.String(), "build 812 passed") {
		t.Error("another bot's message reached the model")
	}
}

// The bot with Slack in Socket Mode and Telegram polling, in one serve.
func TestE2ESocketModeAndPolling(t *testing.T) {
	sl, tg := newSlack(t), newTelegram(t)
	e := startE2E(t, func(c *config.Config) {
		sl.configure(c, "socket")
		tg.configure(c, "")
		c.ModelTimeout = 5 * time.Second // the instant model's turns take milliseconds
	})
	sl.ready(t, e)
	tg.ready(t)
	t.Run("slack", func(t *testing.T) { runScenarios(t, e, sl) })
	t.Run("telegram", func(t *testing.T) { runScenarios(t, e, tg) })
	t.Run("slack assistant thread", func(t *testing.T) { slackAssistant(t, sl) })
	t.Run("slack alt text", func(t *testing.T) { slackAltText(t, sl) })
	t.Run("slack draw this thread", func(t *testing.T) { slackDrawThread(t, e, sl) })

	t.Run("slack slow model", func(t *testing.T) {
		// A model slower than the request limit: the run ends with a friendly error and the
		// thread is unchanged.
		e.ollama.SetResponder(func(req api.ChatRequest) ollamafake.Turn {
			return ollamafake.Slow(ollamafake.Boxes(req), time.Minute)
		})
		defer e.ollama.SetResponder(ollamafake.Boxes)
		th := sl.start(t, 9, "draw slowly", nil)
		waitAnswers(t, sl, th, 0, "took too long", "Nothing in the diagram changed")
		if code, _ := e.get(t, "/healthz"); code != http.StatusOK {
			t.Errorf("healthz after a timed-out run = %d, want 200", code)
		}
	})
}

// The bot with the Slack Events API over HTTP and a Telegram webhook, in one serve.
func TestE2EEventsAPIAndWebhook(t *testing.T) {
	sl, tg := newSlack(t), newTelegram(t)
	addr := freeAddr(t)
	e := startE2E(t, func(c *config.Config) {
		sl.configure(c, "events")
		tg.configure(c, addr)
	})
	sl.events = "http://" + e.addr + "/slack/events"
	sl.ready(t, e)
	tg.ready(t)
	t.Run("slack", func(t *testing.T) { runScenarios(t, e, sl) })
	t.Run("telegram", func(t *testing.T) { runScenarios(t, e, tg) })
	t.Run("slack assistant thread", func(t *testing.T) { slackAssistant(t, sl) })

	t.Run("slack forged signature", func(t *testing.T) {
		d := sl
		before := len(e.ollama.Requests())
		p := d.fake.Post(slackfake.UserMessage{Channel: "C0FORGED", User: d.user(7), Text: "<@U0BOT> draw a forged box"})
		ctx := context.Background()
		for _, opt := range []slackfake.HTTPOptions{{Secret: "not-the-signing-secret"}, {Signature: "v0=00"}} {
			resp, err := d.fake.DeliverHTTP(ctx, d.events, p.Events[0].Body, opt)
			if err != nil || resp.Status != http.StatusUnauthorized {
				t.Errorf("forged request (%+v): %d %q %v, want 401", opt, resp.Status, resp.Body, err)
			}
		}
		// A genuine message in the same thread goes through the same queue: when it is
		// answered, the forged one would have been too.
		th := &chatThread{chat: "C0FORGED", root: p.TS}
		q := d.fake.Post(slackfake.UserMessage{Channel: th.chat, ThreadTS: th.root, User: d.user(7), Text: "<@U0BOT> history"})
		d.deliver(t, q.Events, 0)
		waitAnswers(t, d, th, 0, "There is no diagram in this thread yet")
		if after := len(e.ollama.Requests()); after != before {
			t.Errorf("the model was asked %d times after a forged request, want 0", after-before)
		}
	})

	t.Run("telegram wrong webhook secret", func(t *testing.T) {
		before := len(e.ollama.Requests())
		// A private chat is one thread, so a genuine message after the forged one queues behind it.
		chat := tg.userID(8)
		tg.fake.AddChat(models.Chat{ID: chat, Type: models.ChatTypePrivate, FirstName: "Ann"})
		forged := models.Update{ID: 990001, Message: &models.Message{ID: 999, Date: int(time.Now().Unix()),
			Chat: models.Chat{ID: chat, Type: models.ChatTypePrivate}, From: &models.User{ID: chat, FirstName: "Mallory"},
			Text: "draw a forged box"}}
		for _, secret := range []string{"wrong-secret", ""} {
			code, err := tg.fake.PostWebhook(tg.fake.Webhook().URL, secret, forged)
			if err != nil || code != http.StatusUnauthorized {
				t.Errorf("update with secret %q: %d %v, want 401", secret, code, err)
			}
		}
		tg.checkDelivery(t, tg.fake.Send(tgfake.Post{Chat: chat, From: models.User{ID: chat, FirstName: "Ann"}, Text: "/history"}))
		answered := tg.fake.WaitFor(e2eWait, func() bool {
			for _, m := range tg.fake.BotMessages(chat) {
				if strings.Contains(m.Text, "There is no diagram in this thread yet") {
					return true
				}
			}
			return false
		})
		if !answered {
			t.Fatalf("no answer to /history after the forged update: %+v", tg.fake.BotMessages(chat))
		}
		if after := len(e.ollama.Requests()); after != before {
			t.Errorf("the model was asked %d times after a forged update, want 0", after-before)
		}
	})

	// Last: it stops serve.
	t.Run("SIGTERM lets a running drawing finish", func(t *testing.T) {
		started := make(chan struct{}, 1)
		e.ollama.SetResponder(func(req api.ChatRequest) ollamafake.Turn {
			select {
			case started <- struct{}{}:
			default:
			}
			return ollamafake.Slow(ollamafake.Boxes(req), 500*time.Millisecond)
		})
		th := sl.start(t, 10, "draw during shutdown", nil)
		select {
		case <-started:
		case <-time.After(e2eWait):
			t.Fatal("the run never asked the model")
		}
		e.stop() // what SIGTERM does: cancel serve's context, then wait for it to end
		answers, texts, busy := sl.replies(th)
		if len(answers) != 1 || !hasText(texts, "Drew a box for: draw during shutdown.") || busy {
			t.Errorf("after shutdown: %d answers, texts %q, busy %v; want the drawing posted before serve ended", len(answers), texts, busy)
		}
	})
}
