package webchat

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"image/png"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/excalibot/excalibot/bot"
	"github.com/excalibot/excalibot/bot/bottest"
	"github.com/excalibot/excalibot/bot/relay"
	"github.com/excalibot/excalibot/internal/waitfor"
	"github.com/excalibot/excalibot/links"
	"github.com/excalibot/excalibot/store"
	"github.com/excalibot/excalibot/store/sqlite"
)

type chatEnv struct {
	st     *sqlite.Store
	ts     *httptest.Server
	core   *relay.Engine
	chat   *Adapter
	drawer *bottest.BoxDrawer
}

// newChatEnv runs the real bot core over a real store, with the adapter's routes on a server of
// their own (the web server adds rate limits and security headers in front of them).
func newChatEnv(t *testing.T, secret string, gate chan struct{}) *chatEnv {
	t.Helper()
	d := &bottest.BoxDrawer{Gate: gate}
	ce := startChat(t, d, bot.Options{}, Options{Secret: secret})
	ce.drawer = d
	return ce
}

// startChat is newChatEnv with the drawer and both sides' options chosen.
func startChat(t *testing.T, d bot.Drawer, bopt bot.Options, copt Options) *chatEnv {
	t.Helper()
	st, err := sqlite.Open(context.Background(), filepath.Join(t.TempDir(), "chat.db"), store.Options{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	ts := httptest.NewUnstartedServer(nil) // its address is the links' base
	lk := links.NewEditor(st, "http://"+ts.Listener.Addr().String(), 0, nil)
	core := relay.New(st, bot.New(st, d, bottest.WidthRenderer{}, lk, bopt, nil), relay.Options{NotifyEdits: true}, nil)
	copt.Page = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "<!doctype html><title>chat</title>") })
	chat := New(core, copt, nil)
	core.Register(chat)
	core.Start()
	mux := http.NewServeMux()
	for _, r := range chat.Routes() {
		mux.Handle(r.Pattern, r.Handler)
	}
	ts.Config.Handler = mux
	ts.Start()
	t.Cleanup(func() {
		chat.Close()
		ts.Close()
		core.Close(context.Background())
	})
	return &chatEnv{st: st, ts: ts, core: core, chat: chat}
}

func (e *chatEnv) do(t *testing.T, method, path string, body []byte, hdr map[string]string) *http.Response {
	t.Helper()
	req, err := http.NewRequest(method, e.ts.URL+path, bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	res, err := e.ts.Client().Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, path, err)
	}
	t.Cleanup(func() { res.Body.Close() })
	return res
}

func readAll(t *testing.T, res *http.Response) string {
	t.Helper()
	b, err := io.ReadAll(res.Body)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
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

// readEvents collects the stream's events until want have arrived. It closes subscribed once the
// stream's headers are in: the server subscribes the stream before it answers.
func readEvents(url string, subscribed chan<- struct{}, want func([]string) bool) ([]string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, "GET", url, nil)
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, err
	}
	defer res.Body.Close()
	close(subscribed)
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
	subscribed := make(chan struct{})
	wg.Add(1)
	go func() {
		defer wg.Done()
		// Until the reply is in and the run finished (Finish comes after Send).
		replied := false
		events, streamErr = readEvents(ce.ts.URL+"/chat/api/events?session="+sid, subscribed, func(ev []string) bool {
			last := ev[len(ev)-1]
			replied = replied || strings.Contains(last, `"from":"bot"`)
			return replied && strings.HasPrefix(last, "thread ") && strings.Contains(last, `"working":false`)
		})
	}()
	select { // the stream must be subscribed before the message, or it misses the first events
	case <-subscribed:
	case <-time.After(20 * time.Second):
		wg.Wait()
		t.Fatalf("the event stream did not open: %v", streamErr)
	}
	res := ce.do(t, "POST", "/chat/api/threads/"+thread+"/messages", []byte(`{"text":"draw a box"}`), map[string]string{chatSessionHdr: sid})
	if res.StatusCode != 202 {
		t.Fatalf("post = %d %s", res.StatusCode, readAll(t, res))
	}
	// The run is under way: the thread says so before the reply exists.
	var working bool
	var status string
	waitfor.Until(t, 10*time.Second, "a progress status", func() bool {
		ce.chat.mu.Lock()
		th := ce.chat.sessions[sid].threads[thread]
		working, status = th.Working, th.Status
		ce.chat.mu.Unlock()
		return working && status != "" && status != bot.WorkingText
	}, func() string { return fmt.Sprintf("working %v, %q", working, status) })
	if status != bot.StatusLine(status) { // the same casing as Slack's and Telegram's status lines
		t.Errorf("status %q does not start with a capital", status)
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

// refusingCore is a core whose store does not answer: it keeps nothing.
type refusingCore struct{}

func (refusingCore) Handle(context.Context, bot.Adapter, bot.Message) error {
	return fmt.Errorf("keep the message: store: connection refused")
}

// TestChatPostNotKept: a message the core could not keep is answered 503, and the thread says so.
func TestChatPostNotKept(t *testing.T) {
	chat := New(refusingCore{}, Options{}, nil)
	t.Cleanup(chat.Close)
	mux := http.NewServeMux()
	for _, r := range chat.Routes() {
		mux.Handle(r.Pattern, r.Handler)
	}
	ts := httptest.NewServer(mux)
	t.Cleanup(ts.Close)
	ce := &chatEnv{ts: ts, chat: chat}
	const sid = "session-0123456789"
	res := ce.do(t, "POST", "/chat/api/threads/thread-01/messages", []byte(`{"text":"draw a box"}`), map[string]string{chatSessionHdr: sid})
	if body := readAll(t, res); res.StatusCode != http.StatusServiceUnavailable {
		t.Fatalf("post: %d %q, want 503", res.StatusCode, body)
	}
	res = ce.do(t, "GET", "/chat/api/threads/thread-01", nil, map[string]string{chatSessionHdr: sid})
	if body := readAll(t, res); !strings.Contains(body, "could not keep that message") {
		t.Errorf("thread %s: want the notice that the message was not kept", body)
	}
}

// TestSessionCapHolds: with every session holding an open stream none can be forgotten, so a new
// browser is refused with a message (posting or streaming) and no existing session is lost; a
// known session goes on working, and once a stream closes a newcomer gets in within the cap.
func TestSessionCapHolds(t *testing.T) {
	e := newChatEnv(t, "", nil)
	known := fmt.Sprintf("session-%06d", 0)
	e.chat.mu.Lock()
	for i := range maxSessions {
		sub := map[chan chatEvent]struct{}{make(chan chatEvent, 64): {}} // an open stream
		e.chat.sessions[fmt.Sprintf("session-%06d", i)] = &chatSession{threads: map[string]*chatThread{}, subs: sub, lastUsed: time.Now()}
	}
	e.chat.mu.Unlock()
	post := func(sid string) *http.Response {
		return e.do(t, "POST", "/chat/api/threads/thread-01/messages", []byte(`{"text":"draw a box"}`), map[string]string{chatSessionHdr: sid})
	}
	count := func() int {
		e.chat.mu.Lock()
		defer e.chat.mu.Unlock()
		return len(e.chat.sessions)
	}
	res := post("newcomer-1")
	body, _ := io.ReadAll(res.Body)
	if res.StatusCode != http.StatusServiceUnavailable || !strings.Contains(string(body), "the chat is full") {
		t.Errorf("a new browser posting to a full chat: got %d %q, want 503 saying the chat is full", res.StatusCode, body)
	}
	if res := e.do(t, "GET", "/chat/api/events?session=newcomer-2", nil, nil); res.StatusCode != http.StatusServiceUnavailable {
		t.Errorf("a new browser streaming from a full chat: got %d, want 503", res.StatusCode)
	}
	if got := count(); got != maxSessions {
		t.Errorf("sessions after refusals: got %d, want %d", got, maxSessions)
	}
	if res := post(known); res.StatusCode != http.StatusAccepted {
		t.Errorf("a known session posting to a full chat: got %d, want 202", res.StatusCode)
	}
	e.chat.mu.Lock()
	clear(e.chat.sessions[fmt.Sprintf("session-%06d", 7)].subs) // its tab closed
	e.chat.mu.Unlock()
	if res := post("newcomer-3"); res.StatusCode != http.StatusAccepted {
		t.Errorf("a new browser once a stream closed: got %d, want 202", res.StatusCode)
	}
	e.chat.mu.Lock()
	_, kept := e.chat.sessions[known]
	n := len(e.chat.sessions)
	e.chat.mu.Unlock()
	if n > maxSessions || !kept {
		t.Errorf("after a newcomer got in: %d sessions (cap %d), known session kept %v", n, maxSessions, kept)
	}
}

// TestChatTitleFollowsRevision: the sidebar names a thread after the diagram shown last; a
// revision without a title (an untitled file imported) does not keep the old diagram's title,
// while a failure or a note without a picture leaves the name as it is.
func TestChatTitleFollowsRevision(t *testing.T) {
	ce := newChatEnv(t, "", nil)
	key := bot.ThreadKey{Platform: Platform, Workspace: "session-title-0123456789", Thread: "thread-title-01"}
	pic := &bot.File{Name: "d.png", Content: []byte("png")}
	title := func() string {
		ce.chat.mu.Lock()
		defer ce.chat.mu.Unlock()
		return ce.chat.sessions[key.Workspace].threads[key.Thread].Title
	}
	for _, step := range []struct {
		name  string
		reply bot.Reply
		want  string
	}{
		{"a titled diagram", bot.Reply{Text: "Drew it.", Image: pic, Title: "Deploy pipeline"}, "Deploy pipeline"},
		{"a failure", bot.Reply{Text: "Sorry, drawing failed.", Error: true}, "Deploy pipeline"},
		{"a note without a picture", bot.Reply{Text: "Edited in the browser."}, "Deploy pipeline"},
		{"an untitled revision", bot.Reply{Text: "Imported mine.excalidraw as revision 2.", Image: pic}, "diagram"},
		{"titled again", bot.Reply{Text: "Drew it.", Image: pic, Title: "Data platform"}, "Data platform"},
	} {
		if err := ce.chat.Send(t.Context(), key, step.reply); err != nil {
			t.Fatal(err)
		}
		if got := title(); got != step.want {
			t.Errorf("after %s: title %q, want %q", step.name, got, step.want)
		}
	}
}
