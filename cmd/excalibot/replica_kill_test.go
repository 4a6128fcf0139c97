package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ollama/ollama/api"

	"github.com/excalibot/excalibot/agent/ollamafake"
	"github.com/excalibot/excalibot/internal/waitfor"
	"github.com/excalibot/excalibot/store"
	"github.com/excalibot/excalibot/store/storetest"
)

// One SIGKILL of a replica that holds work in every state at once, with a second replica alive:
//
//   - T1 (Slack) and T2 (Telegram): mid-run, the model answering their second message; then a
//     follow-up of each reaches the live replica B, which has to wait for the dead one's thread.
//   - T3 (Slack) and T4 (Telegram): mid-run, with a follow-up that the killed replica had
//     acknowledged and queued behind the run.
//   - T5 (Slack): between a revision's commit and its reply: the run saved its revision and its
//     reply's upload is held by fake Slack (files.completeUploadExternal) when the process dies.
//   - a web chat thread: mid-run. It lived in A's memory; B adopts it, and the page, asking B,
//     shows the person's message answered with its drawing, once.
//
// B starts while A works (nothing of A's may change when it does), and after the kill it must
// take the work over within the takeover bound and redo what A was drawing: every acknowledged
// message answered with its drawing, once, in order (T1–T4's second messages redone by B), no
// error reply and no thread asked to send anything again, no stored revision lost, T5's reply
// posted once. Every thread then draws on, and A's restart (same host name) tells or sends
// nothing twice. The time from the kill to the first post in each of A's threads is logged (the
// takeover figure of docs/reliability.md).
func testReplicaKill(t *testing.T, sh *replicaShared) {
	c := newCluster(t, sh, 100*time.Millisecond)
	// A's runs are held in the model while B starts, which takes over a minute under load: the
	// model's and the run's own time limits must not end them first; and five of them are under
	// way at once.
	c.settings = []string{"EXCALIBOT_MODEL_TIMEOUT=15m", "EXCALIBOT_RUN_TIMEOUT=15m", "EXCALIBOT_MAX_CONCURRENT_RUNS=8"}
	a := c.start("A", "replica-a")
	tr := newTraffic(t, c, 1, 5)
	th := func(n int) *rthread { return tr.ths[n-1] }
	for _, x := range tr.ths {
		tr.send(t, x, 1, a)
	}
	waitAnswered(t, tr, c.waitTO, msgTag(1, 1), msgTag(2, 1), msgTag(3, 1), msgTag(4, 1), msgTag(5, 1))

	// A's model keeps the second turn of T1–T4's second message waiting until A dies.
	holdTags := []string{msgTag(1, 2), msgTag(2, 2), msgTag(3, 2), msgTag(4, 2)}
	web := webChat{session: "session-kill-0001", thread: "thread-kill-0001", tag: msgTag(9, 1)}
	var mu sync.Mutex
	arrived := map[string]bool{}
	c.setHook(func(r *replica, req api.ChatRequest) (ollamafake.Turn, bool) {
		if r != a || turnsSinceRequest(req) != 1 {
			return ollamafake.Turn{}, false
		}
		for _, tag := range tags(ollamafake.Request(req)) {
			if slices.Contains(holdTags, tag) || tag == web.tag {
				mu.Lock()
				arrived[tag] = true
				mu.Unlock()
				turn := taggedBoxes(req)
				turn.Delay = 10 * time.Minute // ends when the killed client goes away
				return turn, true
			}
		}
		return ollamafake.Turn{}, false
	})
	// Fake Slack keeps T5's next reply from being shared into its thread.
	z := th(5)
	upload := c.sl.fake.Hold("files.completeUploadExternal", func(f url.Values) bool { return f.Get("channel_id") == z.channel })
	for n := 1; n <= 5; n++ {
		tr.send(t, th(n), 2, a)
	}
	web.post(t, a, "draw "+web.tag)
	waitLong(t, "A's runs of T1–T4 and the web chat's in the model and T5's reply at Slack", func() bool {
		mu.Lock()
		defer mu.Unlock()
		select {
		case <-upload.Arrived():
			return len(arrived) == len(holdTags)+1
		default:
			return false
		}
	}, func() string {
		mu.Lock()
		defer mu.Unlock()
		return fmt.Sprintf("runs held %v; %s", arrived, tr.account())
	})
	tr.send(t, th(3), 3, a) // acknowledged by A, queued behind T3's run
	tr.send(t, th(4), 3, a)

	before := map[int]map[int64][32]byte{}
	for _, x := range tr.ths {
		before[x.n] = revisions(t, c.st, tr.key(x))
	}
	if got := len(before[5]); got != 2 {
		t.Fatalf("T5 has %d revisions while its reply is held, want 2: the test needs the revision committed before the reply", got)
	}

	// B starts while A works: nothing it does may reach A's threads. c.start returns once B
	// serves, and B's recovery runs before its adapters start: it must have cut none of A's live
	// runs short, so it has nothing to tell A's threads.
	postsBefore := tr.account()
	cut := interruptedRuns(t, c.st)
	b := c.start("B", "replica-b")
	if n := interruptedRuns(t, c.st); n != cut {
		t.Errorf("B's start interrupted %d of A's live runs", n-cut)
	}
	if after := tr.account(); len(after.Notices) != len(postsBefore.Notices) || after.Answered != postsBefore.Answered {
		t.Errorf("B's start changed A's live threads: before %s; after %s; notices %q", postsBefore, after, after.Notices)
	}
	tr.send(t, th(1), 3, b) // follow-ups reaching the live replica while A holds their threads
	tr.send(t, th(2), 3, b)

	seenBefore := tr.seenIDs()
	killed := time.Now()
	a.kill()
	// A's held call ends with A (nothing of it reaches the thread); B's goes through.
	waitLong(t, "fake Slack to drop the killed replica's held call", func() bool { return upload.Waiting() == 0 },
		func() string { return fmt.Sprint(upload.Waiting()) })
	upload.Release()
	rep, ok := tr.waitSettled(t, c.waitTO, true)
	t.Logf("after the kill: %s", rep)
	if !ok {
		t.Errorf("waited %s after A's SIGKILL for B to take A's work over", c.waitTO)
	}
	rep.check(t, true) // nothing told, no error reply: the cut runs are redone
	for _, tag := range holdTags {
		if n := tr.answers(tag); n != 1 {
			t.Errorf("%s, cut short by the kill, was answered %d times, want once: redone by B (told: %v)", tag, n, tr.told(rep, tag))
		}
	}
	for _, tag := range []string{msgTag(1, 3), msgTag(2, 3)} {
		if tr.answers(tag) == 0 {
			t.Errorf("%s, acknowledged by the live replica B while A held its thread, was not drawn (told: %v)", tag, tr.told(rep, tag))
		}
	}
	// The page, reconnected to B, shows the person's message and B's drawing of it, once.
	var page webPage
	waitLong(t, "the web chat's answer on B", func() bool {
		page = web.page(b)
		return page.drawings > 0
	}, func() string { return fmt.Sprintf("%+v", page) })
	if page.asked != 1 || page.drawings != 1 || page.errors != 0 {
		t.Errorf("the web chat on B shows %+v, want the message adopted once and drawn once, no error", page)
	}
	// Counted once the web chat's run, which no waiting message brings to a claim (the periodic
	// recovery finds it), was redone too.
	if cut := interruptedRuns(t, c.st); cut != len(holdTags)+1 {
		t.Errorf("%d runs cut short in the store, want A's %d held ones", cut, len(holdTags)+1)
	}
	var takeover []string
	var worst time.Duration
	for _, x := range tr.ths {
		at := tr.firstPostSince(x, seenBefore)
		if at.IsZero() {
			takeover = append(takeover, fmt.Sprintf("T%d: nothing", x.n))
			continue
		}
		d := at.Sub(killed)
		worst = max(worst, d)
		takeover = append(takeover, fmt.Sprintf("T%d %.1f s", x.n, d.Seconds()))
	}
	t.Logf("takeover after SIGKILL: first post in each of the killed replica's threads after %s (worst %.1f s)", strings.Join(takeover, ", "), worst.Seconds())
	for _, x := range tr.ths {
		checkKept(t, before[x.n], revisions(t, c.st, tr.key(x)))
	}
	if !ok {
		t.FailNow() // the rest needs the work taken over
	}

	// Every thread draws on, on B; then A comes back and repeats nothing.
	for _, x := range tr.ths {
		tr.send(t, x, 4, nil)
	}
	waitAnswered(t, tr, c.waitTO, msgTag(1, 4), msgTag(2, 4), msgTag(3, 4), msgTag(4, 4), msgTag(5, 4))
	settled := tr.account()
	c.start("A2", "replica-a")
	tr.waitQuiet(t, c.waitTO) // anything A2 queued at its start is posted by then
	final := tr.account()
	final.check(t, true)
	if len(final.Notices) != len(settled.Notices) || final.Answered != settled.Answered || final.Pictures != settled.Pictures {
		t.Errorf("A's restart posted again: before it %s; after %s; notices %q", settled, final, final.Notices)
	}
}

// waitAnswered waits until each tag is answered.
func waitAnswered(t *testing.T, tr *traffic, d time.Duration, want ...string) {
	t.Helper()
	var missing []string
	waitfor.Until(t, d, fmt.Sprintf("answers to %q", want), func() bool {
		missing = missing[:0]
		for _, tag := range want {
			if tr.answers(tag) == 0 {
				missing = append(missing, tag)
			}
		}
		return len(missing) == 0
	}, func() string {
		rep := tr.account()
		return fmt.Sprintf("none to %q; %s; error replies %q", missing, rep, rep.Notices)
	})
}

// interruptedRuns counts the runs in the store that were cut short.
func interruptedRuns(t *testing.T, st storetest.Inspector) int {
	t.Helper()
	runs, err := st.Runs(t.Context(), store.RunInterrupted)
	if err != nil {
		t.Fatal(err)
	}
	return len(runs)
}

// answers counts the answers naming tag in its thread.
func (tr *traffic) answers(tag string) int {
	for _, th := range tr.ths {
		if th.n == tagThread(tag) {
			n := 0
			for _, p := range tr.run.posts(th.loadThread) {
				if !p.status && slices.Contains(answerTags(p.text), tag) {
					n++
				}
			}
			return n
		}
	}
	return 0
}

func (tr *traffic) told(rep answerReport, tag string) bool {
	return slices.ContainsFunc(rep.Told, func(s string) bool { return strings.Contains(s, " "+tag+" ") })
}

// seenIDs is every bot post the poll has seen so far.
func (tr *traffic) seenIDs() map[string]bool {
	out := map[string]bool{}
	for _, th := range tr.ths {
		th.mu.Lock()
		for id := range th.seen {
			out[th.platform+"/"+id] = true
		}
		th.mu.Unlock()
	}
	return out
}

// firstPostSince is when the poll first saw a post of th that is not in seen, other than a
// working sign; zero when there is none.
func (tr *traffic) firstPostSince(th *rthread, seen map[string]bool) time.Time {
	var first time.Time
	for _, p := range tr.run.posts(th.loadThread) {
		if p.status || seen[th.platform+"/"+p.id] {
			continue
		}
		th.mu.Lock()
		at := th.seen[p.id]
		th.mu.Unlock()
		if !at.IsZero() && (first.IsZero() || at.Before(first)) {
			first = at
		}
	}
	return first
}

// key is th's thread in the store.
func (tr *traffic) key(th *rthread) store.ThreadKey {
	if th.platform == "slack" {
		return store.ThreadKey{Platform: "slack", Workspace: "T0FAKE", Channel: th.channel, Thread: th.root}
	}
	return store.ThreadKey{Platform: "telegram", Channel: fmt.Sprint(th.chat)}
}

// webChat is one web chat thread, driven as the page drives it.
type webChat struct {
	session, thread, tag string
}

// post sends text to the chat page of replica r.
func (w webChat) post(t *testing.T, r *replica, text string) {
	t.Helper()
	body, _ := json.Marshal(map[string]string{"text": text})
	req, _ := http.NewRequest(http.MethodPost, "http://"+r.addr+"/chat/api/threads/"+w.thread+"/messages", bytes.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("X-Excalibot-Session", w.session)
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("post to %s's chat page: %v", r, err)
	}
	defer res.Body.Close()
	if res.StatusCode != http.StatusAccepted {
		b, _ := io.ReadAll(res.Body)
		t.Fatalf("post to %s's chat page: %d %s, want 202", r, res.StatusCode, b)
	}
}

// webPage counts what the chat page shows of a thread: the person's messages carrying the
// thread's tag, the bot's answers with a drawing, and its error replies.
type webPage struct {
	asked, drawings, errors int
}

// page reads the thread as the page does from replica r; zero when r has no such thread.
func (w webChat) page(r *replica) webPage {
	res, err := http.Get("http://" + r.addr + "/chat/api/threads/" + w.thread + "?session=" + w.session)
	if err != nil {
		return webPage{}
	}
	defer res.Body.Close()
	var th struct {
		Messages []struct {
			From  string            `json:"from"`
			Text  string            `json:"text"`
			Error bool              `json:"error"`
			Files []json.RawMessage `json:"files"`
		} `json:"messages"`
	}
	if res.StatusCode != http.StatusOK || json.NewDecoder(res.Body).Decode(&th) != nil {
		return webPage{}
	}
	var p webPage
	for _, m := range th.Messages {
		switch {
		case m.From == "you" && strings.Contains(m.Text, w.tag):
			p.asked++
		case m.From == "bot" && m.Error:
			p.errors++
		case m.From == "bot" && len(m.Files) > 0:
			p.drawings++
		}
	}
	return p
}
