package web

import (
	"context"
	"flag"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/excalibot/excalibot/bot"
	"github.com/excalibot/excalibot/bot/bottest"
	"github.com/excalibot/excalibot/bot/relay"
	"github.com/excalibot/excalibot/bot/webchat"
	"github.com/excalibot/excalibot/links"
	"github.com/excalibot/excalibot/render"
	"github.com/excalibot/excalibot/render/export"
	"github.com/excalibot/excalibot/scene"
	"github.com/excalibot/excalibot/store"
	"github.com/excalibot/excalibot/store/sqlite"
)

var chatScreenshot = flag.String("chat-screenshot", "", "write a screenshot of the chat page to this file")

type chatEnv struct {
	st   *sqlite.Store
	srv  *Server
	ts   *httptest.Server
	core *relay.Engine
	chat *webchat.Adapter
}

// newChatEnv runs the real bot core over the store, with the chat page and its adapter mounted as
// serve mounts them.
func newChatEnv(t *testing.T, gate chan struct{}, r ...export.Renderer) *chatEnv {
	t.Helper()
	cfg := chatConfig{drawer: &bottest.BoxDrawer{Gate: gate}, work: relay.Options{NotifyEdits: true}}
	if len(r) > 0 {
		cfg.render = r[0]
	}
	return newChatEnvWith(t, cfg)
}

// chatConfig chooses the drawer, the renderer (default bottest.WidthRenderer) and the options of
// the conversation, its work and the chat page of a chat environment.
type chatConfig struct {
	drawer bot.Drawer
	render export.Renderer
	bot    bot.Options
	work   relay.Options
	chat   webchat.Options
	web    Options
}

func newChatEnvWith(t *testing.T, cfg chatConfig) *chatEnv {
	t.Helper()
	var rend export.Renderer = bottest.WidthRenderer{}
	if cfg.render != nil {
		rend = cfg.render
	}
	st, err := sqlite.Open(context.Background(), filepath.Join(t.TempDir(), "chat.db"), store.Options{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	ts := httptest.NewUnstartedServer(nil) // its address is the links' base
	lk := links.NewEditor(st, "http://"+ts.Listener.Addr().String(), 0, nil)
	core := relay.New(st, bot.New(st, cfg.drawer, rend, lk, cfg.bot, nil), cfg.work, nil)
	srv := New(st, rend, core, nil, cfg.web, nil)
	cfg.chat.Page = ChatPage
	chat := webchat.New(core, cfg.chat, nil)
	for _, r := range chat.Routes() {
		if r.MaxBody > 0 {
			srv.HandleUpload(r.Pattern, r.Handler, r.MaxBody)
		} else {
			srv.HandleBrowser(r.Pattern, r.Handler, r.Stream)
		}
	}
	core.Register(chat) // as serve does, so browser-edit notices reach the page
	core.Start()
	ts.Config.Handler = srv.Handler()
	ts.Start()
	t.Cleanup(func() {
		chat.Close()
		ts.Close()
		core.Close(context.Background())
	})
	return &chatEnv{st: st, srv: srv, ts: ts, core: core, chat: chat}
}

func TestBrowserChat(t *testing.T) {
	t.Parallel() // each in its own tab; page loads overlap
	ctx := tab(t)
	gate := make(chan struct{}, 1)
	var rend []export.Renderer
	if *chatScreenshot != "" {
		// The README's picture: real renders instead of placeholder rectangles.
		rend = append(rend, realRenderer(t))
	}
	ce := newChatEnv(t, gate, rend...)
	key := func(sid, thread string) store.ThreadKey {
		return store.ThreadKey{Platform: "web", Workspace: sid, Channel: "chat", Thread: thread}
	}
	run(t, ctx, "open the chat page", chromedp.Navigate(ce.ts.URL+"/chat"))
	poll(t, ctx, "page ready", `!!(window.__chat && document.querySelector("#threads li"))`)
	type ids struct{ Session, Thread string }
	id := run(t, ctx, "ids", chromedp.Evaluate[ids](`({Session: window.__chat.session, Thread: window.__chat.thread})`))

	run(t, ctx, "type", chromedp.SendKeys(chromedp.CSS("#text"), "draw a login flow\r"))
	// The run reports progress and waits at the gate: the page shows the status line.
	poll(t, ctx, "live progress", `!document.querySelector("#status").hidden && document.querySelector("#status").textContent.length > 0`)
	status := run(t, ctx, "status", chromedp.Text(chromedp.CSS("#status")))
	gate <- struct{}{}
	poll(t, ctx, "picture shown", `(() => { const i = document.querySelector(".msg.bot img"); return !!i && i.complete && i.naturalWidth > 0; })()`)
	poll(t, ctx, "status gone", `document.querySelector("#status").hidden`)
	reply := run(t, ctx, "reply", chromedp.Text(chromedp.CSS(".msg.bot")))
	if !strings.Contains(reply, "Added box 1.") || !strings.Contains(reply, "Edit in the browser") || !strings.Contains(reply, "diagram") {
		t.Errorf("first reply %q: want the summary, the edit link and the file", reply)
	}
	th, err := ce.st.Load(context.Background(), key(id.Session, id.Thread))
	if err != nil || th.Rev != 1 {
		t.Fatalf("after the first message: %v, %+v", err, th)
	}

	// A follow-up in the same thread changes the same diagram.
	gate <- struct{}{}
	run(t, ctx, "type follow-up", chromedp.SendKeys(chromedp.CSS("#text"), "add a database\r"))
	poll(t, ctx, "second picture", `(() => { const i = document.querySelectorAll(".msg.bot img"); return i.length === 2 && i[1].complete && i[1].naturalWidth > i[0].naturalWidth; })()`)
	th, err = ce.st.Load(context.Background(), key(id.Session, id.Thread))
	if err != nil || th.Rev != 2 {
		t.Fatalf("after the follow-up: %v, %+v", err, th)
	}
	sc, err := scene.Decode(th.Scene)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := sc.Get("box2"); !ok {
		t.Errorf("follow-up scene lacks box2: %d elements", sc.Len())
	}
	if title := run(t, ctx, "thread title", chromedp.Text(chromedp.CSS("#threads li.active"))); !strings.Contains(title, "draw a login flow") {
		t.Errorf("thread list shows %q, want the first message as title", title)
	}
	t.Logf("status line while drawing: %q", status)
	if *chatScreenshot != "" {
		png := run(t, ctx, "screenshot", chromedp.CaptureScreenshot())
		if err := os.WriteFile(*chatScreenshot, png, 0o644); err != nil {
			t.Fatal(err)
		}
	}

	// The edit link of the reply opens the editor on the same diagram.
	editURL := run(t, ctx, "edit link", chromedp.Evaluate[string](`[...document.querySelectorAll(".msg.bot a")].filter(a => a.textContent === "Edit in the browser").pop().href`))
	run(t, ctx, "open the editor", chromedp.Navigate(editURL))
	poll(t, ctx, "editor shows both boxes", `!!(window.__excalibot && window.__excalibot.api && window.__excalibot.api.getSceneElements().filter(e => e.type === "rectangle").length === 2 && window.__excalibot.state().loaded)`)

	// An edit there flows back: the thread hears of it, and the next run starts from it.
	run(t, ctx, "edit box1", chromedp.Evaluate[bool](edit("box1", `backgroundColor: "#ffc9c9"`)))
	poll(t, ctx, "saved", `window.__excalibot.state().state === "saved" && window.__excalibot.state().rev === 3`)
	run(t, ctx, "back to the chat", chromedp.Navigate(ce.ts.URL+"/chat"))
	poll(t, ctx, "edit notice", `[...document.querySelectorAll(".msg.bot")].some(m => m.textContent.includes("edited in the browser (revision 3)"))`)
	gate <- struct{}{}
	run(t, ctx, "type after the edit", chromedp.SendKeys(chromedp.CSS("#text"), "add a cache\r"))
	poll(t, ctx, "third picture", `(() => { const i = document.querySelectorAll(".msg.bot img"); return i.length === 3 && i[2].complete && i[2].naturalWidth > i[1].naturalWidth; })()`)
	th, err = ce.st.Load(context.Background(), key(id.Session, id.Thread))
	if err != nil {
		t.Fatal(err)
	}
	if sc, err = scene.Decode(th.Scene); err != nil {
		t.Fatal(err)
	}
	box1, _ := sc.Get("box1")
	if _, ok := sc.Get("box3"); th.Rev != 4 || !ok || box1.BackgroundColor != "#ffc9c9" {
		t.Errorf("run after the browser edit: rev %d, box3 %v, box1 colour %q; want rev 4 keeping the edit", th.Rev, ok, box1.BackgroundColor)
	}
}

// realRenderer is package render's Chromium renderer, for screenshots that show real pictures.
func realRenderer(t *testing.T) export.Renderer {
	t.Helper()
	r, err := render.New(context.Background(), render.Config{ChromePath: "/usr/bin/chromium"}, nil)
	if err != nil {
		t.Fatalf("start the renderer: %v", err)
	}
	s := render.NewScenes(r, 1)
	t.Cleanup(func() { s.Close() })
	return s
}
