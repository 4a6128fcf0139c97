package telegram

import (
	"errors"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/excalibot/excalibot/bot"
	"github.com/excalibot/excalibot/bot/telegram/tgfake"
	"github.com/excalibot/excalibot/internal/waitfor"
)

// waitFor waits until cond holds, or fails the test.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	waitfor.Until(t, wait, what, cond, nil)
}

// downCore is a core whose store does not answer while down is set: the recorder keeps nothing,
// and the refused messages' texts are noted in order.
type downCore struct {
	down    atomic.Bool
	mu      sync.Mutex
	refused []string
}

func (d *downCore) refusals() []string {
	d.mu.Lock()
	defer d.mu.Unlock()
	return slices.Clone(d.refused)
}

// failingCore makes the recorder refuse to keep messages while the returned core is down.
func failingCore(e *env) *downCore {
	d := &downCore{}
	e.rec.mu.Lock()
	e.rec.fail = func(m bot.Message) error {
		if d.down.Load() {
			d.mu.Lock()
			d.refused = append(d.refused, m.Text)
			d.mu.Unlock()
			return errors.New("store: database is locked")
		}
		return nil
	}
	e.rec.mu.Unlock()
	return d
}

// TestPollingConfirmsOnlyKeptUpdates: getUpdates' offset moves past an update only once the core
// kept it: while the core cannot, the update stays unconfirmed at Telegram and nothing behind it
// is handed over; then both are, in order, and confirmed.
func TestPollingConfirmsOnlyKeptUpdates(t *testing.T) {
	e := start(t, nil)
	e.rec.silence()
	core := failingCore(e)
	core.down.Store(true)
	one := e.fake.Send(tgfake.Post{Chat: dmChat.ID, From: alice, Text: "one"})
	e.fake.Send(tgfake.Post{Chat: dmChat.ID, From: alice, Text: "two"})
	// Several polls, each handing over the first update again and being refused.
	waitFor(t, "three refused hand-overs", func() bool { return len(core.refusals()) >= 3 })
	for _, text := range core.refusals() {
		if text != "one" {
			t.Fatalf("handed over %q while the update before it was not kept (refused: %q)", text, core.refusals())
		}
	}
	if n := len(e.rec.messages()); n != 0 {
		t.Fatalf("%d messages kept while the core could not keep any", n)
	}
	if pend := e.fake.PendingUpdates(); len(pend) != 2 || pend[0].ID != one.UpdateID {
		t.Fatalf("unconfirmed updates = %d (first %v), want both, the first first", len(pend), pend)
	}
	core.down.Store(false)
	if got := e.rec.next(t); got.Text != "one" {
		t.Fatalf("first kept %q, want one", got.Text)
	}
	if got := e.rec.next(t); got.Text != "two" {
		t.Fatalf("second kept %q, want two", got.Text)
	}
	waitFor(t, "Telegram to see both updates confirmed", func() bool { return len(e.fake.PendingUpdates()) == 0 })
	if n := len(e.rec.messages()); n != 2 {
		t.Errorf("%d hand-overs, want 2 (each update once it was kept)", n)
	}
}

// TestWebhookAnswers503UntilKept: an update the core could not keep is answered 503, so Telegram
// delivers it again; the redelivery is kept and answered 200.
func TestWebhookAnswers503UntilKept(t *testing.T) {
	e := start(t, func(c *Config) { c.Mode = "webhook"; c.WebhookSecret = "s3cret" })
	e.rec.silence()
	core := failingCore(e)
	core.down.Store(true)
	sent := e.fake.Send(tgfake.Post{Chat: dmChat.ID, From: alice, Text: "draw"})
	if sent.WebhookStatus != 503 {
		t.Fatalf("webhook answered %d for an update the core did not keep, want 503", sent.WebhookStatus)
	}
	core.down.Store(false)
	again := e.fake.Redeliver(sent.UpdateID)
	if again.WebhookStatus != 200 {
		t.Fatalf("the redelivery: %d, want 200", again.WebhookStatus)
	}
	if got := e.rec.next(t); got.Text != "draw" {
		t.Errorf("kept %+v", got)
	}
}

// TestSendStepsResume: each message of a reply is a recorded step; an attempt that failed after
// the picture goes on with the file, and nothing is sent twice.
func TestSendStepsResume(t *testing.T) {
	a, fake, _ := sendOnly(t)
	reply := bot.Reply{Text: "A flow", Image: &bot.File{Name: "diagram.png", Content: smallPNG()},
		Files: []bot.File{{Name: "diagram.excalidraw", Content: []byte(`{"type":"excalidraw"}`)}}}
	var posted []string
	record := func(id string, _ ...bot.IndexEntry) error { posted = append(posted, id); return nil }
	fake.Fail("sendDocument", tgfake.Failure{Code: 500})
	err := a.SendSteps(t.Context(), dmKey, reply, nil, record)
	if err == nil || isPermanent(err) {
		t.Fatalf("first attempt: err = %v, want a failure worth trying again", err)
	}
	if len(posted) != 1 {
		t.Fatalf("recorded %q, want the picture's message id", posted)
	}
	if err := a.SendSteps(t.Context(), dmKey, reply, slices.Clone(posted), record); err != nil {
		t.Fatal(err)
	}
	if err := a.SendSteps(t.Context(), dmKey, reply, slices.Clone(posted), record); err != nil {
		t.Fatal(err)
	}
	var kinds []string
	for _, m := range fake.BotMessages(dmChat.ID) {
		kinds = append(kinds, m.Kind)
	}
	if !slices.Equal(kinds, []string{"photo", "document"}) {
		t.Errorf("bot messages %v, want one photo and one document", kinds)
	}
	if len(posted) != 2 || posted[0] == posted[1] {
		t.Errorf("recorded %q, want two message ids", posted)
	}
}

// TestSendErrorsForTheOutbox: a 429 longer than the adapter waits carries Telegram's
// retry_after; a refusal is permanent; a server error is worth trying again.
func TestSendErrorsForTheOutbox(t *testing.T) {
	a, fake, _ := sendOnly(t)
	none := func(string, ...bot.IndexEntry) error { return nil }
	fake.Fail("sendMessage", tgfake.Failure{Code: 429, RetryAfter: 600})
	err := a.SendSteps(t.Context(), dmKey, bot.Reply{Text: "x"}, nil, none)
	var rl *bot.RateLimitError
	if !errors.As(err, &rl) || rl.Wait != 600*time.Second {
		t.Errorf("429 with retry_after 600: err = %v, want a RateLimitError of 10m", err)
	}
	fake.Fail("sendMessage", tgfake.Failure{Code: 403})
	if err := a.SendSteps(t.Context(), dmKey, bot.Reply{Text: "x"}, nil, none); !isPermanent(err) {
		t.Errorf("403: err = %v, want permanent", err)
	}
	fake.Fail("sendMessage", tgfake.Failure{Code: 502})
	if err := a.SendSteps(t.Context(), dmKey, bot.Reply{Text: "x"}, nil, none); err == nil || isPermanent(err) {
		t.Errorf("502: err = %v, want a failure worth trying again", err)
	}
	if err := a.SendSteps(t.Context(), bot.ThreadKey{Platform: Platform, Channel: "general"}, bot.Reply{Text: "x"}, nil, none); !isPermanent(err) || !strings.Contains(err.Error(), "not a number") {
		t.Errorf("a key that names no chat: err = %v, want permanent", err)
	}
}

func isPermanent(err error) bool {
	var p *bot.PermanentError
	return errors.As(err, &p)
}

// TestSendStepsResumeKeepsTheName: whether an answer names its diagram is decided on the first
// attempt and kept with its first step, so a retry after the picture was posted (on another
// replica, after a restart, with the index now answering otherwise) posts exactly the rest of
// the same text: nothing repeated, nothing lost where the pieces are cut.
func TestSendStepsResumeKeepsTheName(t *testing.T) {
	for _, later := range []string{"0:999", ""} { // the mark now names another thread; it is gone
		a, fake, _ := sendOnly(t)
		// Words of 7 characters: a name before the text moves every cut.
		long := strings.TrimSpace(strings.Repeat("abcdef ", 1300))
		reply := bot.Reply{Text: long, Alt: "Flowchart with 3 boxes.", Title: "Deploy pipeline", ReplyTo: "600",
			Image: &bot.File{Name: "deploy-pipeline-r2.png", Content: smallPNG()}}
		mark := func(thread string) {
			if err := a.threads.SetThread(t.Context(), group.ID, askedRef(600), thread); err != nil {
				t.Fatal(err)
			}
		}
		// The whole answer in one attempt, in a thread of its own, is what the retry must match.
		mark("0:700")
		if err := a.Send(t.Context(), bot.ThreadKey{Platform: Platform, Channel: "-1001", Thread: "0:700"}, reply); err != nil {
			t.Fatal(err)
		}
		want := fake.BotMessages(group.ID)
		if len(want) < 3 || !strings.HasPrefix(want[0].Text, "‘Deploy pipeline’ — abcdef") {
			t.Fatalf("one attempt: %d messages, the first %q; want the named picture and the text in pieces", len(want), clipped(want[0].Text))
		}

		key := bot.ThreadKey{Platform: Platform, Channel: "-1001", Thread: "0:500"}
		mark("0:500")
		var posted []string
		record := func(id string, _ ...bot.IndexEntry) error { posted = append(posted, id); return nil }
		fake.Fail("sendMessage", tgfake.Failure{Code: 500})
		if err := a.SendSteps(t.Context(), key, reply, nil, record); err == nil || isPermanent(err) {
			t.Fatalf("first attempt: err = %v, want a failure worth trying again", err)
		}
		if len(posted) != 1 {
			t.Fatalf("recorded %q, want the picture's step", posted)
		}
		mark(later)
		if err := a.SendSteps(t.Context(), key, reply, slices.Clone(posted), record); err != nil {
			t.Fatal(err)
		}
		got := fake.BotMessages(group.ID)[len(want):]
		if len(got) != len(want) {
			t.Fatalf("index later %q: retried answer in %d messages, want %d", later, len(got), len(want))
		}
		for i := range want {
			if got[i].Kind != want[i].Kind || got[i].Text != want[i].Text {
				t.Errorf("index later %q: message %d is %s of %d units %q, want %s of %d %q", later, i, got[i].Kind, units(got[i].Text), clipped(got[i].Text), want[i].Kind, units(want[i].Text), clipped(want[i].Text))
			}
		}
	}
}
