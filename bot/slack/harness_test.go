package slack

import (
	"bytes"
	"context"
	"log/slog"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/excalibot/excalibot/bot"
	"github.com/excalibot/excalibot/bot/slack/slackfake"
	"github.com/excalibot/excalibot/internal/waitfor"
)

// recorder is a small bot.Handler: it drops redeliveries the way the core does (by event id
// and by channel+ts), records what it receives, and runs an optional reply in a goroutine it
// owns, as the core's queue would.
type recorder struct {
	reply func(ctx context.Context, a bot.Adapter, m bot.Message)
	fake  *slackfake.Server // set by start before Run, so replies may read it
	block chan struct{}     // when set, Handle waits on it: a slow core
	fail  func() error      // when set and it returns an error, Handle keeps nothing and returns it (a store that fails)

	mu        sync.Mutex
	raw       []bot.Message // every hand-over, duplicates included
	delivered []bot.Message // after dedup
	seen      map[string]bool
	got       chan bot.Message
	replied   chan bot.Message // after reply returned
	wg        sync.WaitGroup   // waited for only after Run stopped (see start)
}

func newRecorder() *recorder {
	return &recorder{seen: map[string]bool{}, got: make(chan bot.Message, 64), replied: make(chan bot.Message, 64)}
}

func (r *recorder) Handle(ctx context.Context, a bot.Adapter, m bot.Message) error {
	if m.Refusal != "" { // the core posts a refusal as the message's reply (bot/relay: from the outbox)
		return a.Send(ctx, m.Key, bot.Reply{Text: m.Refusal, Error: true, ReplyTo: m.ID})
	}
	if r.block != nil {
		<-r.block
	}
	if r.fail != nil {
		if err := r.fail(); err != nil {
			return err
		}
	}
	r.mu.Lock()
	r.raw = append(r.raw, m)
	dup := r.seen["ev/"+m.EventID] || r.seen["msg/"+m.Key.Channel+"/"+m.ID]
	r.seen["ev/"+m.EventID], r.seen["msg/"+m.Key.Channel+"/"+m.ID] = true, true
	if !dup {
		r.delivered = append(r.delivered, m)
	}
	r.mu.Unlock()
	if dup {
		return nil
	}
	r.got <- m
	if r.reply != nil {
		r.wg.Go(func() {
			r.reply(context.WithoutCancel(ctx), a, m)
			r.replied <- m
		})
	}
	return nil
}

func (r *recorder) rawCount() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.raw)
}

// deliveredCount is how many distinct messages were handed over.
func (r *recorder) deliveredCount() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.delivered)
}

// waitRaw waits until n hand-overs (duplicates included) have happened and returns them.
func (r *recorder) waitRaw(t *testing.T, n int) []bot.Message {
	t.Helper()
	waitfor.Within(10*time.Second, func() bool { return r.rawCount() >= n })
	r.mu.Lock()
	defer r.mu.Unlock()
	if len(r.raw) != n {
		t.Fatalf("hand-overs = %d, want %d", len(r.raw), n)
	}
	return slices.Clone(r.raw)
}

// next waits for the next delivered message.
func (r *recorder) next(t *testing.T) bot.Message {
	t.Helper()
	select {
	case m := <-r.got:
		return m
	case <-time.After(10 * time.Second):
		t.Fatal("no message delivered")
		return bot.Message{}
	}
}

// waitReplied waits until the reply to the next message has been sent.
func (r *recorder) waitReplied(t *testing.T) {
	t.Helper()
	select {
	case <-r.replied:
	case <-time.After(20 * time.Second):
		t.Fatal("no reply finished")
	}
}

// nextText waits for the next delivered message and checks its text. To show that messages
// were dropped, callers send a valid sentinel after them: the dispatcher keeps order.
func (r *recorder) nextText(t *testing.T, want string) bot.Message {
	t.Helper()
	m := r.next(t)
	if m.Text != want {
		t.Fatalf("delivered %q, want %q (an earlier message was not dropped?)", m.Text, want)
	}
	return m
}

type env struct {
	fake *slackfake.Server
	a    *Adapter
	rec  *recorder
	ctx  context.Context
	stop func() // stops Run and waits for everything it started; also done at cleanup
	log  *logBuffer
}

// logs is what the adapter logged so far.
func (e *env) logs() string { return e.log.String() }

// start runs an adapter against a fresh fake Slack until the test ends.
func start(t testing.TB, mode string, rec *recorder, mod func(*Config)) *env {
	t.Helper()
	return startWith(t, slackfake.New(t, slackfake.Config{}), mode, rec, mod)
}

// startWith runs an adapter against fake until the test ends.
func startWith(t testing.TB, fake *slackfake.Server, mode string, rec *recorder, mod func(*Config)) *env {
	t.Helper()
	fc := fake.Config()
	cfg := Config{
		BotToken: fc.BotToken, AppToken: fc.AppToken, SigningSecret: fc.SigningSecret,
		Mode: mode, APIURL: fake.APIURL(), HTTPTimeout: 10 * time.Second,
		PingInterval: 5 * time.Second,
	}
	if mod != nil {
		mod(&cfg)
	}
	logs := &logBuffer{}
	log := slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	a, err := New(cfg, rec, log)
	if err != nil {
		t.Fatal(err)
	}
	rec.fake = fake
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- a.Run(ctx) }()
	var stopOnce sync.Once
	stop := func() {
		stopOnce.Do(func() {
			if rec.block != nil {
				select {
				case <-rec.block:
				default:
					close(rec.block)
				}
			}
			cancel()
			if err := <-done; err != nil {
				t.Errorf("Run: %v", err)
			}
			rec.wg.Wait()
		})
	}
	t.Cleanup(func() {
		stop()
		if t.Failed() {
			t.Logf("adapter log:\n%s", logs.String())
		}
	})
	tctx, tcancel := context.WithTimeout(context.Background(), 20*time.Second)
	t.Cleanup(tcancel)
	if mode == ModeSocket {
		if err := fake.WaitConnected(tctx); err != nil {
			t.Fatal(err)
		}
	}
	return &env{fake: fake, a: a, rec: rec, ctx: tctx, stop: stop, log: logs}
}

// logBuffer keeps the adapter's log, shown when a test fails. (Logging straight to t.Log races
// with the test's end: slack-go's goroutines may log a moment after Run returned.)
type logBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (l *logBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.Write(p)
}

func (l *logBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.String()
}

// waitUntil waits until cond holds, failing the test after 10 s: for what the adapter does from
// its own goroutines.
func waitUntil(t testing.TB, what string, cond func() bool) {
	t.Helper()
	waitfor.Until(t, 10*time.Second, what, cond, nil)
}

func must(t testing.TB, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}
