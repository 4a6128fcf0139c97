package telegram

import (
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/go-telegram/bot/models"

	"github.com/excalibot/excalibot/bot"
	"github.com/excalibot/excalibot/bot/telegram/tgfake"
	"github.com/excalibot/excalibot/store"
)

// saidText is a discussion as "author: text" lines, for comparing.
func saidText(d bot.Discussion) string {
	var lines []string
	for _, s := range d.Said {
		lines = append(lines, s.Author+": "+s.Text)
	}
	return strings.Join(lines, "\n")
}

// TestDiscussionFromSeenMessages: with privacy mode off the bot receives a group's whole
// discussion; Discussion returns what was said before the request, oldest first, with display
// names, without commands to the bot, the bot's own answers, other topics, or what came after.
func TestDiscussionFromSeenMessages(t *testing.T) {
	fake := tgfake.New(token)
	t.Cleanup(fake.Close)
	fake.AddChat(forum)
	fake.SetPrivacy(false)
	e := startOn(t, fake, nil)
	if !e.a.readsAll() {
		t.Fatal("getMe did not report can_read_all_group_messages")
	}
	topic := fake.CreateTopic(forum.ID, "Infra")
	other := fake.CreateTopic(forum.ID, "Random")
	say := func(from models.User, in int, text string) {
		fake.Send(tgfake.Post{Chat: forum.ID, From: from, Topic: in, Text: text})
	}
	say(alice, topic, "The API talks to Postgres directly.")
	say(bob, other, "lunch?")
	say(bob, topic, "We should put Redis in front of it.")
	say(alice, topic, "@draw_bot draw the API and its database") // a request: part of the discussion
	e.rec.next(t)
	e.rec.settle(t)                     // the bot answered in the topic: its messages are never read back
	say(bob, topic, "/undo")            // a command: not discussion
	say(alice, 0, "Outside any topic.") // the chat's general part
	say(models.User{ID: 103, Username: "carol"}, topic, "And a queue for the mails.")
	say(alice, topic, "@draw_bot draw this thread")
	e.rec.next(t)
	req := e.rec.next(t)
	say(bob, topic, "after the request")
	e.rec.settle(t)

	d, err := e.a.Discussion(t.Context(), req, bot.DiscussionLimit{Messages: 50, Chars: 10_000})
	if err != nil {
		t.Fatal(err)
	}
	want := strings.Join([]string{
		"Alice: The API talks to Postgres directly.",
		"Bob: We should put Redis in front of it.",
		"Alice: draw the API and its database",
		"carol: And a queue for the mails.",
	}, "\n")
	if got := saidText(d); got != want || d.Note != "" {
		t.Errorf("discussion\n got %q (note %q)\nwant %q (no note)", got, d.Note, want)
	}
	for _, s := range d.Said {
		if s.At.IsZero() || time.Since(s.At) > time.Hour {
			t.Errorf("%q said at %v, want the message's date", s.Text, s.At)
		}
	}

	// The limits keep the latest: two messages, or as many as fit the characters.
	d, _ = e.a.Discussion(t.Context(), req, bot.DiscussionLimit{Messages: 2, Chars: 10_000})
	if got := saidText(d); got != "Alice: draw the API and its database\ncarol: And a queue for the mails." {
		t.Errorf("two messages: got %q, want the latest two", got)
	}
	d, _ = e.a.Discussion(t.Context(), req, bot.DiscussionLimit{Messages: 50, Chars: len("And a queue for the mails.") + 5})
	if got := saidText(d); got != "Alice: …base\ncarol: And a queue for the mails." {
		t.Errorf("few characters: got %q, want the latest message and the end of the one before", got)
	}
}

// TestDiscussionPrivacyNote: with privacy mode on (getMe: can_read_all_group_messages false) the
// bot hears only what is addressed to it, and a short discussion comes with a note that says why
// and how to change it. A bot that hears the chatter anyway (an admin) gets no note.
func TestDiscussionPrivacyNote(t *testing.T) {
	e := start(t, nil)
	if e.a.readsAll() {
		t.Fatal("getMe reported can_read_all_group_messages with privacy mode on")
	}
	e.rec.silence()
	e.fake.Send(tgfake.Post{Chat: group.ID, From: bob, Text: "We should put Redis in front of it."}) // never delivered
	e.fake.Send(tgfake.Post{Chat: group.ID, From: alice, Text: "@draw_bot draw this thread"})
	req := e.rec.next(t)
	d, err := e.a.Discussion(t.Context(), req, bot.DiscussionLimit{Messages: 50, Chars: 10_000})
	if err != nil {
		t.Fatal(err)
	}
	if len(d.Said) != 0 || d.Note != notePrivacy {
		t.Errorf("privacy mode on: got %q with note %q, want nothing and the privacy note", saidText(d), d.Note)
	}
	for _, w := range []string{"privacy mode", "/setprivacy", "@BotFather", "Disable", "removed from the group and added again"} {
		if !strings.Contains(d.Note, w) {
			t.Errorf("the privacy note does not say %q: %q", w, d.Note)
		}
	}

	// Requests addressed to the bot are all it hears: however many there are, Bob's messages
	// between them are missing, and the note still says why.
	for _, text := range []string{"@draw_bot draw a box", "@draw_bot add a cache", "@draw_bot make it red"} {
		e.fake.Send(tgfake.Post{Chat: group.ID, From: alice, Text: text})
		e.rec.next(t)
		e.fake.Send(tgfake.Post{Chat: group.ID, From: bob, Text: "and a queue"}) // never delivered
	}
	e.fake.Send(tgfake.Post{Chat: group.ID, From: alice, Text: "@draw_bot draw this thread"})
	req = e.rec.next(t)
	d, _ = e.a.Discussion(t.Context(), req, bot.DiscussionLimit{Messages: 50, Chars: 10_000})
	if len(d.Said) < littleToRead || d.Note != notePrivacy {
		t.Errorf("privacy mode on after %d requests: got note %q, want the privacy note", len(d.Said), d.Note)
	}

	// The bot is made an admin: it receives the chatter although getMe still says privacy mode.
	e.fake.SetPrivacy(false)
	e.fake.Send(tgfake.Post{Chat: group.ID, From: bob, Text: "quiet here"})
	e.fake.Send(tgfake.Post{Chat: group.ID, From: alice, Text: "@draw_bot draw this thread"})
	req = e.rec.next(t)
	d, _ = e.a.Discussion(t.Context(), req, bot.DiscussionLimit{Messages: 50, Chars: 10_000})
	if got := saidText(d); !strings.HasSuffix(got, "Bob: quiet here") || d.Note != "" {
		t.Errorf("bot that hears all: got %q with note %q, want Bob's message and no note", got, d.Note)
	}

	// A private chat has no privacy mode: a short discussion there is just short.
	e.fake.Send(tgfake.Post{Chat: dmChat.ID, From: alice, Text: "draw this thread"})
	dm := e.rec.next(t)
	if d, _ := e.a.Discussion(t.Context(), dm, bot.DiscussionLimit{Messages: 50, Chars: 10_000}); d.Note != "" || len(d.Said) != 0 {
		t.Errorf("private chat: got %q with note %q, want nothing, no note", saidText(d), d.Note)
	}
}

// TestDiscussionNotReceivedHere: a request this process never received (it came before a restart,
// or to another replica) gets the note that the record is in memory; a key from elsewhere is an
// error.
func TestDiscussionNotReceivedHere(t *testing.T) {
	a, _, _ := sendOnly(t)
	msg := bot.Message{Key: bot.ThreadKey{Platform: Platform, Channel: "-1001", Thread: "0:40"}, ID: "41"}
	d, err := a.Discussion(t.Context(), msg, bot.DiscussionLimit{Messages: 50, Chars: 10_000})
	if err != nil || d.Note != noteMemory || len(d.Said) != 0 {
		t.Errorf("unreceived request: got %q, note %q, err %v; want nothing and the memory note", saidText(d), d.Note, err)
	}
	if _, err := a.Discussion(t.Context(), bot.Message{Key: bot.ThreadKey{Platform: "slack", Channel: "C1"}}, bot.DiscussionLimit{}); err == nil {
		t.Error("a Slack thread: got no error")
	}
	if _, err := a.Discussion(t.Context(), bot.Message{Key: msg.Key, ID: "x"}, bot.DiscussionLimit{}); err == nil {
		t.Error("a message id that is not a number: got no error")
	}
}

// seenPost is a message for the seen log's unit tests.
func seenPost(chat int64, id int, text string) *models.Message {
	return &models.Message{ID: id, Chat: models.Chat{ID: chat, Type: models.ChatTypeSupergroup}, From: &bob, Text: text, Date: 1_700_000_000 + id}
}

// TestSeenLogBounds: the record keeps the latest messages of each chat within its count and
// characters, holds all chats within its bytes by forgetting the chat written to longest ago,
// keeps a redelivered message once and the messages in id order.
func TestSeenLogBounds(t *testing.T) {
	s := newSeenLog()
	s.perChat, s.charsPerChat, s.maxBytes = 3, 25, 1000
	all := bot.DiscussionLimit{}
	got := func(chat int64) string {
		said, _, _ := s.before(convRef{chat, 0}, 0, all)
		return saidText(bot.Discussion{Said: said})
	}
	for i, text := range []string{"one", "two", "three", "four"} {
		s.add(seenPost(-1, i+1, text), "Bob", text, false, time.Time{})
	}
	if g := got(-1); g != "Bob: two\nBob: three\nBob: four" {
		t.Errorf("count bound: got %q, want the latest three", g)
	}
	s.add(seenPost(-1, 5, strings.Repeat("x", 20)), "Bob", strings.Repeat("x", 20), false, time.Time{})
	if g := got(-1); g != "Bob: four\nBob: "+strings.Repeat("x", 20) {
		t.Errorf("character bound: got %q, want what fits 25 characters", g)
	}
	s.add(seenPost(-1, 5, "again"), "Bob", "again", false, time.Time{}) // redelivered: kept once
	s.add(seenPost(-1, 3, "l"), "Bob", "l", false, time.Time{})         // an older id arriving late
	if g := got(-1); g != "Bob: l\nBob: four\nBob: "+strings.Repeat("x", 20) {
		t.Errorf("redelivery and order: got %q", g)
	}

	// Across chats: each chat costs its messages' bytes plus overhead; the oldest chat goes.
	s = newSeenLog()
	s.maxBytes = 5 * (seenOverhead + seenOverhead + len("Bob") + 10)
	for chat := int64(1); chat <= 6; chat++ {
		s.add(seenPost(-chat, 1, "0123456789"), "Bob", "0123456789", false, time.Time{})
	}
	if got(-1) != "" || got(-2) == "" || got(-6) == "" {
		t.Errorf("byte bound: chat -1 %q, -2 %q, -6 %q; want the first forgotten, the others kept", got(-1), got(-2), got(-6))
	}
	if s.bytes > s.maxBytes {
		t.Errorf("%d bytes held, more than %d", s.bytes, s.maxBytes)
	}
	// Writing to a chat makes it the newest: chat -2 stays, -3 goes.
	s.add(seenPost(-2, 2, "0123456789"), "Bob", "0123456789", false, time.Time{})
	s.add(seenPost(-7, 1, "0123456789"), "Bob", "0123456789", false, time.Time{})
	if got(-2) == "" || got(-3) != "" {
		t.Errorf("after writing to chat -2: -2 %q, -3 %q; want -2 kept, -3 forgotten", got(-2), got(-3))
	}
}

// TestSeenLogMemory: a flood of 20 000 messages of 1 000 bytes over 5 000 chats stays within the
// byte bound, and the bookkeeping adds up.
func TestSeenLogMemory(t *testing.T) {
	s := newSeenLog()
	text := strings.Repeat("é", 500) // 1 000 bytes
	for i := range 20_000 {
		s.add(seenPost(int64(-1-i%5000), i+1, text), "Somebody", text, false, time.Time{})
	}
	if s.bytes > seenBytes || len(s.convs) != s.order.Len() {
		t.Errorf("%d bytes in %d chats (%d in order), want at most %d", s.bytes, len(s.convs), s.order.Len(), seenBytes)
	}
	total := 0
	for _, el := range s.convs {
		total += el.Value.(*conv).bytes
	}
	if total != s.bytes {
		t.Errorf("chats hold %d bytes, the count says %d", total, s.bytes)
	}
}

// TestSeenOnlyInAllowedChats: the chatter of a chat outside the allowlist is not kept.
func TestSeenOnlyInAllowedChats(t *testing.T) {
	e := start(t, func(c *Config) { c.Chats = []string{"-1001"} })
	e.fake.SetPrivacy(false)
	e.rec.silence()
	e.fake.Send(tgfake.Post{Chat: forum.ID, From: bob, Text: "not allowed here"})
	e.fake.Send(tgfake.Post{Chat: group.ID, From: bob, Text: "allowed here"})
	e.fake.Send(tgfake.Post{Chat: group.ID, From: alice, Text: "@draw_bot draw this thread"})
	req := e.rec.next(t)
	d, _ := e.a.Discussion(t.Context(), req, bot.DiscussionLimit{Messages: 50, Chars: 10_000})
	if got := saidText(d); got != "Bob: allowed here" {
		t.Errorf("allowed chat: got %q, want Bob's message", got)
	}
	if said, _, _ := e.a.seen.before(convRef{forum.ID, 0}, 0, bot.DiscussionLimit{}); len(said) != 0 {
		t.Errorf("chat outside the allowlist: kept %q, want nothing", saidText(bot.Discussion{Said: said}))
	}
}

// TestSeenOnlyFromAllowedSenders: with a user allowlist and no chat allowlist, what a sender
// outside it says in a group is not kept, whether or not it is addressed to the bot; what allowed
// senders say is. Strangers' chatter still shows that the bot hears the whole group, so a short
// discussion does not blame privacy mode.
func TestSeenOnlyFromAllowedSenders(t *testing.T) {
	e := start(t, func(c *Config) { c.Users = []string{strconv.FormatInt(alice.ID, 10)} })
	e.fake.SetPrivacy(false)
	e.rec.silence()
	e.fake.Send(tgfake.Post{Chat: group.ID, From: bob, Text: "Bob is not on the list."})
	e.fake.Send(tgfake.Post{Chat: group.ID, From: alice, Text: "Alice is."})
	e.fake.Send(tgfake.Post{Chat: group.ID, From: bob, Text: "@draw_bot draw Bob's idea"}) // refused
	e.fake.Send(tgfake.Post{Chat: group.ID, From: alice, Text: "@draw_bot draw this thread"})
	req := e.rec.next(t)
	d, err := e.a.Discussion(t.Context(), req, bot.DiscussionLimit{Messages: 50, Chars: 10_000})
	if err != nil {
		t.Fatal(err)
	}
	if got := saidText(d); got != "Alice: Alice is." {
		t.Errorf("discussion: got %q, want Alice's message only", got)
	}

	// Only strangers talked in another group: nothing is kept, and nothing blames privacy mode.
	other := models.Chat{ID: -1009, Type: models.ChatTypeGroup, Title: "Other"}
	e.fake.AddChat(other)
	e.fake.Send(tgfake.Post{Chat: other.ID, From: bob, Text: "Only Bob here."})
	e.fake.Send(tgfake.Post{Chat: other.ID, From: alice, Text: "@draw_bot draw this thread"})
	req = e.rec.next(t)
	d, _ = e.a.Discussion(t.Context(), req, bot.DiscussionLimit{Messages: 50, Chars: 10_000})
	if len(d.Said) != 0 {
		t.Errorf("a group where only a stranger talked: kept %q, want nothing", saidText(d))
	}
	me := *e.a.me.Load()
	me.CanReadAllGroupMessages = false // as for an admin bot with privacy mode on
	e.a.me.Store(&me)
	d, _ = e.a.Discussion(t.Context(), req, bot.DiscussionLimit{Messages: 50, Chars: 10_000})
	if d.Note == notePrivacy {
		t.Errorf("a bot that received a stranger's chatter: got the privacy note, want none")
	}
}

// TestDrawThisThreadWithCore: through the real core, "draw this thread" in a group reads what the
// adapter received before it (with privacy mode off) into the drawing request, in a new diagram
// rather than over the sender's last one, and the answer says what it used; with privacy mode on
// and nothing to read, the answer explains privacy mode.
func TestDrawThisThreadWithCore(t *testing.T) {
	t.Run("privacy mode off", func(t *testing.T) {
		d := &boxDrawer{}
		e, st := startWithDrawer(t, nil, d)
		e.fake.SetPrivacy(false)
		chat := group.ID
		first := e.fake.Send(tgfake.Post{Chat: chat, From: alice, Text: "@draw_bot draw a box"})
		waitAnswer(t, e, chat, first.MessageID)
		e.fake.Send(tgfake.Post{Chat: chat, From: bob, Text: "The API talks to Postgres directly."})
		e.fake.Send(tgfake.Post{Chat: chat, From: models.User{ID: 103, FirstName: "Carol"}, Text: "Put Redis in front of it."})
		ask := e.fake.Send(tgfake.Post{Chat: chat, From: alice, Text: "@draw_bot draw this thread"})
		got := waitAnswer(t, e, chat, ask.MessageID)
		if !strings.Contains(got.Text, "From the 3 messages above.") {
			t.Errorf("answer: %q, want it to say it drew from the 3 messages above", got.Text)
		}
		d.mu.Lock()
		talk := strings.Join(d.discussions, "|")
		d.mu.Unlock()
		want := "Alice: draw a box\nBob: The API talks to Postgres directly.\nCarol: Put Redis in front of it."
		if talk != want {
			t.Errorf("the drawer read\n%q\nwant\n%q", talk, want)
		}
		// A diagram of its own: Alice's first diagram is still at its first revision.
		th, err := st.Load(t.Context(), store.ThreadKey{Platform: Platform, Workspace: "-", Channel: strconv.FormatInt(chat, 10), Thread: "0:" + strconv.Itoa(first.MessageID)})
		if err != nil || th.Rev != 1 {
			t.Errorf("Alice's first diagram after draw this thread: revision %d (%v), want 1", th.Rev, err)
		}
	})
	t.Run("privacy mode on", func(t *testing.T) {
		e, _ := startWithCore(t, nil)
		chat := group.ID
		e.fake.Send(tgfake.Post{Chat: chat, From: bob, Text: "The API talks to Postgres directly."}) // not for the bot
		ask := e.fake.Send(tgfake.Post{Chat: chat, From: alice, Text: "@draw_bot draw this thread"})
		got := waitAnswer(t, e, chat, ask.MessageID)
		if !strings.Contains(got.Text, "privacy mode is on") || !strings.Contains(got.Text, "/setprivacy") {
			t.Errorf("answer: %q, want it to explain privacy mode", got.Text)
		}
	})
}

// waitAnswer waits for the bot's first message replying to message id (not its status message)
// and returns it once the working signs are down.
func waitAnswer(t *testing.T, e *env, chat int64, id int) tgfake.Message {
	t.Helper()
	var got tgfake.Message
	ok := e.fake.WaitFor(wait, func() bool {
		got = tgfake.Message{}
		for _, m := range e.fake.Messages(chat) {
			status := m.Text == statusStart || len(m.Edits) > 0 && m.Edits[0] == statusStart
			switch {
			case !m.FromBot || m.ReplyTo != id:
			case status && !m.Deleted:
				return false
			case !status && got.ID == 0:
				got = m
			}
		}
		return got.ID != 0
	})
	if !ok {
		t.Fatalf("no answer to message %d among %v", id, summary(e.fake.BotMessages(chat)))
	}
	return got
}

// TestDiscussionRequestsFollowTheCore: which group requests start a diagram of their own as
// "draw this thread" is the core's rule (bot.AsksForDiscussion) and nothing else, so the adapter
// routes a request exactly as the core will read it, borderline texts included, whichever way
// the core decides them.
func TestDiscussionRequestsFollowTheCore(t *testing.T) {
	e := start(t, nil)
	e.rec.silence()
	texts := []string{
		"draw this thread",
		"diagram what we discussed",
		"architecture of the chat: web, api",
		"draw the chat service and its queue",
		"draw the thread pool",
		"make the conversation above a flow",
	}
	e.fake.Send(tgfake.Post{Chat: group.ID, From: alice, Text: "/draw a box"})
	last := e.rec.next(t).Key.Thread
	kinds := map[bool]int{}
	for _, text := range texts {
		sent := e.fake.Send(tgfake.Post{Chat: group.ID, From: alice, Text: "@draw_bot " + text})
		got := e.rec.next(t).Key.Thread
		fresh := bot.AsksForDiscussion(bot.ParseCommand(text).Arg)
		kinds[fresh]++
		want := last
		if fresh {
			want = "0:" + strconv.Itoa(sent.MessageID)
		}
		if got != want {
			t.Errorf("%q (the core: asks for the discussion %v): thread %q, want %q", text, fresh, got, want)
		}
		last = got
	}
	if kinds[true] == 0 || kinds[false] == 0 {
		t.Errorf("the texts are all decided one way by the core (%v); the test needs both", kinds)
	}
}

// TestSeenLogLeavesOutCommands: no command is discussion, whichever bot it is for; of the
// messages starting with "/", only a drawing request to this bot is kept (an answer quotes it to
// name an untitled diagram). A command for another bot still shows that the bot hears the group.
func TestSeenLogLeavesOutCommands(t *testing.T) {
	s := newSeenLog()
	for i, p := range []struct {
		text   string
		forBot bool
	}{
		{"/undo", true},
		{"/weather@forecast_bot London", false},
		{"/start", false},
		{" /poll lunch?", false},
		{"/draw a queue", true},
		{"draw a cache", true},
		{"we need a cache", false},
	} {
		s.add(seenPost(-1, i+1, p.text), "Bob", strings.TrimSpace(p.text), p.forBot, time.Time{})
	}
	said, _, all := s.before(convRef{-1, 0}, 0, bot.DiscussionLimit{})
	if got, want := saidText(bot.Discussion{Said: said}), "Bob: /draw a queue\nBob: draw a cache\nBob: we need a cache"; got != want || !all {
		t.Errorf("got %q (all %v), want %q and that the bot hears the whole group", got, all, want)
	}
}

// TestSeenLogGeneralCommandIsNoSign: a general command for another bot reaches a bot in privacy
// mode too, so it does not show that the bot hears the whole group.
func TestSeenLogGeneralCommandIsNoSign(t *testing.T) {
	s := newSeenLog()
	s.add(seenPost(-1, 1, "/start"), "Bob", "/start", false, time.Time{})
	if said, _, all := s.before(convRef{-1, 0}, 0, bot.DiscussionLimit{}); len(said) != 0 || all {
		t.Errorf("after /start for another bot: %d messages, all %v; want none and no sign", len(said), all)
	}
}

// TestSeenLogMarksWithinBytes: chats only marked as heard in full (chatter from senders outside
// the allowlists) count against the byte bound too, and the oldest is forgotten.
func TestSeenLogMarksWithinBytes(t *testing.T) {
	s := newSeenLog()
	s.maxBytes = 10 * seenOverhead
	for chat := int64(1); chat <= 50; chat++ {
		s.markAll(convRef{-chat, 0})
	}
	if s.bytes > s.maxBytes || len(s.convs) != 10 || s.order.Len() != 10 {
		t.Errorf("%d bytes in %d chats (%d in order), want at most %d in 10", s.bytes, len(s.convs), s.order.Len(), s.maxBytes)
	}
	if _, _, all := s.before(convRef{-50, 0}, 0, bot.DiscussionLimit{}); !all {
		t.Error("the chat marked last was forgotten")
	}
}
