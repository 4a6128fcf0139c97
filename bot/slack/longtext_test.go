package slack

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/excalibot/excalibot/bot"
	"github.com/excalibot/excalibot/bot/slack/slackfake"
)

// outlineText is a reply text of at least n characters in lines, as describe and history write.
func outlineText(n int) string {
	var sb strings.Builder
	for i := 1; sb.Len() < n; i++ {
		fmt.Fprintf(&sb, "%d. Box %q → Box %q (a step & its next one, labelled <%d>)\n", i, fmt.Sprint("step ", i), fmt.Sprint("step ", i+1), i)
	}
	return strings.TrimSuffix(sb.String(), "\n")
}

// shownText is what the bot's messages show, in order: a message's sections when it has blocks,
// its text otherwise (a file share's comment included); and how many link buttons it showed.
func shownText(t *testing.T, msgs []slackfake.Message) (text string, buttons []int) {
	t.Helper()
	var parts []string
	for i, m := range msgs {
		if m.BotID == "" {
			continue
		}
		if m.Blocks == nil {
			parts = append(parts, m.Text)
			continue
		}
		var blocks []struct {
			Type string `json:"type"`
			Text struct {
				Text string `json:"text"`
			} `json:"text"`
		}
		if err := json.Unmarshal(m.Blocks, &blocks); err != nil {
			t.Fatalf("blocks: %v", err)
		}
		for _, b := range blocks {
			switch b.Type {
			case "section":
				parts = append(parts, b.Text.Text)
			case "actions":
				buttons = append(buttons, i)
			}
		}
	}
	return strings.Join(parts, "\n"), buttons
}

// TestLongReplyArrivesWhole: a reply longer than a section, or a message, holds arrives whole, in
// order, in as few messages as Slack's limits allow, the buttons once, after all of the text; no
// message goes over a limit the fake enforces like Slack.
func TestLongReplyArrivesWhole(t *testing.T) {
	const edit = "https://excalibot.example/edit/x"
	pic := &bot.File{Name: "d-r2.png", MIME: "image/png", Content: pngBytes}
	files := []bot.File{{Name: "d-r2.excalidraw", MIME: "application/json", Content: sceneJSON}}
	for _, tc := range []struct {
		name     string
		reply    bot.Reply
		fail     string // upload failure, for the reply that goes out with a note
		messages int    // the bot's messages in the thread, file shares included
		note     bool
	}{
		{name: "describe, 7000 characters", reply: bot.Reply{Text: outlineText(7000)}, messages: 1},
		{name: "with links, 7000 characters", reply: bot.Reply{Text: outlineText(7000), EditURL: edit}, messages: 1},
		{name: "with links, 30000 characters", reply: bot.Reply{Text: outlineText(30000), EditURL: edit}, messages: 3},
		{name: "picture and links, 7000 characters", reply: bot.Reply{Text: outlineText(7000), Image: pic, Files: files, EditURL: edit}, messages: 2},
		{name: "plain, 50000 characters", reply: bot.Reply{Text: outlineText(50000)}, messages: 2},
		{name: "picture, 50000 characters", reply: bot.Reply{Text: outlineText(50000), Image: pic, Files: files}, messages: 2},
		{name: "files refused, 7000 characters", reply: bot.Reply{Text: outlineText(7000), Image: pic, EditURL: edit},
			fail: "missing_scope", messages: 1, note: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := start(t, ModeSocket, newRecorder(), nil)
			if tc.fail != "" {
				e.fake.Fail("files.getUploadURLExternal", tc.fail, 1)
			}
			key := bot.ThreadKey{Platform: "slack", Workspace: "T0FAKE", Channel: "D1"}
			must(t, e.a.Send(e.ctx, key, tc.reply))
			msgs := e.fake.Thread("D1", "")
			got, buttons := shownText(t, msgs)
			want := escapeText(tc.reply.Text)
			if tc.note {
				if !strings.Contains(got, "I could not attach the picture") {
					t.Errorf("no note on the missing files in:\n%s", got[max(0, len(got)-300):])
				}
				got = got[:strings.LastIndex(got, "\n\n:warning:")]
			}
			if gw, ww := strings.Fields(got), strings.Fields(want); !slices.Equal(gw, ww) {
				i := 0
				for i < min(len(gw), len(ww)) && gw[i] == ww[i] {
					i++
				}
				t.Errorf("shown %d words of %d, the same up to word %d; want all of the reply's text", len(gw), len(ww), i)
			}
			if len(msgs) != tc.messages {
				t.Errorf("messages = %d, want %d", len(msgs), tc.messages)
			}
			if tc.reply.EditURL != "" && !slices.Equal(buttons, []int{len(msgs) - 1}) {
				t.Errorf("buttons in messages %v of %d, want them once, in the last", buttons, len(msgs))
			}
		})
	}
}

// TestLongReplyResumes: each message of a long reply is a step of its own, so a retry after the
// record failed posts only what had not gone out.
func TestLongReplyResumes(t *testing.T) {
	e := start(t, ModeSocket, newRecorder(), nil)
	key := bot.ThreadKey{Platform: "slack", Workspace: "T0FAKE", Channel: "D1"}
	reply := bot.Reply{Text: outlineText(30000), EditURL: "https://excalibot.example/edit/x"}
	var posted []string
	failAt := 2
	record := func(id string, _ ...bot.IndexEntry) error {
		if len(posted) == failAt {
			failAt = -1
			return fmt.Errorf("the store is away")
		}
		posted = append(posted, id)
		return nil
	}
	if err := e.a.SendSteps(e.ctx, key, reply, nil, record); err == nil {
		t.Fatal("SendSteps = nil, want the record's error")
	}
	must(t, e.a.SendSteps(e.ctx, key, reply, slices.Clone(posted), record))
	msgs := e.fake.Thread("D1", "")
	// The third message went out, its record failed, and the retry posted it again: one repeat at
	// most, never the whole reply.
	if len(msgs) != 4 || len(posted) != 3 {
		t.Fatalf("messages = %d, recorded %q; want 4 messages (the unrecorded third twice) and 3 steps", len(msgs), posted)
	}
	got, _ := shownText(t, slices.Delete(slices.Clone(msgs), 2, 3))
	if !slices.Equal(strings.Fields(got), strings.Fields(escapeText(reply.Text))) {
		t.Error("the messages do not hold the reply's text, in order")
	}
}

func TestSplitText(t *testing.T) {
	for _, tc := range []struct {
		name string
		in   string
		n    int
		want []string
	}{
		{"short", "a b c", 10, []string{"a b c"}},
		{"at a paragraph", "aaaa bbbb\n\ncccc dddd", 14, []string{"aaaa bbbb", "cccc dddd"}},
		{"at a line", "aaaaaaa\nbbbb cccc", 12, []string{"aaaaaaa", "bbbb cccc"}},
		{"not at a break near the start", "a\nbbbb cccc dddd", 12, []string{"a\nbbbb cccc", "dddd"}},
		{"at a space", "aaaa bbbb cccc", 10, []string{"aaaa bbbb", "cccc"}},
		{"one long word", "abcdefghij", 4, []string{"abcd", "efgh", "ij"}},
		{"not inside an escape", "abc&amp;def", 5, []string{"abc", "&amp;", "def"}},
		{"not inside a character", "ééééé", 2, []string{"éé", "éé", "é"}},
	} {
		got := splitText(tc.in, tc.n)
		if !slices.Equal(got, tc.want) {
			t.Errorf("%s: splitText(%q, %d) = %q, want %q", tc.name, tc.in, tc.n, got, tc.want)
		}
		for _, p := range got {
			if utf8.RuneCountInString(p) > tc.n || !utf8.ValidString(p) {
				t.Errorf("%s: part %q is over %d characters or not UTF-8", tc.name, p, tc.n)
			}
		}
	}
}
