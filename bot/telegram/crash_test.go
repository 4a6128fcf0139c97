package telegram

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/excalibot/excalibot/bot"
	"github.com/excalibot/excalibot/bot/relay"
	"github.com/excalibot/excalibot/bot/telegram/tgfake"
	"github.com/excalibot/excalibot/internal/waitfor"
	"github.com/excalibot/excalibot/store"
	"github.com/excalibot/excalibot/store/sqlite"
	"github.com/excalibot/excalibot/store/storetest"
)

// The crash windows of one process, through fake Telegram and the real core on SQLite: the store
// failing to keep an update, a Bot API that fails and then takes the reply, a 429 with
// retry_after, and a restart with a kept message not yet drawn.

// faultStore is the SQLite store with writes that fail on demand.
type faultStore struct {
	*sqlite.Store
	mu   sync.Mutex
	fail map[string]int // method → how many of its next calls fail
}

var errStoreDown = errors.New("database is locked (5) (SQLITE_BUSY)")

func (f *faultStore) failNext(method string, n int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.fail == nil {
		f.fail = map[string]int{}
	}
	f.fail[method] = n
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

type crashEnv struct {
	*env
	st   *faultStore
	core *relay.Engine
	path string
}

// startCrash runs the adapter (polling, private chats) with the real core over a faultStore on
// the database at path ("": a new one); prepare runs before the core starts its workers.
func startCrash(t *testing.T, fake *tgfake.Server, path string, prepare func(*faultStore)) *crashEnv {
	t.Helper()
	if path == "" {
		path = filepath.Join(t.TempDir(), "bot.db")
	}
	sq, err := sqlite.Open(t.Context(), path, store.Options{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	st := &faultStore{Store: sq}
	if prepare != nil {
		prepare(st)
	}
	log := slog.New(slog.NewTextHandler(t.Output(), &slog.HandlerOptions{Level: slog.LevelWarn}))
	core := relay.New(st, bot.New(st, &boxDrawer{}, pngRenderer{}, nil, bot.Options{}, log),
		relay.Options{PollInterval: 20 * time.Millisecond, RetryBase: 20 * time.Millisecond, LeaseTTL: 3 * time.Second}, log)
	e := startWith(t, fake, func(c *Config) { c.MaxRetryWait = 500 * time.Millisecond }, core)
	core.Register(e.a)
	if err := core.Recover(t.Context()); err != nil {
		t.Fatal(err)
	}
	stop := e.stop
	e.stop = sync.OnceFunc(func() {
		stop()
		core.Close(context.Background())
		sq.Close()
	})
	t.Cleanup(e.stop)
	return &crashEnv{env: e, st: st, core: core, path: path}
}

// kinds waits until the kinds of the chat's bot messages are want (the working signs gone), or
// fails the test showing what they are.
func (e *crashEnv) kinds(t *testing.T, chat int64, want ...string) {
	t.Helper()
	var got []string
	waitfor.Until(t, wait, fmt.Sprintf("bot messages %v", want), func() bool {
		got = got[:0]
		for _, m := range e.fake.BotMessages(chat) {
			got = append(got, m.Kind)
		}
		return slices.Equal(got, want)
	}, func() string { return fmt.Sprint(got) })
}

func newFake(t *testing.T) *tgfake.Server {
	fake := tgfake.New(token)
	t.Cleanup(fake.Close)
	fake.AddChat(dmChat)
	return fake
}

func TestCrashWindowAccept(t *testing.T) {
	e := startCrash(t, newFake(t), "", func(st *faultStore) { st.failNext("Accept", 3) })
	e.fake.Send(tgfake.Post{Chat: dmChat.ID, From: alice, Text: "draw a box"})
	// Not kept three times, so not confirmed: Telegram hands it over again, and it is drawn once.
	e.kinds(t, dmChat.ID, "photo", "document")
	waitFor(t, "the update confirmed", func() bool { return len(e.fake.PendingUpdates()) == 0 })
	storetest.WaitQuiet(t, e.st, e.core, dmKey) // a message kept twice would have been answered by now
	e.kinds(t, dmChat.ID, "photo", "document")
}

// TestCrashWindowSendRetried: the picture fails twice (Bot API 502) then goes; the file then hits
// a 429 longer than the adapter waits: the outbox waits retry_after and sends the file alone, the
// picture already posted.
func TestCrashWindowSendRetried(t *testing.T) {
	e := startCrash(t, newFake(t), "", nil)
	e.fake.Fail("sendPhoto", tgfake.Failure{Code: 502, Times: 2})
	e.fake.Fail("sendDocument", tgfake.Failure{Code: 429, RetryAfter: 1})
	e.fake.Send(tgfake.Post{Chat: dmChat.ID, From: alice, Text: "draw a box"})
	e.kinds(t, dmChat.ID, "photo", "document")
	key := bot.ThreadKey{Platform: Platform, Channel: "101"}
	var out []store.OutboxItem
	waitFor(t, "the reply's row sent", func() bool {
		out, _ = e.st.Outbox(t.Context(), key, store.OutboxSent)
		return len(out) == 2
	})
	if out[0].Attempts != 3 || len(out[0].Posted) != 2 || !strings.Contains(out[0].Error, "retry after 1s") {
		t.Errorf("reply row %+v; want two failed pictures and one rate-limited file before it went, both parts recorded", out[0])
	}
	if out[0].Updated.Before(out[0].Due) {
		t.Errorf("posted at %v, before the retry_after was over (%v)", out[0].Updated, out[0].Due)
	}
	if n := len(e.fake.Calls("sendPhoto")); n != 3 {
		t.Errorf("%d sendPhoto calls, want 3 (two failed, one posted; none for the file's retry)", n)
	}
}

// TestCrashRestartWithMessageKept: a message kept but not drawn when the process stops is drawn by
// the next one, once; Telegram is not asked for it again.
func TestCrashRestartWithMessageKept(t *testing.T) {
	fake := newFake(t)
	e := startCrash(t, fake, "", func(st *faultStore) { st.failNext("StartRun", 1_000_000) })
	e.fake.Send(tgfake.Post{Chat: dmChat.ID, From: alice, Text: "draw a box"})
	key := bot.ThreadKey{Platform: Platform, Channel: "101"}
	waitFor(t, "the message kept", func() bool {
		ms, _ := e.st.Pending(t.Context(), key, 0)
		return len(ms) == 1
	})
	waitFor(t, "the update confirmed", func() bool { return len(fake.PendingUpdates()) == 0 })
	e.stop()
	if n := len(fake.BotMessages(dmChat.ID)); n != 0 {
		t.Fatalf("%d bot messages before the restart, want none", n)
	}
	next := startCrash(t, fake, e.path, nil)
	next.kinds(t, dmChat.ID, "photo", "document")
	if ms, _ := next.st.Inbox(t.Context(), key); len(ms) != 1 || ms[0].State != store.InboxDone {
		t.Errorf("inbox %+v, want the one message done", ms)
	}
}
