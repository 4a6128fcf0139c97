package main

// Traffic for the replica tests: conversations on fake Slack and fake Telegram whose messages are
// delivered as the platforms do it to several replicas (Slack: over one of the app's Socket Mode
// connections, again over another when no ack comes in time; Telegram: to the public URL, again
// while the webhook does not answer 200), and the account of what the bot posted back: every
// acknowledged message answered once, or its thread told why not; nothing mixed between threads.

import (
	"context"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/go-telegram/bot/models"

	"github.com/excalibot/excalibot/bot/slack/slackfake"
	"github.com/excalibot/excalibot/bot/telegram/tgfake"
	"github.com/excalibot/excalibot/internal/waitfor"
	"github.com/excalibot/excalibot/scene"
)

// slackAckWait is how long Slack waits for a Socket Mode ack before sending the envelope again.
const slackAckWait = 3 * time.Second

// userMsg is one message a person sent.
type userMsg struct {
	tag   string
	pos   string // its place in the thread: Slack ts, Telegram message id
	acked string // the replica that acknowledged it ("" when none did)
	at    time.Time
}

// rthread is one conversation of a replica test.
type rthread struct {
	*loadThread
	msgs []*userMsg // in the order sent; guarded by loadThread.mu
}

func (th *rthread) String() string {
	if th.platform == "slack" {
		return fmt.Sprintf("thread T%d (Slack %s/%s)", th.n, th.channel, th.root)
	}
	return fmt.Sprintf("thread T%d (Telegram chat %d)", th.n, th.chat)
}

func (th *rthread) msg(tag string) *userMsg {
	th.mu.Lock()
	defer th.mu.Unlock()
	for _, m := range th.msgs {
		if m.tag == tag {
			return m
		}
	}
	return nil
}

// traffic is the conversations of one test on a cluster.
type traffic struct {
	c    *cluster
	run  *loadRun // its posts and poll read the fakes
	ths  []*rthread
	stop func()
}

// newTraffic makes n conversations, Slack and Telegram in turn, numbered from first; the poll
// that notes when each post appeared runs until the test ends.
func newTraffic(t *testing.T, c *cluster, first, n int) *traffic {
	tr := &traffic{c: c, run: &loadRun{sl: c.sl, tg: c.tg}}
	for i := range n {
		th := &rthread{loadThread: &loadThread{n: first + i, sent: map[string]time.Time{}, seen: map[string]time.Time{}, done: map[string]int{}}}
		if i%2 == 0 {
			th.platform, th.channel = "slack", fmt.Sprintf("CREP%04d", th.n)
		} else {
			th.platform, th.chat = "telegram", 910000+int64(th.n)
			c.tg.fake.AddChat(models.Chat{ID: th.chat, Type: models.ChatTypePrivate, FirstName: "Replica"})
		}
		tr.ths = append(tr.ths, th)
		tr.run.ths = append(tr.run.ths, th.loadThread)
	}
	ctx, cancel := context.WithCancel(context.Background())
	polled := tr.run.poll(ctx)
	tr.stop = func() { cancel(); <-polled }
	t.Cleanup(tr.stop)
	return tr
}

// send posts message k of th ("draw a box T<n>-M<k>", the first with a mention) and delivers it
// as the platform does: to replica to, or spread over the replicas when to is nil. It returns
// once a replica acknowledged it, or fails the test when none did.
func (tr *traffic) send(t *testing.T, th *rthread, k int, to *replica) *userMsg {
	t.Helper()
	m, err := tr.deliver(th, k, to)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// deliver is send without the test: for conversations in goroutines.
func (tr *traffic) deliver(th *rthread, k int, to *replica) (*userMsg, error) {
	tag := msgTag(th.n, k)
	m := &userMsg{tag: tag, at: time.Now()}
	th.mu.Lock()
	th.sent[tag] = m.at
	th.msgs = append(th.msgs, m)
	root := th.root
	th.mu.Unlock()
	text := "draw a box " + tag
	ctx, cancel := waitCtx(faultWait)
	defer cancel()

	if th.platform == "telegram" {
		if to != nil {
			tr.c.lb.pin(th.chat, to)
			defer tr.c.lb.pin(th.chat, nil)
		}
		s := tr.c.tg.fake.Send(tgfake.Post{Chat: th.chat, From: models.User{ID: th.chat, FirstName: "Replica"}, Text: text})
		th.mu.Lock()
		m.pos = strconv.Itoa(s.MessageID)
		th.mu.Unlock()
		// Telegram delivers again while the webhook does not answer 200.
		for s.WebhookStatus != http.StatusOK {
			if ctx.Err() != nil {
				return m, fmt.Errorf("%s: no replica acknowledged %s (last answer %d %v)", th, tag, s.WebhookStatus, s.WebhookErr)
			}
			time.Sleep(500 * time.Millisecond) // Telegram's pace between deliveries, in real time as the replicas run
			s = tr.c.tg.fake.Redeliver(s.UpdateID)
		}
		tr.c.lb.mu.Lock()
		served := tr.c.lb.served[th.chat]
		th.mu.Lock()
		m.acked = served[len(served)-1]
		th.mu.Unlock()
		tr.c.lb.mu.Unlock()
		return m, nil
	}

	sm := slackfake.UserMessage{Channel: th.channel, ThreadTS: root, User: fmt.Sprintf("UR%04d", th.n), Text: text}
	if root == "" {
		sm.Text = "<@U0BOT> " + text
	}
	p := tr.c.sl.fake.Post(sm)
	th.mu.Lock()
	m.pos = p.TS
	if root == "" {
		th.root = p.TS
	}
	th.mu.Unlock()
	for _, ev := range p.Events {
		// Threads start on different connections (Slack's are the odd ones), and each message goes
		// over another one than the message before.
		who, err := tr.deliverSlack(ctx, ev, th.n/2+k, to)
		if err != nil {
			return m, fmt.Errorf("%s: %s: %w", th, tag, err)
		}
		th.mu.Lock()
		if m.acked == "" {
			m.acked = who
		}
		th.mu.Unlock()
	}
	return m, nil
}

// deliverSlack sends one event over a Socket Mode connection: to's, or the one spread picks among
// the open ones; when no ack comes within slackAckWait it goes again over the next connection
// with retry_attempt set, as Slack does. It returns the replica that acknowledged it.
func (tr *traffic) deliverSlack(ctx context.Context, ev slackfake.Event, spread int, to *replica) (string, error) {
	fake := tr.c.sl.fake
	var last error
	for attempt := 0; ctx.Err() == nil; attempt++ {
		socks := fake.Sockets()
		if len(socks) == 0 { // every replica is between connections: look again, as Slack would
			time.Sleep(100 * time.Millisecond)
			continue
		}
		id := socks[(spread+attempt)%len(socks)]
		if to != nil && attempt == 0 {
			tr.c.mu.Lock()
			own := to.socket
			tr.c.mu.Unlock()
			if slices.Contains(socks, own) {
				id = own
			}
		}
		opt := slackfake.DeliverOptions{RetryAttempt: attempt}
		if attempt > 0 {
			opt.RetryReason = "timeout"
		}
		env, err := fake.DeliverOn(ctx, id, ev, opt)
		if err == nil {
			actx, cancel := context.WithTimeout(ctx, slackAckWait)
			err = fake.WaitAck(actx, env)
			cancel()
			if err == nil {
				return tr.c.onSocket(id), nil
			}
		}
		last = err
	}
	return "", fmt.Errorf("no replica acknowledged event %s: %v", ev.ID, last)
}

// onSocket names the replica on a Socket Mode connection.
func (c *cluster) onSocket(id int) string {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, r := range c.reps {
		if r.socket == id {
			return r.name
		}
	}
	return fmt.Sprintf("the replica on connection %d", id)
}

// converse plays th's k messages: each follow-up once the previous one is answered or told, or
// (early) right after it was acknowledged, while its thread still works. to picks the replica
// of each message (nil: spread).
func (tr *traffic) converse(ctx context.Context, th *rthread, msgs int, early func(k int) bool, to func(k int) *replica) error {
	var pick *replica
	for k := 1; k <= msgs; k++ {
		if k > 1 && !early(k) {
			prev := msgTag(th.n, k-1)
			for !th.answered(prev) {
				if !sleepCtx(ctx, 20*time.Millisecond) {
					return fmt.Errorf("%s: no answer to %s: %w", th, prev, ctx.Err())
				}
			}
			sleepCtx(ctx, 50*time.Millisecond) // a person reading the picture
		}
		if to != nil {
			pick = to(k)
		}
		if _, err := tr.deliver(th, k, pick); err != nil {
			return err
		}
	}
	return nil
}

// answerReport is the account of what the bot posted.
type answerReport struct {
	Sent, Answered, Pictures int
	Lost                     []string // acknowledged, never answered, and the thread was not told after it
	Told                     []string // not answered; the thread was told after it
	Unacked                  []string // no replica acknowledged it
	Dups                     []string // answered more than once
	Mixed                    []string // an answer or a box of one thread in another
	OutOfOrder               []string
	NoPicture                []string
	Notices                  []string // every error reply
	SceneBad                 []string
}

// account reads every thread and sorts its messages.
func (tr *traffic) account() answerReport {
	var rep answerReport
	for _, th := range tr.ths {
		posts := tr.run.posts(th.loadThread)
		count := map[string]int{}
		var noticeAt []string
		prev, pendingPic := 0, false
		var lastScene []byte
		for _, p := range posts {
			if p.status {
				continue
			}
			if p.picture {
				if pendingPic { // a reply sent again shows its picture twice
					rep.Dups = append(rep.Dups, fmt.Sprintf("%s: a second picture before the answer of the first: %q", th, p.text))
				}
				pendingPic = true
				rep.Pictures++
			}
			if p.scene != nil {
				lastScene = p.scene
			}
			ts := answerTags(p.text)
			for _, tag := range ts {
				if tagThread(tag) != th.n {
					rep.Mixed = append(rep.Mixed, fmt.Sprintf("%s: a reply names %s: %q", th, tag, p.text))
					continue
				}
				count[tag]++
				if count[tag] > 1 {
					rep.Dups = append(rep.Dups, fmt.Sprintf("%s: %s answered %d times, again by post %s: %q", th, tag, count[tag], p.id, p.text))
					continue
				}
				if n := tagMessage(tag); n < prev {
					rep.OutOfOrder = append(rep.OutOfOrder, fmt.Sprintf("%s: %s answered after M%d", th, tag, prev))
				} else {
					prev = n
				}
				if !pendingPic {
					rep.NoPicture = append(rep.NoPicture, fmt.Sprintf("%s: %s answered without a picture: %q", th, tag, p.text))
				}
			}
			if len(ts) > 0 {
				pendingPic = false
			}
			if isErrorReply(p.text) {
				noticeAt = append(noticeAt, p.id)
				rep.Notices = append(rep.Notices, fmt.Sprintf("%s: %q", th, p.text))
			}
		}
		th.mu.Lock()
		msgs := slices.Clone(th.msgs)
		th.mu.Unlock()
		for _, m := range msgs {
			rep.Sent++
			switch {
			case count[m.tag] > 0:
				rep.Answered++
			case m.acked == "":
				rep.Unacked = append(rep.Unacked, fmt.Sprintf("%s: %s", th, m.tag))
			case slices.ContainsFunc(noticeAt, func(id string) bool { return after(th.platform, id, m.pos) }):
				rep.Told = append(rep.Told, fmt.Sprintf("%s: %s (acknowledged by %s)", th, m.tag, m.acked))
			default:
				rep.Lost = append(rep.Lost, fmt.Sprintf("%s: %s (acknowledged by %s, sent %s ago)", th, m.tag, m.acked, time.Since(m.at).Round(time.Second)))
			}
		}
		if why := checkScene(lastScene, th.n, count); why != "" {
			rep.SceneBad = append(rep.SceneBad, fmt.Sprintf("%s: the last .excalidraw file: %s", th, why))
		}
		if foreign := foreignBoxes(lastScene, th.n); len(foreign) > 0 {
			rep.Mixed = append(rep.Mixed, fmt.Sprintf("%s: the last .excalidraw file holds boxes of other threads: %q", th, foreign))
		}
	}
	return rep
}

// after reports whether post id a comes after b in a thread.
func after(platform, a, b string) bool {
	if platform == "telegram" {
		x, _ := strconv.Atoi(a)
		y, _ := strconv.Atoi(b)
		return x > y
	}
	return a > b // Slack's ts are fixed-width and ordered
}

// tagThread is the thread number of a tag.
func tagThread(tag string) int {
	m := tagRE.FindStringSubmatch(tag)
	if m == nil {
		return -1
	}
	n, _ := strconv.Atoi(m[1])
	return n
}

// foreignBoxes lists the tags of other threads than n in a scene.
func foreignBoxes(doc []byte, n int) []string {
	if doc == nil {
		return nil
	}
	sc, err := scene.Decode(doc)
	if err != nil {
		return nil // checkScene reports it
	}
	var out []string
	for _, e := range sc.Elements() {
		if e.Type == scene.Text {
			for _, tag := range tags(e.OriginalText) {
				if tagThread(tag) != n {
					out = append(out, tag)
				}
			}
		}
	}
	return out
}

// settled is true when every acknowledged message is answered or its thread was told.
func (r answerReport) settled() bool { return len(r.Lost) == 0 }

func (r answerReport) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "sent %d, answered %d, pictures %d; lost %d, told %d, not acknowledged %d, duplicated %d, mixed %d, out of order %d, without picture %d, error replies %d, scenes wrong %d",
		r.Sent, r.Answered, r.Pictures, len(r.Lost), len(r.Told), len(r.Unacked), len(r.Dups), len(r.Mixed), len(r.OutOfOrder), len(r.NoPicture), len(r.Notices), len(r.SceneBad))
	return b.String()
}

// waitSettled waits up to d until every acknowledged message is answered or told and returns the
// account. With quiet it then waits until the store holds nothing left to do for the threads, when
// a late duplicate would have been posted.
func (tr *traffic) waitSettled(t *testing.T, d time.Duration, quiet bool) (answerReport, bool) {
	t.Helper()
	deadline := time.Now().Add(d)
	var rep answerReport
	if !waitfor.Within(d, func() bool { rep = tr.account(); return rep.settled() }) {
		return rep, false
	}
	if quiet && !tr.waitQuiet(t, time.Until(deadline)) {
		return tr.account(), false
	}
	return tr.account(), true
}

// check fails the test for each category in fail that is not empty, naming every message in it.
func (r answerReport) check(t *testing.T, strict bool) {
	t.Helper()
	cats := []struct {
		what string
		got  []string
	}{
		{"acknowledged messages neither answered nor told", r.Lost},
		{"messages no replica acknowledged", r.Unacked},
		{"messages answered more than once", r.Dups},
		{"replies mixed between threads", r.Mixed},
		{"answers out of order", r.OutOfOrder},
		{"answers without their picture", r.NoPicture},
		{"threads whose last scene is wrong", r.SceneBad},
	}
	if strict {
		cats = append(cats, struct {
			what string
			got  []string
		}{"error replies (nothing failed)", r.Notices}, struct {
			what string
			got  []string
		}{"messages told instead of answered (nothing failed)", r.Told})
	}
	for _, c := range cats {
		if len(c.got) > 0 {
			t.Errorf("%s: %d, want 0:\n  %s", c.what, len(c.got), strings.Join(c.got, "\n  "))
		}
	}
}
