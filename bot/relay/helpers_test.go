package relay

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/excalibot/excalibot/bot"
	"github.com/excalibot/excalibot/store"
	"github.com/excalibot/excalibot/store/sqlite"
	"github.com/excalibot/excalibot/store/storetest"
)

// The engine is tested alone: a fake conversation (conv) over a SQLite store in a temporary
// directory whose clock the test moves (leases, claims and retries lapse when it says so), and a
// recording adapter (recorder). The engine's own loops poll on real time, briefly.

var thread = bot.ThreadKey{Platform: "test", Workspace: "w", Channel: "c", Thread: "1"}

func threadN(n int) bot.ThreadKey {
	return bot.ThreadKey{Platform: "test", Workspace: "w", Channel: "c", Thread: fmt.Sprint("t", n)}
}

// testOptions poll often and keep a lease that only the test's clock ends.
func testOptions(owner string, clock *storetest.Clock) Options {
	return Options{Owner: owner, PollInterval: 20 * time.Millisecond, LeaseTTL: 30 * time.Second, RetryBase: time.Second,
		WorkingAfter: -1, Now: clock.Now}
}

// openStore opens a SQLite store on path (a new file when ""), on clock, closed when the test ends.
func openStore(t *testing.T, path string, clock *storetest.Clock) *sqlite.Store {
	t.Helper()
	if path == "" {
		path = filepath.Join(t.TempDir(), "work.db")
	}
	st, err := sqlite.Open(context.Background(), path, store.Options{Now: clock.Now}, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	return st
}

// start makes an engine over st and conv with a registered, started, and closed when the test ends.
func start(t *testing.T, st Store, conv Conversation, a bot.Adapter, opt Options) *Engine {
	t.Helper()
	e := New(st, conv, opt, nil)
	e.Register(a)
	e.Start()
	t.Cleanup(func() { e.Close(context.Background()) })
	return e
}

// await waits for a value on c, or fails the test after 10 s.
func await[T any](t *testing.T, what string, c <-chan T) T {
	t.Helper()
	select {
	case v := <-c:
		return v
	case <-time.After(10 * time.Second):
		t.Fatalf("timed out waiting for %s", what)
	}
	var zero T
	return zero
}

// say hands a message to e as an adapter does.
func say(t *testing.T, e *Engine, a bot.Adapter, key bot.ThreadKey, id, text string) {
	t.Helper()
	if err := e.Handle(context.Background(), a, bot.Message{Key: key, EventID: "ev-" + id, ID: id, User: "u", Text: text}); err != nil {
		t.Fatal(err)
	}
}

// conv is a fake conversation: each message is a turn of its own, a message "draw …" shows working
// signs and saves a revision, and the answer names the message. A message "refuse …" is refused,
// one "fail …" fails.
type conv struct {
	st   *sqlite.Store // the thread state it saves on
	gate chan struct{} // when set, each answer waits for a value on it (or for its context)
	// crash, when set, is how the messages begin whose answer never ends while crashed is open:
	// the process "dies" in them.
	crash   string
	crashed chan struct{}

	mu       sync.Mutex
	texts    map[int64]string // inbox id → text, read by Plan
	answered []string         // the texts answered, in order
	began    chan string      // told each text as its answer begins, when set
	admitted int              // Admit calls: each charges the sender's rate
}

func newConv(st *sqlite.Store) *conv {
	return &conv{st: st, texts: map[int64]string{}}
}

func (c *conv) Admit(msg bot.Message) string {
	c.mu.Lock()
	c.admitted++
	c.mu.Unlock()
	if strings.HasPrefix(msg.Text, "refuse") {
		return "refused: " + msg.Text
	}
	return ""
}

func (c *conv) Plan(key bot.ThreadKey, a bot.Adapter, waiting []store.InboxMessage) bot.Turn {
	m := waiting[0]
	msg, err := bot.DecodeMessage(key, m.Body, a)
	if err != nil {
		panic(err)
	}
	c.mu.Lock()
	c.texts[m.ID] = msg.Text
	c.mu.Unlock()
	t := bot.Turn{Key: key, Adapter: a, Inbox: []int64{m.ID}, Detail: msg.Text}
	if strings.HasPrefix(msg.Text, "draw") {
		t.Working = &msg
	}
	return t
}

func (c *conv) Answer(ctx context.Context, t bot.Turn, status func(string)) bot.Outcome {
	c.mu.Lock()
	text := c.texts[t.Inbox[0]]
	c.mu.Unlock()
	if c.began != nil {
		c.began <- text
	}
	status("working on " + text)
	if c.crash != "" && strings.HasPrefix(text, c.crash) {
		select {
		case <-c.crashed:
		case <-ctx.Done():
		}
		return bot.Outcome{State: store.RunInterrupted, Detail: "crashed", Reply: bot.Reply{Text: "crashed in " + text, Error: true}}
	}
	if c.gate != nil {
		select {
		case <-c.gate:
		case <-ctx.Done():
			text, _ := bot.Failure("drawing", ctx.Err())
			return bot.Outcome{State: store.RunInterrupted, Detail: ctx.Err().Error(), Reply: bot.Reply{Text: text, Error: true}}
		}
	}
	c.mu.Lock()
	c.answered = append(c.answered, text)
	c.mu.Unlock()
	if strings.HasPrefix(text, "fail") {
		return bot.Outcome{State: store.RunFailed, Detail: "failed", Reply: bot.Reply{Text: "could not " + text, Error: true}}
	}
	o := bot.Outcome{State: store.RunDone, Detail: "answered", Reply: bot.Reply{Text: "answered " + text}}
	if strings.HasPrefix(text, "draw") {
		var base int64
		th, err := c.st.Load(ctx, t.Key)
		switch {
		case err == nil:
			base = th.Rev
		case !errors.Is(err, store.ErrNotFound):
			return bot.Outcome{State: store.RunFailed, Detail: err.Error(), Reply: bot.Reply{Text: err.Error(), Error: true}}
		}
		o.Save = &store.SaveRequest{Key: t.Key, Base: base, Scene: storetest.SceneN(int(base) + 1), Author: store.AuthorAgent, Reason: text}
	}
	return o
}

// Redoable redoes every run but a command's.
func (c *conv) Redoable(r store.Run) bool { return !strings.HasPrefix(r.Detail, "command") }

func (c *conv) Interrupted(r store.Run) bot.Reply {
	return bot.Reply{Text: "interrupted: " + r.Detail, Error: true}
}

func (c *conv) GivenUp(r store.Run, times int) bot.Reply {
	return bot.Reply{Text: fmt.Sprintf("given up after %d: %s", times, r.Detail), Error: true}
}

func (c *conv) answers() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]string(nil), c.answered...)
}

// recorder is an Adapter that keeps what is posted, per thread, and shows working signs that
// count. fail, when set, decides each post's error.
type recorder struct {
	sent chan bot.Reply // each reply posted

	mu      sync.Mutex
	replies map[bot.ThreadKey][]bot.Reply
	status  []string
	working int
	finish  int
	attempt int
	fail    func(attempt int, r bot.Reply) error
}

func newRecorder() *recorder {
	return &recorder{sent: make(chan bot.Reply, 100), replies: map[bot.ThreadKey][]bot.Reply{}}
}

func (r *recorder) Platform() string { return "test" }

func (r *recorder) Working(ctx context.Context, msg bot.Message) (bot.Status, error) {
	r.mu.Lock()
	r.working++
	r.mu.Unlock()
	return recStatus{r}, nil
}

func (r *recorder) Send(ctx context.Context, key bot.ThreadKey, rep bot.Reply) error {
	r.mu.Lock()
	r.attempt++
	if r.fail != nil {
		if err := r.fail(r.attempt, rep); err != nil {
			r.mu.Unlock()
			return err
		}
	}
	r.replies[key] = append(r.replies[key], rep)
	r.mu.Unlock()
	r.sent <- rep
	return nil
}

// texts are the texts posted into key, in order.
func (r *recorder) texts(key bot.ThreadKey) []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []string
	for _, rep := range r.replies[key] {
		out = append(out, rep.Text)
	}
	return out
}

func (r *recorder) signs() (working, finish int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.working, r.finish
}

type recStatus struct{ r *recorder }

func (s recStatus) Update(ctx context.Context, text string) error {
	s.r.mu.Lock()
	s.r.status = append(s.r.status, text)
	s.r.mu.Unlock()
	return nil
}

func (s recStatus) Finish(ctx context.Context) error {
	s.r.mu.Lock()
	s.r.finish++
	s.r.mu.Unlock()
	return nil
}

// tell sends v on c when c is set and has room: a spy never holds the engine up.
func tell[T any](c chan T, v T) {
	select {
	case c <- v:
	default:
	}
}

// spy is a store that tells the test what the engine did and fails what the test says. Its
// channels drop what does not fit.
type spy struct {
	*sqlite.Store

	finished chan error         // each FinishRun's error, when set
	settled  chan store.Settle  // each settled outbox attempt, when set
	signed   chan int64         // each run whose signs' handle was stored, when set
	claimed  chan int           // how many threads each ClaimThreads claimed, when set
	released chan bot.ThreadKey // each lease given back (ReleaseLease), when set

	deadHeart atomic.Bool // RenewLeases fails: the leases lapse while the work goes on
	noPosts   atomic.Bool // ClaimOutbox finds nothing: the process never posts
	// dead makes the process gone without a word, as a SIGKILL leaves it: it claims, recovers,
	// posts and renews nothing; its turns under way never end (unless the test lets them).
	dead      atomic.Bool
	finishErr atomic.Pointer[error]

	mu     sync.Mutex
	writes []string // the transactions that write, in order, once counting is set
	count  bool
}

// failFinish makes FinishRun fail with err (nil: succeed).
func (s *spy) failFinish(err error) {
	if err == nil {
		s.finishErr.Store(nil)
		return
	}
	s.finishErr.Store(&err)
}

func (s *spy) wrote(w string) {
	s.mu.Lock()
	if s.count {
		s.writes = append(s.writes, w)
	}
	s.mu.Unlock()
}

func (s *spy) RenewLeases(ctx context.Context, owner string, ttl time.Duration) (int, error) {
	if s.deadHeart.Load() || s.dead.Load() {
		return 0, errors.New("renew leases: dial tcp 10.0.0.5:5432: i/o timeout")
	}
	return s.Store.RenewLeases(ctx, owner, ttl)
}

func (s *spy) ClaimOutbox(ctx context.Context, req store.ClaimOutboxRequest) ([]store.OutboxItem, error) {
	if s.noPosts.Load() || s.dead.Load() {
		return nil, nil
	}
	return s.Store.ClaimOutbox(ctx, req)
}

func (s *spy) Accept(ctx context.Context, req store.AcceptRequest) (store.Accepted, error) {
	s.wrote("Accept")
	return s.Store.Accept(ctx, req)
}

func (s *spy) RecoverRuns(ctx context.Context, req store.RecoverRequest) ([]store.Cut, error) {
	if s.dead.Load() {
		return nil, nil
	}
	return s.Store.RecoverRuns(ctx, req)
}

// ClaimThreads writes only when it claims a thread.
func (s *spy) ClaimThreads(ctx context.Context, req store.ClaimRequest) ([]store.Claim, error) {
	if s.dead.Load() {
		return nil, nil
	}
	cs, err := s.Store.ClaimThreads(ctx, req)
	if len(cs) > 0 {
		s.wrote("ClaimThreads")
	}
	tell(s.claimed, len(cs))
	return cs, err
}

func (s *spy) StartRun(ctx context.Context, req store.StartRunRequest) (store.Run, error) {
	s.wrote("StartRun")
	return s.Store.StartRun(ctx, req)
}

func (s *spy) FinishRun(ctx context.Context, req store.FinishRunRequest) (store.Run, *store.Thread, error) {
	s.wrote("FinishRun")
	var (
		r   store.Run
		th  *store.Thread
		err error
	)
	if p := s.finishErr.Load(); p != nil {
		err = *p
	} else {
		r, th, err = s.Store.FinishRun(ctx, req)
	}
	tell(s.finished, err)
	return r, th, err
}

func (s *spy) SetRunSign(ctx context.Context, id int64, sign string) error {
	err := s.Store.SetRunSign(ctx, id, sign)
	if err == nil {
		tell(s.signed, id)
	}
	return err
}

func (s *spy) RecordPosted(ctx context.Context, id int64, owner, part string, index ...store.MessageThread) error {
	s.wrote("RecordPosted")
	return s.Store.RecordPosted(ctx, id, owner, part, index...)
}

func (s *spy) SettleOutbox(ctx context.Context, st store.Settle) error {
	s.wrote("SettleOutbox")
	err := s.Store.SettleOutbox(ctx, st)
	tell(s.settled, st)
	return err
}

func (s *spy) ReleaseIdle(ctx context.Context, key store.ThreadKey, owner string) (bool, error) {
	s.wrote("ReleaseIdle")
	return s.Store.ReleaseIdle(ctx, key, owner)
}

func (s *spy) ReleaseLease(ctx context.Context, key store.ThreadKey, owner string) error {
	s.wrote("ReleaseLease")
	err := s.Store.ReleaseLease(ctx, key, owner)
	if err == nil {
		tell(s.released, key)
	}
	return err
}
