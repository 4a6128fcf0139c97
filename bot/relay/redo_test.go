package relay

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/excalibot/excalibot/bot"
	"github.com/excalibot/excalibot/store"
	"github.com/excalibot/excalibot/store/sqlite"
	"github.com/excalibot/excalibot/store/storetest"
)

// A run cut short (its process killed, or stopped past its grace) committed nothing, so the
// thread's next holder redoes it from its messages: the thread sees the answer it would have seen,
// once, and is never asked to send its request again, unless the request keeps cutting its runs
// short (it is given up, and the thread told) or its work cannot be redone.

// crashing is a conversation whose answers to messages beginning "crash" never end, as if the
// process died in them, until the test ends.
func crashing(st *sqlite.Store) *conv {
	c := newConv(st)
	c.crash, c.crashed, c.began = "crash", make(chan struct{}), make(chan string, 10)
	return c
}

// startCrashing starts an engine with c, whose crashed answers end when the test does (before the
// engine closes: cleanups run last first).
func startCrashing(t *testing.T, st Store, c *conv, a bot.Adapter, opt Options) *Engine {
	e := start(t, st, c, a, opt)
	t.Cleanup(func() { close(c.crashed) })
	return e
}

// inbox is each of key's messages as "state interruptions".
func inbox(t *testing.T, st *sqlite.Store, key bot.ThreadKey) []string {
	t.Helper()
	ms, err := st.Inbox(context.Background(), key)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, m := range ms {
		out = append(out, fmt.Sprint(m.State, " ", m.Interruptions))
	}
	return out
}

// TestTakeoverRedoesTheRun: replica A answers a thread's message and stops renewing its lease;
// replica B takes the thread over only once the lease has run out, and redoes A's run (no notice)
// before the message that waited behind it. A's turn, when it ends after all, changes nothing and
// says nothing.
func TestTakeoverRedoesTheRun(t *testing.T) {
	clock := storetest.NewClock()
	st := openStore(t, "", clock)
	sa := &spy{Store: st, finished: make(chan error, 4)}
	sa.deadHeart.Store(true)
	ca := newConv(st)
	ca.gate, ca.began = make(chan struct{}), make(chan string, 1)
	rec := newRecorder()
	ra := start(t, sa, ca, rec, testOptions("replica-a", clock))
	say(t, ra, rec, thread, "1", "draw M1")
	await(t, "A's turn", ca.began)

	other := openStore(t, st.Path(), clock)
	sb := &spy{Store: other, claimed: make(chan int, 100)}
	cb := newConv(other)
	rb := start(t, sb, cb, rec, testOptions("replica-b", clock))
	say(t, rb, rec, thread, "2", "draw M2")
	for range 3 { // the claim its message wakes, and polls: none takes the thread under A's lease
		if n := await(t, "B's claim", sb.claimed); n != 0 {
			t.Fatalf("B claimed %d threads under A's live lease", n)
		}
	}
	clock.Advance(31 * time.Second) // A's lease lapses
	if r := await(t, "B's redo", rec.sent); r.Text != "answered draw M1" {
		t.Fatalf("first post %+v, want B's answer to A's message", r)
	}
	if r := await(t, "B's answer", rec.sent); r.Text != "answered draw M2" {
		t.Fatalf("second post %+v, want B's answer to its own message", r)
	}

	close(ca.gate) // A's turn ends after all
	awaitEnd(t, sa)
	ra.Close(context.Background())
	rb.Close(context.Background())
	if got, want := rec.texts(thread), []string{"answered draw M1", "answered draw M2"}; !slices.Equal(got, want) {
		t.Errorf("thread got %q, want %q: each once, in order, no notice", got, want)
	}
	if got, want := inbox(t, st, thread), []string{"done 1", "done 0"}; !slices.Equal(got, want) {
		t.Errorf("inbox %q, want %q", got, want)
	}
	if th, err := st.Load(context.Background(), thread); err != nil || th.Rev != 2 {
		t.Errorf("thread %+v, %v; want revision 2, both B's", th, err)
	}
}

// TestPoisonMessageIsGivenUp: a message in which the process working on it dies, every time, is
// redone once by the next replica (which dies in it too), and then given up by the one after:
// the thread is told plainly, the message fails with the reason, and the thread's next message
// is answered.
func TestPoisonMessageIsGivenUp(t *testing.T) {
	clock := storetest.NewClock()
	st := openStore(t, "", clock)
	rec := newRecorder()
	dies := func(owner string) (*spy, *conv, *Engine) {
		s := &spy{Store: openStore(t, st.Path(), clock)}
		c := crashing(s.Store)
		return s, c, startCrashing(t, s, c, rec, testOptions(owner, clock))
	}
	sa, ca, ea := dies("a")
	say(t, ea, rec, thread, "1", "crash me")
	say(t, ea, rec, thread, "2", "draw after")
	if got := await(t, "A's run of the poison message", ca.began); got != "crash me" {
		t.Fatalf("A began %q", got)
	}
	sa.dead.Store(true)

	sb, cb, _ := dies("b")
	clock.Advance(31 * time.Second) // A's lease lapses: B redoes its run
	if got := await(t, "B's redo", cb.began); got != "crash me" {
		t.Fatalf("B began %q, want the redo of A's run", got)
	}
	sb.dead.Store(true)

	cc := crashing(openStore(t, st.Path(), clock))
	startCrashing(t, cc.st, cc, rec, testOptions("c", clock))
	clock.Advance(31 * time.Second) // B's lease lapses: C gives the message up
	if r := await(t, "the notice", rec.sent); r.Text != "given up after 2: crash me" || !r.Error {
		t.Fatalf("first post %+v, want the thread told the request was given up", r)
	}
	if r := await(t, "the next answer", rec.sent); r.Text != "answered draw after" {
		t.Fatalf("second post %+v, want the next message answered", r)
	}
	if got := cc.answers(); !slices.Equal(got, []string{"draw after"}) {
		t.Errorf("C answered %q, want only the next message", got)
	}
	if got, want := inbox(t, st, thread), []string{"failed 2", "done 0"}; !slices.Equal(got, want) {
		t.Errorf("inbox %q, want %q", got, want)
	}
	if ms, err := st.Inbox(context.Background(), thread, store.InboxFailed); err != nil || len(ms) != 1 || ms[0].Error == "" {
		t.Errorf("failed messages %+v, %v; want the one, with its reason", ms, err)
	}
}

// sharedView is the SQLite store as a store shared with other processes looks to the engine: the
// leases of others may be live.
type sharedView struct{ *sqlite.Store }

func (sharedView) SingleProcess() bool { return false }

// closeMidTurn starts an engine (owner "a") over a, has it take one message of thread into a turn
// that does not end, and closes it with a grace shorter than the turn.
func closeMidTurn(t *testing.T, st *sqlite.Store, clock *storetest.Clock, a bot.Adapter) {
	t.Helper()
	c := newConv(st)
	c.gate, c.began = make(chan struct{}), make(chan string, 1)
	e := start(t, st, c, a, testOptions("a", clock))
	say(t, e, a, thread, "1", "draw")
	await(t, "the turn", c.began)
	grace, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	e.Close(grace)
}

// TestCloseLeavesWorkToRedo: Close cuts a turn short once its grace is over and leaves its run as
// a crash would, saying nothing; the next process redoes it. A run whose work cannot be redone (a
// command) is told, as is one that took no message; a run whose owner's lease is live is another
// process's work, and left alone.
func TestCloseLeavesWorkToRedo(t *testing.T) {
	clock := storetest.NewClock()
	st := openStore(t, "", clock)
	rec := newRecorder()
	closeMidTurn(t, st, clock, rec)
	if got := rec.texts(thread); len(got) != 0 {
		t.Errorf("the thread got %q at shutdown, want nothing", got)
	}
	bg := context.Background()
	if runs, _ := st.Runs(bg, store.RunRunning); len(runs) != 1 {
		t.Errorf("running runs = %d, want the one cut short, left for the next process", len(runs))
	}

	cmdThread := threadN(2)
	acc, err := st.Accept(bg, store.AcceptRequest{Key: cmdThread, Body: mustEncode(t, bot.Message{Key: cmdThread, Text: "command undo"})})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := st.StartRun(bg, store.StartRunRequest{Key: cmdThread, Owner: "gone", Detail: "command undo", Lease: time.Minute, Inbox: []int64{acc.ID}}); err != nil {
		t.Fatal(err)
	}
	if _, err := st.StartRun(bg, store.StartRunRequest{Key: threadN(3), Owner: "gone", Detail: "draw", Lease: time.Minute}); err != nil {
		t.Fatal(err)
	}
	live, err := st.StartRun(bg, store.StartRunRequest{Key: threadN(4), Owner: "alive", Detail: "draw", Lease: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	clock.Advance(2 * time.Minute)
	rec2 := newRecorder()
	e2 := New(sharedView{st}, newConv(st), testOptions("b", clock), nil)
	e2.Register(rec2)
	if err := e2.Recover(bg); err != nil {
		t.Fatal(err)
	}
	for range 3 {
		await(t, "a post", rec2.sent)
	}
	e2.Close(bg)
	for _, tt := range []struct {
		key  bot.ThreadKey
		want []string
	}{
		{thread, []string{"answered draw"}},
		{cmdThread, []string{"interrupted: command undo"}},
		{threadN(3), []string{"interrupted: draw"}},
		{threadN(4), nil},
	} {
		if got := rec2.texts(tt.key); !slices.Equal(got, tt.want) {
			t.Errorf("%s got %q, want %q", tt.key, got, tt.want)
		}
	}
	if got, want := inbox(t, st, thread), []string{"done 1"}; !slices.Equal(got, want) {
		t.Errorf("inbox of the redone run %q, want %q", got, want)
	}
	if runs, err := st.Runs(bg, store.RunRunning); err != nil || len(runs) != 1 || runs[0].ID != live.ID {
		t.Errorf("running runs = %v, %v; want only the live one", runs, err)
	}
}

// localRecorder is a recorder whose threads live in this process only, as the web chat's do; it
// passes on the messages it is told to adopt.
type localRecorder struct {
	*recorder
	adopted chan bot.Message
}

func newLocalRecorder() localRecorder {
	return localRecorder{newRecorder(), make(chan bot.Message, 10)}
}

func (localRecorder) ProcessLocal() bool { return true }

func (l localRecorder) Adopt(_ context.Context, m bot.Message) { l.adopted <- m }

// TestALocalThreadIsAdopted: a thread living in one process's memory (pinned to it) is not lost
// with the process. A replica A dies while drawing it; once A's heartbeat and lease lapse, B
// redoes the run, first telling its own adapter of the message it adopted, and answers it. A's
// second message, kept while A was already dying, is adopted and answered after it.
func TestALocalThreadIsAdopted(t *testing.T) {
	clock := storetest.NewClock()
	st := openStore(t, "", clock)
	sa := &spy{Store: st, finished: make(chan error, 4)}
	ca := newConv(st)
	ca.gate, ca.began = make(chan struct{}), make(chan string, 1)
	recA := newLocalRecorder()
	ra := start(t, sa, ca, recA, testOptions("replica-a", clock))
	say(t, ra, recA, thread, "1", "draw M1")
	await(t, "A's turn", ca.began)
	sa.deadHeart.Store(true) // A stalls for good: its heartbeat stops
	say(t, ra, recA, thread, "2", "draw M2")

	other := openStore(t, st.Path(), clock)
	cb := newConv(other)
	recB := newLocalRecorder()
	rb := start(t, other, cb, recB, testOptions("replica-b", clock))
	clock.Advance(31 * time.Second) // A's lease and heartbeat lapse
	if m := await(t, "B's adoption", recB.adopted); m.Text != "draw M1" {
		t.Fatalf("B adopted %q first, want A's message in flight", m.Text)
	}
	if r := await(t, "B's redo", recB.sent); r.Text != "answered draw M1" {
		t.Fatalf("B's first post %+v, want its answer to A's message", r)
	}
	if m := await(t, "B's second adoption", recB.adopted); m.Text != "draw M2" {
		t.Fatalf("B adopted %q second, want A's waiting message", m.Text)
	}
	if r := await(t, "B's answer", recB.sent); r.Text != "answered draw M2" {
		t.Fatalf("B's second post %+v, want its answer to A's waiting message", r)
	}
	close(ca.gate) // A's turn ends after all: its result goes nowhere
	awaitEnd(t, sa)
	ra.Close(context.Background())
	rb.Close(context.Background())
	if got := recA.texts(thread); len(got) != 0 {
		t.Errorf("A posted %q, want nothing: the thread is B's", got)
	}
	if got, want := inbox(t, st, thread), []string{"done 1", "done 0"}; !slices.Equal(got, want) {
		t.Errorf("inbox %q, want %q", got, want)
	}
}

// TestClosedLocalThreadIsRedone: a process stopped past its grace leaves a local thread's run
// unfinished, as it does any other's, for the next holder to redo; it does not tell the thread.
func TestClosedLocalThreadIsRedone(t *testing.T) {
	clock := storetest.NewClock()
	st := openStore(t, "", clock)
	rec := newLocalRecorder()
	closeMidTurn(t, st, clock, rec)
	if got := rec.texts(thread); len(got) != 0 {
		t.Errorf("the local thread got %q, want nothing: its run is left to be redone", got)
	}

	next := newLocalRecorder()
	e2 := start(t, st, newConv(st), next, testOptions("b", clock))
	clock.Advance(31 * time.Second)
	if m := await(t, "the adoption", next.adopted); m.Text != "draw" {
		t.Fatalf("adopted %q, want the message left unanswered", m.Text)
	}
	if r := await(t, "the redo", next.sent); r.Text != "answered draw" {
		t.Fatalf("posted %+v, want the redone answer", r)
	}
	e2.Close(context.Background())
	if got := inbox(t, st, thread); !slices.Equal(got, []string{"done 1"}) {
		t.Errorf("inbox %q, want the message redone once", got)
	}
}

func mustEncode(t *testing.T, m bot.Message) []byte {
	t.Helper()
	b, err := bot.EncodeMessage(m)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestRestartOnSQLiteRedoesAtOnce: on a store only this process can open, another owner's running
// run is a dead process's, whatever its lease says: the start redoes it at once, and the thread
// gets the answer once. A run that began longer ago than replies are retried is told instead.
func TestRestartOnSQLiteRedoesAtOnce(t *testing.T) {
	for _, tt := range []struct {
		name  string
		down  time.Duration // how long the process was gone
		want  string
		inbox string
	}{
		{"restarted at once", 0, "answered crash with a box", "done 1"},
		{"restarted a day later", 25 * time.Hour, "interrupted: crash with a box", "interrupted 1"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			clock := storetest.NewClock()
			st := openStore(t, "", clock)
			killed := &spy{Store: st}
			c := crashing(st)
			e := startCrashing(t, killed, c, newRecorder(), testOptions("killed", clock))
			say(t, e, e.adapter("test"), thread, "1", "crash with a box")
			await(t, "the run", c.began)
			killed.dead.Store(true)
			clock.Advance(tt.down)

			bg := context.Background()
			rec := newRecorder()
			next := New(openStore(t, st.Path(), clock), newConv(st), testOptions("restarted", clock), nil)
			next.Register(rec)
			t.Cleanup(func() { next.Close(bg) })
			if err := next.Recover(bg); err != nil {
				t.Fatal(err)
			}
			if r := await(t, "the post", rec.sent); r.Text != tt.want {
				t.Errorf("posted %+v, want %q", r, tt.want)
			}
			next.Close(bg)
			if got := rec.texts(thread); len(got) != 1 {
				t.Errorf("thread got %q, want one post", got)
			}
			if got := inbox(t, st, thread); !slices.Equal(got, []string{tt.inbox}) {
				t.Errorf("inbox %q, want %q", got, tt.inbox)
			}
		})
	}
}

// TestRedoing: the messages of a run cut short are redone alone, as the run took them; fresh
// messages go to the conversation to merge as it likes.
func TestRedoing(t *testing.T) {
	m := func(id, run int64, cuts int) store.InboxMessage {
		return store.InboxMessage{ID: id, Run: run, Interruptions: cuts}
	}
	for _, tt := range []struct {
		name    string
		waiting []store.InboxMessage
		want    []int64
	}{
		{"fresh", []store.InboxMessage{m(1, 0, 0), m(2, 0, 0)}, []int64{1, 2}},
		{"a redo and what came after", []store.InboxMessage{m(1, 7, 1), m(2, 7, 1), m(3, 0, 0)}, []int64{1, 2}},
		{"two redos of different runs", []store.InboxMessage{m(1, 7, 1), m(2, 8, 1)}, []int64{1}},
		{"a redo alone", []store.InboxMessage{m(1, 7, 1)}, []int64{1}},
	} {
		var got []int64
		for _, w := range redoing(tt.waiting) {
			got = append(got, w.ID)
		}
		if !slices.Equal(got, tt.want) {
			t.Errorf("%s: got %v, want %v", tt.name, got, tt.want)
		}
	}
}
