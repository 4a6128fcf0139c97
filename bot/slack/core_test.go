package slack

import (
	"context"
	"fmt"
	"log/slog"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/excalibot/excalibot/bot"
	"github.com/excalibot/excalibot/bot/relay"
	"github.com/excalibot/excalibot/bot/slack/slackfake"
	"github.com/excalibot/excalibot/internal/waitfor"
	"github.com/excalibot/excalibot/render/export"
	"github.com/excalibot/excalibot/scene"
	"github.com/excalibot/excalibot/store"
	"github.com/excalibot/excalibot/store/sqlite"
	"github.com/excalibot/excalibot/store/storetest"
)

// boxDrawer adds one rectangle per request, as a stand-in for the agent.
type boxDrawer struct{}

func (boxDrawer) Draw(ctx context.Context, req bot.DrawRequest) (bot.DrawResult, error) {
	sc := scene.New()
	if req.Scene != nil {
		sc = req.Scene.Clone()
	}
	e := scene.NewElement(scene.Rectangle)
	e.ID = fmt.Sprintf("r%d", sc.Len()+1)
	e.X, e.Width, e.Height = float64(sc.Len()*200), 160, 80
	if _, err := sc.Add(e); err != nil {
		return bot.DrawResult{}, err
	}
	if req.Progress != nil {
		req.Progress(bot.Progress{Step: 1, Tool: "create_element", Shapes: sc.Len()})
	}
	return bot.DrawResult{Scene: sc, Memory: []byte(`{}`), Summary: "Drew " + e.ID + ".", Changed: true}, nil
}

type pngRenderer struct{}

func (pngRenderer) Render(_ context.Context, sc *scene.Scene, doc []byte, format export.Format, _ bool) ([]byte, error) {
	return fmt.Appendf([]byte("\x89PNG fake "), "%d elements", sc.Len()), nil
}

// The adapter with the real conversation core and SQLite store: a mention is answered in its
// thread, a follow-up without mention makes revision 2, and a redelivered event (Socket Mode
// retry) and the duplicate message event of a mention get no second answer, nor a second charge of
// the sender's rate: a user's burst of three requests holds the mention and two follow-ups.
func TestWithTheCore(t *testing.T) {
	st, err := sqlite.Open(context.Background(), filepath.Join(t.TempDir(), "bot.db"), store.Options{}, nil)
	must(t, err)
	defer st.Close()
	core := relay.New(st, bot.New(st, boxDrawer{}, pngRenderer{}, nil,
		bot.Options{UserRatePerMinute: 0.001, ChatRatePerMinute: 1e9}, slog.New(slog.DiscardHandler)), relay.Options{}, nil)
	defer core.Close(context.Background())

	fake := slackfake.New(t, slackfake.Config{})
	fc := fake.Config()
	counted := &countingHandler{h: core}
	a, err := New(Config{BotToken: fc.BotToken, AppToken: fc.AppToken, APIURL: fake.APIURL()}, counted, nil)
	must(t, err)
	core.Register(a)
	core.Start()
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	wg.Go(func() {
		if err := a.Run(ctx); err != nil {
			t.Errorf("Run: %v", err)
		}
	})
	defer wg.Wait()
	defer cancel()
	tctx, tcancel := context.WithTimeout(ctx, 30*time.Second)
	defer tcancel()

	// waitReplies waits until the thread holds n answers with files and no status line.
	waitReplies := func(thread string, n int) []slackfake.Message {
		t.Helper()
		var answers []slackfake.Message
		waitfor.Until(t, 30*time.Second, fmt.Sprintf("%d answers in thread %s", n, thread), func() bool {
			answers = answers[:0]
			status := false
			for _, m := range fake.Thread("C1", thread) {
				switch {
				case m.BotID != "" && len(m.Files) > 0:
					answers = append(answers, m)
				case m.BotID != "":
					status = true
				}
			}
			return len(answers) >= n && !status && len(fake.Reactions("C1", thread)) == 0
		}, func() string { return fmt.Sprintf("%q", threadShape(t, fake.Thread("C1", thread))) })
		if len(answers) > n {
			t.Fatalf("%d answers, want %d", len(answers), n)
		}
		return answers
	}

	p := fake.Post(slackfake.UserMessage{Channel: "C1", Text: "<@U0BOT> draw a box"})
	for _, ev := range p.Events { // app_mention and message: one request
		_, err := fake.Deliver(tctx, ev, slackfake.DeliverOptions{})
		must(t, err)
	}
	first := waitReplies(p.TS, 1)[0]
	if !strings.Contains(first.Text, "Drew r1.") || first.Files[0].Name != "diagram-r1.png" || first.Files[1].Name != "diagram-r1.excalidraw" {
		t.Errorf("first answer = %q with %d files, want the summary, PNG and .excalidraw", first.Text, len(first.Files))
	}

	follow := fake.Post(slackfake.UserMessage{Channel: "C1", Text: "add another", ThreadTS: p.TS})
	_, err = fake.Deliver(tctx, follow.Events[0], slackfake.DeliverOptions{})
	must(t, err)
	// Slack redelivers the follow-up (the ack was "late"): same event id.
	_, err = fake.Deliver(tctx, follow.Events[0], slackfake.DeliverOptions{RetryAttempt: 1, RetryReason: "timeout"})
	must(t, err)
	second := waitReplies(p.TS, 2)[1]
	if !strings.Contains(second.Text, "Drew r2.") {
		t.Errorf("second answer = %q, want revision 2 (Drew r2.)", second.Text)
	}
	// The third request of the user is within the burst only if neither duplicate was charged.
	third := fake.Post(slackfake.UserMessage{Channel: "C1", Text: "and a third", ThreadTS: p.TS})
	_, err = fake.Deliver(tctx, third.Events[0], slackfake.DeliverOptions{})
	must(t, err)
	if got := waitReplies(p.TS, 3)[2]; !strings.Contains(got.Text, "Drew r3.") {
		t.Errorf("third answer = %q, want revision 3 (Drew r3.)", got.Text)
	}
	// Once the core has taken all five hand-overs (mention twice, follow-up twice, the third) and
	// nothing is left to do, a wrongly accepted redelivery would have been answered.
	waitfor.Until(t, 10*time.Second, "five hand-overs", func() bool { return counted.n.Load() >= 5 },
		func() string { return fmt.Sprint(counted.n.Load()) })
	storetest.WaitQuiet(t, st, core, bot.ThreadKey{Platform: Platform, Workspace: "T0FAKE", Channel: "C1", Thread: p.TS})
	if got := waitReplies(p.TS, 3); len(got) != 3 {
		t.Errorf("answers = %d, want 3", len(got))
	}
	for _, m := range fake.Thread("C1", p.TS) {
		if strings.Contains(m.Text, "faster than I can draw") {
			t.Errorf("refused as too fast: %q", m.Text)
		}
	}
}

// countingHandler counts the adapter's hand-overs to the core.
type countingHandler struct {
	h bot.Handler
	n atomic.Int64
}

func (c *countingHandler) Handle(ctx context.Context, a bot.Adapter, m bot.Message) error {
	err := c.h.Handle(ctx, a, m)
	c.n.Add(1)
	return err
}

// "draw this thread" where Slack refuses the read: the answer, through the real core, says the
// thread could not be read, and names no API method, thread key or Slack error code.
func TestDiscussionRefusedThroughTheCore(t *testing.T) {
	st, err := sqlite.Open(context.Background(), filepath.Join(t.TempDir(), "bot.db"), store.Options{}, nil)
	must(t, err)
	defer st.Close()
	core := relay.New(st, bot.New(st, boxDrawer{}, pngRenderer{}, nil,
		bot.Options{UserRatePerMinute: 0.001, ChatRatePerMinute: 1e9}, slog.New(slog.DiscardHandler)), relay.Options{}, nil)
	defer core.Close(context.Background())
	e := startWith(t, slackfake.New(t, slackfake.Config{}), ModeSocket, newRecorder(), nil)
	core.Register(e.a)
	core.Start()
	e.rec.reply = func(ctx context.Context, a bot.Adapter, m bot.Message) {
		if err := core.Handle(ctx, a, m); err != nil {
			t.Errorf("core: %v", err)
		}
	}
	root := e.fake.Post(slackfake.UserMessage{Channel: "C1", User: "U1", Text: "How do we ship?"}).TS
	e.fake.Post(slackfake.UserMessage{Channel: "C1", ThreadTS: root, User: "U2", Text: "Build, test, deploy."})
	e.fake.Fail("conversations.replies", "missing_scope", 1)
	_, err = e.fake.Send(e.ctx, slackfake.UserMessage{Channel: "C1", ThreadTS: root, User: "U1", Text: "<@U0BOT> draw this thread"})
	must(t, err)
	e.rec.next(t)
	var answer string
	waitUntil(t, "the answer", func() bool {
		for _, m := range e.fake.Thread("C1", root) {
			if m.BotID != "" && strings.Contains(m.Text, "could not read") {
				answer = m.Text
				return true
			}
		}
		return false
	})
	if !strings.Contains(answer, "lacks permission") || !strings.Contains(answer, "reinstall") {
		t.Errorf("answer = %q, want it to say the app lacks permission and who mends it", answer)
	}
	for _, leak := range []string{"conversations.replies", "missing_scope", root, "C1", "slack:"} {
		if strings.Contains(answer, leak) {
			t.Errorf("answer = %q names %q", answer, leak)
		}
	}
}
