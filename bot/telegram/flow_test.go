package telegram

import (
	"encoding/json"
	"strconv"
	"strings"
	"testing"

	"github.com/go-telegram/bot/models"

	"github.com/excalibot/excalibot/bot"
	"github.com/excalibot/excalibot/bot/telegram/tgfake"
)

func TestPrivateChatDrawing(t *testing.T) {
	e := start(t, nil)
	sent := e.fake.Send(tgfake.Post{Chat: dmChat.ID, From: alice, Text: "draw how a request reaches Postgres"})

	got := e.rec.next(t)
	want := bot.Message{
		Key:     bot.ThreadKey{Platform: "telegram", Channel: "101", Thread: ""},
		EventID: strconv.FormatInt(sent.UpdateID, 10), ID: strconv.Itoa(sent.MessageID),
		User: "101", UserName: "alice", Text: "draw how a request reaches Postgres",
	}
	if got.Key != want.Key || got.EventID != want.EventID || got.ID != want.ID || got.User != want.User ||
		got.UserName != want.UserName || got.Text != want.Text || got.Received.IsZero() {
		t.Fatalf("message\n got %+v\nwant %+v", got, want)
	}

	// Status message deleted at the end; photo and document remain.
	msgs := e.botMessages(t, dmChat.ID, 2)
	e.rec.settle(t)
	photo, doc := msgs[0], msgs[1]
	if photo.Kind != "photo" || photo.Text != "Browser → API → Postgres" || photo.File.Name != "diagram.png" {
		t.Errorf("first reply: got %+v, want the photo with the summary as caption", summary(msgs[:1]))
	}
	if len(photo.Buttons) != 1 || photo.Buttons[0] != (tgfake.Button{Text: "Open in editor", URL: editURL}) {
		t.Errorf("photo buttons: got %+v, want one Open in editor → %s", photo.Buttons, editURL)
	}
	if doc.Kind != "document" || doc.File.Name != "diagram.excalidraw" || string(doc.File.Data) != `{"type":"excalidraw"}` {
		t.Errorf("second reply: got %+v, want diagram.excalidraw", summary(msgs[1:]))
	}
	if photo.ReplyTo != 0 || doc.ReplyTo != 0 {
		t.Errorf("private replies quote message %d/%d, want no quote (the chat is the thread)", photo.ReplyTo, doc.ReplyTo)
	}

	// Working signs: the action, a status message replying to the request, edited, then deleted.
	var status *tgfake.Message
	for _, m := range e.fake.Messages(dmChat.ID) {
		if m.FromBot && m.Kind == "text" {
			status = &m
		}
	}
	switch {
	case status == nil:
		t.Fatal("no status message was posted")
	case status.ReplyTo != sent.MessageID || !status.Deleted:
		t.Errorf("status message: replies to %d, deleted %v; want a reply to %d, deleted", status.ReplyTo, status.Deleted, sent.MessageID)
	case len(status.Edits) != 1 || status.Edits[0] != statusStart || status.Text != "Drawing… 2 shapes, 1 arrow":
		t.Errorf("status texts: got %q then %q, want %q then the update", status.Edits, status.Text, statusStart)
	}
	actions := e.fake.Calls("sendChatAction")
	if len(actions) == 0 || actions[0].Fields["action"] != "upload_photo" || actions[0].Fields["chat_id"] != "101" {
		t.Errorf("chat actions: got %+v, want upload_photo in chat 101", actions)
	}

	// The commands menu was registered on start.
	var names []string
	for _, c := range e.fake.Commands() {
		names = append(names, c.Command)
		if c.Command == "draw" && !strings.HasPrefix(c.Description, "Draw a new diagram") {
			t.Errorf("/draw is described %q, want that it draws a new diagram", c.Description)
		}
	}
	if got, want := strings.Join(names, " "), "draw undo redo new history show revert describe export theme help"; got != want {
		t.Errorf("commands: got %q, want %q", got, want)
	}
	// Our own reply_markup: no copy_text on the wire (the fake would refuse it, as Telegram does).
	for _, c := range e.fake.Calls("sendPhoto") {
		if strings.Contains(c.Fields["reply_markup"], "copy_text") {
			t.Errorf("reply_markup carries copy_text: %s", c.Fields["reply_markup"])
		}
	}
}

// TestGroupAddressing sends chatter and requests in order; updates are handled in order, so when
// the last one arrives every earlier one has been decided. Privacy mode is off (the bot is an
// admin), so the adapter sees all the chatter and must pick out what is for it.
func TestGroupAddressing(t *testing.T) {
	e := start(t, nil)
	e.fake.SetPrivacy(false)
	e.rec.silence()
	tests := []struct {
		text     string
		wantText string // "" when the bot must ignore the message
		// fresh: it starts a thread; else it goes on with the sender's last one.
		fresh bool
	}{
		{"hello everyone", "", false},
		{"/draw@other_bot a flow", "", false},
		{"/ban alice", "", false},
		{"ask @someone_else about it", "", false},
		{"@draw_bot draw a cache in front of the API", "draw a cache in front of the API", true},
		{"@Draw_Bot, undo", "undo", false},
		{"/draw a login sequence", "/draw a login sequence", true},
		{"/undo@draw_bot", "/undo@draw_bot", false},
		{"/revert 1", "/revert 1", false}, // the core's newer commands: bare, and to the last diagram
		{"@draw_bot diagram what we discussed", "diagram what we discussed", true},
		{"Привет 👋 @draw_bot нарисуй схему", "Привет 👋 @draw_bot нарисуй схему", false},
		{"👋 /draw x", "", false}, // a command counts only at the start
	}
	var want []string
	var fresh []bool
	for _, tc := range tests {
		e.fake.Send(tgfake.Post{Chat: group.ID, From: alice, Text: tc.text})
		if tc.wantText != "" {
			want = append(want, tc.wantText)
			fresh = append(fresh, tc.fresh)
		}
	}
	e.fake.Send(tgfake.Post{Chat: group.ID, From: bob, Text: "@draw_bot end"})
	want = append(want, "end")
	fresh = append(fresh, true) // Bob has no diagram here yet
	var got []string
	for range want {
		got = append(got, e.rec.next(t).Text)
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("delivered\n got %q\nwant %q", got, want)
	}
	last := ""
	for i, m := range e.rec.messages() {
		switch {
		case fresh[i] && m.Key.Thread != "0:"+m.ID:
			t.Errorf("message %s %q: thread %q, want a new thread 0:%s rooted at it", m.ID, m.Text, m.Key.Thread, m.ID)
		case !fresh[i] && m.Key.Thread != last:
			t.Errorf("message %s %q: thread %q, want the sender's last thread %q", m.ID, m.Text, m.Key.Thread, last)
		}
		last = m.Key.Thread
	}
}

func TestGroupReplyChainIsAThread(t *testing.T) {
	e := start(t, nil)
	first := e.fake.Send(tgfake.Post{Chat: group.ID, From: alice, Text: "@draw_bot draw the deploy pipeline"})
	m1 := e.rec.next(t)
	msgs := e.botMessages(t, group.ID, 2)
	e.rec.settle(t)
	if msgs[0].ReplyTo != first.MessageID {
		t.Errorf("picture replies to %d, want the request %d", msgs[0].ReplyTo, first.MessageID)
	}

	// Bob answers the picture without a mention: same thread.
	e.fake.Send(tgfake.Post{Chat: group.ID, From: bob, ReplyTo: msgs[0].ID, Text: "make the database a cylinder"})
	m2 := e.rec.next(t)
	// Alice answers the .excalidraw document: same thread again.
	e.fake.Send(tgfake.Post{Chat: group.ID, From: alice, ReplyTo: msgs[1].ID, Text: "and add Redis"})
	m3 := e.rec.next(t)
	// A mention replying to Bob's follow-up (a user message of the thread) continues it too.
	e.fake.Send(tgfake.Post{Chat: group.ID, From: alice, ReplyTo: atoi(t, m2.ID), Text: "@draw_bot undo"})
	m4 := e.rec.next(t)
	// /draw with a request starts another thread, although Bob has worked on the first.
	other := e.fake.Send(tgfake.Post{Chat: group.ID, From: bob, Text: "/draw an org chart"})
	m5 := e.rec.next(t)
	e.rec.settle(t)
	// A reply to a later answer of the first thread (the file answering Bob's follow-up, not
	// the root's picture) continues the first thread, not the newer one.
	var later int
	for _, bm := range e.fake.BotMessages(group.ID) {
		if bm.ReplyTo == atoi(t, m2.ID) && bm.Kind == "document" {
			later = bm.ID
		}
	}
	e.fake.Send(tgfake.Post{Chat: group.ID, From: bob, ReplyTo: later, Text: "and a CDN"})
	if m6 := e.rec.next(t); m6.Key != m1.Key {
		t.Errorf("reply to the file answering a follow-up: thread %q, want %q", m6.Key.Thread, m1.Key.Thread)
	}
	e.rec.settle(t)

	want := "0:" + strconv.Itoa(first.MessageID)
	for i, m := range []bot.Message{m1, m2, m3, m4} {
		if m.Key.Thread != want {
			t.Errorf("message %d (%q): thread %q, want %q", i+1, m.Text, m.Key.Thread, want)
		}
	}
	if m5.Key.Thread != "0:"+strconv.Itoa(other.MessageID) {
		t.Errorf("new mention: thread %q, want 0:%d", m5.Key.Thread, other.MessageID)
	}
	// Every answer (picture and file) replies to the request it answers, not to the thread's root.
	answers := map[int]int{}
	for _, m := range e.fake.BotMessages(group.ID) {
		answers[m.ReplyTo]++
	}
	for i, m := range e.rec.messages() {
		if n := answers[atoi(t, m.ID)]; n != 2 {
			t.Errorf("request %d (%q): %d answers reply to it, want 2 (picture and file); all: %v", i+1, m.Text, n, answers)
		}
	}
}

func atoi(t *testing.T, s string) int {
	t.Helper()
	n, err := strconv.Atoi(s)
	if err != nil {
		t.Fatal(err)
	}
	return n
}

func TestForumTopicKept(t *testing.T) {
	e := start(t, nil)
	topic := e.fake.CreateTopic(forum.ID, "Architecture")
	req := e.fake.Send(tgfake.Post{Chat: forum.ID, From: alice, Topic: topic, Text: "@draw_bot draw our services"})
	m := e.rec.next(t)
	if want := strconv.Itoa(topic) + ":" + strconv.Itoa(req.MessageID); m.Key.Thread != want {
		t.Errorf("thread %q, want %q", m.Key.Thread, want)
	}
	msgs := e.botMessages(t, forum.ID, 2)
	e.rec.settle(t)
	for _, bm := range msgs {
		if bm.Topic != topic || bm.ReplyTo != req.MessageID {
			t.Errorf("bot message %d: topic %d replying to %d, want topic %d replying to %d", bm.ID, bm.Topic, bm.ReplyTo, topic, req.MessageID)
		}
	}
	for _, c := range e.fake.Calls("sendChatAction") {
		if c.Fields["message_thread_id"] != strconv.Itoa(topic) {
			t.Errorf("chat action in thread %q, want the topic %d", c.Fields["message_thread_id"], topic)
		}
	}
	// A plain message in the topic replies to the topic's creation message: not to the bot.
	e.fake.Send(tgfake.Post{Chat: forum.ID, From: bob, Topic: topic, Text: "nice"})
	e.fake.Send(tgfake.Post{Chat: forum.ID, From: bob, Topic: topic, ReplyTo: msgs[0].ID, Text: "now in blue"})
	follow := e.rec.next(t)
	if follow.Text != "now in blue" || follow.Key.Thread != m.Key.Thread {
		t.Errorf("follow-up: got %q in thread %q, want %q in %q", follow.Text, follow.Key.Thread, "now in blue", m.Key.Thread)
	}
}

func TestIgnoresBotsAndItself(t *testing.T) {
	e := start(t, nil)
	e.rec.silence()
	self := e.fake.Bot
	e.fake.Send(tgfake.Post{Chat: group.ID, From: robot, Text: "@draw_bot draw a loop"})
	e.fake.Send(tgfake.Post{Chat: group.ID, From: self, Text: "@draw_bot draw myself"})
	e.fake.Send(tgfake.Post{Chat: dmChat.ID, From: robot, Text: "hi"})
	e.fake.Send(tgfake.Post{Chat: dmChat.ID, From: alice, Text: "sentinel"})
	if got := e.rec.next(t); got.Text != "sentinel" {
		t.Errorf("first delivered: %q, want the sentinel only", got.Text)
	}
	if n := len(e.rec.messages()); n != 1 {
		t.Errorf("%d messages delivered, want 1", n)
	}
}

func TestAllowlists(t *testing.T) {
	e := start(t, func(c *Config) { c.Chats = []string{"101", "-1001"}; c.Users = []string{"101"} })
	e.rec.silence()
	e.fake.Send(tgfake.Post{Chat: 102, From: bob, Text: "draw a cat"})            // chat not allowed
	e.fake.Send(tgfake.Post{Chat: 102, From: bob, Text: "draw a dog"})            // refused silently now
	e.fake.Send(tgfake.Post{Chat: group.ID, From: bob, Text: "@draw_bot draw x"}) // user not allowed
	e.fake.Send(tgfake.Post{Chat: group.ID, From: alice, Text: "@draw_bot sentinel"})
	if got := e.rec.next(t); got.Text != "sentinel" {
		t.Errorf("first delivered: %q, want the sentinel", got.Text)
	}
	if n := len(e.rec.messages()); n != 1 {
		t.Errorf("%d messages delivered, want 1", n)
	}
	refusals := e.fake.BotMessages(102)
	if len(refusals) != 1 || !strings.Contains(refusals[0].Text, "not enabled") {
		t.Errorf("refusals in Bob's chat: %+v, want exactly one polite refusal", summary(refusals))
	}
	if got := e.fake.BotMessages(group.ID); len(got) != 1 || !strings.Contains(got[0].Text, "allowlist") {
		t.Errorf("refusals in the group: %+v, want one naming the user allowlist", summary(got))
	}
}

func TestDocumentAttachment(t *testing.T) {
	e := start(t, nil)
	e.rec.silence()
	scene := []byte(`{"type":"excalidraw","version":2,"elements":[]}`)
	e.fake.Send(tgfake.Post{Chat: dmChat.ID, From: alice, Text: "continue from this", Document: &tgfake.Upload{Name: "flow.excalidraw", Data: scene}})
	m := e.rec.next(t)
	if len(m.Files) != 1 || m.Files[0].Name != "flow.excalidraw" || m.Files[0].Size != int64(len(scene)) || m.Text != "continue from this" {
		t.Fatalf("got text %q files %+v, want the caption and flow.excalidraw of %d bytes", m.Text, m.Files, len(scene))
	}
	data, err := e.a.FetchFile(t.Context(), m.Files[0], 1<<20)
	if err != nil || string(data) != string(scene) {
		t.Errorf("Fetch: got %q, %v; want the file", data, err)
	}
	if _, err := e.a.FetchFile(t.Context(), m.Files[0], 10); err == nil || !strings.Contains(err.Error(), "more than") {
		t.Errorf("Fetch over the limit: got %v, want a size error", err)
	}

	// Telegram does not hand files over 20 MB to bots: a clear error, and no getFile call.
	calls := len(e.fake.Calls("getFile"))
	e.fake.Send(tgfake.Post{Chat: dmChat.ID, From: alice, Document: &tgfake.Upload{Name: "big.png", Data: []byte("x")}, DocumentSize: 25 << 20})
	big := e.rec.next(t)
	_, err = e.a.FetchFile(t.Context(), big.Files[0], 30<<20)
	if err == nil || !strings.Contains(err.Error(), "20 MB") {
		t.Errorf("Fetch of 25 MB: got %v, want the 20 MB limit named", err)
	}
	if n := len(e.fake.Calls("getFile")); n != calls {
		t.Errorf("getFile called %d times for a file known to be too big", n-calls)
	}
}

func TestRedeliveredUpdateKeepsEventID(t *testing.T) {
	e := start(t, nil)
	e.rec.silence()
	sent := e.fake.Send(tgfake.Post{Chat: dmChat.ID, From: alice, Text: "draw a"})
	first := e.rec.next(t)
	e.fake.Redeliver(sent.UpdateID)
	again := e.rec.next(t)
	if again.EventID != first.EventID || again.ID != first.ID || again.Key != first.Key {
		t.Errorf("redelivery: got %s/%s/%s, want the same event %s/%s/%s for the core to drop",
			again.EventID, again.ID, again.Key, first.EventID, first.ID, first.Key)
	}
}

func TestWebhook(t *testing.T) {
	e := start(t, func(c *Config) { c.Mode = "webhook"; c.WebhookSecret = "s3cret_-token" })
	hook := e.fake.Webhook()
	if hook.URL != e.hook.URL+WebhookPath || hook.Secret != "s3cret_-token" || hook.MaxConnections != 1 {
		t.Fatalf("registered webhook %+v, want %s with the secret and one connection (updates in order)", hook, e.hook.URL+WebhookPath)
	}
	e.rec.silence()
	sent := e.fake.Send(tgfake.Post{Chat: dmChat.ID, From: alice, Text: "draw via webhook"})
	if sent.WebhookStatus != 200 || sent.WebhookErr != nil {
		t.Fatalf("webhook answered %d, %v; want 200", sent.WebhookStatus, sent.WebhookErr)
	}
	if got := e.rec.next(t); got.Text != "draw via webhook" {
		t.Errorf("delivered %q", got.Text)
	}

	forged := map[string]string{"wrong secret": "guess", "no secret": "", "secret with a suffix": "s3cret_-token2"}
	for name, secret := range forged {
		u := json.RawMessage(`{"update_id":99,"message":{"message_id":50,"date":1,"chat":{"id":101,"type":"private"},"from":{"id":101,"first_name":"A"},"text":"forged"}}`)
		var upd = mustUpdate(t, u)
		status, err := e.fake.PostWebhook(hook.URL, secret, upd)
		if err != nil || status != 401 {
			t.Errorf("%s: got %d, %v; want 401", name, status, err)
		}
	}
	if n := len(e.rec.messages()); n != 1 {
		t.Errorf("%d messages delivered, want only the genuine one", n)
	}
}

// TestRestart replies to a picture posted before a restart: with a persistent index the thread
// goes on; with the default in-memory one it starts afresh at that picture (the documented limit).
func TestRestart(t *testing.T) {
	for _, persistent := range []bool{true, false} {
		t.Run(map[bool]string{true: "persistent index", false: "memory index"}[persistent], func(t *testing.T) {
			idx := NewMemoryIndex(100) // outlives the first adapter, as a store would
			withIndex := func(c *Config) {
				if persistent {
					c.Threads = idx
				}
			}
			first := start(t, withIndex)
			req := first.fake.Send(tgfake.Post{Chat: group.ID, From: alice, Text: "@draw_bot draw a queue"})
			first.rec.next(t)
			picture := first.botMessages(t, group.ID, 2)[0]
			if persistent { // the index is written once Telegram confirmed the send: wait for it
				waitFor(t, "the picture filed under its thread", func() bool {
					_, ok, _ := idx.Thread(t.Context(), group.ID, msgRef(picture.ID))
					return ok
				})
			}
			first.stop()

			second := startOn(t, first.fake, withIndex)
			second.rec.silence()
			second.fake.Send(tgfake.Post{Chat: group.ID, From: bob, ReplyTo: picture.ID, Text: "add a dead-letter queue"})
			got := second.rec.next(t)
			want := "0:" + strconv.Itoa(req.MessageID)
			if persistent && got.Key.Thread != want {
				t.Errorf("thread after restart: got %q, want %q", got.Key.Thread, want)
			}
			// Without a persistent index the thread starts afresh at the picture, unless the
			// update's nested reply_to_message still names the original request.
			if fresh := "0:" + strconv.Itoa(picture.ID); !persistent && got.Key.Thread != want && got.Key.Thread != fresh {
				t.Errorf("thread after restart: got %q, want %q or %q", got.Key.Thread, fresh, want)
			}
		})
	}
}

func TestMemoryIndexForgetsOldest(t *testing.T) {
	idx := NewMemoryIndex(3)
	ctx := t.Context()
	for _, set := range [][2]string{{"1", "0:1"}, {"2", "0:2"}, {"last:0:7", "0:1"}, {"3", "0:3"}, {"3", "0:3"}} {
		idx.SetThread(ctx, -1, set[0], set[1]) // "3" twice: no double entry
	}
	idx.SetThread(ctx, -1, "2", "0:2")        // set again: now the newest
	idx.SetThread(ctx, -1, "last:0:7", "0:3") // moved to another thread: newest again
	idx.SetThread(ctx, -1, "4", "0:4")        // evicts "3", set longest ago
	for ref, want := range map[string]string{"1": "", "3": "", "2": "0:2", "last:0:7": "0:3", "4": "0:4"} {
		if got, _, _ := idx.Thread(ctx, -1, ref); got != want {
			t.Errorf("%s: got %q, want %q", ref, got, want)
		}
	}
	if got, ok, _ := idx.Thread(ctx, -2, "2"); ok {
		t.Errorf("another chat's entry: got %q, want none", got)
	}
}

func TestAnonymousAdmin(t *testing.T) {
	e := start(t, nil)
	e.rec.silence()
	anon := models.User{ID: 1087968824, IsBot: true, FirstName: "Group", Username: "GroupAnonymousBot"}
	e.fake.Send(tgfake.Post{Chat: group.ID, From: anon, SenderChat: &group, Text: "@draw_bot draw the org"})
	got := e.rec.next(t)
	if got.User != strconv.FormatInt(group.ID, 10) || got.UserName != "Team" || got.Text != "draw the org" {
		t.Errorf("anonymous admin: got user %q (%q) text %q, want the group as the user", got.User, got.UserName, got.Text)
	}
}

func TestPhotoBecomesAttachment(t *testing.T) {
	e := start(t, nil)
	e.rec.silence()
	img := pngOf(40, 30)
	e.fake.Send(tgfake.Post{Chat: dmChat.ID, From: alice, Photo: &tgfake.Upload{Name: "x.png", Data: img}})
	m := e.rec.next(t)
	if len(m.Files) != 1 || m.Files[0].Name != "photo.jpg" || !m.Files[0].Unnamed || m.Files[0].MIME != "image/jpeg" || m.Text != "" {
		t.Fatalf("got text %q files %+v, want the largest photo size as photo.jpg", m.Text, m.Files)
	}
	data, err := e.a.FetchFile(t.Context(), m.Files[0], 1<<20)
	if err != nil || len(data) != len(img) {
		t.Errorf("Fetch: got %d bytes, %v; want %d", len(data), err, len(img))
	}
}

// TestRedrawRepliedPhoto: in a group with privacy mode on the bot never hears of Bob's whiteboard
// photo, but "@bot redraw this" replying to it takes the photo along; a reply to the bot's own
// picture, or a command replying to the photo, does not.
func TestRedrawRepliedPhoto(t *testing.T) {
	e := start(t, nil)
	e.rec.silence()
	img := pngOf(40, 30)
	photo := e.fake.Send(tgfake.Post{Chat: group.ID, From: bob, Photo: &tgfake.Upload{Name: "board.png", Data: img}})
	e.fake.Send(tgfake.Post{Chat: group.ID, From: alice, Text: "@draw_bot redraw this", ReplyTo: photo.MessageID})
	m := e.rec.next(t)
	if len(m.Files) != 1 || m.Files[0].Name != "photo.jpg" || m.Text != "redraw this" {
		t.Fatalf("reply to a photo: got text %q files %+v, want the replied photo", m.Text, m.Files)
	}
	if data, err := e.a.FetchFile(t.Context(), m.Files[0], 1<<20); err != nil || len(data) != len(img) {
		t.Errorf("Fetch the replied photo: got %d bytes, %v; want %d", len(data), err, len(img))
	}
	e.fake.Send(tgfake.Post{Chat: group.ID, From: alice, Text: "/history", ReplyTo: photo.MessageID})
	if m := e.rec.next(t); len(m.Files) != 0 {
		t.Errorf("a command replying to the photo: got files %+v, want none", m.Files)
	}
	if err := e.a.Send(t.Context(), m.Key, bot.Reply{Text: "Here it is.", Image: &bot.File{Name: "board-r1.png", MIME: "image/png", Content: img}}); err != nil {
		t.Fatal(err)
	}
	answers := e.fake.BotMessages(group.ID)
	e.fake.Send(tgfake.Post{Chat: group.ID, From: alice, Text: "make it neat", ReplyTo: answers[len(answers)-1].ID})
	if got := e.rec.next(t); len(got.Files) != 0 || got.Key != m.Key {
		t.Errorf("a reply to the bot's picture: got files %+v in %v, want none, in %v", got.Files, got.Key, m.Key)
	}
}
