package telegram

import (
	"context"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/go-telegram/bot/models"

	"github.com/excalibot/excalibot/bot"
	"github.com/excalibot/excalibot/bot/telegram/tgfake"
	"github.com/excalibot/excalibot/store"
)

// TestGroupUndoWithoutReply: with the real core and store, a plain /undo in a group (no reply)
// steps back the diagram its sender last worked on there, and the answer, replying to the /undo,
// starts with the diagram's title; another member's plain /undo does not touch it, and neither
// does /draw, which starts a diagram of its own.
func TestGroupUndoWithoutReply(t *testing.T) {
	e, st := startWithDrawer(t, nil, &boxDrawer{titled: true})
	chat := group.ID
	// answer waits for the bot's answer to a message posted after message after (its picture, or
	// its text when it has none) and for the working signs to come down, and returns it.
	answer := func(after int) tgfake.Message {
		t.Helper()
		var got tgfake.Message
		ok := e.fake.WaitFor(wait, func() bool {
			got = tgfake.Message{}
			for _, m := range e.fake.Messages(chat) {
				status := m.Text == statusStart || len(m.Edits) > 0 && m.Edits[0] == statusStart
				switch {
				case !m.FromBot || m.ID <= after:
				case status && !m.Deleted:
					return false
				case !status && got.ID == 0 && m.Kind != "document":
					got = m
				}
			}
			return got.ID != 0
		})
		if !ok {
			t.Fatalf("no answer after message %d among %v", after, summary(e.fake.BotMessages(chat)))
		}
		e.rec.settle(t)
		return got
	}
	repliesTo := func(what string, got tgfake.Message, req int) {
		t.Helper()
		if got.ReplyTo != req {
			t.Errorf("%s: the answer replies to %d, want the request %d", what, got.ReplyTo, req)
		}
	}
	key := func(root int) store.ThreadKey {
		return store.ThreadKey{Platform: Platform, Workspace: "-", Channel: strconv.FormatInt(chat, 10), Thread: "0:" + strconv.Itoa(root)}
	}
	rev := func(root int) int64 {
		t.Helper()
		th, err := st.Load(t.Context(), key(root))
		if err != nil {
			t.Fatal(err)
		}
		return th.Rev
	}

	first := e.fake.Send(tgfake.Post{Chat: chat, From: alice, Text: "@draw_bot Deploy pipeline"})
	if p := answer(first.MessageID); !strings.HasPrefix(p.Text, "1 boxes.") {
		t.Fatalf("first request: %q, want the first box, without a title (it started the diagram)", p.Text)
	}
	// A follow-up without a reply goes on with Alice's diagram, and says which.
	more := e.fake.Send(tgfake.Post{Chat: chat, From: alice, Text: "@draw_bot another one"})
	p := answer(more.MessageID)
	if !strings.HasPrefix(p.Text, "‘Deploy pipeline’ — 2 boxes.") {
		t.Fatalf("follow-up without a reply: %q, want the second box in the diagram it names", p.Text)
	}
	repliesTo("follow-up", p, more.MessageID)

	// Bob has no diagram here: his /undo is told so and Alice's is untouched.
	bobUndo := e.fake.Send(tgfake.Post{Chat: chat, From: bob, Text: "/undo"})
	got := answer(bobUndo.MessageID)
	if !strings.Contains(got.Text, "There is no diagram") {
		t.Errorf("Bob's /undo: %q, want that he has no diagram here", got.Text)
	}
	repliesTo("Bob's /undo", got, bobUndo.MessageID)
	if r := rev(first.MessageID); r != 2 {
		t.Errorf("after Bob's /undo Alice's diagram is at revision %d, want 2", r)
	}

	// Alice's plain /undo steps her diagram back.
	undo := e.fake.Send(tgfake.Post{Chat: chat, From: alice, Text: "/undo"})
	got = answer(undo.MessageID)
	if want := "‘Deploy pipeline’ — Undid the last change (added 1 box): back to revision 1.\n\nDiagram with 1 box."; got.Kind != "photo" || got.Text != want {
		t.Errorf("Alice's /undo: %s %q, want the picture of the revision before, captioned %q (the title once)", got.Kind, got.Text, want)
	}
	repliesTo("Alice's /undo", got, undo.MessageID)
	if r := rev(first.MessageID); r != 1 {
		t.Errorf("after Alice's /undo her diagram is at revision %d, want 1", r)
	}

	// /draw starts a new diagram; the next plain command goes to that one.
	draw := e.fake.Send(tgfake.Post{Chat: chat, From: alice, Text: "/draw a queue"})
	answer(draw.MessageID)
	hist := e.fake.Send(tgfake.Post{Chat: chat, From: alice, Text: "/history"})
	if got := answer(hist.MessageID); len(revLine.FindAllString(got.Text, -1)) != 1 {
		t.Errorf("/history after /draw: %q, want the new diagram's single revision", got.Text)
	}
	if r := rev(draw.MessageID); r != 1 {
		t.Errorf("the /draw diagram is at revision %d, want 1", r)
	}
	if r := rev(first.MessageID); r != 1 {
		t.Errorf("after /draw Alice's first diagram is at revision %d, want 1 still", r)
	}

	// /new starts an empty diagram, which the next plain request draws in (and names: it was
	// given Alice's last diagram, the new one).
	fresh := e.fake.Send(tgfake.Post{Chat: chat, From: alice, Text: "/new"})
	if got := answer(fresh.MessageID); !strings.Contains(got.Text, "There is no diagram") {
		t.Errorf("/new: %q, want that the new diagram is empty", got.Text)
	}
	next := e.fake.Send(tgfake.Post{Chat: chat, From: alice, Text: "@draw_bot a cache"})
	if got := answer(next.MessageID); !strings.HasPrefix(got.Text, "‘a cache’ — 1 boxes.") {
		t.Errorf("request after /new: %q, want the first box of a new diagram", got.Text)
	}
	if r := rev(fresh.MessageID); r != 1 {
		t.Errorf("the diagram /new started is at revision %d, want 1", r)
	}
	if r := rev(draw.MessageID); r != 1 {
		t.Errorf("after /new the /draw diagram is at revision %d, want 1 still", r)
	}
}

// revLine is a revision's line in the answer to history.
var revLine = regexp.MustCompile(`(?m)^\s*\d+\. `)

// titledReply answers like the core once it names diagrams: the reply carries the diagram's title
// and the request it answers.
func titledReply(ctx context.Context, a bot.Adapter, m bot.Message) error {
	return a.Send(ctx, m.Key, bot.Reply{
		Text:    "Undone: back to revision 1.",
		Image:   &bot.File{Name: "deploy-pipeline-r1.png", MIME: "image/png", Content: smallPNG()},
		Title:   "Deploy pipeline",
		ReplyTo: m.ID,
	})
}

// TestAnswerNamesThePickedDiagram: the answer to a message that did not reply into its thread,
// and was given its sender's last diagram, starts with the diagram's title; an answer to a reply,
// or to a request that started its thread, does not.
func TestAnswerNamesThePickedDiagram(t *testing.T) {
	e := start(t, nil)
	e.rec.mu.Lock()
	e.rec.reply = titledReply
	e.rec.mu.Unlock()
	topic := e.fake.CreateTopic(forum.ID, "Infra")
	chat := forum.ID
	post := func(p tgfake.Post) (tgfake.Sent, bot.Message) {
		t.Helper()
		p.Chat, p.Topic = chat, topic
		sent := e.fake.Send(p)
		return sent, e.rec.next(t)
	}
	captionFor := func(id int) string {
		t.Helper()
		e.rec.settle(t)
		for _, m := range e.fake.BotMessages(chat) {
			if m.ReplyTo == id {
				return m.Text
			}
		}
		t.Fatalf("no answer to %d: %v", id, summary(e.fake.BotMessages(chat)))
		return ""
	}

	req, m1 := post(tgfake.Post{From: alice, Text: "/draw the deploy pipeline"})
	if got := captionFor(req.MessageID); got != "Undone: back to revision 1." {
		t.Errorf("answer to the request that started the diagram: %q, want no title", got)
	}
	undo, m2 := post(tgfake.Post{From: alice, Text: "/undo"})
	if m2.Key != m1.Key {
		t.Fatalf("plain /undo: thread %q, want Alice's %q", m2.Key.Thread, m1.Key.Thread)
	}
	if got, want := captionFor(undo.MessageID), "‘Deploy pipeline’ — Undone: back to revision 1."; got != want {
		t.Errorf("answer to a plain /undo: %q, want %q", got, want)
	}
	var picture int
	for _, m := range e.fake.BotMessages(chat) {
		if m.ReplyTo == undo.MessageID {
			picture = m.ID
		}
	}
	// A reply to the answer (itself the answer to a picked request) continues the thread, and
	// the reply says which diagram by where it is: no title.
	again, m3 := post(tgfake.Post{From: bob, ReplyTo: picture, Text: "undo"})
	if m3.Key != m1.Key {
		t.Errorf("reply to the answer of a plain /undo: thread %q, want %q", m3.Key.Thread, m1.Key.Thread)
	}
	if got := captionFor(again.MessageID); got != "Undone: back to revision 1." {
		t.Errorf("answer to a reply: %q, want no title", got)
	}
	// Outside the topic Alice has no diagram: a new thread, in the chat's main part.
	e.fake.Send(tgfake.Post{Chat: chat, From: alice, Text: "@draw_bot undo"})
	if m := e.rec.next(t); m.Key == m1.Key || !strings.HasPrefix(m.Key.Thread, "0:") {
		t.Errorf("outside the topic: thread %q, want a new one outside topic %d", m.Key.Thread, topic)
	}
}

// untitledReply answers like the core for a diagram without a title.
func untitledReply(ctx context.Context, a bot.Adapter, m bot.Message) error {
	return a.Send(ctx, m.Key, bot.Reply{
		Text:    "Undone: back to revision 1.",
		Image:   &bot.File{Name: "diagram-r1.png", MIME: "image/png", Content: smallPNG()},
		ReplyTo: m.ID,
	})
}

// TestAnswerNamesAnUntitledDiagram: when the picked diagram has no title, the answer names it by
// a short quote of the request that started it, or, when the adapter does not have that request
// (a thread started by /new), as the sender's last diagram. Answers that need no name get none.
func TestAnswerNamesAnUntitledDiagram(t *testing.T) {
	e := start(t, nil)
	e.rec.mu.Lock()
	e.rec.reply = untitledReply
	e.rec.mu.Unlock()
	chat := group.ID
	post := func(from models.User, text string) int {
		t.Helper()
		sent := e.fake.Send(tgfake.Post{Chat: chat, From: from, Text: text})
		e.rec.next(t)
		return sent.MessageID
	}
	captionFor := func(id int) string {
		t.Helper()
		e.rec.settle(t)
		for _, m := range e.fake.BotMessages(chat) {
			if m.ReplyTo == id {
				return m.Text
			}
		}
		t.Fatalf("no answer to %d: %v", id, summary(e.fake.BotMessages(chat)))
		return ""
	}
	tests := []struct {
		from models.User
		text string
		want string
	}{
		{alice, "/draw our deploy pipeline with a blue-green switch", "Undone: back to revision 1."},
		{alice, "/undo", "Your diagram ‘draw our deploy pipeline with a…’ — Undone: back to revision 1."},
		{alice, "/help", "Undone: back to revision 1."}, // about no diagram: named none
		{bob, "@draw_bot  a login\nsequence", "Undone: back to revision 1."},
		{bob, "@draw_bot undo", "Your diagram ‘a login sequence’ — Undone: back to revision 1."},
		{alice, "/new", "Undone: back to revision 1."},
		{alice, "/undo", "Your last diagram — Undone: back to revision 1."},
	}
	for _, tc := range tests {
		if got := captionFor(post(tc.from, tc.text)); got != tc.want {
			t.Errorf("%s's %q: answer %q, want %q", tc.from.FirstName, tc.text, got, tc.want)
		}
	}
}

// TestQuoteRequest: a request is quoted short, on one line, without the command's slash.
func TestQuoteRequest(t *testing.T) {
	tests := []struct{ text, want string }{
		{"/draw our deploy pipeline", "draw our deploy pipeline"},
		{"/DRAW@draw_bot a flow", "draw a flow"},
		{"draw  a\nflow ", "draw a flow"},
		{"/drawing board", "/drawing board"},
		{"draw " + strings.Repeat("x", 60), "draw " + strings.Repeat("x", maxQuotedRequest-6) + "…"},
		{"нарисуй схему развёртывания нашего сервиса целиком", "нарисуй схему развёртывания…"},
		{"", ""},
	}
	for _, tc := range tests {
		if got := quoteRequest(tc.text); got != tc.want {
			t.Errorf("quoteRequest(%q) = %q, want %q", tc.text, got, tc.want)
		}
	}
}
