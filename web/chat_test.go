package web

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"image"
	"image/png"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/excalibot/excalibot/bot"
	"github.com/excalibot/excalibot/links"
	"github.com/excalibot/excalibot/render"
	"github.com/excalibot/excalibot/scene"
	"github.com/excalibot/excalibot/store"
	"github.com/excalibot/excalibot/store/sqlite"
)

var chatScreenshot = flag.String("chat-screenshot", "", "write a screenshot of the chat page to this file")

// boxDrawer adds one labelled rectangle per request. When gate is set, each run reports progress
// and then waits for a value on it, so a test can watch the run's status.
type boxDrawer struct {
	gate chan struct{}
}

func (d *boxDrawer) Draw(ctx context.Context, req bot.DrawRequest) (bot.DrawResult, error) {
	sc := scene.New()
	if req.Scene != nil {
		var err error
		if sc, err = scene.Decode(req.Scene); err != nil {
			return bot.DrawResult{}, err
		}
	}
	n := 0
	for _, e := range sc.Elements() {
		if e.Type == scene.Rectangle {
			n++
		}
	}
	e := scene.NewElement(scene.Rectangle)
	e.ID = fmt.Sprintf("box%d", n+1)
	e.X, e.Width, e.Height = float64(n*220), 180, 80
	if _, err := sc.Add(e); err != nil {
		return bot.DrawResult{}, err
	}
	if _, err := sc.SetLabel(e.ID, req.Prompt); err != nil {
		return bot.DrawResult{}, err
	}
	if req.Progress != nil {
		req.Progress(bot.Progress{Step: 1, Tool: "create_element", Shapes: n + 1})
	}
	if d.gate != nil {
		select {
		case <-d.gate:
		case <-ctx.Done():
			return bot.DrawResult{}, ctx.Err()
		}
	}
	doc, err := sc.Encode()
	return bot.DrawResult{Scene: doc, Summary: fmt.Sprintf("Added box %d.", n+1), Changed: true}, err
}

// widthRenderer draws a PNG 100 px wide per rectangle, so each revision's picture differs.
type widthRenderer struct{}

func (widthRenderer) Render(ctx context.Context, doc []byte, format string, dark bool) ([]byte, error) {
	sc, err := scene.Decode(doc)
	if err != nil {
		return nil, err
	}
	n := 0
	for _, e := range sc.Elements() {
		if e.Type == scene.Rectangle {
			n++
		}
	}
	var b bytes.Buffer
	err = png.Encode(&b, image.NewGray(image.Rect(0, 0, 100*n, 50)))
	return b.Bytes(), err
}

type chatEnv struct {
	*env
	core   *bot.Bot
	chat   *ChatAdapter
	drawer *boxDrawer
}

// newChatEnv runs the real bot core over the store, with the chat page enabled.
func newChatEnv(t *testing.T, secret string, gate chan struct{}, r ...Renderer) *chatEnv {
	t.Helper()
	var rend Renderer = widthRenderer{}
	if len(r) > 0 {
		rend = r[0]
	}
	st, err := sqlite.Open(context.Background(), filepath.Join(t.TempDir(), "chat.db"), store.Options{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	d := &boxDrawer{gate: gate}
	lk := links.NewEditor(st, "", 0, nil)
	core := bot.New(st, d, rend, lk, bot.Options{NotifyEdits: true}, nil)
	srv := New(st, rend, core, nil, Options{}, nil)
	chat := srv.EnableChat(core, secret)
	core.Register(chat) // as serve does, so browser-edit notices reach the page
	ts := httptest.NewServer(srv.Handler())
	lk.SetBase(ts.URL)
	t.Cleanup(func() {
		chat.Close()
		ts.Close()
		core.Close(context.Background())
	})
	return &chatEnv{env: &env{st: st, srv: srv, ts: ts}, core: core, chat: chat, drawer: d}
}

func TestChatAccess(t *testing.T) {
	for _, tc := range []struct {
		name   string
		secret string
		host   string
		hdr    map[string]string
		code   int
		says   string
	}{
		{"localhost", "", "", nil, 200, ""},
		{"localhost by name", "", "localhost:8080", nil, 200, ""},
		{"rebinding: foreign host name", "", "evil.example:8080", nil, 403, "only on the machine"},
		{"through a proxy", "", "", map[string]string{"X-Forwarded-For": "203.0.113.9"}, 403, "EXCALIBOT_CHAT_SECRET"},
		{"remote without secret configured", "", "draw.example.com", nil, 403, "EXCALIBOT_CHAT_SECRET"},
		{"remote without the secret", "s3cret", "draw.example.com", nil, 403, "needs the shared secret"},
		{"remote with a wrong secret", "s3cret", "draw.example.com", map[string]string{chatSecretHdr: "guess"}, 403, "needs the shared secret"},
		{"remote with the secret header", "s3cret", "draw.example.com", map[string]string{chatSecretHdr: "s3cret"}, 200, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ce := newChatEnv(t, tc.secret, nil)
			req, _ := http.NewRequest("GET", ce.ts.URL+"/chat", nil)
			if tc.host != "" {
				req.Host = tc.host
			}
			for k, v := range tc.hdr {
				req.Header.Set(k, v)
			}
			res, err := ce.ts.Client().Do(req)
			if err != nil {
				t.Fatal(err)
			}
			body := readAll(t, res)
			if res.StatusCode != tc.code || !strings.Contains(body, tc.says) {
				t.Errorf("GET /chat = %d %.120q, want %d saying %q", res.StatusCode, body, tc.code, tc.says)
			}
		})
	}
}

func TestChatSecretCookie(t *testing.T) {
	ce := newChatEnv(t, "s3cret", nil)
	client := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	get := func(path string, cookie *http.Cookie) *http.Response {
		req, _ := http.NewRequest("GET", ce.ts.URL+path, nil)
		req.Host = "draw.example.com"
		if cookie != nil {
			req.AddCookie(cookie)
		}
		res, err := client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { res.Body.Close() })
		return res
	}
	if res := get("/chat?secret=wrong", nil); res.StatusCode != 403 || len(res.Cookies()) != 0 {
		t.Errorf("wrong secret: %d with %d cookies, want 403 and none", res.StatusCode, len(res.Cookies()))
	}
	res := get("/chat?secret=s3cret", nil)
	if res.StatusCode != http.StatusSeeOther || res.Header.Get("Location") != "/chat" || len(res.Cookies()) != 1 {
		t.Fatalf("right secret: %d to %q with %d cookies, want 303 to /chat with a cookie", res.StatusCode, res.Header.Get("Location"), len(res.Cookies()))
	}
	ck := res.Cookies()[0]
	if ck.Value == "s3cret" || !ck.HttpOnly || ck.SameSite != http.SameSiteStrictMode {
		t.Errorf("cookie %+v: want HttpOnly, SameSite=Strict, not the secret itself", ck)
	}
	for _, path := range []string{"/chat", "/chat/api/threads?session=abcdefghijklmnop"} {
		if res := get(path, ck); res.StatusCode != 200 {
			t.Errorf("GET %s with the cookie = %d, want 200", path, res.StatusCode)
		}
	}
	if res := get("/chat", &http.Cookie{Name: chatCookie, Value: "forged"}); res.StatusCode != 403 {
		t.Errorf("forged cookie = %d, want 403", res.StatusCode)
	}
}

func TestChatPostValidation(t *testing.T) {
	ce := newChatEnv(t, "", nil)
	const sid = "session-0123456789"
	for _, tc := range []struct {
		name   string
		thread string
		hdr    map[string]string
		body   string
		code   int
	}{
		{"no session header", "thread-01", map[string]string{}, `{"text":"hi"}`, 400},
		{"bad session", "thread-01", map[string]string{chatSessionHdr: "x"}, `{"text":"hi"}`, 400},
		{"bad thread", "t", map[string]string{chatSessionHdr: sid}, `{"text":"hi"}`, 400},
		{"cross origin", "thread-01", map[string]string{chatSessionHdr: sid, "Origin": "https://evil.example"}, `{"text":"hi"}`, 403},
		{"not JSON", "thread-01", map[string]string{chatSessionHdr: sid}, `hi`, 400},
		{"empty", "thread-01", map[string]string{chatSessionHdr: sid}, `{"text":"  "}`, 400},
		{"too long", "thread-01", map[string]string{chatSessionHdr: sid}, `{"text":"` + strings.Repeat("a", 20000) + `"}`, 400},
		{"help", "thread-01", map[string]string{chatSessionHdr: sid}, `{"text":"help"}`, 202},
	} {
		res := ce.do(t, "POST", "/chat/api/threads/"+tc.thread+"/messages", []byte(tc.body), tc.hdr)
		if body := readAll(t, res); res.StatusCode != tc.code {
			t.Errorf("%s: %d %q, want %d", tc.name, res.StatusCode, body, tc.code)
		}
	}
}

// readEvents collects the stream's events until want have arrived.
func readEvents(url string, want func([]string) bool) ([]string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, "GET", url, nil)
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, err
	}
	defer res.Body.Close()
	if ct := res.Header.Get("Content-Type"); ct != "text/event-stream" {
		return nil, fmt.Errorf("events Content-Type %q", ct)
	}
	var got []string
	sc := bufio.NewScanner(res.Body)
	sc.Buffer(nil, 1<<20)
	name := ""
	for sc.Scan() {
		line := sc.Text()
		switch {
		case strings.HasPrefix(line, "event: "):
			name = strings.TrimPrefix(line, "event: ")
		case strings.HasPrefix(line, "data: "):
			got = append(got, name+" "+strings.TrimPrefix(line, "data: "))
			if want(got) {
				return got, nil
			}
		}
	}
	return got, fmt.Errorf("stream ended (%v) after %d events:\n%s", sc.Err(), len(got), strings.Join(got, "\n"))
}

func TestChatConversationOverHTTP(t *testing.T) {
	gate := make(chan struct{})
	ce := newChatEnv(t, "", gate)
	const sid, thread = "session-0123456789", "thread-0001"
	var (
		events    []string
		streamErr error
		wg        sync.WaitGroup
	)
	wg.Add(1)
	go func() {
		defer wg.Done()
		// Until the reply is in and the run finished (Finish comes after Send).
		replied := false
		events, streamErr = readEvents(ce.ts.URL+"/chat/api/events?session="+sid, func(ev []string) bool {
			last := ev[len(ev)-1]
			replied = replied || strings.Contains(last, `"from":"bot"`)
			return replied && strings.HasPrefix(last, "thread ") && strings.Contains(last, `"working":false`)
		})
	}()
	time.Sleep(200 * time.Millisecond) // let the stream subscribe before the message
	res := ce.do(t, "POST", "/chat/api/threads/"+thread+"/messages", []byte(`{"text":"draw a box"}`), map[string]string{chatSessionHdr: sid})
	if res.StatusCode != 202 {
		t.Fatalf("post = %d %s", res.StatusCode, readAll(t, res))
	}
	// The run is under way: the thread says so before the reply exists.
	deadline := time.Now().Add(10 * time.Second)
	for {
		ce.chat.mu.Lock()
		th := ce.chat.sessions[sid].threads[thread]
		working, status := th.Working, th.Status
		ce.chat.mu.Unlock()
		if working && status != "" && status != "working…" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("no progress status (working %v, %q)", working, status)
		}
		time.Sleep(20 * time.Millisecond)
	}
	gate <- struct{}{}
	wg.Wait()
	if streamErr != nil {
		t.Fatal(streamErr)
	}
	all := strings.Join(events, "\n")
	for _, want := range []string{`message {"thread":"thread-0001","message":{"id"`, `"from":"you","text":"draw a box"`, `"working":true`, `"from":"bot","text":"Added box 1.`, `"image":"/chat/api/blobs/`, `"editURL":"` + ce.ts.URL + `/d/`} {
		if !strings.Contains(all, want) {
			t.Errorf("events lack %q:\n%s", want, all)
		}
	}
	// The reply's picture and files are served.
	var last struct {
		Message chatMessage `json:"message"`
	}
	for _, ev := range events {
		if strings.HasPrefix(ev, "message ") && strings.Contains(ev, `"from":"bot"`) {
			if err := json.Unmarshal([]byte(strings.TrimPrefix(ev, "message ")), &last); err != nil {
				t.Fatal(err)
			}
		}
	}
	img := ce.do(t, "GET", last.Message.Image, nil, nil)
	if pic, err := png.Decode(img.Body); err != nil || img.Header.Get("Content-Type") != "image/png" || pic.Bounds().Dx() != 100 {
		t.Errorf("reply picture: %v %q", err, img.Header.Get("Content-Type"))
	}
	for _, f := range last.Message.Files {
		if res := ce.do(t, "GET", f.URL, nil, nil); res.StatusCode != 200 || !strings.Contains(res.Header.Get("Content-Disposition"), "attachment") {
			t.Errorf("file %s: %d %q", f.Name, res.StatusCode, res.Header.Get("Content-Disposition"))
		}
	}
	// The thread list and history are there for a reload of the page.
	res = ce.do(t, "GET", "/chat/api/threads/"+thread, nil, map[string]string{chatSessionHdr: sid})
	var th chatThread
	if err := json.NewDecoder(res.Body).Decode(&th); err != nil || len(th.Messages) != 2 || th.Title != "draw a box" || th.Working {
		t.Errorf("thread history: %v %+v", err, th)
	}
	if res := ce.do(t, "GET", "/chat/api/threads/"+thread, nil, map[string]string{chatSessionHdr: "another-session-123"}); res.StatusCode != 404 {
		t.Errorf("another session's thread = %d, want 404", res.StatusCode)
	}
}

func TestBrowserChat(t *testing.T) {
	t.Parallel() // each in its own tab; page loads overlap
	ctx := tab(t)
	gate := make(chan struct{}, 1)
	var rend []Renderer
	if *chatScreenshot != "" {
		// The README's picture: real renders instead of placeholder rectangles.
		rend = append(rend, realRenderer(t))
	}
	ce := newChatEnv(t, "", gate, rend...)
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

func TestChatCloseEndsStreams(t *testing.T) {
	ce := newChatEnv(t, "", nil)
	res, err := http.Get(ce.ts.URL + "/chat/api/events?session=session-0123456789")
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	done := make(chan error, 1)
	go func() {
		_, err := io.Copy(io.Discard, res.Body)
		done <- err
	}()
	ce.chat.Close()
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("stream ended with %v, want a clean end", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the stream is still open after Close")
	}
}

// realRenderer is package render's Chromium renderer, for screenshots that show real pictures.
func realRenderer(t *testing.T) Renderer {
	t.Helper()
	r, err := render.New(context.Background(), render.Config{ChromePath: "/usr/bin/chromium"}, nil)
	if err != nil {
		t.Fatalf("start the renderer: %v", err)
	}
	t.Cleanup(func() { r.Close() })
	return renderFunc(func(ctx context.Context, doc []byte, format string, dark bool) ([]byte, error) {
		if format == "svg" {
			return r.SVG(ctx, doc, render.Options{Dark: dark})
		}
		return r.PNG(ctx, doc, render.Options{Dark: dark, Scale: 1})
	})
}

type renderFunc func(ctx context.Context, doc []byte, format string, dark bool) ([]byte, error)

func (f renderFunc) Render(ctx context.Context, doc []byte, format string, dark bool) ([]byte, error) {
	return f(ctx, doc, format, dark)
}
