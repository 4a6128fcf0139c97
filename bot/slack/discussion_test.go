package slack

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/excalibot/excalibot/bot"
	"github.com/excalibot/excalibot/bot/slack/slackfake"
)

// discussionEnv is a thread in C1 about a deploy pipeline, with what a real thread has besides
// people talking: the bot's own replies, another bot, a join, a file, a mention, and a message
// after the request. The fake pages conversations.replies three messages at a time.
type discussionEnv struct {
	*env
	msg bot.Message // the request, "draw this thread"
}

func newDiscussionEnv(t *testing.T) *discussionEnv {
	t.Helper()
	fake := slackfake.New(t, slackfake.Config{RepliesPage: 3})
	e := startWith(t, fake, ModeSocket, newRecorder(), nil)
	fake.AddUser(slackfake.User{ID: "U1", Name: "ana", RealName: "Ana Lima", DisplayName: "Ana"})
	fake.AddUser(slackfake.User{ID: "U2", Name: "bruno", RealName: "Bruno Costa"}) // no display name
	// U3 is unknown to users.info: named by its id.
	post := func(m slackfake.UserMessage) string { return fake.Post(m).TS }
	root := post(slackfake.UserMessage{Channel: "C1", User: "U1", Text: "How should we ship the new service?"})
	say := func(user, text string) {
		post(slackfake.UserMessage{Channel: "C1", ThreadTS: root, User: user, Text: text})
	}
	say("U2", "Build, then run the tests, then deploy to staging.")
	post(slackfake.UserMessage{Channel: "C1", ThreadTS: root, User: "U0BOT", BotID: "B0BOT", Text: "Drew a box for: ship it."})
	say("U1", "<@U2> and a manual approval before production &amp; a rollback step.")
	post(slackfake.UserMessage{Channel: "C1", ThreadTS: root, User: "U9", BotID: "B0CI", Text: "CI passed on main"})
	post(slackfake.UserMessage{Channel: "C1", ThreadTS: root, User: "U3", Subtype: "channel_join", Text: "<@U3> has joined the channel"})
	say("U3", "Staging deploys should be automatic.")
	post(slackfake.UserMessage{Channel: "C1", ThreadTS: root, User: "U2",
		Files: []slackfake.UploadedFile{{Name: "whiteboard.jpg", MIME: "image/jpeg", Content: []byte("jpeg")}}})
	say("U2", "Production needs the approval, yes.")
	req := post(slackfake.UserMessage{Channel: "C1", ThreadTS: root, User: "U1", Text: "<@U0BOT> draw this thread"})
	say("U2", "written after the request")
	return &discussionEnv{env: e,
		msg: bot.Message{Key: bot.ThreadKey{Platform: Platform, Workspace: "T0FAKE", Channel: "C1", Thread: root}, ID: req, User: "U1"},
	}
}

func saidLines(d bot.Discussion) []string {
	var out []string
	for _, s := range d.Said {
		out = append(out, s.Author+": "+s.Text)
	}
	return out
}

func TestDiscussionReadsTheThreadBeforeTheRequest(t *testing.T) {
	e := newDiscussionEnv(t)
	d, err := e.a.Discussion(e.ctx, e.msg, bot.DiscussionLimit{Messages: 50, Chars: 10_000})
	must(t, err)
	want := []string{
		"Ana: How should we ship the new service?",
		"Bruno Costa: Build, then run the tests, then deploy to staging.",
		"Ana: @Bruno Costa and a manual approval before production & a rollback step.",
		"U3: Staging deploys should be automatic.",
		"Bruno Costa: (shared whiteboard.jpg)",
		"Bruno Costa: Production needs the approval, yes.",
	}
	if got := saidLines(d); !slices.Equal(got, want) {
		t.Errorf("discussion:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if d.Note != "" {
		t.Errorf("note = %q, want none", d.Note)
	}
	for i := 1; i < len(d.Said); i++ {
		if !d.Said[i-1].At.Before(d.Said[i].At) {
			t.Errorf("said %d at %v is not before said %d at %v: not oldest first", i-1, d.Said[i-1].At, i, d.Said[i].At)
		}
	}
	var sec, micro int64
	if _, err := fmt.Sscanf(e.msg.Key.Thread, "%d.%d", &sec, &micro); err != nil {
		t.Fatal(err)
	}
	if got, want := d.Said[0].At, time.Unix(sec, micro*1000).UTC(); !got.Equal(want) {
		t.Errorf("first message at %v, want %v (from its ts %s)", got, want, e.msg.Key.Thread)
	}

	// Paged by cursors: 9 messages before the request, 3 a page, so 3 calls, each after the
	// first with the cursor the one before gave, all ending before the request.
	calls := e.fake.Calls("conversations.replies")
	if len(calls) != 3 {
		t.Fatalf("conversations.replies calls = %d, want 3 pages", len(calls))
	}
	for i, c := range calls {
		if c.Form.Get("latest") != e.msg.ID || c.Form.Get("inclusive") != "0" || c.Form.Get("ts") != e.msg.Key.Thread {
			t.Errorf("call %d: ts %s latest %s inclusive %s; want the thread, before the request", i,
				c.Form.Get("ts"), c.Form.Get("latest"), c.Form.Get("inclusive"))
		}
		if (c.Form.Get("cursor") == "") != (i == 0) {
			t.Errorf("call %d: cursor %q; want one on every page but the first", i, c.Form.Get("cursor"))
		}
	}
	// users.info once per person (U1, U2, U3), whatever the number of their messages and mentions.
	if n := len(e.fake.Calls("users.info")); n != 3 {
		t.Errorf("users.info calls = %d, want 3", n)
	}
	// Asked again, the names come from the cache.
	_, err = e.a.Discussion(e.ctx, e.msg, bot.DiscussionLimit{Messages: 50, Chars: 10_000})
	must(t, err)
	if n := len(e.fake.Calls("users.info")); n != 3 {
		t.Errorf("users.info calls after a second read = %d, want still 3", n)
	}
}

func TestDiscussionLimits(t *testing.T) {
	e := newDiscussionEnv(t)
	for _, tc := range []struct {
		name  string
		limit bot.DiscussionLimit
		want  []string
	}{
		{"the latest messages", bot.DiscussionLimit{Messages: 2, Chars: 10_000}, []string{
			"Bruno Costa: (shared whiteboard.jpg)",
			"Bruno Costa: Production needs the approval, yes.",
		}},
		{"the latest that fit the characters, the oldest of them cut at its start", bot.DiscussionLimit{Messages: 50, Chars: 100}, []string{
			"Ana: …step.",
			"U3: Staging deploys should be automatic.",
			"Bruno Costa: (shared whiteboard.jpg)",
			"Bruno Costa: Production needs the approval, yes.",
		}},
		{"one message longer than the characters: its end", bot.DiscussionLimit{Messages: 50, Chars: 12}, []string{
			"Bruno Costa: …roval, yes.",
		}},
		{"zero limits are the defaults, not nothing", bot.DiscussionLimit{}, []string{
			"Ana: How should we ship the new service?",
			"Bruno Costa: Build, then run the tests, then deploy to staging.",
			"Ana: @Bruno Costa and a manual approval before production & a rollback step.",
			"U3: Staging deploys should be automatic.",
			"Bruno Costa: (shared whiteboard.jpg)",
			"Bruno Costa: Production needs the approval, yes.",
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d, err := e.a.Discussion(e.ctx, e.msg, tc.limit)
			must(t, err)
			got := saidLines(d)
			if !slices.Equal(got, tc.want) {
				t.Errorf("discussion:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(tc.want, "\n"))
			}
			chars := 0
			for _, s := range d.Said {
				chars += len([]rune(s.Text))
			}
			if tc.limit.Chars > 0 && chars > tc.limit.Chars {
				t.Errorf("%d characters, limit %d", chars, tc.limit.Chars)
			}
		})
	}
}

// A long thread is read page by page, and only the latest messages are kept on the way.
func TestDiscussionLongThread(t *testing.T) {
	fake := slackfake.New(t, slackfake.Config{RepliesPage: 7})
	e := startWith(t, fake, ModeSocket, newRecorder(), nil)
	root := fake.Post(slackfake.UserMessage{Channel: "C2", User: "U7", Text: "message 0"}).TS
	for i := 1; i < 60; i++ {
		fake.Post(slackfake.UserMessage{Channel: "C2", ThreadTS: root, User: "U7", Text: fmt.Sprintf("message %d", i)})
	}
	req := fake.Post(slackfake.UserMessage{Channel: "C2", ThreadTS: root, User: "U7", Text: "<@U0BOT> diagram what we discussed"}).TS
	msg := bot.Message{Key: bot.ThreadKey{Platform: Platform, Workspace: "T0FAKE", Channel: "C2", Thread: root}, ID: req}
	d, err := e.a.Discussion(e.ctx, msg, bot.DiscussionLimit{Messages: 5, Chars: 1000})
	must(t, err)
	want := []string{"U7: message 55", "U7: message 56", "U7: message 57", "U7: message 58", "U7: message 59"}
	if got := saidLines(d); !slices.Equal(got, want) {
		t.Errorf("discussion = %q, want %q", got, want)
	}
	if n := len(fake.Calls("conversations.replies")); n != 9 {
		t.Errorf("pages read = %d, want 9 (60 messages, 7 a page)", n)
	}
}

func TestDiscussionWithoutAThread(t *testing.T) {
	e := start(t, ModeSocket, newRecorder(), nil)
	for _, tc := range []struct {
		name string
		msg  bot.Message
		want string
	}{
		{"a DM's top level", bot.Message{Key: bot.ThreadKey{Platform: Platform, Channel: "D1"}, ID: "1700000000.000009"}, "start a thread"},
		{"a mention that starts its thread", bot.Message{Key: bot.ThreadKey{Platform: Platform, Channel: "C1", Thread: "1700000000.000009"},
			ID: "1700000000.000009"}, "nothing above it"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d, err := e.a.Discussion(e.ctx, tc.msg, bot.DiscussionLimit{Messages: 10, Chars: 100})
			must(t, err)
			if len(d.Said) != 0 || !strings.Contains(d.Note, tc.want) {
				t.Errorf("discussion = %+v, want nothing and a note saying %q", d, tc.want)
			}
		})
	}
	if n := len(e.fake.Calls("conversations.replies")); n != 0 {
		t.Errorf("conversations.replies called %d times for no thread", n)
	}
}

// When Slack refuses to read the thread, the error has a short sentence for the person who asked
// (its UserMessage, which the core puts in its answer): what is wrong and, when it can be mended,
// who mends it; no thread keys, no API names. The detail is in Error and the adapter's log.
func TestDiscussionRefused(t *testing.T) {
	e := newDiscussionEnv(t)
	for _, tc := range []struct{ code, want string }{
		{"missing_scope", "the app lacks permission to read this thread; whoever runs me must update it from the manifest and reinstall it"},
		{"not_in_channel", "I am not in this channel"},
		{"channel_not_found", "I am not in this channel"},
		{"not_allowed_token_type", "Slack does not let me read this thread"},
		{"internal_error", "Slack did not answer"},
	} {
		t.Run(tc.code, func(t *testing.T) {
			e.fake.Fail("conversations.replies", tc.code, 1)
			_, err := e.a.Discussion(e.ctx, e.msg, bot.DiscussionLimit{Messages: 10, Chars: 1000})
			var told bot.UserMessager
			if !errors.As(err, &told) || told.UserMessage() != tc.want {
				t.Fatalf("err = %v, want one that says %q", err, tc.want)
			}
			if !strings.Contains(err.Error(), tc.code) {
				t.Errorf("err = %q, want Slack's answer %s in its Go text", err, tc.code)
			}
			if !isSlackError(err, tc.code) {
				t.Errorf("err = %v does not carry Slack's answer %s", err, tc.code)
			}
			if line := logLine(e.logs(), tc.code); !strings.Contains(line, "conversations.replies") || !strings.Contains(line, e.msg.Key.String()) {
				t.Errorf("log line %q, want the method, the thread and Slack's answer", line)
			}
		})
	}
	// A page that fails midway fails the read rather than drawing half a thread.
	h := e.fake.Hold("conversations.replies", func(f url.Values) bool { return f.Get("cursor") != "" })
	errc := make(chan error, 1)
	go func() {
		_, err := e.a.Discussion(e.ctx, e.msg, bot.DiscussionLimit{Messages: 10, Chars: 1000})
		errc <- err
	}()
	select {
	case <-h.Arrived():
	case <-e.ctx.Done():
		t.Fatal("the second page was never asked for")
	}
	e.fake.Fail("conversations.replies", "ratelimited", 1)
	h.Release()
	var told bot.UserMessager
	if err := <-errc; !errors.As(err, &told) || told.UserMessage() != "Slack did not answer" {
		t.Errorf("err = %v, want the read to fail", err)
	}
	if line := logLine(e.logs(), "ratelimited"); !strings.Contains(line, "page=2") {
		t.Errorf("log line %q, want the page that failed", line)
	}
}

// logLine is the last line of logs that holds s.
func logLine(logs, s string) string {
	lines := strings.Split(logs, "\n")
	for i := len(lines) - 1; i >= 0; i-- {
		if strings.Contains(lines[i], s) {
			return lines[i]
		}
	}
	return ""
}

// users.info failing for a moment costs a name, not the discussion, and is not remembered.
func TestDiscussionNamesWhenUsersInfoFails(t *testing.T) {
	e := newDiscussionEnv(t)
	e.fake.Fail("users.info", "internal_error", 1)
	d, err := e.a.Discussion(e.ctx, e.msg, bot.DiscussionLimit{Messages: 1, Chars: 1000})
	must(t, err)
	if got := saidLines(d); !slices.Equal(got, []string{"U2: Production needs the approval, yes."}) {
		t.Errorf("discussion = %q, want the author by id", got)
	}
	d, err = e.a.Discussion(e.ctx, e.msg, bot.DiscussionLimit{Messages: 1, Chars: 1000})
	must(t, err)
	if got := saidLines(d); !slices.Equal(got, []string{"Bruno Costa: Production needs the approval, yes."}) {
		t.Errorf("discussion = %q, want the name once users.info answers", got)
	}
}

// The name look-ups of a discussion share one budget and run a few at a time. When Slack does not
// answer users.info, the discussion comes back once the budget is spent (here: when the test ends
// it), everyone named by their user id; nothing of it is remembered, so the next read names them.
func TestDiscussionNamesWithinABudget(t *testing.T) {
	fake := slackfake.New(t, slackfake.Config{})
	e := startWith(t, fake, ModeSocket, newRecorder(), nil)
	const people = 12
	var root string
	for i := range people {
		user := fmt.Sprintf("U%d", 10+i)
		fake.AddUser(slackfake.User{ID: user, Name: "p" + user, DisplayName: "Person " + user})
		m := slackfake.UserMessage{Channel: "C3", ThreadTS: root, User: user, Text: "step " + user}
		if ts := fake.Post(m).TS; root == "" {
			root = ts
		}
	}
	req := fake.Post(slackfake.UserMessage{Channel: "C3", ThreadTS: root, User: "U10", Text: "<@U0BOT> draw this thread"}).TS
	msg := bot.Message{Key: bot.ThreadKey{Platform: Platform, Workspace: "T0FAKE", Channel: "C3", Thread: root}, ID: req}
	limit := bot.DiscussionLimit{Messages: 50, Chars: 10_000}

	budget, spend := context.WithCancel(context.Background())
	defer spend()
	usual := e.a.nameContext
	e.a.nameContext = func(ctx context.Context) (context.Context, context.CancelFunc) {
		c, cancel := context.WithCancel(ctx)
		stop := context.AfterFunc(budget, cancel)
		return c, func() { stop(); cancel() }
	}
	h := fake.Hold("users.info", nil)
	defer h.Release()
	type result struct {
		d   bot.Discussion
		err error
	}
	res := make(chan result, 1)
	go func() {
		d, err := e.a.Discussion(e.ctx, msg, limit)
		res <- result{d, err}
	}()
	waitUntil(t, "the look-ups to run side by side", func() bool { return h.Waiting() == nameWorkers })
	spend()
	var r result
	select {
	case r = <-res:
	case <-e.ctx.Done():
		t.Fatal("the discussion did not come back when its name budget was spent")
	}
	must(t, r.err)
	var want []string
	for i := range people {
		want = append(want, fmt.Sprintf("U%d: step U%d", 10+i, 10+i))
	}
	if got := saidLines(r.d); !slices.Equal(got, want) {
		t.Errorf("discussion:\n%s\nwant everyone by id:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if n := h.Arrivals(); n != nameWorkers {
		t.Errorf("users.info asked %d times, want %d: a few at a time, and no more once the budget was spent", n, nameWorkers)
	}
	if !strings.Contains(e.logs(), "keep their user ids") {
		t.Errorf("the log does not say names were missed:\n%s", e.logs())
	}

	h.Release()
	e.a.nameContext = usual
	d, err := e.a.Discussion(e.ctx, msg, limit)
	must(t, err)
	if got := saidLines(d); len(got) != people || got[0] != "Person U10: step U10" || got[people-1] != fmt.Sprintf("Person U%d: step U%d", 9+people, 9+people) {
		t.Errorf("discussion after Slack answers again = %q, want everyone by name", got)
	}
}

func TestNameCacheBounded(t *testing.T) {
	c := newNameCache(3, time.Hour)
	for i := range 10 {
		c.put(fmt.Sprintf("U%d", i), "x")
	}
	if n := c.size(); n != 3 {
		t.Errorf("names kept = %d, want 3", n)
	}
}

func TestTSOrder(t *testing.T) {
	for _, tc := range []struct {
		a, b string
		want bool
	}{
		{"1700000000.000001", "1700000000.000002", true},
		{"1700000000.000002", "1700000000.000001", false},
		{"1700000000.000001", "1700000000.000001", false},
		{"999999999.999999", "1700000000.000000", true},
		{"1700000000.5", "1700000000.400000", false},
	} {
		if got := tsBefore(tc.a, tc.b); got != tc.want {
			t.Errorf("tsBefore(%s, %s) = %v, want %v", tc.a, tc.b, got, tc.want)
		}
	}
}
