package telegram

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"
	"unicode/utf16"

	tg "github.com/go-telegram/bot"

	"github.com/excalibot/excalibot/bot"
	"github.com/excalibot/excalibot/bot/telegram/tgfake"
)

// sendOnly builds an adapter that only sends (no Run), with the waits for retry_after recorded
// instead of slept.
func sendOnly(t testing.TB) (*Adapter, *tgfake.Server, *[]time.Duration) {
	t.Helper()
	fake := tgfake.New(token)
	t.Cleanup(fake.Close)
	for _, c := range []*tgfake.Server{fake} {
		c.AddChat(dmChat)
		c.AddChat(group)
	}
	a, err := New(Config{Token: token, APIURL: fake.URL + "/", RequestTimeout: 60 * time.Second, MaxRetryWait: 30 * time.Second}, newRecorder(), slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	waits := &[]time.Duration{}
	a.sleep = func(ctx context.Context, d time.Duration) error {
		mu.Lock()
		defer mu.Unlock()
		*waits = append(*waits, d)
		return ctx.Err()
	}
	return a, fake, waits
}

var dmKey = bot.ThreadKey{Platform: Platform, Channel: "101"}

func TestRateLimitRetried(t *testing.T) {
	tests := []struct {
		name      string
		failures  []tgfake.Failure
		wantWaits []time.Duration
		wantErr   string // "" when the photo must be posted
	}{
		{"one 429", []tgfake.Failure{{Code: 429, RetryAfter: 3}}, []time.Duration{3 * time.Second}, ""},
		{"three 429s", []tgfake.Failure{{Code: 429, RetryAfter: 1, Times: 3}}, []time.Duration{time.Second, time.Second, time.Second}, ""},
		{"four 429s: bounded", []tgfake.Failure{{Code: 429, RetryAfter: 1, Times: 4}}, []time.Duration{time.Second, time.Second, time.Second}, "too many requests"},
		{"wait too long", []tgfake.Failure{{Code: 429, RetryAfter: 600}}, nil, "longer than the 30s allowed"},
		{"forbidden: no retry", []tgfake.Failure{{Code: 403}}, nil, "forbidden"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			a, fake, waits := sendOnly(t)
			for _, f := range tc.failures {
				fake.Fail("sendPhoto", f)
			}
			err := a.Send(t.Context(), dmKey, bot.Reply{Text: "hi", Image: &bot.File{Content: smallPNG()}})
			if tc.wantErr == "" && err != nil || tc.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tc.wantErr)) {
				t.Fatalf("Send: got %v, want error containing %q", err, tc.wantErr)
			}
			if got := *waits; len(got) != len(tc.wantWaits) || len(got) > 0 && got[0] != tc.wantWaits[0] {
				t.Errorf("waits: got %v, want %v", got, tc.wantWaits)
			}
			photos := 0
			for _, m := range fake.BotMessages(dmChat.ID) {
				if m.Kind == "photo" {
					photos++
				}
			}
			if want := map[bool]int{true: 1, false: 0}[tc.wantErr == ""]; photos != want {
				t.Errorf("photos posted: %d, want %d", photos, want)
			}
		})
	}
}

// TestRateLimitReuploads checks that a retried upload sends the whole file again: the first
// attempt consumed the reader.
func TestRateLimitReuploads(t *testing.T) {
	a, fake, _ := sendOnly(t)
	fake.Fail("sendDocument", tgfake.Failure{Code: 429, RetryAfter: 1})
	content := bytes.Repeat([]byte("scene "), 1000)
	if err := a.Send(t.Context(), dmKey, bot.Reply{Files: []bot.File{{Name: "d.excalidraw", Content: content}}}); err != nil {
		t.Fatal(err)
	}
	calls := fake.Calls("sendDocument")
	if len(calls) != 2 || calls[0].Code != 429 || len(calls[1].Files["document"].Data) != len(content) {
		t.Fatalf("calls: %d, second upload %d bytes; want a 429 then the full %d bytes", len(calls), len(calls[len(calls)-1].Files["document"].Data), len(content))
	}
}

func TestPictureBeyondPhotoLimits(t *testing.T) {
	huge := append(pngHeader(100, 100), make([]byte, 11<<20)...) // 11 MB: trailing bytes after IEND
	tests := []struct {
		name string
		img  []byte
		want string // kind of the message showing the picture
	}{
		{"ordinary", smallPNG(), "photo"},
		{"at the limits", pngHeader(9500, 475), "photo"},
		{"width plus height over 10000", pngHeader(9000, 1200), "document"},
		{"aspect ratio over 20", pngHeader(2100, 100), "document"},
		{"tall aspect ratio over 20", pngHeader(50, 1010), "document"},
		{"over 10 MB", huge, "document"},
		{"not a PNG", []byte("GIF89a not really"), "document"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			a, fake, _ := sendOnly(t)
			err := a.Send(t.Context(), dmKey, bot.Reply{Text: "summary", Image: &bot.File{Name: "diagram.png", Content: tc.img}, EditURL: editURL})
			if err != nil {
				t.Fatal(err)
			}
			msgs := fake.BotMessages(dmChat.ID)
			if len(msgs) != 1 || msgs[0].Kind != tc.want || msgs[0].Text != "summary" || len(msgs[0].Buttons) != 1 || len(msgs[0].File.Data) != len(tc.img) {
				t.Errorf("got %v, want one %s with the caption, the button and all %d bytes", summary(msgs), tc.want, len(tc.img))
			}
			if n := len(fake.Calls("sendPhoto")); tc.want == "document" && n != 0 {
				t.Errorf("tried sendPhoto %d times for a picture known to be refused", n)
			}
		})
	}
}

func TestLongSummaryAndLinks(t *testing.T) {
	a, fake, _ := sendOnly(t)
	long := strings.Repeat("ü word ", 200) // 1400 characters
	err := a.Send(t.Context(), bot.ThreadKey{Platform: Platform, Channel: "-1001", Thread: "0:7"}, bot.Reply{
		Text: strings.TrimSpace(long), Image: &bot.File{Content: smallPNG()},
		EditURL: "http://localhost:8080/e/x", ViewURL: "https://draw.example.com/v/x",
	})
	if err != nil {
		t.Fatal(err)
	}
	msgs := fake.BotMessages(group.ID)
	if len(msgs) != 2 || msgs[0].Kind != "photo" || msgs[1].Kind != "text" {
		t.Fatalf("got %v, want the photo then the rest of the text", summary(msgs))
	}
	caption, rest := msgs[0].Text, msgs[1].Text
	if len(utf16.Encode([]rune(caption))) > maxCaption || strings.HasSuffix(caption, " ") || strings.HasSuffix(caption, " wor") {
		t.Errorf("caption of %d units ends %q: want ≤ %d, cut between words", len(utf16.Encode([]rune(caption))), caption[len(caption)-10:], maxCaption)
	}
	if got := caption + " " + rest; !strings.HasPrefix(got, strings.TrimSpace(long)) {
		t.Errorf("caption + rest lose text")
	}
	// localhost cannot be a button: it goes into the text; the dotted host stays a button.
	if !strings.Contains(rest, "Open in editor: http://localhost:8080/e/x") {
		t.Errorf("rest %q does not carry the localhost link", rest[max(0, len(rest)-80):])
	}
	if len(msgs[0].Buttons) != 1 || msgs[0].Buttons[0].Text != "View" {
		t.Errorf("buttons %+v, want View only", msgs[0].Buttons)
	}
	for _, m := range msgs {
		if m.ReplyTo != 0 { // message 7 does not exist: sent without the reply
			t.Errorf("message %d replies to %d", m.ID, m.ReplyTo)
		}
	}
}

func TestSendErrors(t *testing.T) {
	a, fake, _ := sendOnly(t)
	tests := []struct {
		key  bot.ThreadKey
		want string
	}{
		{bot.ThreadKey{Platform: "slack", Channel: "C1"}, "not a Telegram thread"},
		{bot.ThreadKey{Platform: Platform, Channel: "general"}, "not a number"},
		{bot.ThreadKey{Platform: Platform, Channel: "101", Thread: "1711.22"}, "not topic:root"},
		{bot.ThreadKey{Platform: Platform, Channel: "555"}, "chat not found"},
	}
	for _, tc := range tests {
		err := a.Send(t.Context(), tc.key, bot.Reply{Text: "x"})
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("Send to %s: got %v, want %q", tc.key, err, tc.want)
		}
	}
	fake.Fail("sendMessage", tgfake.Failure{Code: 403})
	err := a.Send(t.Context(), dmKey, bot.Reply{Text: "x", Error: true})
	if !errors.Is(err, tg.ErrorForbidden) {
		t.Errorf("blocked by the user: got %v, want it to wrap ErrorForbidden", err)
	}
}

func TestWorkingSigns(t *testing.T) {
	a, fake, _ := sendOnly(t)
	a.actionEvery = 5 * time.Millisecond
	st, err := a.Working(t.Context(), bot.Message{Key: dmKey, ID: "1"})
	if err != nil {
		t.Fatal(err)
	}
	if !fake.WaitFor(wait, func() bool { return len(fake.Calls("sendChatAction")) >= 3 }) {
		t.Fatal("the chat action is not repeated")
	}
	// The status goroutine applies the updates (the engine spaces them); Update never blocks.
	for _, s := range []string{"drawing… 1 shape", "drawing… 2 shapes"} {
		if err := st.Update(t.Context(), s); err != nil {
			t.Fatal(err)
		}
	}
	if err := st.Finish(t.Context()); err != nil {
		t.Fatal(err)
	}
	actions := len(fake.Calls("sendChatAction"))
	if err := st.Finish(t.Context()); err != nil { // a second Finish is harmless
		t.Fatal(err)
	}
	// Finish waits for the goroutine that repeats the action, so none can follow.
	select {
	case <-st.(*status).done:
	default:
		t.Fatal("Finish returned while the status goroutine still ran")
	}
	if got := len(fake.Calls("sendChatAction")); got != actions {
		t.Errorf("chat actions went on after Finish: %d, then %d", actions, got)
	}
	msgs := fake.Messages(dmChat.ID)
	if len(msgs) != 1 || !msgs[0].Deleted || len(msgs[0].Edits) > 2 {
		t.Errorf("status message %+v, want it edited at most twice, then deleted", msgs)
	}
}

func TestStatusEditsCoalesced(t *testing.T) {
	a, fake, _ := sendOnly(t)
	a.actionEvery = time.Hour
	st, err := a.Working(t.Context(), bot.Message{Key: dmKey})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Finish(t.Context())
	for _, s := range []string{"step 1", "step 2", "step 2", "step 3"} {
		st.Update(t.Context(), s)
	}
	ok := fake.WaitFor(wait, func() bool {
		m := fake.Messages(dmChat.ID)
		return len(m) == 1 && m[0].Text == "Step 3"
	})
	if !ok {
		t.Fatalf("status shows %+v, want the last step", fake.Messages(dmChat.ID))
	}
	for _, c := range fake.Calls("editMessageText") {
		if c.Code != 200 {
			t.Errorf("edit answered %d %s: identical texts must not be sent", c.Code, c.Error)
		}
	}
}

func TestGroupUpgradedToSupergroup(t *testing.T) {
	a, fake, _ := sendOnly(t)
	fake.Fail("sendPhoto", tgfake.Failure{Code: 400, Description: "Bad Request: group chat was upgraded to a supergroup chat", MigrateTo: group.ID})
	old := bot.ThreadKey{Platform: Platform, Channel: "-4001", Thread: "0:3"} // the basic group's id
	if err := a.Send(t.Context(), old, bot.Reply{Text: "done", Image: &bot.File{Content: smallPNG()}, Files: []bot.File{{Name: "d.excalidraw", Content: []byte("{}")}}}); err != nil {
		t.Fatal(err)
	}
	if got := summary(fake.BotMessages(group.ID)); len(got) != 2 {
		t.Errorf("supergroup shows %v, want the picture and the file", got)
	}
}

// TestWorkingEndsWithItsContext: a run cancelled without Finish does not leave the chat action
// going, and a late Finish still cleans up.
func TestWorkingEndsWithItsContext(t *testing.T) {
	a, fake, _ := sendOnly(t)
	a.actionEvery = 5 * time.Millisecond
	ctx, cancel := context.WithCancel(t.Context())
	st, err := a.Working(ctx, bot.Message{Key: dmKey})
	if err != nil {
		t.Fatal(err)
	}
	fake.WaitFor(wait, func() bool { return len(fake.Calls("sendChatAction")) >= 2 })
	cancel()
	<-st.(*status).done // the goroutine has stopped on its own
	if err := st.Finish(t.Context()); err != nil {
		t.Fatal(err)
	}
	if msgs := fake.Messages(dmChat.ID); len(msgs) != 1 || !msgs[0].Deleted {
		t.Errorf("status message %+v, want it deleted", msgs)
	}
}

// TestClearSign: the status message a dead process left is deleted by the next one from the
// handle the status gave (the core stores it with the run).
func TestClearSign(t *testing.T) {
	a, fake, _ := sendOnly(t)
	a.actionEvery = time.Hour
	st, err := a.Working(t.Context(), bot.Message{Key: dmKey, ID: "1"})
	if err != nil {
		t.Fatal(err)
	}
	sign := st.(bot.SignedStatus).Sign()
	if sign == "" {
		t.Fatal("the status names no sign, though its message was sent")
	}
	// The process dies here: no Finish. The next one clears the sign.
	next, err := New(Config{Token: token, APIURL: fake.URL + "/", RequestTimeout: 60 * time.Second}, newRecorder(), slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	if err := next.ClearSign(t.Context(), dmKey, sign); err != nil {
		t.Fatal(err)
	}
	if msgs := fake.Messages(dmChat.ID); len(msgs) != 1 || !msgs[0].Deleted {
		t.Errorf("status message %+v, want it deleted", msgs)
	}
	if err := next.ClearSign(t.Context(), dmKey, sign); err != nil {
		t.Errorf("clearing a sign that is gone already: %v", err)
	}
	if err := next.ClearSign(t.Context(), dmKey, "not-a-message"); err == nil {
		t.Error("ClearSign accepted a sign that is no message id")
	}
	st.Finish(t.Context())
}
