package telegram

import (
	"context"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/go-telegram/bot/models"

	"github.com/excalibot/excalibot/bot"
	"github.com/excalibot/excalibot/bot/telegram/tgfake"
)

func TestSplit(t *testing.T) {
	tests := []struct {
		s          string
		n          int
		head, rest string
	}{
		{"short", 10, "short", ""},
		{"one two three", 9, "one two", "three"},
		{"one two three", 5, "one", "two three"},
		{"abcdefghij", 4, "abcd", "efghij"}, // no space: hard cut
		{"ab 😀😀😀", 5, "ab 😀", "😀😀"},         // emoji are two UTF-16 units
		{"ab😀cd", 3, "ab", "😀cd"},           // never half a surrogate pair
		{"line one\nline two", 12, "line one", "line two"},
	}
	for _, tc := range tests {
		head, rest := split(tc.s, tc.n)
		if head != tc.head || rest != tc.rest {
			t.Errorf("split(%q, %d) = %q, %q; want %q, %q", tc.s, tc.n, head, rest, tc.head, tc.rest)
		}
	}
}

func TestPhotoProblem(t *testing.T) {
	tests := []struct {
		name string
		img  []byte
		want string // substring of the problem; "" for none
	}{
		{"ordinary", pngHeader(1600, 900), ""},
		{"sum exactly 10000", pngHeader(5000, 5000), ""},
		{"sum 10001", pngHeader(5001, 5000), "width plus height"},
		{"ratio exactly 20", pngHeader(2000, 100), ""},
		{"ratio 20.01", pngHeader(2001, 100), "aspect ratio"},
		{"zero height", pngHeader(100, 0), "not a PNG"},
		{"truncated", pngHeader(100, 100)[:20], "not a PNG"},
		{"JPEG", []byte("\xff\xd8\xff\xe0 JFIF..........................."), "not a PNG"},
		{"11 MB", append(pngHeader(10, 10), make([]byte, 11<<20)...), "10 MB"},
	}
	for _, tc := range tests {
		got := photoProblem(tc.img)
		if tc.want == "" && got != "" || tc.want != "" && !strings.Contains(got, tc.want) {
			t.Errorf("%s: got %q, want %q", tc.name, got, tc.want)
		}
	}
}

func TestMentionsAndCommands(t *testing.T) {
	me := &models.User{ID: 4242, IsBot: true, Username: "draw_bot"}
	tests := []struct {
		text      string
		addressed bool
		stripped  string
	}{
		{"@draw_bot draw a flow", true, "draw a flow"},
		{"  @DRAW_BOT: undo", true, "undo"},
		{"🎨 @draw_bot draw", true, "🎨 @draw_bot draw"}, // not leading: kept as written
		{"/draw@draw_bot a flow", true, "/draw@draw_bot a flow"},
		{"/draw@other_bot a flow", false, ""},
		{"/draw a flow", true, "/draw a flow"},
		{"/kick bob", false, ""},
		{"@draw_botty hi", false, ""},
		{"mail me at x@draw_bot.com", false, ""},
	}
	for _, tc := range tests {
		// Entities as Telegram computes them, from the fake.
		fake := tgfake.New(token)
		fake.AddChat(group)
		fake.SetPrivacy(false)
		fake.Send(tgfake.Post{Chat: group.ID, From: alice, Text: tc.text})
		raw := fake.PendingUpdates()
		fake.Close()
		m := raw[0].Message
		if got := addressed(m, m.Entities, m.Text, me); got != tc.addressed {
			t.Errorf("addressed(%q) = %v, want %v", tc.text, got, tc.addressed)
		}
		if tc.addressed {
			if got := stripMention(m.Text, m.Entities, me); strings.TrimSpace(got) != tc.stripped {
				t.Errorf("stripMention(%q) = %q, want %q", tc.text, got, tc.stripped)
			}
		}
	}
}

func TestEntityTextUTF16(t *testing.T) {
	text := "𝔸😀 /draw@draw_bot x" // two astral characters: 4 UTF-16 units, 8 bytes
	e := models.MessageEntity{Type: models.MessageEntityTypeBotCommand, Offset: 5, Length: 14}
	if got := entityText(text, e); got != "/draw@draw_bot" {
		t.Errorf("entityText = %q, want /draw@draw_bot", got)
	}
	if got := entityText(text, models.MessageEntity{Offset: 30, Length: 2}); got != "" {
		t.Errorf("entity past the end = %q, want empty", got)
	}
}

func TestNewValidates(t *testing.T) {
	tests := []struct {
		name string
		cfg  Config
		want string
	}{
		{"no token", Config{}, "TELEGRAM_BOT_TOKEN"},
		{"bad mode", Config{Token: "1:x", Mode: "push"}, "polling or webhook"},
		{"webhook without secret", Config{Token: "1:x", Mode: "webhook", PublicURL: "https://bot.example.com"}, "webhook secret"},
		{"webhook secret with spaces", Config{Token: "1:x", Mode: "webhook", WebhookSecret: "a b", PublicURL: "https://bot.example.com"}, "webhook secret"},
		{"webhook without URL", Config{Token: "1:x", Mode: "webhook", WebhookSecret: "abc"}, "public https URL"},
		{"chat not numeric", Config{Token: "1:x", Chats: []string{"@team"}}, `allowed chat "@team"`},
		{"API URL without scheme", Config{Token: "1:x", APIURL: "api.telegram.org"}, "not an http(s) URL"},
		{"user not numeric", Config{Token: "1:x", Users: []string{"12", "bob"}}, `allowed user "bob"`},
	}
	for _, tc := range tests {
		_, err := New(tc.cfg, newRecorder(), nil)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: got %v, want an error naming %q", tc.name, err, tc.want)
		}
	}
	if _, err := New(Config{Token: "1:x", Chats: []string{" -1001 ", ""}}, newRecorder(), nil); err != nil {
		t.Errorf("valid config: %v", err)
	}
}

func TestRunRejectedToken(t *testing.T) {
	fake := tgfake.New(token)
	defer fake.Close()
	a, err := New(Config{Token: "4242:wrong", APIURL: fake.URL}, newRecorder(), slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(t.Context(), wait)
	defer cancel()
	err = a.Run(ctx)
	if err == nil || !strings.Contains(err.Error(), "token was rejected") {
		t.Errorf("Run with a wrong token: got %v, want the token named", err)
	}
	if err := a.Run(ctx); err == nil || !strings.Contains(err.Error(), "twice") {
		t.Errorf("second Run: got %v, want an error", err)
	}
}

func TestRunRetriesGetMe(t *testing.T) {
	fake := tgfake.New(token)
	defer fake.Close()
	fake.Fail("getMe", tgfake.Failure{Code: 502, Times: 2})
	a, err := New(Config{Token: token, APIURL: fake.URL, PollTimeout: 2 * time.Second}, newRecorder(), slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	var waits []time.Duration
	a.sleep = func(ctx context.Context, d time.Duration) error { waits = append(waits, d); return nil }
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() { done <- a.Run(ctx) }()
	if !fake.WaitFor(wait, func() bool { return len(fake.Calls("deleteWebhook")) > 0 }) {
		t.Fatal("Run did not get past getMe")
	}
	cancel()
	if err := <-done; err != nil {
		t.Errorf("Run: %v", err)
	}
	if len(waits) != 2 || waits[1] != 2*waits[0] {
		t.Errorf("getMe backoff: %v, want two growing waits", waits)
	}
}

func TestWebhookHandlerStates(t *testing.T) {
	post := func(h http.Handler, method, secret string) int {
		req := httptest.NewRequest(method, WebhookPath, strings.NewReader(`{"update_id":1}`))
		req.Header.Set("X-Telegram-Bot-Api-Secret-Token", secret)
		w := httptest.NewRecorder()
		h.ServeHTTP(w, req)
		return w.Code
	}
	hooked, err := New(Config{Token: "1:x", Mode: "webhook", WebhookSecret: "abc", PublicURL: "https://bot.example.com"}, newRecorder(), nil)
	if err != nil {
		t.Fatal(err)
	}
	polling, err := New(Config{Token: "1:x"}, newRecorder(), nil)
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name   string
		h      http.Handler
		method string
		secret string
		want   int
	}{
		{"before Run: Telegram retries later", hooked.WebhookHandler(), "POST", "abc", 503},
		{"wrong secret before Run", hooked.WebhookHandler(), "POST", "abd", 401},
		{"GET", hooked.WebhookHandler(), "GET", "abc", 405},
		{"polling mode", polling.WebhookHandler(), "POST", "", 404},
	}
	for _, tc := range tests {
		if got := post(tc.h, tc.method, tc.secret); got != tc.want {
			t.Errorf("%s: got %d, want %d", tc.name, got, tc.want)
		}
	}
}

func TestRunWebhookRefused(t *testing.T) {
	fake := tgfake.New(token)
	defer fake.Close()
	fake.Fail("setWebhook", tgfake.Failure{Code: 400, Description: "Bad Request: bad webhook: Failed to resolve host"})
	a, err := New(Config{Token: token, APIURL: fake.URL, Mode: "webhook", WebhookSecret: "abc", PublicURL: "https://bot.example.com"}, newRecorder(), nil)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(t.Context(), wait)
	defer cancel()
	err = a.Run(ctx)
	if err == nil || !strings.Contains(err.Error(), "register webhook https://bot.example.com/telegram/webhook") || !strings.Contains(err.Error(), "Failed to resolve host") {
		t.Errorf("Run: got %v, want the webhook URL and Telegram's reason", err)
	}
}

func TestDropStartPayload(t *testing.T) {
	for in, want := range map[string]string{
		"/start":                   "/start",
		"/start ref_42":            "/start",
		"/start@draw_bot campaign": "/start@draw_bot",
		"/starting a diagram":      "/starting a diagram",
		"start here and draw":      "start here and draw",
	} {
		if got := dropStartPayload(in); got != want {
			t.Errorf("dropStartPayload(%q) = %q, want %q", in, got, want)
		}
	}
}

// TestIndexEntriesPerRequest pins the figure docs/telegram.md gives for the in-memory index: a
// group request given its sender's last diagram writes its own entry, its sender's last: entry
// (replaced by each later request, so new only for a new sender), its asked: mark, and one entry
// per message the bot posts for it (the status, the picture, the file).
func TestIndexEntriesPerRequest(t *testing.T) {
	a, _, _ := sendOnly(t)
	idx := a.threads.(*MemoryIndex)
	key := bot.ThreadKey{Platform: Platform, Channel: "-1001", Thread: "0:1"}
	reply := bot.Reply{Text: "Undone.", Title: "Deploy pipeline", Image: &bot.File{Content: smallPNG()},
		Files: []bot.File{{Name: "deploy-pipeline-r2.excalidraw", Content: []byte("{}")}}}
	for i, want := range []int{6, 11} { // a new sender's first request, then their next one
		req := &models.Message{ID: 100 + i, Chat: group, From: &bob, Text: "/undo"}
		a.file(t.Context(), req, bob.ID, thread{root: 1}, true)
		st, err := a.Working(t.Context(), bot.Message{Key: key, ID: strconv.Itoa(req.ID)})
		if err != nil {
			t.Fatal(err)
		}
		reply.ReplyTo = strconv.Itoa(req.ID)
		if err := a.Send(t.Context(), key, reply); err != nil {
			t.Fatal(err)
		}
		if err := st.Finish(t.Context()); err != nil {
			t.Fatal(err)
		}
		if got := idx.order.Len(); got != want {
			t.Errorf("after request %d: %d index entries, want %d", i+1, got, want)
		}
	}
}
