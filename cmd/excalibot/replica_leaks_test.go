package main

import (
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-telegram/bot/models"
	"github.com/ollama/ollama/api"

	"github.com/excalibot/excalibot/agent/ollamafake"

	"github.com/excalibot/excalibot/bot/telegram/tgfake"
	"github.com/excalibot/excalibot/store"
)

// A Slack mention arrives twice (app_mention and message), and two follow-ups come right behind
// it, before the first is drawn, all through one replica: the copy is recognised before the
// sender's rate is charged, so the three requests fit the burst of three a user has and none is
// refused as faster than the bot can draw. With one request a minute, no token comes back while
// the test runs: a charged copy would leave the third request without one.
func testReplicaSlackDuplicates(t *testing.T, sh *replicaShared) {
	c := newCluster(t, sh, 100*time.Millisecond)
	c.settings = []string{"EXCALIBOT_USER_RATE=1"}
	a := c.start("A", "")
	c.start("B", "")
	tr := newTraffic(t, c, 1, 1)
	th := tr.ths[0]
	tr.send(t, th, 1, a) // delivered as Slack does: app_mention and message, over A's connection
	tr.send(t, th, 2, a)
	tr.send(t, th, 3, a)
	rep, ok := tr.waitSettled(t, c.waitTO, true)
	t.Log(rep)
	if !ok {
		t.Errorf("waited %s for the three requests to be answered", c.waitTO)
	}
	rep.check(t, true) // no error reply: none refused as too fast
	for k := 1; k <= 3; k++ {
		if n := tr.answers(msgTag(th.n, k)); n != 1 {
			t.Errorf("%s answered %d times, want once", msgTag(th.n, k), n)
		}
	}
}

// In a Telegram group a thread is a reply chain. Alice asks replica A for a drawing; the moment
// A's picture is in the group, Bob replies to it, and his reply reaches replica B: B must find the
// picture's thread (A filed it in the commit that recorded the picture as posted) and change the
// same diagram, not start a new one at the picture.
func testReplicaTelegramChain(t *testing.T, sh *replicaShared) {
	c := newCluster(t, sh, 100*time.Millisecond)
	a := c.start("A", "")
	b := c.start("B", "")
	group := models.Chat{ID: -1009100000001, Type: models.ChatTypeSupergroup, Title: "Team"}
	fake := c.tg.fake
	fake.AddChat(group)
	alice := models.User{ID: 201, FirstName: "Alice"}
	bob := models.User{ID: 202, FirstName: "Bob"}
	post := func(to *replica, p tgfake.Post) tgfake.Sent {
		t.Helper()
		c.lb.pin(group.ID, to)
		defer c.lb.pin(group.ID, nil)
		s := fake.Send(p)
		if s.WebhookStatus != http.StatusOK {
			t.Fatalf("%s did not take %q: %d %v", to, p.Text, s.WebhookStatus, s.WebhookErr)
		}
		return s
	}
	// picture is the bot's picture replying to request id, once posted.
	picture := func(request int) (tgfake.Message, bool) {
		for _, m := range fake.BotMessages(group.ID) {
			if m.ReplyTo == request && (m.Kind == "photo" || m.Kind == "document") {
				return m, true
			}
		}
		return tgfake.Message{}, false
	}
	req := post(a, tgfake.Post{Chat: group.ID, From: alice, Text: "@" + fake.Bot.Username + " draw a box T1-M1"})
	var pic tgfake.Message
	waitLong(t, "A's picture", func() (ok bool) { pic, ok = picture(req.MessageID); return ok },
		func() string { return fmt.Sprint(fake.BotMessages(group.ID)) })
	reply := post(b, tgfake.Post{Chat: group.ID, From: bob, Text: "and draw a box T1-M2", ReplyTo: pic.ID})
	waitLong(t, "B's answer to the reply", func() bool { _, ok := picture(reply.MessageID); return ok },
		func() string { return fmt.Sprint(fake.BotMessages(group.ID)) })

	key := store.ThreadKey{Platform: "telegram", Channel: strconv.FormatInt(group.ID, 10), Thread: fmt.Sprintf("0:%d", req.MessageID)}
	if got := len(revisions(t, c.st, key)); got != 2 {
		t.Errorf("Alice's thread %s has %d revisions, want 2: Bob's reply changes her diagram", key, got)
	}
	stray := key
	stray.Thread = fmt.Sprintf("0:%d", pic.ID)
	if got := len(revisions(t, c.st, stray)); got != 0 {
		t.Errorf("a thread rooted at A's picture has %d revisions, want none: B did not find the chain", got)
	}
}

// A poison message: every replica that draws it dies in it (the model's first turn for it kills
// the replica, as a drawer that crashes the process would). A dies; B redoes it and dies too;
// A2, started after, finds it cut short twice (the default bound) and gives it up: the thread is
// told plainly that the request could not be finished, the message is failed with the reason,
// and the request queued behind it is answered.
func testReplicaPoison(t *testing.T, sh *replicaShared) {
	c := newCluster(t, sh, 100*time.Millisecond)
	c.settings = []string{"EXCALIBOT_LEASE_TTL=5s"} // takeovers within seconds
	a := c.start("A", "replica-a")
	b := c.start("B", "replica-b")
	tr := newTraffic(t, c, 1, 1)
	th := tr.ths[0]
	poison := msgTag(th.n, 1)
	var mu sync.Mutex
	died := []string{}
	c.setHook(func(r *replica, req api.ChatRequest) (ollamafake.Turn, bool) {
		if !slices.Contains(tags(ollamafake.Request(req)), poison) {
			return ollamafake.Turn{}, false
		}
		mu.Lock()
		died = append(died, r.name)
		mu.Unlock()
		go r.kill()
		turn := taggedBoxes(req)
		turn.Delay = 10 * time.Minute // ends with the killed replica
		return turn, true
	})
	tr.send(t, th, 1, a)
	waitLong(t, "A to die in the poison message", func() bool { return !a.alive() },
		func() string { mu.Lock(); defer mu.Unlock(); return fmt.Sprint("died: ", died) })
	tr.send(t, th, 2, b) // waits behind the poison's redo
	waitLong(t, "B to die in the poison message", func() bool { return !b.alive() },
		func() string { mu.Lock(); defer mu.Unlock(); return fmt.Sprint("died: ", died) })
	c.start("A2", "replica-a")
	waitAnswered(t, tr, c.waitTO, msgTag(th.n, 2))
	rep, ok := tr.waitSettled(t, c.waitTO, false)
	t.Log(rep)
	if !ok {
		t.Errorf("waited %s for A2 to give the poison message up and answer the next", c.waitTO)
	}
	rep.check(t, false)
	mu.Lock()
	if want := []string{"A", "B"}; !slices.Equal(died, want) {
		t.Errorf("replicas died in the poison message: %v, want %v (A2 must not draw it)", died, want)
	}
	mu.Unlock()
	if n := tr.answers(poison); n != 0 {
		t.Errorf("%s answered %d times, want it given up", poison, n)
	}
	if n := tr.answers(msgTag(th.n, 2)); n != 1 {
		t.Errorf("%s, queued behind the poison, answered %d times, want once", msgTag(th.n, 2), n)
	}
	if !tr.told(rep, poison) || len(rep.Notices) != 1 || !strings.Contains(rep.Notices[0], "could not finish this request") {
		t.Errorf("the thread was told %q (of %s: %v), want once that the request could not be finished", rep.Notices, poison, tr.told(rep, poison))
	}
	msgs, err := c.st.Inbox(t.Context(), tr.key(th))
	if err != nil {
		t.Fatal(err)
	}
	var failed []string
	for _, m := range msgs {
		if m.State == store.InboxFailed {
			failed = append(failed, fmt.Sprintf("%d cuts: %s", m.Interruptions, m.Error))
		}
	}
	if len(failed) != 1 || !strings.Contains(failed[0], "2 cuts: its runs were cut short 2 times") {
		t.Errorf("failed messages %q, want the poison one with its reason", failed)
	}
}
