package slack

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/excalibot/excalibot/bot"
	"github.com/excalibot/excalibot/bot/relay"
	"github.com/excalibot/excalibot/bot/slack/slackfake"
	"github.com/excalibot/excalibot/internal/waitfor"
	"github.com/excalibot/excalibot/store"
	"github.com/excalibot/excalibot/store/sqlite"
	"github.com/excalibot/excalibot/store/storetest"
)

// The crash windows of one process, through fake Slack and the real core on SQLite: the store
// failing at each step of a request, a platform that fails and then takes the reply, a 429 with
// Retry-After, and a restart with messages and replies left in the store.

// faultStore is the SQLite store with writes that fail on demand, as a database that stops
// answering for a moment.
type faultStore struct {
	*sqlite.Store
	mu   sync.Mutex
	fail map[string]int // method → how many of its next calls fail
}

var errStoreDown = errors.New("write unix ->/run/postgresql/.s.PGSQL.5432: broken pipe")

func (f *faultStore) failNext(method string, n int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.fail == nil {
		f.fail = map[string]int{}
	}
	f.fail[method] += n
}

func (f *faultStore) down(method string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.fail[method] > 0 {
		f.fail[method]--
		return errStoreDown
	}
	return nil
}

func (f *faultStore) Accept(ctx context.Context, req store.AcceptRequest) (store.Accepted, error) {
	if err := f.down("Accept"); err != nil {
		return store.Accepted{}, err
	}
	return f.Store.Accept(ctx, req)
}

func (f *faultStore) StartRun(ctx context.Context, req store.StartRunRequest) (store.Run, error) {
	if err := f.down("StartRun"); err != nil {
		return store.Run{}, err
	}
	return f.Store.StartRun(ctx, req)
}

func (f *faultStore) FinishRun(ctx context.Context, req store.FinishRunRequest) (store.Run, *store.Thread, error) {
	if err := f.down("FinishRun"); err != nil {
		return store.Run{}, nil, err
	}
	return f.Store.FinishRun(ctx, req)
}

func (f *faultStore) SettleOutbox(ctx context.Context, s store.Settle) error {
	if err := f.down("SettleOutbox"); err != nil {
		return err
	}
	return f.Store.SettleOutbox(ctx, s)
}

// crashEnv is the adapter in Socket Mode with the real core over a faultStore.
type crashEnv struct {
	t    *testing.T
	path string
	st   *faultStore
	fake *slackfake.Server
	core *relay.Engine
	a    *Adapter
	ctx  context.Context
	stop func() // stops the adapter and closes the core (as on SIGTERM); also done at cleanup
}

// editorLinks gives every reply link buttons, so a picture's reply is two steps: the files, then
// the message with the buttons.
type editorLinks struct{}

func (editorLinks) ThreadLinks(context.Context, *store.Thread) (string, string, error) {
	return "https://excalibot.example/d/edit", "https://excalibot.example/d/view", nil
}

// fastWork are engine options that make retries and polls quick.
var fastWork = relay.Options{PollInterval: 20 * time.Millisecond, RetryBase: 20 * time.Millisecond, LeaseTTL: 3 * time.Second}

// unlimited are conversation options whose rates no test reaches.
var unlimited = bot.Options{UserRatePerMinute: 1e9, ChatRatePerMinute: 1e9}

func newCrashEnv(t *testing.T, fake *slackfake.Server, path string) *crashEnv {
	t.Helper()
	if fake == nil {
		fake = slackfake.New(t, slackfake.Config{})
	}
	if path == "" {
		path = filepath.Join(t.TempDir(), "bot.db")
	}
	sq, err := sqlite.Open(context.Background(), path, store.Options{}, nil)
	must(t, err)
	st := &faultStore{Store: sq}
	logs := &logBuffer{}
	log := slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	conv := bot.New(st, boxDrawer{}, pngRenderer{}, editorLinks{}, unlimited, log)
	core := relay.New(st, conv, fastWork, log)
	fc := fake.Config()
	a, err := New(Config{BotToken: fc.BotToken, AppToken: fc.AppToken, APIURL: fake.APIURL(), MaxRetries: 1,
		KnownThread: conv.KnownThread}, core, log)
	must(t, err)
	core.Register(a)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		if err := a.Run(ctx); err != nil {
			t.Errorf("Run: %v", err)
		}
	}()
	must(t, core.Recover(ctx))
	tctx, tcancel := context.WithTimeout(context.Background(), 30*time.Second)
	e := &crashEnv{t: t, path: path, st: st, fake: fake, core: core, a: a, ctx: tctx}
	e.stop = sync.OnceFunc(func() {
		cancel()
		<-done
		core.Close(context.Background())
		sq.Close()
		tcancel()
		if t.Failed() {
			t.Logf("log:\n%s", logs.String())
		}
	})
	t.Cleanup(e.stop)
	must(t, fake.WaitConnected(tctx))
	return e
}

// crashWait bounds each wait of these tests; never reached when all is well.
const crashWait = 20 * time.Second

// answers waits until the thread holds n bot messages that satisfy is, and no more.
func (e *crashEnv) answers(channel, thread string, n int, is func(slackfake.Message) bool) []slackfake.Message {
	e.t.Helper()
	var got []slackfake.Message
	waitfor.Until(e.t, crashWait, fmt.Sprintf("%d answers in thread %s", n, thread), func() bool {
		got = got[:0]
		for _, m := range e.fake.Thread(channel, thread) {
			if m.BotID != "" && is(m) {
				got = append(got, m)
			}
		}
		return len(got) >= n
	}, func() string { return fmt.Sprintf("%q", threadShape(e.t, e.fake.Thread(channel, thread))) })
	if len(got) != n {
		e.t.Fatalf("%d answers, want %d: %q", len(got), n, threadShape(e.t, e.fake.Thread(channel, thread)))
	}
	return got
}

func pictures(m slackfake.Message) bool { return len(m.Files) > 0 }

// said waits until the bot said text in the thread, and reports whether it did.
func (e *crashEnv) said(channel, thread, text string) bool {
	return waitfor.Within(crashWait, func() bool {
		for _, m := range e.fake.Thread(channel, thread) {
			if m.BotID != "" && strings.Contains(m.Text, text) {
				return true
			}
		}
		return false
	})
}

// outbox waits until the thread's outbox holds n rows in state, and returns them.
func (e *crashEnv) outbox(key bot.ThreadKey, state store.OutboxState, n int) []store.OutboxItem {
	e.t.Helper()
	var out []store.OutboxItem
	var err error
	waitfor.Until(e.t, crashWait, fmt.Sprintf("%d %s rows in the outbox of %s", n, state, key), func() bool {
		out, err = e.st.Outbox(e.ctx, key, state)
		return err == nil && len(out) == n
	}, func() string { return fmt.Sprintf("%d rows (%v)", len(out), err) })
	return out
}

// settle waits until nothing is left to do for the thread: a message or reply kept twice would
// have been posted by then.
func (e *crashEnv) settle(channel, thread string) {
	e.t.Helper()
	storetest.WaitQuiet(e.t, e.st, e.core, bot.ThreadKey{Platform: Platform, Workspace: "T0FAKE", Channel: channel, Thread: thread})
}

func TestCrashWindowAccept(t *testing.T) {
	e := newCrashEnv(t, nil, "")
	e.st.failNext("Accept", 1)
	p := e.fake.Post(slackfake.UserMessage{Channel: "C1", Text: "<@U0BOT> draw a box"})
	env, err := e.fake.Deliver(e.ctx, p.Events[0], slackfake.DeliverOptions{})
	must(t, err)
	short, cancel := context.WithTimeout(e.ctx, 300*time.Millisecond)
	defer cancel()
	if e.fake.WaitAck(short, env) == nil {
		t.Fatal("acked a message the store did not keep")
	}
	// Slack redelivers the unacked envelope; this time it is kept, acked and answered once.
	env2, err := e.fake.Deliver(e.ctx, p.Events[0], slackfake.DeliverOptions{RetryAttempt: 1, RetryReason: "timeout"})
	must(t, err)
	must(t, e.fake.WaitAck(e.ctx, env2))
	e.answers("C1", p.TS, 1, pictures)
	e.settle("C1", p.TS)
	e.answers("C1", p.TS, 1, pictures)
}

func TestCrashWindowStartRun(t *testing.T) {
	e := newCrashEnv(t, nil, "")
	e.st.failNext("StartRun", 2)
	p := e.fake.Post(slackfake.UserMessage{Channel: "C1", Text: "<@U0BOT> draw a box"})
	_, err := e.fake.Deliver(e.ctx, p.Events[0], slackfake.DeliverOptions{})
	must(t, err)
	// The kept message waits in the store until a run can be recorded, then is drawn once.
	e.answers("C1", p.TS, 1, pictures)
	if !e.said("C1", p.TS, "Drew r1.") {
		t.Errorf("thread %q, want the drawing's summary", threadShape(t, e.fake.Thread("C1", p.TS)))
	}
	e.settle("C1", p.TS)
	e.answers("C1", p.TS, 1, pictures)
}

func TestCrashWindowFinishRun(t *testing.T) {
	e := newCrashEnv(t, nil, "")
	e.st.failNext("FinishRun", 1)
	p := e.fake.Post(slackfake.UserMessage{Channel: "C1", Text: "<@U0BOT> draw a box"})
	_, err := e.fake.Deliver(e.ctx, p.Events[0], slackfake.DeliverOptions{})
	must(t, err)
	// The revision and its reply could not be kept: nothing changed, and the thread is told so in
	// plain words, once (the later recovery of the run does not tell it again).
	told := e.answers("C1", p.TS, 1, func(m slackfake.Message) bool { return strings.Contains(m.Text, "database did not answer") })
	if strings.Contains(told[0].Text, "broken pipe") {
		t.Errorf("the notice carries the driver's words: %q", told[0].Text)
	}
	if th, err := e.st.Load(e.ctx, bot.ThreadKey{Platform: Platform, Workspace: "T0FAKE", Channel: "C1", Thread: p.TS}); err != nil || th.Rev != 0 {
		t.Errorf("thread after the failed end: %+v, %v; want revision 0", th, err)
	}
	// The run is left running for recovery, which interrupts it once its lease lapses (real time:
	// the lease is the store's, on the wall clock) without telling the thread again.
	waitfor.Until(t, crashWait, "the run interrupted by recovery", func() bool {
		runs, err := e.st.Runs(e.ctx, store.RunInterrupted)
		return err == nil && len(runs) == 1
	}, nil)
	e.settle("C1", p.TS)
	if n := len(e.fake.Thread("C1", p.TS)) - 1; n != 1 {
		t.Errorf("%d bot messages, want only the notice: %q", n, threadShape(t, e.fake.Thread("C1", p.TS)))
	}
	// The thread goes on.
	_, err = e.fake.Send(e.ctx, slackfake.UserMessage{Channel: "C1", Text: "again", ThreadTS: p.TS})
	must(t, err)
	e.answers("C1", p.TS, 1, pictures)
}

func TestCrashWindowSendFailsThenRecovers(t *testing.T) {
	e := newCrashEnv(t, nil, "")
	// The file share fails twice (Slack is down), then works.
	e.fake.Fail("files.completeUploadExternal", "internal_error", 2)
	p := e.fake.Post(slackfake.UserMessage{Channel: "C1", Text: "<@U0BOT> draw a box"})
	_, err := e.fake.Deliver(e.ctx, p.Events[0], slackfake.DeliverOptions{})
	must(t, err)
	key := bot.ThreadKey{Platform: Platform, Workspace: "T0FAKE", Channel: "C1", Thread: p.TS}
	out := e.outbox(key, store.OutboxSent, 2) // the reply and its signs
	if out[0].Attempts != 2 || !strings.Contains(out[0].Error, "internal_error") {
		t.Errorf("reply row %+v; want it sent after two failed attempts", out[0])
	}
	e.settle("C1", p.TS)
	e.answers("C1", p.TS, 1, pictures)
	if runs, _ := e.st.Runs(e.ctx, store.RunDone); len(runs) != 1 {
		t.Errorf("done runs = %d, want 1 once its reply was posted", len(runs))
	}
}

// TestCrashWindowSettle: the reply is posted but the store fails to record that; the row is
// tried again, its steps are recorded as posted, and nothing is posted twice.
func TestCrashWindowSettle(t *testing.T) {
	e := newCrashEnv(t, nil, "")
	e.st.failNext("SettleOutbox", 1)
	p := e.fake.Post(slackfake.UserMessage{Channel: "C1", Text: "<@U0BOT> draw a box"})
	_, err := e.fake.Deliver(e.ctx, p.Events[0], slackfake.DeliverOptions{})
	must(t, err)
	e.answers("C1", p.TS, 1, pictures)
	e.outbox(bot.ThreadKey{Platform: Platform, Workspace: "T0FAKE", Channel: "C1", Thread: p.TS}, store.OutboxSent, 2)
	e.settle("C1", p.TS)
	e.answers("C1", p.TS, 1, pictures)
	buttons := e.answers("C1", p.TS, 1, func(m slackfake.Message) bool { return len(m.Blocks) > 0 })
	if !strings.Contains(string(buttons[0].Blocks), "Open in editor") {
		t.Errorf("links message %s, want the editor button", buttons[0].Blocks)
	}
}

func TestCrashWindowRateLimited(t *testing.T) {
	e := newCrashEnv(t, nil, "")
	// Beyond slack-go's one retry: the outbox waits the Retry-After and posts once.
	e.fake.RateLimit("chat.postMessage", 2, 1)
	_, err := e.fake.Send(e.ctx, slackfake.UserMessage{Channel: "D1", Text: "help"})
	must(t, err)
	e.answers("D1", "", 1, func(m slackfake.Message) bool { return strings.Contains(m.Text, "I draw diagrams") })
	out := e.outbox(bot.ThreadKey{Platform: Platform, Workspace: "T0FAKE", Channel: "D1"}, store.OutboxSent, 1)
	if out[0].Attempts != 1 || !strings.Contains(out[0].Error, "retry after 1s") {
		t.Fatalf("outbox %+v; want the reply posted after one attempt rate limited for 1s", out)
	}
	// Scheduled by Slack's Retry-After, and posted no earlier.
	if out[0].Due.Sub(out[0].Created) < time.Second || out[0].Updated.Before(out[0].Due) {
		t.Errorf("queued %v, due %v, posted %v: want the retry due a Retry-After later, and posted then",
			out[0].Created, out[0].Due, out[0].Updated)
	}
}

func TestCrashRestartWithWorkLeft(t *testing.T) {
	fake := slackfake.New(t, slackfake.Config{})
	e := newCrashEnv(t, fake, "")
	// The reply's links message cannot be posted before the process stops: its files are shared
	// (a recorded step), the message waits in the outbox.
	e.fake.Fail("chat.postMessage", "internal_error", 1000)
	p := e.fake.Post(slackfake.UserMessage{Channel: "C1", Text: "<@U0BOT> draw a box"})
	_, err := e.fake.Deliver(e.ctx, p.Events[0], slackfake.DeliverOptions{})
	must(t, err)
	key := bot.ThreadKey{Platform: Platform, Workspace: "T0FAKE", Channel: "C1", Thread: p.TS}
	waitfor.Until(t, crashWait, "a failed attempt at the links message", func() bool {
		out, _ := e.st.Outbox(e.ctx, key, store.OutboxPending)
		return len(out) > 0 && out[0].Attempts > 0
	}, nil)
	// A follow-up arrives and is kept, but the process stops before drawing it.
	e.core.Close(context.Background()) // no more work here; kept work stays in the store
	follow := e.fake.Post(slackfake.UserMessage{Channel: "C1", Text: "add another", ThreadTS: p.TS})
	_, err = e.fake.Deliver(e.ctx, follow.Events[0], slackfake.DeliverOptions{})
	must(t, err)
	waitfor.Until(t, crashWait, "the follow-up kept", func() bool {
		ms, _ := e.st.Pending(e.ctx, key, 0)
		return len(ms) == 1
	}, nil)
	e.stop()
	e.fake.Heal("chat.postMessage") // Slack is back
	shares := len(e.fake.Calls("files.completeUploadExternal"))

	next := newCrashEnv(t, fake, e.path)
	// The next process posts the rest of the first reply (no second file share for it), then draws
	// the follow-up.
	next.answers("C1", p.TS, 2, pictures)
	if !next.said("C1", p.TS, "Drew r1.") || !next.said("C1", p.TS, "Drew r2.") {
		t.Errorf("thread %q, want both summaries: the first reply's rest, then the follow-up drawn on it", threadShape(t, fake.Thread("C1", p.TS)))
	}
	if n := len(fake.Calls("files.completeUploadExternal")) - shares; n != 1 {
		t.Errorf("%d file shares after the restart, want 1 (the follow-up's; the first reply's were posted)", n)
	}
	next.settle("C1", p.TS)
	next.answers("C1", p.TS, 2, pictures)
}
