package telegram

import (
	"context"
	"fmt"
	"log/slog"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/excalibot/excalibot/bot"
	"github.com/excalibot/excalibot/bot/relay"
	"github.com/excalibot/excalibot/bot/telegram/tgfake"
	"github.com/excalibot/excalibot/render/export"
	"github.com/excalibot/excalibot/scene"
	"github.com/excalibot/excalibot/store"
	"github.com/excalibot/excalibot/store/sqlite"
)

// The adapter with the real conversation core and SQLite store, and a drawer that adds one box per
// request: a check that the two halves fit (dedup by update_id, threads, imports, commands). The
// full pipeline with the agent and renderer is the end-to-end tests' business.

type boxDrawer struct {
	mu          sync.Mutex
	prompts     []string
	discussions []string // DrawRequest.Discussion of each request that had one
	// titled gives a new diagram a heading, the first request's words (/draw stripped), which
	// the core then reports as the diagram's title.
	titled bool
}

func (d *boxDrawer) Draw(ctx context.Context, req bot.DrawRequest) (bot.DrawResult, error) {
	d.mu.Lock()
	d.prompts = append(d.prompts, req.Prompt)
	if req.Discussion != "" {
		d.discussions = append(d.discussions, req.Discussion)
	}
	d.mu.Unlock()
	sc := scene.New()
	if req.Scene != nil {
		sc = req.Scene.Clone()
	} else if d.titled {
		h := scene.NewElement(scene.Text)
		h.ID, h.Text, h.OriginalText = "heading", req.Prompt, req.Prompt
		h.X, h.Y, h.Width, h.Height, h.FontSize = 0, -100, 400, 45, 36
		if _, err := sc.Add(h); err != nil {
			return bot.DrawResult{}, err
		}
	}
	boxes := 0
	for _, e := range sc.Elements() {
		if e.Type == scene.Rectangle {
			boxes++
		}
	}
	e := scene.NewElement(scene.Rectangle)
	e.ID = fmt.Sprintf("box%d", boxes+1)
	e.X, e.Width, e.Height = float64(boxes*200), 160, 80
	if _, err := sc.Add(e); err != nil {
		return bot.DrawResult{}, err
	}
	if req.Progress != nil {
		req.Progress(bot.Progress{Step: 1, Tool: "create_element", Shapes: boxes + 1})
	}
	return bot.DrawResult{Scene: sc, Summary: fmt.Sprintf("%d boxes.", boxes+1), Changed: true}, nil
}

type pngRenderer struct{}

func (pngRenderer) Render(ctx context.Context, sc *scene.Scene, doc []byte, format export.Format, dark bool) ([]byte, error) {
	return smallPNG(), nil
}

func startWithCore(t *testing.T, edit func(*Config)) (*env, *sqlite.Store) {
	t.Helper()
	return startWithDrawer(t, edit, &boxDrawer{})
}

// startWithDrawer is startWithCore with the given drawer.
func startWithDrawer(t *testing.T, edit func(*Config), d *boxDrawer) (*env, *sqlite.Store) {
	t.Helper()
	fake := tgfake.New(token)
	t.Cleanup(fake.Close)
	fake.AddChat(group)
	st, err := sqlite.Open(t.Context(), filepath.Join(t.TempDir(), "bot.db"), store.Options{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	// No rate a test reaches: a burst of quick requests (each answered in milliseconds) went over
	// 600 a minute, whose burst is 3.
	log := slog.New(slog.NewTextHandler(t.Output(), &slog.HandlerOptions{Level: slog.LevelWarn}))
	core := relay.New(st, bot.New(st, d, pngRenderer{}, nil, bot.Options{UserRatePerMinute: 1e9, ChatRatePerMinute: 1e9}, log), relay.Options{}, log)
	e := startWith(t, fake, edit, core)
	core.Register(e.a)
	core.Start()
	// Cleanups run last-in first-out: the core finishes its work before the adapter and the
	// fake go away, so no answer is cut off mid-request.
	t.Cleanup(func() { core.Close(context.Background()) })
	return e, st
}

func TestWithCore(t *testing.T) {
	t.Run("polling", func(t *testing.T) { testWithCore(t, nil) })
	t.Run("webhook", func(t *testing.T) {
		testWithCore(t, func(c *Config) { c.Mode, c.WebhookSecret = "webhook", "hook-secret" })
	})
}

func testWithCore(t *testing.T, edit func(*Config)) {
	e, st := startWithCore(t, edit)
	chat := group.ID
	// pictures waits for n answers (picture, then file) and returns the pictures. Waiting for the
	// file too means the adapter has filed the picture under its thread before the test replies
	// to it (a person is never that fast).
	pictures := func(n int) []tgfake.Message {
		t.Helper()
		var got []tgfake.Message
		ok := e.fake.WaitFor(wait, func() bool {
			got = got[:0]
			docs := 0
			for _, m := range e.fake.BotMessages(chat) {
				switch m.Kind {
				case "photo":
					got = append(got, m)
				case "document":
					docs++
				}
			}
			return len(got) >= n && docs >= n
		})
		if !ok || len(got) != n {
			t.Fatalf("%d pictures, want %d: %v", len(got), n, summary(e.fake.BotMessages(chat)))
		}
		return got
	}

	req := e.fake.Send(tgfake.Post{Chat: chat, From: alice, Text: "@draw_bot draw a box"})
	p1 := pictures(1)[0]
	// The caption: the summary, then the core's description of the picture.
	if want := "1 boxes.\n\nDiagram with 1 box."; p1.Text != want || p1.ReplyTo != req.MessageID {
		t.Errorf("first picture: caption %q replying to %d, want %q replying to %d", p1.Text, p1.ReplyTo, want, req.MessageID)
	}

	// Follow-up by replying to the picture: revision 2 in the same thread, answered in reply to
	// the follow-up.
	more := e.fake.Send(tgfake.Post{Chat: chat, From: bob, ReplyTo: p1.ID, Text: "another one"})
	p2 := pictures(2)[1]
	if want := "2 boxes.\n\nDiagram with 2 boxes."; p2.Text != want || p2.ReplyTo != more.MessageID {
		t.Errorf("follow-up: caption %q replying to %d, want %q replying to %d", p2.Text, p2.ReplyTo, want, more.MessageID)
	}

	// The same update delivered again (a poller restarted before confirming it): no new answer.
	sent := e.fake.Send(tgfake.Post{Chat: chat, From: alice, ReplyTo: p2.ID, Text: "/undo@draw_bot"})
	p3 := pictures(3)[2]
	if again := e.fake.Redeliver(sent.UpdateID); edit != nil && again.WebhookStatus != 200 {
		t.Errorf("redelivery to the webhook answered %d, want 200 (a duplicate is acknowledged)", again.WebhookStatus)
	}
	e.fake.Send(tgfake.Post{Chat: chat, From: alice, ReplyTo: p3.ID, Text: "history"})
	e.fake.WaitFor(wait, func() bool {
		ms := e.fake.BotMessages(chat)
		return strings.HasPrefix(ms[len(ms)-1].Text, "Revisions")
	})
	// The core stores empty key parts as "-".
	key := store.ThreadKey{Platform: Platform, Workspace: "-", Channel: strconv.FormatInt(chat, 10), Thread: "0:" + strconv.Itoa(req.MessageID)}
	th, err := st.Load(t.Context(), key)
	if err != nil {
		t.Fatal(err)
	}
	if th.Rev != 1 {
		t.Errorf("after undo the thread is at revision %d, want 1", th.Rev)
	}
	if n := len(pictures(3)); n != 3 {
		t.Errorf("%d pictures after a redelivered /undo, want 3", n)
	}

	// Import: the .excalidraw file of the first answer, posted back in a new thread.
	var doc tgfake.Message
	for _, m := range e.fake.BotMessages(chat) {
		if m.Kind == "document" && m.File.Name == "diagram-r1.excalidraw" {
			doc = m
		}
	}
	imp := e.fake.Send(tgfake.Post{Chat: chat, From: bob, Text: "@draw_bot", Document: &tgfake.Upload{Name: "mine.excalidraw", Data: doc.File.Data}})
	p4 := pictures(4)[3]
	if !strings.Contains(p4.Text, "Imported mine.excalidraw") || p4.ReplyTo != imp.MessageID {
		t.Errorf("import answer: %q replying to %d, want the import named, replying to %d", p4.Text, p4.ReplyTo, imp.MessageID)
	}
}
