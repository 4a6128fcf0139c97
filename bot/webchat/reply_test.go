package webchat

import (
	"context"
	"mime"
	"net/http"
	"strings"
	"testing"

	"github.com/excalibot/excalibot/bot"
	"github.com/excalibot/excalibot/bot/bottest"
)

// TestChatReplyNamesAndAlt: a reply's picture carries the core's alt text and is served under
// the core's file name, shown in the page; its files download under theirs (a name in any
// script survives the header); the diagram's title becomes the thread's.
func TestChatReplyNamesAndAlt(t *testing.T) {
	ce := startChat(t, &bottest.BoxDrawer{}, bot.Options{}, Options{})
	const thread = "thread-names-1"
	key := uploadKey(thread)
	pic := photo(t)
	r := bot.Reply{
		Text:  "Drew the deploy pipeline.",
		Image: &bot.File{Name: "deploy-pipeline-r3.png", MIME: "image/png", Content: pic},
		Files: []bot.File{{Name: "deploy-pipeline-r3.excalidraw", MIME: "application/vnd.excalidraw+json", Content: []byte("{}")},
			{Name: "схема-r1.svg", MIME: "image/svg+xml", Content: []byte("<svg/>")}},
		Alt:   "A flowchart of 3 steps: Build, Test and Deploy, each leading to the next.",
		Title: "Deploy pipeline",
	}
	if err := ce.chat.Send(context.Background(), key, r); err != nil {
		t.Fatal(err)
	}
	th, _ := ce.thread(upSession, thread)
	if len(th.Messages) != 1 {
		t.Fatalf("thread %+v, want the reply", th)
	}
	m := th.Messages[0]
	if m.Alt != r.Alt || m.ImageName != "deploy-pipeline-r3.png" || th.Title != "Deploy pipeline" {
		t.Errorf("got alt %q, picture name %q, thread title %q; want the reply's alt, its picture's name and its title", m.Alt, m.ImageName, th.Title)
	}
	// A picture the core could not describe still says what it is.
	if err := ce.chat.Send(context.Background(), key, bot.Reply{Image: r.Image, Title: "Deploy pipeline"}); err != nil {
		t.Fatal(err)
	}
	if th, _ := ce.thread(upSession, thread); th.Messages[1].Alt != "Diagram: Deploy pipeline" {
		t.Errorf("alt of a picture without a description = %q, want %q", th.Messages[1].Alt, "Diagram: Deploy pipeline")
	}
	for _, tc := range []struct{ url, disposition, name, mime string }{
		{m.Image, "inline", "deploy-pipeline-r3.png", "image/png"},
		{m.Files[0].URL, "attachment", "deploy-pipeline-r3.excalidraw", "application/vnd.excalidraw+json"},
		{m.Files[1].URL, "attachment", "схема-r1.svg", "image/svg+xml"},
	} {
		res := ce.do(t, "GET", tc.url, nil, nil)
		disp, params, err := mime.ParseMediaType(res.Header.Get("Content-Disposition"))
		if res.StatusCode != http.StatusOK || err != nil || disp != tc.disposition || params["filename"] != tc.name || res.Header.Get("Content-Type") != tc.mime {
			t.Errorf("GET %s: %d, %q (%v), %q; want %s with filename %q as %s", tc.url, res.StatusCode,
				res.Header.Get("Content-Disposition"), err, res.Header.Get("Content-Type"), tc.disposition, tc.name, tc.mime)
		}
	}

	// A reply without a title leaves the thread's; one without a picture has no alt to carry.
	if err := ce.chat.Send(context.Background(), key, bot.Reply{Text: "There is nothing to undo.", Alt: "ignored"}); err != nil {
		t.Fatal(err)
	}
	th, _ = ce.thread(upSession, thread)
	if last := th.Messages[len(th.Messages)-1]; th.Title != "Deploy pipeline" || last.Alt != "" || strings.Contains(last.Image, "/") {
		t.Errorf("text reply: title %q, message %+v; want the title kept and no picture or alt", th.Title, last)
	}
}

// TestChatThreadFollowsLatestTitle: the thread's name is the latest reply's title, so showing an
// older revision brings its title back; a blank title leaves the name as it is.
func TestChatThreadFollowsLatestTitle(t *testing.T) {
	ce := startChat(t, &bottest.BoxDrawer{}, bot.Options{}, Options{})
	const thread = "thread-titles-1"
	key := uploadKey(thread)
	for _, tc := range []struct{ title, want string }{
		{"Deploy pipeline", "Deploy pipeline"},
		{"Release train", "Release train"},
		{"Deploy pipeline", "Deploy pipeline"},
		{"  \t ", "Deploy pipeline"},
		{"  Org   chart ", "Org chart"},
	} {
		if err := ce.chat.Send(context.Background(), key, bot.Reply{Text: "ok", Title: tc.title}); err != nil {
			t.Fatal(err)
		}
		if th, _ := ce.thread(upSession, thread); th.Title != tc.want {
			t.Errorf("after a reply titled %q: thread title %q, want %q", tc.title, th.Title, tc.want)
		}
	}
}

// TestChatAdopt: a message another process kept and did not answer joins this process's memory
// of its thread (its text and its upload's name, under its own id, titling a new thread), once
// however often it is adopted, and a reply then follows it; a key that is not a chat's is ignored.
func TestChatAdopt(t *testing.T) {
	ce := startChat(t, &bottest.BoxDrawer{}, bot.Options{}, Options{})
	const thread = "thread-adopt-1"
	key := uploadKey(thread)
	msg := bot.Message{Key: key, ID: "msg-adopted-1", Text: "draw our deploy pipeline",
		Files: []bot.Attachment{{Name: "whiteboard.jpg", Size: 1234, Ref: "up-1"}}}
	ce.chat.Adopt(context.Background(), msg)
	ce.chat.Adopt(context.Background(), msg)
	ce.chat.Adopt(context.Background(), bot.Message{Key: bot.ThreadKey{Platform: "slack", Workspace: "T1", Channel: "C1"}, Text: "elsewhere"})
	if err := ce.chat.Send(context.Background(), key, bot.Reply{Text: "Drew it."}); err != nil {
		t.Fatal(err)
	}
	th, _ := ce.thread(upSession, thread)
	var got []string
	for _, m := range th.Messages {
		s := m.From + ": " + m.Text
		if m.Upload != nil {
			s += " [" + m.Upload.Name + "]"
		}
		got = append(got, s)
	}
	want := []string{"you: draw our deploy pipeline [whiteboard.jpg]", "bot: Drew it."}
	if strings.Join(got, "\n") != strings.Join(want, "\n") || th.Title != "draw our deploy pipeline" {
		t.Errorf("thread %q titled %q, want %q titled by the adopted message", got, th.Title, want)
	}
}
