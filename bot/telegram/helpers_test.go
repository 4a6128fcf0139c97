package telegram

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"hash/crc32"
	"image"
	"image/png"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-telegram/bot/models"

	"github.com/excalibot/excalibot/bot"
	"github.com/excalibot/excalibot/bot/telegram/tgfake"
)

const (
	token   = "4242:TEST-token"
	wait    = 10 * time.Second // upper bound for things that happen; never reached when all is well
	editURL = "https://draw.example.com/e/abc123"
)

var (
	alice  = models.User{ID: 101, FirstName: "Alice", Username: "alice"}
	bob    = models.User{ID: 102, FirstName: "Bob"}
	robot  = models.User{ID: 900, FirstName: "Other", Username: "other_bot", IsBot: true}
	dmChat = models.Chat{ID: 101, Type: models.ChatTypePrivate, FirstName: "Alice"}
	group  = models.Chat{ID: -1001, Type: models.ChatTypeSupergroup, Title: "Team"}
	forum  = models.Chat{ID: -1002, Type: models.ChatTypeSupergroup, Title: "Forum", IsForum: true}
)

// recorder is the core as the tests see it: it records every message and, unless told otherwise,
// answers like the real core does, through the adapter, in a goroutine it owns.
type recorder struct {
	mu    sync.Mutex
	msgs  []bot.Message
	read  int // messages returned by next
	errs  []error
	busy  int        // replies in flight
	idle  *sync.Cond // signalled when busy drops to 0
	reply func(ctx context.Context, a bot.Adapter, m bot.Message) error
	got   chan struct{}
	// fail, when set and it returns an error for a message, makes Handle keep nothing and return
	// it (a store that fails).
	fail func(bot.Message) error
}

func newRecorder() *recorder {
	r := &recorder{got: make(chan struct{}, 100), reply: drawReply}
	r.idle = sync.NewCond(&r.mu)
	return r
}

func (r *recorder) Handle(ctx context.Context, a bot.Adapter, m bot.Message) error {
	if m.Refusal != "" { // the core posts a refusal as the message's reply (bot/relay: from the outbox)
		return a.Send(ctx, m.Key, bot.Reply{Text: m.Refusal, Error: true, ReplyTo: m.ID})
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.fail != nil {
		if err := r.fail(m); err != nil {
			return err
		}
	}
	r.msgs = append(r.msgs, m)
	r.got <- struct{}{}
	if r.reply == nil {
		return nil
	}
	r.busy++
	go func(reply func(context.Context, bot.Adapter, bot.Message) error) {
		err := reply(context.WithoutCancel(ctx), a, m)
		r.mu.Lock()
		defer r.mu.Unlock()
		if err != nil {
			r.errs = append(r.errs, err)
		}
		if r.busy--; r.busy == 0 {
			r.idle.Broadcast()
		}
	}(r.reply)
	return nil
}

func (r *recorder) messages() []bot.Message {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]bot.Message(nil), r.msgs...)
}

// next waits for the next delivered message.
func (r *recorder) next(t *testing.T) bot.Message {
	t.Helper()
	select {
	case <-r.got:
	case <-time.After(wait):
		t.Fatal("no message reached the core")
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.read++
	return r.msgs[r.read-1]
}

// settle waits for the replies in flight and fails the test on reply errors.
func (r *recorder) settle(t *testing.T) {
	t.Helper()
	r.mu.Lock()
	defer r.mu.Unlock()
	for r.busy > 0 {
		r.idle.Wait()
	}
	for _, err := range r.errs {
		t.Errorf("reply: %v", err)
	}
	r.errs = nil
}

// drawReply is what the core does for a drawing request.
func drawReply(ctx context.Context, a bot.Adapter, m bot.Message) error {
	st, err := a.Working(ctx, m)
	if err != nil {
		return err
	}
	if err := st.Update(ctx, "drawing… 2 shapes, 1 arrow"); err != nil {
		return err
	}
	err = a.Send(ctx, m.Key, bot.Reply{
		Text:    "Browser → API → Postgres",
		Image:   &bot.File{Name: "diagram.png", MIME: "image/png", Content: smallPNG()},
		Files:   []bot.File{{Name: "diagram.excalidraw", MIME: "application/json", Content: []byte(`{"type":"excalidraw"}`)}},
		EditURL: editURL,
		ReplyTo: m.ID,
	})
	if err != nil {
		return err
	}
	return st.Finish(ctx)
}

// smallPNG is the usual picture; encoded once because the race detector makes encoding slow.
var smallPNG = sync.OnceValue(func() []byte { return pngOf(800, 600) })

// pngHeader is a PNG of w×h pixels as far as its header goes (signature, IHDR, IEND): enough for
// the size checks here and in the fake, without encoding millions of pixels.
func pngHeader(w, h int) []byte {
	chunk := func(typ string, data []byte) []byte {
		b := binary.BigEndian.AppendUint32(nil, uint32(len(data)))
		b = append(append(b, typ...), data...)
		return binary.BigEndian.AppendUint32(b, crc32.ChecksumIEEE(append([]byte(typ), data...)))
	}
	ihdr := binary.BigEndian.AppendUint32(binary.BigEndian.AppendUint32(nil, uint32(w)), uint32(h))
	ihdr = append(ihdr, 8, 0, 0, 0, 0) // 8-bit grey, no interlace
	out := append([]byte("\x89PNG\r\n\x1a\n"), chunk("IHDR", ihdr)...)
	return append(out, chunk("IEND", nil)...)
}

func pngOf(w, h int) []byte {
	var b bytes.Buffer
	if err := png.Encode(&b, image.NewGray(image.Rect(0, 0, w, h))); err != nil {
		panic(err)
	}
	return b.Bytes()
}

type env struct {
	fake *tgfake.Server
	a    *Adapter
	rec  *recorder
	hook *httptest.Server // webhook mode only
	stop func()           // stops the adapter and waits for it; also run at the end of the test
}

// start runs an adapter against a fresh fake until the test ends; edit adjusts the config.
func start(t *testing.T, edit func(*Config)) *env {
	t.Helper()
	fake := tgfake.New(token)
	t.Cleanup(fake.Close)
	for _, c := range []models.Chat{dmChat, group, forum, {ID: 102, Type: models.ChatTypePrivate, FirstName: "Bob"}} {
		fake.AddChat(c)
	}
	return startOn(t, fake, edit)
}

// startOn runs an adapter against fake until e.stop or the end of the test.
func startOn(t *testing.T, fake *tgfake.Server, edit func(*Config)) *env {
	t.Helper()
	return startWith(t, fake, edit, nil)
}

// startWith is startOn with another handler than the recorder (nil: the recorder).
func startWith(t *testing.T, fake *tgfake.Server, edit func(*Config), h bot.Handler) *env {
	t.Helper()
	e := &env{fake: fake, rec: newRecorder()}
	if h == nil {
		h = e.rec
	}
	polls := len(fake.Calls("deleteWebhook"))
	cfg := Config{Token: token, APIURL: fake.URL, PollTimeout: 2 * time.Second, RequestTimeout: 5 * time.Second}
	if edit != nil {
		edit(&cfg)
	}
	if cfg.Mode == "webhook" {
		// Mounted like the web server will: only WebhookPath reaches the adapter.
		e.hook = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.URL.Path != WebhookPath {
				http.NotFound(w, r)
				return
			}
			e.a.WebhookHandler().ServeHTTP(w, r)
		}))
		cfg.PublicURL = e.hook.URL
	}
	log := slog.New(slog.NewTextHandler(t.Output(), &slog.HandlerOptions{Level: slog.LevelWarn}))
	a, err := New(cfg, h, log)
	if err != nil {
		t.Fatal(err)
	}
	a.actionEvery = 30 * time.Millisecond
	e.a = a
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- a.Run(ctx) }()
	e.stop = sync.OnceFunc(func() {
		cancel()
		select {
		case err := <-done:
			if err != nil {
				t.Errorf("Run: %v", err)
			}
		case <-time.After(wait):
			t.Error("Run did not return after its context ended")
		}
		e.rec.settle(t)
		if e.hook != nil {
			e.hook.Close()
		}
	})
	t.Cleanup(e.stop)
	ready := func() bool {
		if a.me.Load() == nil || len(fake.Commands()) == 0 {
			return false
		}
		if cfg.Mode == "webhook" {
			a.hookMu.RLock()
			defer a.hookMu.RUnlock()
			return a.hookCtx != nil
		}
		return len(fake.Calls("deleteWebhook")) > polls // the last call before polling starts
	}
	if !fake.WaitFor(wait, ready) {
		t.Fatal("adapter did not start")
	}
	return e
}

// botMessages waits until chat shows n messages from the bot and returns them.
func (e *env) botMessages(t *testing.T, chat int64, n int) []tgfake.Message {
	t.Helper()
	e.rec.settle(t)
	var got []tgfake.Message
	e.fake.WaitFor(wait, func() bool { got = e.fake.BotMessages(chat); return len(got) >= n })
	if len(got) != n {
		t.Fatalf("chat %d shows %d bot messages, want %d: %+v", chat, len(got), n, summary(got))
	}
	return got
}

func summary(ms []tgfake.Message) []string {
	var out []string
	for _, m := range ms {
		out = append(out, m.Kind+":"+strings.ReplaceAll(m.Text, "\n", " ")+":"+m.File.Name)
	}
	return out
}

func mustUpdate(t *testing.T, raw []byte) models.Update {
	t.Helper()
	var u models.Update
	if err := json.Unmarshal(raw, &u); err != nil {
		t.Fatal(err)
	}
	return u
}

// silence makes the recorder only record, without replying.
func (r *recorder) silence() {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.reply = nil
}
