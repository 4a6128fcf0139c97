package slack

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/excalibot/excalibot/bot"
	"github.com/excalibot/excalibot/bot/slack/slackfake"
)

var (
	pngBytes  = append([]byte("\x89PNG\r\n\x1a\n"), bytes.Repeat([]byte{7}, 2000)...)
	sceneJSON = []byte(`{"type":"excalidraw","version":2,"source":"excalibot","elements":[],"appState":{},"files":{}}`)
)

// drawReply is what the core does for a drawing request: working signs, a status update, the
// reply, Finish. It records what the thread looked like while working.
type drawReply struct {
	editURL string
	title   string // the diagram's title in the reply; "" for none

	mu           sync.Mutex
	whileWorking []string // reactions on the message between Working and Finish
	statusText   string   // the status line after Update
	errs         []error
}

func (d *drawReply) run(ctx context.Context, fake *slackfake.Server, a bot.Adapter, m bot.Message) {
	fail := func(step string, err error) {
		d.mu.Lock()
		d.errs = append(d.errs, fmt.Errorf("%s: %w", step, err))
		d.mu.Unlock()
	}
	st, err := a.Working(ctx, m)
	if err != nil {
		fail("Working", err)
		return
	}
	if err := st.Update(ctx, "drawing… 4 shapes, 3 arrows"); err != nil {
		fail("Update", err)
	}
	var status string
	for _, msg := range fake.Thread(m.Key.Channel, m.Key.Thread) {
		if msg.BotID != "" && msg.Edits > 0 {
			status = msg.Text
		}
	}
	d.mu.Lock()
	d.whileWorking = fake.Reactions(m.Key.Channel, m.ID)
	d.statusText = status
	d.mu.Unlock()
	err = a.Send(ctx, m.Key, bot.Reply{
		Text:    "Browser → API → Postgres, 3 boxes & 2 arrows",
		Image:   &bot.File{Name: "diagram.png", MIME: "image/png", Content: pngBytes},
		Files:   []bot.File{{Name: "diagram.excalidraw", MIME: "application/json", Content: sceneJSON}},
		EditURL: d.editURL,
		Title:   d.title,
		Alt:     "Flowchart: Browser leads to API, API to Postgres.",
	})
	if err != nil {
		fail("Send", err)
	}
	if err := st.Finish(ctx); err != nil {
		fail("Finish", err)
	}
}

// threadShape is a thread reduced to what a person sees: who wrote, the text, the files, and
// the buttons.
func threadShape(t *testing.T, msgs []slackfake.Message) []string {
	t.Helper()
	var out []string
	for _, m := range msgs {
		who := "user"
		if m.BotID != "" {
			who = "bot"
		}
		line := who + ": " + m.Text
		for _, f := range m.Files {
			line += fmt.Sprintf(" [file %s %s %dB]", f.Name, f.MIME, len(f.Content))
		}
		if m.Blocks != nil {
			line += " " + blockSummary(t, m.Blocks)
		}
		out = append(out, line)
	}
	return out
}

// blockSummary lists a message's section texts and buttons as "{section …} {button label→url}".
func blockSummary(t *testing.T, raw json.RawMessage) string {
	t.Helper()
	var blocks []struct {
		Type string `json:"type"`
		Text struct {
			Text string `json:"text"`
		} `json:"text"`
		Elements []struct {
			Type string `json:"type"`
			URL  string `json:"url"`
			Text struct {
				Text string `json:"text"`
			} `json:"text"`
		} `json:"elements"`
	}
	if err := json.Unmarshal(raw, &blocks); err != nil {
		t.Fatalf("blocks are not Block Kit JSON: %v\n%s", err, raw)
	}
	var parts []string
	for _, b := range blocks {
		switch b.Type {
		case "section":
			parts = append(parts, "{section "+b.Text.Text+"}")
		case "actions":
			for _, e := range b.Elements {
				parts = append(parts, "{"+e.Type+" "+e.Text.Text+"→"+e.URL+"}")
			}
		}
	}
	return strings.Join(parts, " ")
}

func TestMentionInChannelRepliesInThread(t *testing.T) {
	for _, tc := range []struct {
		name    string
		editURL string
		want    func(downloadURL string) []string
	}{
		{"without link", "", func(string) []string {
			return []string{
				"user: <@U0BOT> draw how a request flows",
				fmt.Sprintf("bot: Browser → API → Postgres, 3 boxes &amp; 2 arrows [file diagram.png image/png 2008B] [file diagram.excalidraw application/json %dB]", len(sceneJSON)),
			}
		}},
		{"with editor link", "https://excalibot.example/edit/abc", func(dl string) []string {
			return []string{
				"user: <@U0BOT> draw how a request flows",
				fmt.Sprintf("bot:  [file diagram.png image/png 2008B] [file diagram.excalidraw application/json %dB]", len(sceneJSON)),
				"bot: Browser → API → Postgres, 3 boxes &amp; 2 arrows {section Browser → API → Postgres, 3 boxes &amp; 2 arrows} " +
					"{button Open in editor→https://excalibot.example/edit/abc} {button Download→" + dl + "}",
			}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d := &drawReply{editURL: tc.editURL}
			rec := newRecorder()
			rec.reply = func(ctx context.Context, a bot.Adapter, m bot.Message) { d.run(ctx, rec.fake, a, m) }
			e := start(t, ModeSocket, rec, nil)

			ts, err := e.fake.Send(e.ctx, slackfake.UserMessage{Channel: "C1", User: "U1", Text: "<@U0BOT> draw how a request flows"})
			must(t, err)
			m := rec.next(t)
			want := bot.ThreadKey{Platform: "slack", Workspace: "T0FAKE", Channel: "C1", Thread: ts}
			if m.Key != want || m.ID != ts || m.User != "U1" || m.Text != "draw how a request flows" || m.EventID == "" {
				t.Fatalf("message = %+v\nwant key %+v, id %s, text %q", m, want, ts, "draw how a request flows")
			}
			rec.waitReplied(t)
			if len(d.errs) > 0 {
				t.Fatal(d.errs)
			}
			if got := d.whileWorking; !reflect.DeepEqual(got, []string{"eyes"}) {
				t.Errorf("reactions while working = %v, want [eyes]", got)
			}
			if d.statusText != "Drawing… 4 shapes, 3 arrows" {
				t.Errorf("status line = %q, want the updated step with a capital", d.statusText)
			}
			if got := e.fake.Reactions("C1", ts); len(got) != 0 {
				t.Errorf("reactions after Finish = %v, want none", got)
			}
			var dl string
			if files := e.fake.Thread("C1", ts); len(files) > 1 && len(files[1].Files) == 2 {
				dl = e.fake.URL() + "/files-pri/T0FAKE-" + files[1].Files[1].ID + "/diagram.excalidraw?download=1"
			}
			got := threadShape(t, e.fake.Thread("C1", ts))
			if w := tc.want(dl); !reflect.DeepEqual(got, w) {
				t.Errorf("thread:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(w, "\n"))
			}
			// The mention arrived twice (app_mention and message events), as the same message.
			raw := rec.waitRaw(t, 2)
			if raw[0].Key != raw[1].Key || raw[0].ID != raw[1].ID || raw[0].EventID == raw[1].EventID {
				t.Errorf("the two deliveries differ in key or id, or share an event id: %+v / %+v", raw[0], raw[1])
			}
		})
	}
}

func TestThreadFollowUps(t *testing.T) {
	var known []bot.ThreadKey
	var mu sync.Mutex
	rec := newRecorder()
	e := start(t, ModeSocket, rec, func(c *Config) {
		c.KnownThread = func(_ context.Context, k bot.ThreadKey) (bool, error) {
			mu.Lock()
			defer mu.Unlock()
			known = append(known, k)
			return k.Thread == "1700000000.999999", nil // only this one is in the "store"
		}
	})
	send := func(m slackfake.UserMessage) string {
		t.Helper()
		ts, err := e.fake.Send(e.ctx, m)
		must(t, err)
		return ts
	}
	parent := send(slackfake.UserMessage{Channel: "C1", Text: "<@U0BOT> draw a pipeline"})
	rec.nextText(t, "draw a pipeline")

	// Chatter in another thread the bot is not part of, then a follow-up in the bot's thread.
	other := send(slackfake.UserMessage{Channel: "C1", Text: "lunch?"})
	send(slackfake.UserMessage{Channel: "C1", Text: "pizza", ThreadTS: other})
	send(slackfake.UserMessage{Channel: "C1", Text: "make the database red", ThreadTS: parent})
	m := rec.nextText(t, "make the database red")
	if m.Key.Thread != parent {
		t.Errorf("follow-up thread = %q, want the parent %q", m.Key.Thread, parent)
	}

	// A mention inside someone else's thread joins it; later messages there need no mention.
	send(slackfake.UserMessage{Channel: "C1", Text: "<@U0BOT> draw this", ThreadTS: other})
	if m := rec.nextText(t, "draw this"); m.Key.Thread != other {
		t.Errorf("mention in a thread: key thread = %q, want %q", m.Key.Thread, other)
	}
	send(slackfake.UserMessage{Channel: "C1", Text: "bigger", ThreadTS: other})
	rec.nextText(t, "bigger")

	// After a restart the memory is empty: the store (KnownThread) vouches for its threads.
	e.fake.Post(slackfake.UserMessage{Channel: "C2", Text: "old thread parent"}) // not delivered
	send(slackfake.UserMessage{Channel: "C2", Text: "not known", ThreadTS: "1700000000.000001"})
	e.fake.Post(slackfake.UserMessage{Channel: "C2", Text: "x"})
	send(slackfake.UserMessage{Channel: "C2", Text: "known to the store", ThreadTS: "1700000000.999999"})
	rec.nextText(t, "known to the store")
	mu.Lock()
	defer mu.Unlock()
	if len(known) != 3 {
		t.Errorf("KnownThread asked %d times (%v), want 3: pizza, not known, known to the store", len(known), known)
	}
}

func TestDirectMessage(t *testing.T) {
	rec := newRecorder()
	rec.reply = func(ctx context.Context, a bot.Adapter, m bot.Message) {
		if err := a.Send(ctx, m.Key, bot.Reply{Text: "Here is your diagram."}); err != nil {
			panic(err)
		}
	}
	e := start(t, ModeSocket, rec, nil)
	ts, err := e.fake.Send(e.ctx, slackfake.UserMessage{Channel: "D1", Text: "draw a cat"})
	must(t, err)
	m := rec.nextText(t, "draw a cat")
	want := bot.ThreadKey{Platform: "slack", Workspace: "T0FAKE", Channel: "D1"}
	if m.Key != want || m.ID != ts {
		t.Fatalf("DM key = %+v id %s, want %+v id %s", m.Key, m.ID, want, ts)
	}
	rec.waitReplied(t)
	got := threadShape(t, e.fake.Thread("D1", ""))
	if w := []string{"user: draw a cat", "bot: Here is your diagram."}; !reflect.DeepEqual(got, w) {
		t.Errorf("DM:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(w, "\n"))
	}
	// A DM thread is its own conversation.
	_, err = e.fake.Send(e.ctx, slackfake.UserMessage{Channel: "D1", Text: "in a thread", ThreadTS: ts})
	must(t, err)
	if m := rec.nextText(t, "in a thread"); m.Key.Thread != ts {
		t.Errorf("DM thread key = %q, want %q", m.Key.Thread, ts)
	}
}

// TestIgnoredMessages: the bot's own messages, other bots, subtypes and messages not for the bot
// reach no handler. The fake's Send returns once the adapter acked the event, which it does after
// the handler, so each case is checked as soon as it is sent; the sentinel shows delivery still
// works after them.
func TestIgnoredMessages(t *testing.T) {
	rec := newRecorder()
	e := start(t, ModeSocket, rec, nil)
	parent, err := e.fake.Send(e.ctx, slackfake.UserMessage{Channel: "C1", Text: "<@U0BOT> start"})
	must(t, err)
	rec.nextText(t, "start")
	for _, tc := range []struct {
		name string
		msg  slackfake.UserMessage
	}{
		{"own reply", slackfake.UserMessage{Channel: "C1", User: "U0BOT", BotID: "B0BOT", Text: "my own reply", ThreadTS: parent}},
		{"another bot", slackfake.UserMessage{Channel: "C1", User: "U0OTHER", BotID: "B0OTHER", Text: "<@U0BOT> another bot", ThreadTS: parent}},
		{"own DM without bot_id", slackfake.UserMessage{Channel: "D1", User: "U0BOT", Text: "own DM without bot_id"}},
		{"channel join", slackfake.UserMessage{Channel: "C1", Text: "<@U0BOT> joined", Subtype: "channel_join"}},
		{"edit", slackfake.UserMessage{Channel: "C1", Text: "edited", Subtype: "message_changed", ThreadTS: parent}},
		{"chatter without a mention", slackfake.UserMessage{Channel: "C1", Text: "plain chatter"}},
		{"nothing after the mention", slackfake.UserMessage{Channel: "C1", Text: "<@U0BOT>", ThreadTS: parent}},
	} {
		_, err := e.fake.Send(e.ctx, tc.msg)
		must(t, err)
		if n := rec.deliveredCount(); n != 1 {
			t.Errorf("%s: messages delivered = %d after it, want 1 (only the start)", tc.name, n)
			break // the count stays off; later cases would report this one again
		}
	}
	_, err = e.fake.Send(e.ctx, slackfake.UserMessage{Channel: "C1", Text: "sentinel", ThreadTS: parent})
	must(t, err)
	rec.nextText(t, "sentinel")
	if n := rec.deliveredCount(); n != 2 {
		t.Errorf("messages delivered = %d, want 2 (the start and the sentinel)", n)
	}
}

func TestAllowlists(t *testing.T) {
	for _, tc := range []struct {
		name       string
		workspaces []string
		channels   []string
		msg        slackfake.UserMessage
		delivered  bool
		why        string // what the refusal names
	}{
		{"no lists", nil, nil, slackfake.UserMessage{Channel: "C9"}, true, ""},
		{"workspace allowed", []string{"T0FAKE"}, nil, slackfake.UserMessage{Channel: "C9"}, true, ""},
		{"workspace refused", []string{"T0OTHER"}, nil, slackfake.UserMessage{Channel: "C9"}, false, "workspace"},
		{"event from another workspace of an org install", []string{"T0FAKE"}, nil, slackfake.UserMessage{Channel: "C9", Team: "T0OTHER"}, false, "workspace"},
		{"channel allowed", nil, []string{"C1", "C9"}, slackfake.UserMessage{Channel: "C9"}, true, ""},
		{"channel refused", nil, []string{"C1"}, slackfake.UserMessage{Channel: "C9"}, false, "channel"},
		{"DM refused by channel list", nil, []string{"C1"}, slackfake.UserMessage{Channel: "D9"}, false, "channel"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rec := newRecorder()
			e := start(t, ModeSocket, rec, func(c *Config) {
				c.Workspaces = tc.workspaces
				c.Channels = append(tc.channels, "C0SENTINEL")
				if tc.channels == nil {
					c.Channels = nil
				}
			})
			m := tc.msg
			m.Text = "<@U0BOT> draw"
			sentinel := slackfake.UserMessage{Channel: "C0SENTINEL", Text: "<@U0BOT> sentinel"}
			if len(tc.workspaces) > 0 {
				sentinel.Team = tc.workspaces[0]
			}
			var firsts []string
			for range 2 { // the second refused mention gets no second refusal
				_, err := e.fake.Send(e.ctx, m)
				must(t, err)
				_, err = e.fake.Send(e.ctx, sentinel)
				must(t, err)
				first := rec.next(t)
				if first.Text == "draw" {
					rec.next(t) // the sentinel
				}
				firsts = append(firsts, first.Text)
			}
			e.stop() // waits for refusals being posted
			if got := firsts[0] == "draw"; got != tc.delivered {
				t.Errorf("delivered = %v, want %v (first message: %q)", got, tc.delivered, firsts[0])
			}
			var refusals []string
			for _, c := range e.fake.Calls("chat.postMessage") {
				refusals = append(refusals, c.Form.Get("text"))
				inThread := c.Form.Get("thread_ts") != ""
				if wantThread := !strings.HasPrefix(m.Channel, "D"); inThread != wantThread {
					t.Errorf("refusal in %s posted in a thread: %v, want %v", m.Channel, inThread, wantThread)
				}
			}
			switch {
			case tc.delivered && len(refusals) > 0:
				t.Errorf("allowed, but refused: %q", refusals)
			case !tc.delivered && (len(refusals) != 1 || !strings.Contains(refusals[0], "Sorry, I'm not enabled in this "+tc.why)):
				t.Errorf("refusals = %q, want exactly one about the %s", refusals, tc.why)
			}
		})
	}
}

func TestAttachmentFetch(t *testing.T) {
	for _, partial := range []bool{false, true} {
		t.Run(fmt.Sprintf("partial file object %v", partial), func(t *testing.T) {
			rec := newRecorder()
			e := start(t, ModeSocket, rec, nil)
			_, err := e.fake.Send(e.ctx, slackfake.UserMessage{Channel: "C1", Text: "<@U0BOT> use this", PartialFiles: partial,
				Files: []slackfake.UploadedFile{{Name: "old.excalidraw", MIME: "application/json", Content: sceneJSON}}})
			must(t, err)
			m := rec.nextText(t, "use this")
			if len(m.Files) != 1 {
				t.Fatalf("files = %d, want 1", len(m.Files))
			}
			f := m.Files[0]
			if f.Name != "old.excalidraw" || f.MIME != "application/json" || f.Size != int64(len(sceneJSON)) {
				t.Errorf("attachment = %s %s %d, want old.excalidraw application/json %d", f.Name, f.MIME, f.Size, len(sceneJSON))
			}
			got, err := e.a.FetchFile(e.ctx, f, 1<<20)
			must(t, err)
			if !bytes.Equal(got, sceneJSON) {
				t.Errorf("fetched %q, want %q", got, sceneJSON)
			}
			if _, err := e.a.FetchFile(e.ctx, f, 10); !errors.Is(err, ErrTooLarge) {
				t.Errorf("fetch beyond the limit: err = %v, want ErrTooLarge", err)
			}
			if n := len(e.fake.Calls("files.info")); (n > 0) != partial {
				t.Errorf("files.info calls = %d; want them only for partial file objects", n)
			}
		})
	}
}

// A file whose size the event understates is still cut off at the limit while downloading.
func TestLimitedBuffer(t *testing.T) {
	for _, tc := range []struct {
		max    int64
		writes []int
		want   error
	}{
		{0, []int{100, 100}, nil},
		{200, []int{100, 100}, nil},
		{150, []int{100, 100}, ErrTooLarge},
	} {
		b := &limitedBuffer{max: tc.max}
		var err error
		for _, n := range tc.writes {
			if _, err = b.Write(make([]byte, n)); err != nil {
				break
			}
		}
		if !errors.Is(err, tc.want) && err != tc.want {
			t.Errorf("max %d writes %v: err = %v, want %v", tc.max, tc.writes, err, tc.want)
		}
	}
}

// TestSocketAckOnceKept: an envelope is acked only once the core has kept its message; one the
// core could not keep is left unacked, Slack delivers it again, and that delivery is acked.
func TestSocketAckOnceKept(t *testing.T) {
	rec := newRecorder()
	rec.block = make(chan struct{}) // the core is slow to keep it
	var failing atomic.Bool
	failing.Store(true)
	rec.fail = func() error {
		if failing.Load() {
			return errors.New("store: database is locked")
		}
		return nil
	}
	e := start(t, ModeSocket, rec, nil)
	p := e.fake.Post(slackfake.UserMessage{Channel: "D1", Text: "draw"})
	env, err := e.fake.Deliver(e.ctx, p.Events[0], slackfake.DeliverOptions{})
	must(t, err)
	short, cancel := context.WithTimeout(e.ctx, 200*time.Millisecond)
	defer cancel()
	if err := e.fake.WaitAck(short, env); err == nil {
		t.Fatal("acked before the core returned")
	}
	close(rec.block)
	// The core fails to keep it: no ack, however long Slack waits.
	short2, cancel2 := context.WithTimeout(e.ctx, 300*time.Millisecond)
	defer cancel2()
	if err := e.fake.WaitAck(short2, env); err == nil {
		t.Fatal("acked a message the core did not keep")
	}
	if !strings.Contains(e.logs(), "left unacked for Slack to deliver again") {
		t.Errorf("no log line for the unkept event:\n%s", e.logs())
	}
	failing.Store(false)
	env2, err := e.fake.Deliver(e.ctx, p.Events[0], slackfake.DeliverOptions{RetryAttempt: 1, RetryReason: "timeout"})
	must(t, err)
	must(t, e.fake.WaitAck(e.ctx, env2))
	if e.fake.Acked(env) {
		t.Error("the first delivery was acked after all")
	}
	m := rec.nextText(t, "draw")
	if m.EventID != p.Events[0].ID {
		t.Errorf("kept event %q, want %q", m.EventID, p.Events[0].ID)
	}
}

func TestSocketReconnectsOnDisconnect(t *testing.T) {
	rec := newRecorder()
	e := start(t, ModeSocket, rec, nil)
	must(t, e.fake.Disconnect(e.ctx))
	_, err := e.fake.Send(e.ctx, slackfake.UserMessage{Channel: "D1", Text: "after reconnect"})
	must(t, err)
	rec.nextText(t, "after reconnect")
	if n := e.fake.Connections(); n != 2 {
		t.Errorf("connections = %d, want 2", n)
	}
}

func TestRateLimitedCallIsRetried(t *testing.T) {
	rec := newRecorder()
	e := start(t, ModeSocket, rec, nil)
	e.fake.RateLimit("chat.postMessage", 1, 1)
	key := bot.ThreadKey{Platform: "slack", Workspace: "T0FAKE", Channel: "D1"}
	must(t, e.a.Send(e.ctx, key, bot.Reply{Text: "sorry, that failed", Error: true}))
	calls := e.fake.Calls("chat.postMessage")
	var statuses []int
	for _, c := range calls {
		statuses = append(statuses, c.Status)
	}
	if !slices.Equal(statuses, []int{429, 200}) {
		t.Fatalf("chat.postMessage statuses = %v, want [429 200]", statuses)
	}
	if gap := calls[1].At.Sub(calls[0].At); gap < time.Second {
		t.Errorf("retried after %v, before Retry-After (1s)", gap)
	}
	got := threadShape(t, e.fake.Thread("D1", ""))
	if w := []string{"bot: :warning: sorry, that failed"}; !reflect.DeepEqual(got, w) {
		t.Errorf("DM = %v, want %v", got, w)
	}
}

func TestUploadRateLimitedIsRetried(t *testing.T) {
	rec := newRecorder()
	e := start(t, ModeSocket, rec, nil)
	e.fake.RateLimit("files.completeUploadExternal", 1, 1)
	key := bot.ThreadKey{Platform: "slack", Workspace: "T0FAKE", Channel: "D1"}
	must(t, e.a.Send(e.ctx, key, bot.Reply{Text: "again", Image: &bot.File{Name: "d.png", Content: pngBytes}}))
	if n := len(e.fake.Calls("files.completeUploadExternal")); n != 2 {
		t.Errorf("completeUploadExternal calls = %d, want 2 (429, then ok)", n)
	}
	if got := threadShape(t, e.fake.Thread("D1", "")); len(got) != 1 || !strings.Contains(got[0], "d.png") {
		t.Errorf("DM = %v, want one message with d.png", got)
	}
}

func TestRunRefusedTokens(t *testing.T) {
	fake := slackfake.New(t, slackfake.Config{})
	for _, tc := range []struct {
		name string
		cfg  Config
		want string
	}{
		{"bot token", Config{BotToken: "xoxb-wrong", AppToken: fake.Config().AppToken}, "invalid_auth (check SLACK_BOT_TOKEN)"},
		{"app token", Config{BotToken: fake.Config().BotToken, AppToken: "xapp-wrong"}, "slack socket mode"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tc.cfg.APIURL = fake.APIURL()
			a, err := New(tc.cfg, newRecorder(), nil)
			must(t, err)
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
			defer cancel()
			err = a.Run(ctx)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("Run = %v, want an error containing %q", err, tc.want)
			}
			if ctx.Err() != nil {
				t.Error("Run kept retrying a refused token until the deadline")
			}
			if err := a.Run(ctx); err == nil || !strings.Contains(err.Error(), "twice") {
				t.Errorf("second Run = %v, want a refusal", err)
			}
		})
	}
}

// When the upload fails (here: the app lacks files:write), the summary and the links still
// reach the thread, saying what is missing.
func TestUploadFailureStillAnswers(t *testing.T) {
	e := start(t, ModeSocket, newRecorder(), nil)
	e.fake.Fail("files.getUploadURLExternal", "missing_scope", 1)
	key := bot.ThreadKey{Platform: "slack", Workspace: "T0FAKE", Channel: "D1"}
	err := e.a.Send(e.ctx, key, bot.Reply{Text: "A flow", Image: &bot.File{Name: "d.png", Content: pngBytes},
		EditURL: "https://excalibot.example/edit/x"})
	if err != nil {
		t.Errorf("Send = %v, want nil: the reply went out with a note (the upload error is logged)", err)
	}
	if !strings.Contains(e.logs(), "missing_scope") {
		t.Errorf("the log lacks the upload error:\n%s", e.logs())
	}
	got := threadShape(t, e.fake.Thread("D1", ""))
	want := []string{"bot: A flow\n\n:warning: I could not attach the picture and the .excalidraw file (Slack said `missing_scope`). " +
		"{section A flow\n\n:warning: I could not attach the picture and the .excalidraw file (Slack said `missing_scope`).} " +
		"{button Open in editor→https://excalibot.example/edit/x}"}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("DM:\n%q\nwant:\n%q", got, want)
	}
}

// Replies stay within Block Kit's limits, which the fake enforces like Slack: a long summary is
// split into sections, and a link too long for a button is left out rather than losing the whole
// message.
func TestReplyWithinBlockKitLimits(t *testing.T) {
	e := start(t, ModeSocket, newRecorder(), nil)
	key := bot.ThreadKey{Platform: "slack", Workspace: "T0FAKE", Channel: "D1"}
	long := strings.Repeat("word ", 2000) // 10 000 characters
	must(t, e.a.Send(e.ctx, key, bot.Reply{Text: long, EditURL: "https://excalibot.example/edit/x",
		ViewURL: "https://excalibot.example/view/" + strings.Repeat("v", 3100)}))
	msgs := e.fake.Thread("D1", "")
	if len(msgs) != 1 {
		t.Fatalf("messages = %d, want 1", len(msgs))
	}
	summary := blockSummary(t, msgs[0].Blocks)
	if !strings.Contains(summary, "{button Open in editor→https://excalibot.example/edit/x}") || strings.Contains(summary, "View") {
		t.Errorf("buttons = %s, want Open in editor only", summary)
	}
	if n := len([]rune(msgs[0].Text)); n > 3000 {
		t.Errorf("fallback text has %d characters", n)
	}
}
