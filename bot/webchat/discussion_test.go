package webchat

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/excalibot/excalibot/bot"
)

// TestDiscussion: "draw this thread" on the page reads the person's messages before the
// request, oldest first: the bot's replies and file-only messages left out, the latest kept
// within the limits, a message cut at the start when only part of it fits.
func TestDiscussion(t *testing.T) {
	t0 := time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)
	c := New(refusingCore{}, Options{}, nil)
	defer c.Close()
	const thread = "thread-talk-1"
	said := []chatMessage{
		{ID: "m1", From: "you", Text: "We have a web app and an API."},
		{ID: "m2", From: "bot", Text: "Added box 1."},
		{ID: "m3", From: "you", Text: "", Upload: &chatUpload{Name: "board.png", Size: 10}},
		{ID: "m4", From: "you", Text: "The API writes to Postgres."},
		{ID: "m5", From: "you", Text: "draw this thread"},
		{ID: "m6", From: "you", Text: "said after the request"},
	}
	c.mu.Lock()
	for i, m := range said {
		m.Time = t0.Add(time.Duration(i) * time.Minute)
		c.addMessageLocked(upSession, thread, m)
	}
	c.mu.Unlock()
	request := bot.Message{Key: uploadKey(thread), ID: "m5", Text: "draw this thread", Received: t0.Add(4 * time.Minute)}
	text := func(d bot.Discussion) string {
		var parts []string
		for _, s := range d.Said {
			if s.Author != userName {
				t.Errorf("author %q, want %q", s.Author, userName)
			}
			parts = append(parts, s.Text)
		}
		return strings.Join(parts, " | ")
	}
	for _, tc := range []struct {
		name  string
		msg   bot.Message
		limit bot.DiscussionLimit
		want  string
		note  bool
	}{
		{"everything before the request", request, bot.DiscussionLimit{Messages: 50, Chars: 4000},
			"We have a web app and an API. | The API writes to Postgres.", false},
		{"the latest message only", request, bot.DiscussionLimit{Messages: 1, Chars: 4000},
			"The API writes to Postgres.", false},
		{"the earlier message cut to fit", request, bot.DiscussionLimit{Messages: 50, Chars: 27 + 8},
			"…an API. | The API writes to Postgres.", false},
		{"a request no longer kept: what came before its time", bot.Message{Key: request.Key, ID: "gone", Received: t0.Add(2 * time.Minute)},
			bot.DiscussionLimit{Messages: 50, Chars: 4000}, "We have a web app and an API.", false},
		{"nothing before the first message", bot.Message{Key: request.Key, ID: "m1"}, bot.DiscussionLimit{Messages: 50, Chars: 4000}, "", true},
		{"another session's thread", bot.Message{Key: bot.ThreadKey{Platform: Platform, Workspace: "other-session-123", Channel: chatChannel, Thread: thread}, ID: "m5"},
			bot.DiscussionLimit{Messages: 50, Chars: 4000}, "", true},
	} {
		d, err := c.Discussion(context.Background(), tc.msg, tc.limit)
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		if got := text(d); got != tc.want || (d.Note != "") != tc.note {
			t.Errorf("%s: got %q (note %q), want %q (a note: %v)", tc.name, got, d.Note, tc.want, tc.note)
		}
		var chars int
		for _, s := range d.Said {
			chars += len([]rune(s.Text))
		}
		if chars > tc.limit.Chars {
			t.Errorf("%s: %d characters, over the limit of %d", tc.name, chars, tc.limit.Chars)
		}
	}
	if d, _ := c.Discussion(context.Background(), request, bot.DiscussionLimit{Messages: 50, Chars: 4000}); len(d.Said) != 2 || !d.Said[0].At.Equal(t0) {
		t.Errorf("said %+v, want two messages with the time of each, the first at %v", d.Said, t0)
	}
}

// TestDrawThisThreadOverHTTP: "draw this thread" on the chat page reaches the drawer with the
// thread's earlier messages, and the reply says how many it used.
func TestDrawThisThreadOverHTTP(t *testing.T) {
	d := &seeingDrawer{}
	ce := startChat(t, d, bot.Options{UserRatePerMinute: 1e9, ChatRatePerMinute: 1e9}, Options{})
	const thread = "thread-talk-http"
	for i, text := range []string{"We have a web app and an API.", "The API writes to Postgres.", "draw this thread"} {
		res := ce.do(t, "POST", "/chat/api/threads/"+thread+"/messages", []byte(fmt.Sprintf(`{"text":%q}`, text)), map[string]string{chatSessionHdr: upSession})
		if res.StatusCode != 202 {
			t.Fatalf("post %q = %d %s", text, res.StatusCode, readAll(t, res))
		}
		ce.waitReply(t, thread, i+1)
	}
	reply := ce.waitReply(t, thread, 3)
	if !strings.HasPrefix(reply.Text, "From the 2 messages above.") || reply.Image == "" {
		t.Errorf("reply = %+v, want the picture, from the 2 messages above", reply)
	}
	reqs := d.requests()
	got := reqs[len(reqs)-1].Discussion
	if want := userName + ": We have a web app and an API.\n" + userName + ": The API writes to Postgres."; got != want {
		t.Errorf("the drawer got the discussion %q, want %q", got, want)
	}
}
