package slackfake

import (
	"bytes"
	"context"
	"errors"
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
	} {
		if got := checkBlocks(tc.blocks); got != tc.want {
			t.Errorf("%s: checkBlocks = %q, want %q", tc.name, got, tc.want)
		}
	}
}
