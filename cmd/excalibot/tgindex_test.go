package main

import (
	"context"
	"fmt"
	"path/filepath"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-telegram/bot/models"

	"github.com/excalibot/excalibot/bot"
	"github.com/excalibot/excalibot/bot/telegram"
	"github.com/excalibot/excalibot/bot/telegram/tgfake"
	"github.com/excalibot/excalibot/store"
	"github.com/excalibot/excalibot/store/sqlite"
)

func openTgIndexStore(t *testing.T, path string) *sqlite.Store {
	t.Helper()
	st, err := sqlite.Open(t.Context(), path, store.Options{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	return st
}

// TestTgIndex: the Telegram thread index answers what the store keeps (written there by the
// commits of the work engine, or by SetThread) across a restart and on every replica, and always
// the store's latest: an entry another replica changed is not answered from an older memory.
func TestTgIndex(t *testing.T) {
	ctx := t.Context()
	path := filepath.Join(t.TempDir(), "bot.db")
	st := openTgIndexStore(t, path)
	sets := []struct {
		chat   int64
		ref    string
		thread string
	}{
		{-1001234567890, "10", "0:10"},
		{-1001234567890, "11", "0:10"},         // the bot's picture answering message 10
		{-1001234567890, "20", "5:20"},         // inside forum topic 5
		{-42, "10", "0:7"},                     // the same message id in another chat
		{-1001234567890, "last:5:101", "5:20"}, // what user 101 last worked on in topic 5
		{-42, "10", "0:8"},                     // recorded again: the newer answer wins
	}
	for _, s := range sets {
		if err := st.SetMessageThread(ctx, telegram.Platform, strconv.FormatInt(s.chat, 10), s.ref, s.thread); err != nil {
			t.Fatalf("SetMessageThread(%d, %s): %v", s.chat, s.ref, err)
		}
	}
	if err := st.Close(); err != nil { // restart
		t.Fatal(err)
	}

	a, b := openTgIndexStore(t, path), openTgIndexStore(t, path) // two replicas
	defer a.Close()
	defer b.Close()
	xa, xb := tgIndex{a}, tgIndex{b}
	tests := []struct {
		chat       int64
		ref        string
		wantThread string
		wantOK     bool
	}{
		{-1001234567890, "10", "0:10", true},
		{-1001234567890, "11", "0:10", true},
		{-1001234567890, "20", "5:20", true},
		{-42, "10", "0:8", true},
		{-1001234567890, "last:5:101", "5:20", true},
		{-1001234567890, "last:0:101", "", false},
		{-1001234567890, "12", "", false},
		{-43, "10", "", false},
	}
	for _, ix := range []tgIndex{xa, xb} {
		for _, tt := range tests {
			got, ok, err := ix.Thread(ctx, tt.chat, tt.ref)
			if err != nil || got != tt.wantThread || ok != tt.wantOK {
				t.Errorf("Thread(%d, %s): got %q, %v, %v, want %q, %v, nil", tt.chat, tt.ref, got, ok, err, tt.wantThread, tt.wantOK)
			}
		}
	}
	if err := xa.SetThread(ctx, -42, "99", "0:99"); err != nil {
		t.Fatal(err)
	}
	if got, ok, err := xa.Thread(ctx, -42, "99"); err != nil || !ok || got != "0:99" {
		t.Errorf("Thread on replica a of what it set: got %q, %v, %v, want 0:99", got, ok, err)
	}
	if got, ok, err := xb.Thread(ctx, -42, "99"); err != nil || !ok || got != "0:99" {
		t.Errorf("Thread on replica b of what a set: got %q, %v, %v, want 0:99", got, ok, err)
	}
	// Alice's last diagram changes on b; a, which filed the older one, answers the newer.
	if err := xb.SetThread(ctx, -1001234567890, "last:5:101", "5:30"); err != nil {
		t.Fatal(err)
	}
	if got, _, _ := xa.Thread(ctx, -1001234567890, "last:5:101"); got != "5:30" {
		t.Errorf("Thread on replica a of a last diagram b changed: got %q, want 5:30", got)
	}
}

// TestTgIndexErrors: a store failure is an error (the adapter logs it and treats the reply as a new
// thread), never a silent "unknown".
func TestTgIndexErrors(t *testing.T) {
	st := openTgIndexStore(t, filepath.Join(t.TempDir(), "bot.db"))
	x := tgIndex{st}
	if err := x.SetThread(t.Context(), -1, "1", ""); err == nil {
		t.Error("SetThread with an empty thread: got no error")
	}
	st.Close()
	if _, ok, err := x.Thread(t.Context(), -1, "1"); err == nil || ok {
		t.Errorf("Thread on a closed store: got ok %v, error %v, want an error", ok, err)
	}
	if err := x.SetThread(t.Context(), -1, "1", "0:1"); err == nil {
		t.Error("SetThread on a closed store: got no error")
	}
}

// tgInbox is the core as TestTgIndexAcrossRestart sees it: it keeps each message's index entries
// in the store, as the work engine's Accept does in the commit that keeps the message, and hands
// the message to the test.
type tgInbox struct {
	ch chan tgDelivery
	st atomic.Pointer[sqlite.Store] // the running incarnation's
}

type tgDelivery struct {
	a   bot.Adapter
	msg bot.Message
}

func (in *tgInbox) Handle(ctx context.Context, a bot.Adapter, msg bot.Message) error {
	if err := fileIndex(ctx, in.st.Load(), msg.Index...); err != nil {
		return err
	}
	in.ch <- tgDelivery{a, msg}
	return nil
}

// fileIndex keeps index entries in the store, as the work engine's commits do.
func fileIndex(ctx context.Context, st *sqlite.Store, entries ...bot.IndexEntry) error {
	for _, e := range entries {
		if err := st.SetMessageThread(ctx, e.Platform, e.Chat, e.Msg, e.Thread); err != nil {
			return err
		}
	}
	return nil
}

// TestTgIndexAcrossRestart drives the real Telegram adapter against the fake Bot API: a group
// request, the bot's answer, a restart, then a reply to that answer, another restart and a plain
// /undo. With the index in the store the reply joins the request's thread and the /undo finds it as
// Alice's last; with the in-memory default (the control) each starts a new one, which shows the
// test can tell the two apart.
func TestTgIndexAcrossRestart(t *testing.T) {
	group := models.Chat{ID: -1001234567890, Type: models.ChatTypeSupergroup, Title: "Team"}
	alice := models.User{ID: 101, FirstName: "Alice", Username: "alice"}
	bob := models.User{ID: 102, FirstName: "Bob"}
	tests := []struct {
		name    string
		inStore bool
	}{
		{"Store", true},
		{"MemoryControl", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fake := tgfake.New("4242:index-token")
			defer fake.Close()
			fake.AddChat(group)
			path := filepath.Join(t.TempDir(), "bot.db")
			in := &tgInbox{ch: make(chan tgDelivery, 16)}
			// start runs one incarnation of the bot (store and adapter); stop ends it and waits.
			start := func() (stop func()) {
				st := openTgIndexStore(t, path)
				in.st.Store(st)
				cfg := telegram.Config{Token: fake.Token, APIURL: fake.URL}
				if tt.inStore {
					cfg.Threads, cfg.IndexKeptByCore = tgIndex{st}, true
				}
				a, err := telegram.New(cfg, in, nil)
				if err != nil {
					t.Fatal(err)
				}
				ctx, cancel := context.WithCancel(t.Context())
				done := make(chan error, 1)
				go func() { done <- a.Run(ctx) }()
				stop = sync.OnceFunc(func() {
					cancel()
					if err := <-done; err != nil {
						t.Errorf("Run: %v", err)
					}
					st.Close()
				})
				t.Cleanup(stop) // also when the test fails before stopping it
				return stop
			}
			// confirmed waits until the poller has confirmed every update it received, so that
			// stopping it then does not hand the next incarnation the same updates again: a
			// redelivered request would teach the in-memory index Alice's last diagram and the
			// control would no longer show what a restart forgets.
			confirmed := func() {
				t.Helper()
				if !fake.WaitFor(10*time.Second, func() bool { return len(fake.PendingUpdates()) == 0 }) {
					t.Fatalf("updates never confirmed: %d pending", len(fake.PendingUpdates()))
				}
			}
			// receive waits for the message with id msgID (a restarted poller may see earlier ones
			// again, which the core would drop as redeliveries).
			receive := func(msgID int) tgDelivery {
				t.Helper()
				timeout := time.After(10 * time.Second)
				for {
					select {
					case d := <-in.ch:
						if d.msg.ID == strconv.Itoa(msgID) {
							return d
						}
					case <-timeout:
						t.Fatalf("message %d never reached the handler", msgID)
					}
				}
			}

			stop := start()
			req := fake.Send(tgfake.Post{Chat: group.ID, From: alice, Text: "@" + fake.Bot.Username + " draw our deploy pipeline"})
			d := receive(req.MessageID)
			wantThread := fmt.Sprintf("0:%d", req.MessageID)
			if d.msg.Key.Thread != wantThread {
				t.Fatalf("request: got thread %q, want %q", d.msg.Key.Thread, wantThread)
			}
			// The answer is posted as the work engine posts it: its step's index entry kept
			// with the step's record.
			keep := func(_ string, index ...bot.IndexEntry) error { return fileIndex(t.Context(), in.st.Load(), index...) }
			if err := d.a.(bot.StepSender).SendSteps(t.Context(), d.msg.Key, bot.Reply{Text: "here it is"}, nil, keep); err != nil {
				t.Fatal(err)
			}
			answers := fake.BotMessages(group.ID)
			if len(answers) != 1 {
				t.Fatalf("bot messages: got %d, want 1", len(answers))
			}
			confirmed()
			stop()

			stop = start()
			reply := fake.Send(tgfake.Post{Chat: group.ID, From: bob, Text: "make the database red", ReplyTo: answers[0].ID})
			d = receive(reply.MessageID)
			if !tt.inStore {
				wantThread = fmt.Sprintf("0:%d", answers[0].ID) // forgotten: a new thread at the answer
			}
			if d.msg.Key.Thread != wantThread {
				t.Fatalf("reply to the answer after a restart: got thread %q, want %q", d.msg.Key.Thread, wantThread)
			}

			// Once more restarted, Alice's plain /undo finds the diagram she last worked on; the
			// answer replies to the /undo and names the diagram.
			confirmed()
			stop()
			start()
			undo := fake.Send(tgfake.Post{Chat: group.ID, From: alice, Text: "/undo"})
			d = receive(undo.MessageID)
			want := fmt.Sprintf("0:%d", req.MessageID)
			if !tt.inStore {
				want = fmt.Sprintf("0:%d", undo.MessageID) // forgotten: a new thread
			}
			if d.msg.Key.Thread != want {
				t.Fatalf("plain /undo after a restart: got thread %q, want %q", d.msg.Key.Thread, want)
			}
			if !tt.inStore {
				return
			}
			if err := d.a.Send(t.Context(), d.msg.Key, bot.Reply{Text: "Undone.", Title: "Deploy pipeline", ReplyTo: d.msg.ID}); err != nil {
				t.Fatal(err)
			}
			answers = fake.BotMessages(group.ID)
			if got := answers[len(answers)-1]; got.Text != "‘Deploy pipeline’ — Undone." || got.ReplyTo != undo.MessageID {
				t.Errorf("answer to the plain /undo: %q replying to %d, want the title named, replying to %d", got.Text, got.ReplyTo, undo.MessageID)
			}
		})
	}
}
