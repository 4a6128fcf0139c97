package slackfake

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/slack-go/slack"
)

// The fake refuses what Slack refuses, so that the adapter's mistakes show up in tests.
func TestFakeRefusesLikeSlack(t *testing.T) {
	f := New(t, Config{})
	ctx := context.Background()
	api := slack.New(f.Config().BotToken, slack.OptionAPIURL(f.APIURL()))
	p := f.Post(UserMessage{Channel: "C1", Text: "hello", Files: []UploadedFile{{Name: "a.txt", MIME: "text/plain", Content: []byte("abc")}}})
	reply := f.Post(UserMessage{Channel: "C1", Text: "a reply", ThreadTS: p.TS})

	for _, tc := range []struct {
		name string
		call func() error
		want string
	}{
		{"wrong token", func() error {
			_, err := slack.New("xoxb-nope", slack.OptionAPIURL(f.APIURL())).AuthTestContext(ctx)
			return err
		}, "invalid_auth"},
		{"unknown thread", func() error {
			_, _, err := api.PostMessageContext(ctx, "C1", slack.MsgOptionText("x", false), slack.MsgOptionTS("1.000000"))
			return err
		}, "thread_not_found"},
		{"thread_ts of a reply", func() error {
			_, _, err := api.PostMessageContext(ctx, "C1", slack.MsgOptionText("x", false), slack.MsgOptionTS(reply.TS))
			return err
		}, "thread_ts_is_a_reply"},
		{"empty message", func() error {
			_, _, err := api.PostMessageContext(ctx, "C1")
			return err
		}, "no_text"},
		{"edit someone else's message", func() error {
			_, _, _, err := api.UpdateMessageContext(ctx, "C1", p.TS, slack.MsgOptionText("x", false))
			return err
		}, "cant_update_message"},
		{"react twice", func() error {
			ref := slack.NewRefToMessage("C1", p.TS)
			if err := api.AddReactionContext(ctx, "eyes", ref); err != nil {
				return err
			}
			return api.AddReactionContext(ctx, "eyes", ref)
		}, "already_reacted"},
		{"remove a missing reaction", func() error {
			return api.RemoveReactionContext(ctx, "tada", slack.NewRefToMessage("C1", p.TS))
		}, "no_reaction"},
		{"download without the token", func() error {
			anon := slack.New("", slack.OptionAPIURL(f.APIURL()))
			var b bytes.Buffer
			return anon.GetFileContext(ctx, f.URL()+"/files-pri/T0FAKE-"+findFile(t, f, "C1", p.TS)+"/a.txt", &b)
		}, "sign-in page"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.call()
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("err = %v, want %q", err, tc.want)
			}
		})
	}

	var b bytes.Buffer
	if err := api.GetFileContext(ctx, f.URL()+"/files-pri/T0FAKE-"+findFile(t, f, "C1", p.TS)+"/a.txt", &b); err != nil || b.String() != "abc" {
		t.Errorf("download with the token: %q, %v; want abc", b.String(), err)
	}

	f.RateLimit("chat.postMessage", 1, 2)
	_, _, err := api.PostMessageContext(ctx, "C1", slack.MsgOptionText("x", false))
	var rl *slack.RateLimitedError
	if !errors.As(err, &rl) || rl.RetryAfter.Seconds() != 2 {
		t.Errorf("rate limited: err = %v, want RateLimitedError after 2s", err)
	}
}

func findFile(t *testing.T, f *Server, channel, ts string) string {
	t.Helper()
	m, ok := f.Message(channel, ts)
	if !ok || len(m.Files) == 0 {
		t.Fatalf("no file on %s/%s", channel, ts)
	}
	return m.Files[0].ID
}

// sections is the start of a blocks array of n sections of size characters each.
func sections(n, size int) string {
	s := `[`
	for i := range n {
		if i > 0 {
			s += ","
		}
		s += `{"type":"section","text":{"type":"mrkdwn","text":"` + strings.Repeat("x", size) + `"}}`
	}
	return s
}

func TestCheckBlocks(t *testing.T) {
	btn := func(label, url string) string {
		return `[{"type":"actions","elements":[{"type":"button","text":{"type":"plain_text","text":"` + label + `"},"url":"` + url + `"}]}]`
	}
	for _, tc := range []struct {
		name, blocks, want string
	}{
		{"none", "", ""},
		{"section", `[{"type":"section","text":{"type":"mrkdwn","text":"hi"}}]`, ""},
		{"long section", `[{"type":"section","text":{"type":"mrkdwn","text":"` + strings.Repeat("x", 3001) + `"}}]`, "invalid_blocks"},
		{"empty section", `[{"type":"section","text":{"type":"mrkdwn","text":""}}]`, "invalid_blocks"},
		{"button", btn("Open", "https://x.example/e"), ""},
		{"long url", btn("Open", "https://x.example/"+strings.Repeat("e", 3000)), "invalid_blocks"},
		{"long label", btn(strings.Repeat("O", 76), "https://x.example/e"), "invalid_blocks"},
		{"empty actions", `[{"type":"actions","elements":[]}]`, "invalid_blocks"},
		{"not json", `[{`, "invalid_blocks"},
		{"sections within the total", sections(4, 3000) + `]`, ""},
		{"sections over the total", sections(5, 3000) + `]`, "msg_blocks_too_long"},
	} {
		if got := checkBlocks(tc.blocks); got != tc.want {
			t.Errorf("%s: checkBlocks = %q, want %q", tc.name, got, tc.want)
		}
	}
}

// conversations.replies pages like Slack: oldest first, has_more and a next_cursor until the end,
// the request's latest/inclusive applied, a cursor Slack never gave refused.
func TestFakeRepliesPaging(t *testing.T) {
	f := New(t, Config{RepliesPage: 2})
	ctx := context.Background()
	api := slack.New(f.Config().BotToken, slack.OptionAPIURL(f.APIURL()))
	root := f.Post(UserMessage{Channel: "C1", Text: "m0"}).TS
	var last string
	for i := 1; i <= 4; i++ {
		last = f.Post(UserMessage{Channel: "C1", ThreadTS: root, Text: fmt.Sprintf("m%d", i)}).TS
	}
	f.Post(UserMessage{Channel: "C1", Text: "not in the thread"})

	read := func(p slack.GetConversationRepliesParameters) (texts []string, pages int) {
		t.Helper()
		for {
			msgs, more, next, err := api.GetConversationRepliesContext(ctx, &p)
			if err != nil {
				t.Fatal(err)
			}
			pages++
			for _, m := range msgs {
				texts = append(texts, m.Text)
			}
			if more != (next != "") {
				t.Fatalf("has_more %v with next_cursor %q", more, next)
			}
			if !more {
				return texts, pages
			}
			p.Cursor = next
		}
	}
	if got, pages := read(slack.GetConversationRepliesParameters{ChannelID: "C1", Timestamp: root, Limit: 100}); !slices.Equal(got, []string{"m0", "m1", "m2", "m3", "m4"}) || pages != 3 {
		t.Errorf("thread = %q in %d pages, want m0…m4 in 3 (2 a page)", got, pages)
	}
	if got, _ := read(slack.GetConversationRepliesParameters{ChannelID: "C1", Timestamp: root, Latest: last}); !slices.Equal(got, []string{"m0", "m1", "m2", "m3"}) {
		t.Errorf("before the last = %q, want m0…m3 (latest is exclusive)", got)
	}
	if got, _ := read(slack.GetConversationRepliesParameters{ChannelID: "C1", Timestamp: root, Latest: last, Inclusive: true}); len(got) != 5 {
		t.Errorf("inclusive latest = %q, want all 5", got)
	}
	for _, tc := range []struct {
		p    slack.GetConversationRepliesParameters
		want string
	}{
		{slack.GetConversationRepliesParameters{ChannelID: "C1", Timestamp: root, Cursor: "garbage"}, "invalid_cursor"},
		{slack.GetConversationRepliesParameters{ChannelID: "C1", Timestamp: "1.000000"}, "thread_not_found"},
	} {
		if _, _, _, err := api.GetConversationRepliesContext(ctx, &tc.p); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%+v: err = %v, want %s", tc.p, err, tc.want)
		}
	}

	f.AddUser(User{ID: "U1", Name: "ana", RealName: "Ana Lima", DisplayName: "Ana"})
	u, err := api.GetUserInfoContext(ctx, "U1")
	if err != nil || u.Profile.DisplayName != "Ana" || u.RealName != "Ana Lima" {
		t.Errorf("users.info U1 = %+v, %v; want Ana", u, err)
	}
	if _, err := api.GetUserInfoContext(ctx, "U404"); err == nil || !strings.Contains(err.Error(), "user_not_found") {
		t.Errorf("users.info of an unknown user: err = %v, want user_not_found", err)
	}
}

// The assistant methods work in an assistant thread only, within Slack's limits, and the fake
// records them.
func TestFakeAssistantThread(t *testing.T) {
	f := New(t, Config{})
	ctx := context.Background()
	api := slack.New(f.Config().BotToken, slack.OptionAPIURL(f.APIURL()))
	p := f.StartAssistantThread(AssistantStart{User: "U1", Context: "C1"})
	if len(p.Events) != 1 || p.Events[0].Type != "assistant_thread_started" {
		t.Fatalf("events = %+v, want one assistant_thread_started", p.Events)
	}
	if !strings.Contains(string(p.Events[0].Body), `"thread_ts":"`+p.TS+`"`) || !strings.Contains(string(p.Events[0].Body), `"channel_id":"DU1"`) {
		t.Errorf("event body lacks the thread: %s", p.Events[0].Body)
	}
	plain := f.Post(UserMessage{Channel: "DU1", Text: "a DM, not an assistant thread"}).TS
	prompts := func(n int) slack.AssistantThreadsSetSuggestedPromptsParameters {
		q := slack.AssistantThreadsSetSuggestedPromptsParameters{ChannelID: "DU1", ThreadTS: p.TS, Title: "Try"}
		for i := range n {
			q.AddPrompt(fmt.Sprintf("p%d", i), "draw it")
		}
		return q
	}
	for _, tc := range []struct {
		name string
		call func() error
		want string
	}{
		{"status outside an assistant thread", func() error {
			return api.SetAssistantThreadsStatusContext(ctx, slack.AssistantThreadsSetStatusParameters{ChannelID: "DU1", ThreadTS: plain, Status: "is x"})
		}, "invalid_thread_ts"},
		{"five prompts", func() error { return api.SetAssistantThreadsSuggestedPromptsContext(ctx, prompts(5)) }, "invalid_arguments"},
		{"empty title", func() error {
			return api.SetAssistantThreadsTitleContext(ctx, slack.AssistantThreadsSetTitleParameters{ChannelID: "DU1", ThreadTS: p.TS})
		}, "invalid_arguments"},
		{"alt text too long", func() error {
			_, err := api.GetUploadURLExternalContext(ctx, slack.GetUploadURLExternalParameters{FileName: "a.png", FileSize: 3,
				AltTxt: strings.Repeat("x", 1001)})
			return err
		}, "alt_txt_too_large"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if err := tc.call(); err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("err = %v, want %s", err, tc.want)
			}
		})
	}
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(api.SetAssistantThreadsSuggestedPromptsContext(ctx, prompts(3)))
	must(api.SetAssistantThreadsStatusContext(ctx, slack.AssistantThreadsSetStatusParameters{ChannelID: "DU1", ThreadTS: p.TS, Status: "is drawing…"}))
	must(api.SetAssistantThreadsTitleContext(ctx, slack.AssistantThreadsSetTitleParameters{ChannelID: "DU1", ThreadTS: p.TS, Title: "Deploy"}))
	_, _, err := api.PostMessageContext(ctx, "DU1", slack.MsgOptionText("done", false), slack.MsgOptionTS(p.TS))
	must(err)
	th, ok := f.Assistant("DU1", p.TS)
	if !ok {
		t.Fatal("no assistant thread recorded")
	}
	if len(th.Prompts) != 1 || len(th.Prompts[0].Prompts) != 3 || th.Prompts[0].Title != "Try" {
		t.Errorf("prompts = %+v, want 3 under Try", th.Prompts)
	}
	if !slices.Equal(th.Statuses, []string{"is drawing…"}) || th.Status != "" {
		t.Errorf("statuses %q, now %q; want the one set, cleared by the bot's reply", th.Statuses, th.Status)
	}
	if !slices.Equal(th.Titles, []string{"Deploy"}) || th.Context != "C1" || th.User != "U1" {
		t.Errorf("thread = %+v", th)
	}
	ev := f.ChangeAssistantContext("DU1", p.TS, "C2")
	if ev.Type != "assistant_thread_context_changed" || !strings.Contains(string(ev.Body), `"channel_id":"C2"`) {
		t.Errorf("context change event = %s %s", ev.Type, ev.Body)
	}
	if th, _ := f.Assistant("DU1", p.TS); th.Context != "C2" {
		t.Errorf("context = %q after the change, want C2", th.Context)
	}
}
