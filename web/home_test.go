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

// TestHomePageModel: the health section says what the program was told of the model: Ollama,
// the model, its capabilities and protocol, and the model that reads pictures; a problem is
// written in words with its fix, and the parts that are ready still say so.
func TestHomePageModel(t *testing.T) {
	store := Check{Name: "store", Fn: func(context.Context) error { return nil }}
	ready := ModelHealth{Reachable: true, Version: "0.17.4", Model: "qwen3:8b", Pulled: true,
		Capabilities: []string{"completion", "tools", "thinking"}, Protocol: "tools",
		Vision: "gemma3:4b", VisionReady: true}
	for _, tc := range []struct {
		name    string
		model   ModelHealth
		want    []string
		notWant []string
	}{
		{"ready", ready, []string{
			`Health: <span class="ok">ready</span>`,
			`<li>Ollama: <span class="ok">ready</span> (version 0.17.4)</li>`,
			`<li>model qwen3:8b: <span class="ok">pulled</span>; can do completion, tools, thinking; draws with tool calls (protocol <code>tools</code>)</li>`,
			`<li>pictures: <span class="ok">gemma3:4b reads them</span></li>`,
		}, []string{`class="bad"`}},
		{"plans, the model reads pictures itself", ModelHealth{Reachable: true, Version: "0.17.4", Model: "gemma3:4b", Pulled: true,
			Capabilities: []string{"completion", "vision"}, Protocol: "plan", Vision: "gemma3:4b", VisionOwn: true, VisionReady: true}, []string{
			`draws with typed plans (protocol <code>plan</code>)`,
			`<li>pictures: <span class="ok">gemma3:4b reads them</span> (the model itself)</li>`,
		}, []string{`class="bad"`}},
		{"Ollama down", ModelHealth{Model: "qwen3:8b", Problem: "Ollama does not answer",
			Fix: "start it (`ollama serve`) or set OLLAMA_HOST to where it runs"}, []string{
			`Health: <span class="bad">drawing is not ready</span>`,
			`<li>store: <span class="ok">ready</span></li>`,
			`<li>Ollama: <span class="bad">not reachable</span></li>`,
			"<li class=\"fix\"><span class=\"bad\">Ollama does not answer</span>: start it (`ollama serve`) or set OLLAMA_HOST to where it runs</li>",
		}, []string{"model qwen3:8b", "pictures:"}},
		{"model not pulled", ModelHealth{Reachable: true, Version: "0.17.4", Model: "llama9:1b",
			Problem: "the model llama9:1b is not pulled into Ollama", Fix: "run `ollama pull llama9:1b`"}, []string{
			`Health: <span class="bad">drawing is not ready</span>`,
			`<li>model llama9:1b: <span class="bad">not pulled</span></li>`,
			"the model llama9:1b is not pulled into Ollama</span>: run `ollama pull llama9:1b`",
		}, nil},
		{"vision model cannot read pictures", ModelHealth{Reachable: true, Version: "0.17.4", Model: "qwen3:8b", Pulled: true,
			Capabilities: []string{"completion", "tools"}, Protocol: "tools", Vision: "qwen3:8b", VisionOwn: true,
			VisionProblem: "qwen3:8b cannot read pictures, so pictures are refused",
			VisionFix:     "set EXCALIBOT_VISION_MODEL to a pulled model that reads pictures: gemma3:4b"}, []string{
			`Health: <span class="ok">ready</span>`, // text requests are drawn
			`<li>pictures: <span class="bad">qwen3:8b cannot read pictures, so pictures are refused</span>: set EXCALIBOT_VISION_MODEL to a pulled model that reads pictures: gemma3:4b</li>`,
		}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t, Options{Checks: []Check{store}, Model: func(context.Context) ModelHealth { return tc.model }})
			res := e.do(t, "GET", "/", nil, nil)
			b, _ := io.ReadAll(res.Body)
			body := string(b)
			for _, w := range tc.want {
				if !strings.Contains(body, w) {
					t.Errorf("the page lacks %q:\n%s", w, body)
				}
			}
			for _, w := range tc.notWant {
				if strings.Contains(body, w) {
					t.Errorf("the page has %q:\n%s", w, body)
				}
			}
		})
	}
	// Without the model's health the page shows none.
	e := newEnv(t, Options{Checks: []Check{store}})
	b, _ := io.ReadAll(e.do(t, "GET", "/", nil, nil).Body)
	if strings.Contains(string(b), "Ollama") {
		t.Errorf("the page speaks of Ollama, which it was not told of:\n%s", b)
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
