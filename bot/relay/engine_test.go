package relay

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/excalibot/excalibot/bot"
	"github.com/excalibot/excalibot/store"
	"github.com/excalibot/excalibot/store/storetest"
)

// TestReplicasKeepThreadOrder: the messages of several threads go to two engines on one store
// alternately, each the moment the previous one is kept; every message is answered once, each
// thread's in the order sent, and no answer lands in another thread.
func TestReplicasKeepThreadOrder(t *testing.T) {
	clock := storetest.NewClock()
	st := openStore(t, "", clock)
	c := newConv(st)
	rec := newRecorder() // the platform: both replicas post into it
	ra := start(t, st, c, rec, testOptions("replica-a", clock))
	rb := start(t, openStore(t, st.Path(), clock), c, rec, testOptions("replica-b", clock))
	const threads, messages = 6, 3
	n := 0
	for m := 1; m <= messages; m++ {
		for i := 1; i <= threads; i++ {
			n++
			say(t, []*Engine{ra, rb}[n%2], rec, threadN(i), fmt.Sprint(n), fmt.Sprintf("T%d-M%d", i, m))
		}
	}
	for range threads * messages {
		await(t, "a reply", rec.sent)
	}
	ra.Close(context.Background())
	rb.Close(context.Background())
	for i := 1; i <= threads; i++ {
		var want []string
		for m := 1; m <= messages; m++ {
			want = append(want, fmt.Sprintf("answered T%d-M%d", i, m))
		}
		if got := rec.texts(threadN(i)); !slices.Equal(got, want) {
			t.Errorf("thread %d got %q, want %q: each once, in order, none of another thread", i, got, want)
		}
	}
	if got := len(c.answers()); got != threads*messages {
		t.Errorf("%d answers, want %d: each message once", got, threads*messages)
	}
}

// TestThreadsRunInParallel: a thread whose turn takes long does not hold up another's.
func TestThreadsRunInParallel(t *testing.T) {
	clock := storetest.NewClock()
	st := openStore(t, "", clock)
	c := newConv(st)
	c.gate, c.began = make(chan struct{}), make(chan string, 2)
	rec := newRecorder()
	e := start(t, st, c, rec, testOptions("a", clock))
	say(t, e, rec, threadN(1), "1", "one")
	say(t, e, rec, threadN(2), "2", "two")
	began := []string{await(t, "a turn", c.began), await(t, "the other turn", c.began)}
	slices.Sort(began)
	if !slices.Equal(began, []string{"one", "two"}) {
		t.Errorf("turns under way %q, want both threads'", began)
	}
	close(c.gate)
	await(t, "a reply", rec.sent)
	await(t, "the other reply", rec.sent)
}

// awaitEnd waits for the end of a run that another owner took over: refused as a bad transition
// (a commit with a revision may first be refused as a conflict).
func awaitEnd(t *testing.T, s *spy) {
	t.Helper()
	for {
		err := await(t, "the run's end", s.finished)
		if errors.Is(err, store.ErrBadTransition) {
			return
		}
		if !errors.Is(err, store.ErrConflict) {
			t.Fatalf("the late run's end: got %v, want ErrBadTransition", err)
		}
	}
}

// TestCommittedReplyPostedOnceAfterACrash: a process that dies between a turn's commit and the
// post of its reply leaves the reply in the outbox under its claim; once the claim lapses another
// process posts it, once, and the message is not answered again.
func TestCommittedReplyPostedOnceAfterACrash(t *testing.T) {
	clock := storetest.NewClock()
	st := openStore(t, "", clock)
	sa := &spy{Store: st, finished: make(chan error, 1)}
	sa.noPosts.Store(true) // it dies before its sender posts anything
	sa.deadHeart.Store(true)
	ca := newConv(st)
	rec := newRecorder()
	crashed := start(t, sa, ca, rec, testOptions("crashed", clock))
	say(t, crashed, rec, thread, "1", "draw a box")
	if err := await(t, "the commit", sa.finished); err != nil {
		t.Fatal(err)
	}
	crashed.Close(context.Background())

	other := openStore(t, st.Path(), clock)
	cb := newConv(other)
	next := start(t, other, cb, rec, testOptions("next", clock))
	clock.Advance(31 * time.Second) // the crashed process's claim on the reply lapses
	if r := await(t, "the reply", rec.sent); r.Text != "answered draw a box" {
		t.Fatalf("posted %+v, want the committed reply", r)
	}
	next.Close(context.Background())
	if got := rec.texts(thread); len(got) != 1 {
		t.Errorf("thread got %q, want the reply once", got)
	}
	if got := append(ca.answers(), cb.answers()...); len(got) != 1 {
		t.Errorf("answered %q, want the message once", got)
	}
	if runs, err := st.Runs(context.Background(), store.RunDone); err != nil || len(runs) != 1 {
		t.Errorf("done runs %v, %v; want the one run, done once its reply was posted", runs, err)
	}
	if th, err := st.Load(context.Background(), thread); err != nil || th.Rev != 1 {
		t.Errorf("thread %+v, %v; want revision 1", th, err)
	}
}

// TestPostRetries: a reply the platform refuses for now is tried again when it asks (or after a
// backoff); one it refuses for good is given up after a few attempts, as is one that would wait
// beyond ReplyGiveUp; a given-up reply is kept as dead, and its run fails.
func TestPostRetries(t *testing.T) {
	tests := []struct {
		name    string
		fail    func(attempt int) error
		giveUp  time.Duration
		advance []time.Duration // the waits between attempts
		states  []store.OutboxState
		posted  int
		run     store.RunState
	}{
		{"rate limited", func(n int) error {
			if n == 1 {
				return bot.RateLimited(time.Minute, errors.New("429 Too Many Requests"))
			}
			return nil
		}, 0, []time.Duration{time.Minute}, []store.OutboxState{store.OutboxPending, store.OutboxSent}, 1, store.RunDone},
		{"refused for good", func(int) error { return bot.Permanent(errors.New("channel_not_found")) }, 0,
			[]time.Duration{time.Second, 2 * time.Second}, []store.OutboxState{store.OutboxPending, store.OutboxPending, store.OutboxDead}, 0, store.RunFailed},
		{"waits too long", func(int) error { return bot.RateLimited(2*time.Minute, errors.New("429 Too Many Requests")) }, time.Minute,
			nil, []store.OutboxState{store.OutboxDead}, 0, store.RunFailed},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			clock := storetest.NewClock()
			st := openStore(t, "", clock)
			s := &spy{Store: st, settled: make(chan store.Settle, 10)}
			rec := newRecorder()
			rec.fail = func(n int, _ bot.Reply) error { return tt.fail(n) }
			opt := testOptions("a", clock)
			opt.ReplyGiveUp = tt.giveUp
			e := start(t, s, newConv(st), rec, opt)
			say(t, e, rec, thread, "1", "hello")
			for i, want := range tt.states {
				got := await(t, "an attempt", s.settled)
				if got.State != want {
					t.Fatalf("attempt %d: %s (%s), want %s", i+1, got.State, got.Error, want)
				}
				if i < len(tt.advance) {
					if due := clock.Now().Add(tt.advance[i]); !got.Due.Equal(due) {
						t.Fatalf("attempt %d: next at %v, want %v", i+1, got.Due, due)
					}
					clock.Advance(tt.advance[i])
				}
			}
			e.Close(context.Background())
			if got := len(rec.texts(thread)); got != tt.posted {
				t.Errorf("posted %d times, want %d", got, tt.posted)
			}
			rows, err := st.Outbox(context.Background(), thread)
			if err != nil || len(rows) != 1 || rows[0].State != tt.states[len(tt.states)-1] {
				t.Fatalf("outbox %+v, %v; want the reply %s", rows, err, tt.states[len(tt.states)-1])
			}
			if runs, err := st.Runs(context.Background(), tt.run); err != nil || len(runs) != 1 {
				t.Errorf("%s runs %v, %v; want the one", tt.run, runs, err)
			}
		})
	}
}

// TestRedeliveryIsIgnored: a message delivered again (its event id, or its id in the chat) is not
// kept again, and answered once; a delivery of a kept event is dropped before the conversation is
// asked to admit it, so the sender's rate is charged once (Slack delivers a mention twice).
func TestRedeliveryIsIgnored(t *testing.T) {
	clock := storetest.NewClock()
	st := openStore(t, "", clock)
	c := newConv(st)
	rec := newRecorder()
	e := start(t, st, c, rec, testOptions("a", clock))
	msg := bot.Message{Key: thread, EventID: "Ev1", ID: "111.222", User: "u", Text: "hello"}
	for _, m := range []bot.Message{msg, msg, {Key: thread, EventID: "Ev2", ID: "111.222", Text: "hello"}} {
		if err := e.Handle(context.Background(), rec, m); err != nil {
			t.Fatal(err)
		}
	}
	await(t, "the reply", rec.sent)
	e.Close(context.Background())
	if got := rec.texts(thread); len(got) != 1 {
		t.Errorf("replies %q, want one", got)
	}
	if kept, err := st.Inbox(context.Background(), thread); err != nil || len(kept) != 1 {
		t.Errorf("kept %d messages (%v), want 1", len(kept), err)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.admitted != 1 {
		t.Errorf("admitted %d times, want 1: a delivery of a kept message charges no rate", c.admitted)
	}
}

// TestAdapterRefusalIsPosted: an adapter's refusal (a chat outside its allowlists) is kept as the
// message's reply, posted from the outbox once the platform is back, without asking the
// conversation (no rate charged) and with no message kept to answer.
func TestAdapterRefusalIsPosted(t *testing.T) {
	clock := storetest.NewClock()
	st := openStore(t, "", clock)
	c := newConv(st)
	rec := newRecorder()
	down := make(chan struct{})
	rec.fail = func(attempt int, _ bot.Reply) error { // the platform is down at the first attempt
		if attempt == 1 {
			close(down)
			return errors.New("slack is down")
		}
		return nil
	}
	e := start(t, st, c, rec, testOptions("a", clock))
	if err := e.Handle(context.Background(), rec, bot.Message{Key: thread, ID: "111.222", Refusal: "Sorry, I'm not enabled in this channel."}); err != nil {
		t.Fatal(err)
	}
	await(t, "the first attempt", down)
	clock.Advance(time.Minute) // the retry is due
	if r := await(t, "the refusal", rec.sent); r.Text != "Sorry, I'm not enabled in this channel." || !r.Error || r.ReplyTo != "111.222" {
		t.Errorf("reply %+v, want the adapter's refusal, answering its message", r)
	}
	e.Close(context.Background())
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.admitted != 0 {
		t.Errorf("admitted %d times, want 0: a refused message charges no rate", c.admitted)
	}
	if kept, err := st.Inbox(context.Background(), thread); err != nil || len(kept) != 0 {
		t.Errorf("kept %d messages (%v), want none", len(kept), err)
	}
}

// TestRefusalIsPosted: the conversation's refusal of a message is its reply, and nothing is kept
// to answer.
func TestRefusalIsPosted(t *testing.T) {
	clock := storetest.NewClock()
	st := openStore(t, "", clock)
	c := newConv(st)
	rec := newRecorder()
	e := start(t, st, c, rec, testOptions("a", clock))
	say(t, e, rec, thread, "1", "refuse this")
	if r := await(t, "the refusal", rec.sent); r.Text != "refused: refuse this" || !r.Error {
		t.Errorf("reply %+v, want the refusal", r)
	}
	e.Close(context.Background())
	if got := c.answers(); len(got) != 0 {
		t.Errorf("answered %q, want nothing", got)
	}
}

// signingRecorder is a recorder whose status names its signs and which can take down the signs a
// dead process left (SignedStatus, SignClearer).
type signingRecorder struct {
	*recorder
	cleared chan string // "thread|sign" for each ClearSign
}

func (r signingRecorder) Working(ctx context.Context, msg bot.Message) (bot.Status, error) {
	st, err := r.recorder.Working(ctx, msg)
	return signedStatus{st, "status-" + msg.EventID}, err
}

func (r signingRecorder) ClearSign(ctx context.Context, key bot.ThreadKey, sign string) error {
	r.cleared <- key.String() + "|" + sign
	return nil
}

type signedStatus struct {
	bot.Status
	sign string
}

func (s signedStatus) Sign() string { return s.sign }

// TestCrashedRunSignsComeDown: the handle of a turn's working signs is stored with its run, and a
// process that recovers the run after a crash takes those signs down before it redoes the run.
func TestCrashedRunSignsComeDown(t *testing.T) {
	clock := storetest.NewClock()
	st := openStore(t, "", clock)
	s := &spy{Store: st, signed: make(chan int64, 1)}
	c := newConv(st)
	c.gate = make(chan struct{})
	defer close(c.gate) // the crashed process's turn ends when the test does
	crashed := start(t, s, c, signingRecorder{newRecorder(), make(chan string, 4)}, testOptions("crashed", clock))
	say(t, crashed, crashed.adapter("test"), thread, "e1", "draw")
	// The handle is stored once the run has gone on for signDelay: a second of real time.
	run := await(t, "the signs' handle", s.signed)

	// The process is gone without a word; the next one recovers the run.
	s.dead.Store(true)
	if _, err := st.ReleaseOwner(context.Background(), crashed.Owner()); err != nil {
		t.Fatal(err)
	}
	rec := signingRecorder{newRecorder(), make(chan string, 4)}
	next := New(st, newConv(st), testOptions("next", clock), nil)
	next.Register(rec)
	t.Cleanup(func() { next.Close(context.Background()) })
	if err := next.Recover(context.Background()); err != nil {
		t.Fatal(err)
	}
	if got, want := await(t, "the signs taken down", rec.cleared), thread.String()+"|status-ev-e1"; got != want {
		t.Errorf("ClearSign got %q, want %q (run %d)", got, want, run)
	}
	if r := await(t, "the answer", rec.sent); r.Text != "answered draw" {
		t.Errorf("posted %+v, want the redone run's answer", r)
	}
}

// TestEditedNotice: a save in the browser is told to the thread only with NotifyEdits.
func TestEditedNotice(t *testing.T) {
	for _, notify := range []bool{false, true} {
		clock := storetest.NewClock()
		st := openStore(t, "", clock)
		rec := newRecorder()
		opt := testOptions("a", clock)
		opt.NotifyEdits = notify
		e := start(t, st, newConv(st), rec, opt)
		e.Edited(context.Background(), thread, 4)
		e.Close(context.Background()) // posts what was queued
		got := rec.texts(thread)
		if want := map[bool]int{false: 0, true: 1}[notify]; len(got) != want {
			t.Errorf("NotifyEdits=%v: notices %q, want %d", notify, got, want)
		}
		if notify && len(got) == 1 && !strings.Contains(got[0], "edited in the browser (revision 4)") {
			t.Errorf("notice = %q", got[0])
		}
	}
}

var errDriver = errors.New("begin: write failed: write unix ->/run/postgresql/.s.PGSQL.5432: broken pipe")

// TestStoreDownAtTheEnd: when a turn's end cannot be recorded, its thread hears so directly, in
// plain words (or the conversation's own error reply), and nothing is saved; recovering the run
// later does not tell the thread again.
func TestStoreDownAtTheEnd(t *testing.T) {
	for _, tc := range []struct{ say, want string }{
		{"draw a box", "my database did not answer while saving the diagram"},
		{"fail this", "could not fail this"},
	} {
		clock := storetest.NewClock()
		st := openStore(t, "", clock)
		s := &spy{Store: st, released: make(chan bot.ThreadKey, 1)}
		s.failFinish(errDriver)
		rec := newRecorder()
		e := start(t, s, newConv(st), rec, testOptions("a", clock))
		say(t, e, rec, thread, "1", tc.say)
		r := await(t, "the reply", rec.sent)
		if !r.Error || !strings.Contains(r.Text, tc.want) || strings.Contains(r.Text, "broken pipe") {
			t.Errorf("%q: reply %+v; want an error saying %q, without the driver's words", tc.say, r, tc.want)
		}
		s.failFinish(nil)
		await(t, "the thread let go", s.released)
		if err := e.Recover(context.Background()); err != nil { // the run is left for recovery
			t.Fatal(err)
		}
		e.Close(context.Background())
		if got := rec.texts(thread); len(got) != 1 {
			t.Errorf("%q: thread got %q, want the one reply", tc.say, got)
		}
		if th, err := st.Load(context.Background(), thread); err != nil || th.Rev != 0 {
			t.Errorf("%q: thread %+v, %v; want it without a revision", tc.say, th, err)
		}
		if runs, err := st.Runs(context.Background(), store.RunInterrupted); err != nil || len(runs) != 1 {
			t.Errorf("%q: interrupted runs %v, %v; want the one, recovered", tc.say, runs, err)
		}
	}
}

// TestRequestCommits: the store writes of a drawing turn that makes a revision, from the message to
// the posted reply: the message kept, the thread claimed, the run started, its revision and reply
// with its end, the reply posted, the signs taken down, the thread let go. The outbox claim writes
// nothing: the run's end holds its replies for this process already.
func TestRequestCommits(t *testing.T) {
	clock := storetest.NewClock()
	st := openStore(t, "", clock)
	s := &spy{Store: st, count: true}
	rec := newRecorder()
	e := start(t, s, newConv(st), rec, testOptions("a", clock))
	say(t, e, rec, thread, "1", "draw a box")
	await(t, "the reply", rec.sent)
	e.Close(context.Background()) // the turn's last steps after the reply are done too
	s.mu.Lock()
	got := slices.Clone(s.writes)
	s.mu.Unlock()
	slices.Sort(got)
	want := []string{"Accept", "ClaimThreads", "FinishRun", "ReleaseIdle", "SettleOutbox", "SettleOutbox", "StartRun"}
	if !slices.Equal(got, want) {
		t.Errorf("writes %v, want %v", got, want)
	}
	if th, err := st.Load(context.Background(), thread); err != nil || th.Rev != 1 {
		t.Errorf("thread %+v, %v; want revision 1", th, err)
	}
	if _, err := st.AcquireLease(context.Background(), thread, "other", time.Minute); err != nil {
		t.Errorf("lease left behind: %v", err)
	}
}

// TestLeaseHeldWhileAnswering: with replicas on one database, a turn holds the thread's lease while
// it runs, so another replica's run of the thread waits.
func TestLeaseHeldWhileAnswering(t *testing.T) {
	clock := storetest.NewClock()
	st := openStore(t, "", clock)
	c := newConv(st)
	c.gate, c.began = make(chan struct{}), make(chan string, 1)
	rec := newRecorder()
	e := start(t, st, c, rec, testOptions("a", clock))
	say(t, e, rec, thread, "1", "draw a box")
	await(t, "the turn", c.began)
	bg := context.Background()
	if _, err := st.StartRun(bg, store.StartRunRequest{Key: thread, Owner: "replica2", Lease: time.Minute}); !errors.Is(err, store.ErrLeaseHeld) {
		t.Errorf("another replica's run while answering: got %v, want ErrLeaseHeld", err)
	}
	close(c.gate)
	await(t, "the reply", rec.sent)
	e.Close(bg)
	if _, err := st.StartRun(bg, store.StartRunRequest{Key: thread, Owner: "replica2", Lease: time.Minute}); err != nil {
		t.Errorf("another replica's run after the reply: %v", err)
	}
}

// slowSigns is an adapter whose working signs take until release to go up, as a slow platform's.
type slowSigns struct {
	*recorder
	release chan struct{}
}

func (s slowSigns) Working(ctx context.Context, msg bot.Message) (bot.Status, error) {
	<-s.release
	return s.recorder.Working(ctx, msg)
}

// TestWorkingSignsDoNotHoldTheTurn: the reply goes out while the platform is still putting up the
// working signs; they still go up, and come down once.
func TestWorkingSignsDoNotHoldTheTurn(t *testing.T) {
	clock := storetest.NewClock()
	st := openStore(t, "", clock)
	a := slowSigns{recorder: newRecorder(), release: make(chan struct{})}
	e := start(t, st, newConv(st), a, testOptions("a", clock))
	say(t, e, a, thread, "1", "draw a box")
	await(t, "the reply", a.sent) // would time out if the turn waited for the signs
	close(a.release)
	e.Close(context.Background())
	if working, finish := a.signs(); working != 1 || finish != 1 {
		t.Errorf("signs shown %d and taken down %d times, want 1 and 1", working, finish)
	}
}
