package web

import (
	"context"
	"errors"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/excalibot/excalibot/bot/bottest"
	"github.com/excalibot/excalibot/bot/relay"
)

func TestHomePage(t *testing.T) {
	const secretish = "dial tcp 10.0.0.7:5432: connection refused"
	ok := Check{Name: "renderer", Fn: func(context.Context) error { return nil }}
	down := Check{Name: "store", Fn: func(context.Context) error { return errors.New(secretish) }}
	chat := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "chat") })
	for _, tc := range []struct {
		name    string
		checks  []Check
		chat    bool
		want    []string
		notWant []string
	}{
		{"ready, with the chat page", []Check{ok}, true,
			[]string{"This is its web server", "Health: <span class=\"ok\">ready</span>", "<li>renderer: <span class=\"ok\">ready</span></li>",
				`<a href="/chat">chat page</a>`, `<a href="/readyz">`, "Slack, Telegram and its own chat page", "drop files on the conversation"},
			[]string{`class="bad"`, "<script"}},
		{"a part not ready", []Check{ok, down}, true,
			[]string{"Health: <span class=\"bad\">not ready</span>", "<li>store: <span class=\"bad\">not ready</span></li>", "<li>renderer: <span class=\"ok\">ready</span></li>"},
			[]string{secretish, "10.0.0.7"}},
		{"no chat page mounted", nil, false,
			[]string{"Health: <span class=\"ok\">ready</span>", "<li>web server: <span class=\"ok\">ready</span></li>"},
			[]string{`href="/chat"`, "own chat page", "drop files"}},
	} {
		e := newEnv(t, Options{Checks: tc.checks})
		if tc.chat {
			e.srv.HandleBrowser("GET /chat", chat, false)
		}
		res := e.do(t, "GET", "/", nil, nil)
		b, _ := io.ReadAll(res.Body)
		body := string(b)
		if res.StatusCode != 200 || !strings.HasPrefix(res.Header.Get("Content-Type"), "text/html") {
			t.Errorf("%s: got %d %s, want 200 HTML", tc.name, res.StatusCode, res.Header.Get("Content-Type"))
		}
		if res.Header.Get("Content-Security-Policy") == "" {
			t.Errorf("%s: no Content-Security-Policy on /", tc.name)
		}
		for _, w := range tc.want {
			if !strings.Contains(body, w) {
				t.Errorf("%s: the page lacks %q:\n%s", tc.name, w, body)
			}
		}
		for _, w := range tc.notWant {
			if strings.Contains(body, w) {
				t.Errorf("%s: the page has %q", tc.name, w)
			}
		}
	}
}

// TestHomePageOnlyAtRoot: / is the home page, other unknown paths stay 404.
func TestHomePageOnlyAtRoot(t *testing.T) {
	e := newEnv(t, Options{})
	for _, tc := range []struct {
		path string
		code int
	}{{"/", 200}, {"/nothing", 404}, {"/index.html", 404}, {"/d/", 404}} {
		if res := e.do(t, "GET", tc.path, nil, nil); res.StatusCode != tc.code {
			t.Errorf("GET %s: got %d, want %d", tc.path, res.StatusCode, tc.code)
		}
	}
	if res := e.do(t, "POST", "/", nil, nil); res.StatusCode != http.StatusMethodNotAllowed {
		t.Errorf("POST /: got %d, want 405", res.StatusCode)
	}
}

// TestBrowserHome opens / in Chromium beside the real chat page: the health list is shown with no
// console error (the CSP allows the page's own inline style and nothing it lacks), and the link
// leads to the chat page.
func TestBrowserHome(t *testing.T) {
	t.Parallel() // each in its own tab; page loads overlap
	ctx := tab(t)
	var ce *chatEnv // the store's check runs once the environment is up
	ce = newChatEnvWith(t, chatConfig{drawer: &bottest.BoxDrawer{}, work: relay.Options{NotifyEdits: true}, web: Options{Checks: []Check{
		{Name: "store", Fn: func(ctx context.Context) error { return ce.st.Ping(ctx) }},
		{Name: "renderer", Fn: func(context.Context) error { return errors.New("chromium is restarting") }},
	}}})
	log := watch(t, ctx)
	run(t, ctx, "open /", chromedp.Navigate(ce.ts.URL+"/"))
	text := run(t, ctx, "health", chromedp.Text(chromedp.CSS("#health")))
	for _, want := range []string{"Health: not ready", "web server: ready", "store: ready", "renderer: not ready"} {
		if !strings.Contains(text, want) {
			t.Errorf("the health section %q lacks %q", text, want)
		}
	}
	colour := run(t, ctx, "style applied", chromedp.Evaluate[string](`getComputedStyle(document.querySelector("#health .bad")).color`))
	if colour != "rgb(201, 42, 42)" {
		t.Errorf("a part not ready is drawn in %s, want the page's red (its style applied)", colour)
	}
	run(t, ctx, "follow the chat link", chromedp.Click(chromedp.CSS(`a[href="/chat"]`)))
	poll(t, ctx, "chat page ready", `location.pathname === "/chat" && !!(window.__chat && document.querySelector("#composer"))`)
	errs, _ := log.get()
	for _, e := range errs {
		t.Errorf("page console: %.300s", e)
	}
}
