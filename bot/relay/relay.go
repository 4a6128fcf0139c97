// Package relay is the durable work around the conversation: each incoming message kept in the
// store's inbox before its platform hears it arrived; each thread's messages worked in order by
// the one process that holds the thread's lease, which hands them to the conversation and commits
// its outcome (revision and reply) in one transaction; replies posted through the store's outbox,
// with retries; working signs while a drawing runs; a heartbeat; and the recovery of work a
// process left unfinished.
package relay

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"log/slog"
	"os"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/excalibot/excalibot/bot"
	"github.com/excalibot/excalibot/internal/logkey"
	"github.com/excalibot/excalibot/store"
)

// Conversation is what the engine hands a thread's kept messages to (bot.Bot satisfies it).
type Conversation interface {
	// Admit decides whether a message is refused as it arrives; the refusal is its reply ("" admits it).
	Admit(msg bot.Message) (refusal string)
	// Plan reads the first of a thread's waiting messages (in the order received; at least one)
	// that go into one turn.
	Plan(key bot.ThreadKey, a bot.Adapter, waiting []store.InboxMessage) bot.Turn
	// Answer carries a turn out; status shows how it goes, and returns at once.
	Answer(ctx context.Context, t bot.Turn, status func(text string)) bot.Outcome
	// Redoable reports whether the work of a run its owner left unfinished may be done again from
	// its messages (a drawing: nothing of it is stored before its end commits).
	Redoable(r store.Run) bool
	// Interrupted is what a thread is told of a run its owner left unfinished that is not redone.
	Interrupted(r store.Run) bot.Reply
	// GivenUp is what a thread is told of a request given up: its runs were cut short times times.
	GivenUp(r store.Run, times int) bot.Reply
}

var _ Conversation = (*bot.Bot)(nil)

// Store is the work the engine keeps in the store: the inbox, the thread leases, the runs and the
// outbox (store.Store satisfies it).
type Store interface {
	Accept(ctx context.Context, req store.AcceptRequest) (store.Accepted, error)
	SeenEvents(ctx context.Context, eventIDs ...string) (bool, error)
	ClaimThreads(ctx context.Context, req store.ClaimRequest) ([]store.Claim, error)
	Pending(ctx context.Context, key store.ThreadKey, limit int) ([]store.InboxMessage, error)
	ReleaseIdle(ctx context.Context, key store.ThreadKey, owner string) (bool, error)
	ReleaseLease(ctx context.Context, key store.ThreadKey, owner string) error
	RenewLeases(ctx context.Context, owner string, ttl time.Duration) (int, error)

	StartRun(ctx context.Context, req store.StartRunRequest) (store.Run, error)
	FinishRun(ctx context.Context, req store.FinishRunRequest) (store.Run, *store.Thread, error)
	RecoverRuns(ctx context.Context, req store.RecoverRequest) ([]store.Cut, error)
	SetRunSign(ctx context.Context, id int64, sign string) error

	Enqueue(ctx context.Context, items ...store.Outgoing) ([]int64, error)
	ClaimOutbox(ctx context.Context, req store.ClaimOutboxRequest) ([]store.OutboxItem, error)
	RecordPosted(ctx context.Context, id int64, owner, part string, index ...store.MessageThread) error
	SettleOutbox(ctx context.Context, s store.Settle) error

	// SingleProcess reports whether no other process can use the database (SQLite).
	SingleProcess() bool
}

// Observer is told how drawing runs end, for metrics. It is called concurrently.
type Observer interface {
	// RunFinished reports a drawing run's final state ("done", "failed", "interrupted", or
	// "conflict" when its revision met another one) and how long it took.
	RunFinished(outcome string, d time.Duration)
}

type noObserver struct{}

func (noObserver) RunFinished(string, time.Duration) {}

// Options are the engine's limits and identity. Zero fields take defaults.
type Options struct {
	// Owner names this process in leases, runs and outbox claims; it must differ between
	// processes sharing a database (default: NewOwner()).
	Owner             string
	MaxConcurrentRuns int           // threads this process works on at once (4)
	RunTimeout        time.Duration // one turn, drawing and rendering (4 min)
	// LeaseTTL is how long a thread's lease (and an outbox claim) lasts without a heartbeat; the
	// heartbeat renews it every third of that. A replica that dies loses its threads to the others
	// this long after its last heartbeat (30 s).
	LeaseTTL time.Duration
	// PollInterval is how often the store is asked for threads and replies that wait, besides the
	// wake-ups of this process's own messages (1 s).
	PollInterval time.Duration
	// ReplyGiveUp is how long a reply that cannot be posted is retried, with backoff up to 5
	// minutes between attempts, before it is given up and kept as dead (24 h). A run cut short is
	// redone only within as long of its start; an older one's thread is told instead.
	ReplyGiveUp time.Duration
	// MaxInterruptions is how many times a message's runs may be cut short (a crash, a kill, a
	// shutdown past its grace) before it is given up; each time before that its run is redone by
	// the thread's next holder (2).
	MaxInterruptions int
	// RetryBase is the wait before a failed reply's second attempt; it doubles with each failure
	// up to 5 minutes (2 s). A platform's retry_after replaces it.
	RetryBase time.Duration
	// MaxConcurrentSends is how many threads' replies are posted at once (8).
	MaxConcurrentSends int
	// WorkingAfter is how long a drawing run goes on before its working signs go up: a run that
	// answers sooner shows none, so a fast reply does not flash a status past the reader (1 s).
	// Negative: at once.
	WorkingAfter time.Duration
	// NotifyEdits posts a note into the thread when its diagram was saved in the browser.
	NotifyEdits bool
	// Observer receives metrics; nil means none.
	Observer Observer
	Now      func() time.Time
}

func (o Options) withDefaults() Options {
	if o.Owner == "" {
		o.Owner = NewOwner()
	}
	if o.MaxConcurrentRuns <= 0 {
		o.MaxConcurrentRuns = 4
	}
	if o.MaxConcurrentSends <= 0 {
		o.MaxConcurrentSends = 8
	}
	if o.MaxInterruptions <= 0 {
		o.MaxInterruptions = 2
	}
	dur := func(v *time.Duration, d time.Duration) {
		if *v <= 0 {
			*v = d
		}
	}
	dur(&o.RunTimeout, 4*time.Minute)
	dur(&o.LeaseTTL, 30*time.Second)
	dur(&o.PollInterval, time.Second)
	dur(&o.ReplyGiveUp, 24*time.Hour)
	dur(&o.RetryBase, 2*time.Second)
	if o.WorkingAfter == 0 {
		o.WorkingAfter = time.Second
	}
	if o.Observer == nil {
		o.Observer = noObserver{}
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	return o
}

// NewOwner names this process for a store shared with other processes: the host name, the
// process id and a random suffix, so two processes never share a name, on one host or across a
// restart.
func NewOwner() string {
	host, err := os.Hostname()
	if err != nil || host == "" {
		host = "excalibot"
	}
	var r [4]byte
	_, _ = rand.Read(r[:]) // never fails (crypto/rand)
	return fmt.Sprintf("%s:%d:%s", host, os.Getpid(), hex.EncodeToString(r[:]))
}

// Engine is the durable work of one process. It is the adapters' bot.Handler.
//
// How work moves: Handle keeps each message in the store's inbox and wakes the claim loop; the
// claim loop (in every replica, also on a timer) takes the leases of threads with waiting
// messages that no live owner holds, and serves each in a goroutine that drains the thread's
// inbox in the order received, one turn at a time; a turn's reply goes to the outbox with its
// end, and the send loop posts it. The heartbeat renews the leases and outbox claims this process
// holds, so a process that dies loses them to the others within Options.LeaseTTL.
type Engine struct {
	store Store
	conv  Conversation
	opt   Options
	log   *slog.Logger

	mu       sync.Mutex
	adapters map[string]bot.Adapter // by platform
	admitted map[string]string      // first event id → refusal ("" admitted) of a message not kept yet

	wake     chan struct{} // a message was kept, or a thread was let go: claim
	sendWake chan struct{} // a reply was queued, or a thread's replies were posted: send

	threads serving // the threads this process works on
	posts   posting // the threads whose replies this process posts
	signs   board   // working signs waiting for their replies

	startOnce, closeOnce sync.Once
	started, closing     atomic.Bool
	claimLoop, sendLoop  *loop // started by Start; the claim loop is the only starter of serving goroutines
	beat                 *loop // the heartbeat: stopped last
}

var _ bot.Handler = (*Engine)(nil)

// New returns the engine of one process over st, handing the threads' messages to conv. Register
// the adapters, then Start (or Recover).
func New(st Store, conv Conversation, opt Options, log *slog.Logger) *Engine {
	opt = opt.withDefaults()
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &Engine{
		store: st, conv: conv, opt: opt,
		log:      log.With("component", "relay"),
		adapters: map[string]bot.Adapter{},
		admitted: map[string]string{},
		wake:     make(chan struct{}, 1),
		sendWake: make(chan struct{}, 1),
		threads:  serving{crew: newCrew(), waiting: map[bot.ThreadKey]int{}, unreleased: map[bot.ThreadKey]bool{}, adopted: map[int64]bot.ThreadKey{}},
		posts:    posting{crew: newCrew(), busy: map[bot.ThreadKey]bool{}},
		signs:    board{live: map[int64]held{}, told: map[int64]bool{}},
	}
}

// Owner is the name this process holds leases and claims under.
func (e *Engine) Owner() string { return e.opt.Owner }

// Register tells the engine about an adapter: it then works on that platform's threads (its own
// messages, and those another replica kept) and posts their replies. Register each adapter once,
// before Start.
func (e *Engine) Register(a bot.Adapter) {
	e.mu.Lock()
	e.adapters[a.Platform()] = a
	e.mu.Unlock()
}

func (e *Engine) adapter(platform string) bot.Adapter {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.adapters[platform]
}

// platforms are the platforms this process can answer, for its claims.
func (e *Engine) platforms() []string {
	e.mu.Lock()
	defer e.mu.Unlock()
	out := make([]string, 0, len(e.adapters))
	for p := range e.adapters {
		out = append(out, p)
	}
	slices.Sort(out)
	return out
}

// local reports whether a's threads live in this process only.
func local(a bot.Adapter) bool {
	l, ok := a.(bot.LocalAdapter)
	return ok && l.ProcessLocal()
}

func poke(c chan struct{}) {
	select {
	case c <- struct{}{}:
	default: // a wake-up is pending already
	}
}

// Start starts the engine's goroutines: from now on this process works on the threads of the
// registered adapters' platforms, its own messages and those others kept, and posts their
// replies. Calls after the first, or after Close, do nothing.
func (e *Engine) Start() {
	e.startOnce.Do(func() {
		if e.closing.Load() {
			return
		}
		e.started.Store(true)
		e.log.Info("work started", "owner", e.opt.Owner, "lease", e.opt.LeaseTTL, "platforms", strings.Join(e.platforms(), ","))
		e.claimLoop = startLoop(e.claiming)
		e.sendLoop = startLoop(e.sending)
		e.beat = startLoop(e.heartbeat)
	})
}

// Recover takes over at once every run left unfinished by a process that is gone (its lease ran
// out): its working signs come down and its messages are redone, or its thread is told why not;
// then it starts the engine, which goes on doing so periodically. Call it at start, after
// registering the adapters.
//
// On a store only this process can use (SQLite), every other owner's work belongs to a process that
// is gone, so it is taken over at once instead of when its leases lapse.
func (e *Engine) Recover(ctx context.Context) error {
	// This process beats before anything is pinned to it, so no replica takes its threads for
	// those of a process that never beat.
	if _, err := e.store.RenewLeases(ctx, e.opt.Owner, e.opt.LeaseTTL); err != nil {
		e.log.Warn("record this process's heartbeat", logkey.Err, err)
	}
	req := store.RecoverRequest{Recovery: e.recovery()}
	if e.store.SingleProcess() {
		req.SoleOwner = e.opt.Owner
	}
	err := e.recoverRuns(ctx, req)
	e.Start()
	return err
}

// QueueDepth reports messages waiting behind the turns of this process's threads and the threads
// it works on, for metrics.
func (e *Engine) QueueDepth() (waiting, active int) {
	return e.threads.depth()
}

// flushBudget is how long Close goes on posting replies after the turns ended.
const flushBudget = 10 * time.Second

// Close stops taking threads, lets running turns finish until ctx ends (then cancels them: those
// runs are left unfinished, as a crash leaves them, for another replica or the next start to
// redo), posts what replies it can for a short while, and stops. Messages still waiting stay in
// the store for another replica or the next start.
func (e *Engine) Close(ctx context.Context) {
	e.closeOnce.Do(func() { e.close(ctx) })
}

func (e *Engine) close(ctx context.Context) {
	e.closing.Store(true)
	if !e.started.Load() {
		e.threads.crew.cancel()
		e.posts.crew.cancel()
		return
	}
	// The claim loop ends before the serving goroutines are waited for: a claim under way could
	// start one after the wait began.
	e.claimLoop.stop()
	if !e.threads.crew.waitUntil(ctx) {
		e.log.Warn("shutdown grace over: interrupting running work")
	}
	// The send loop stops; what is left is posted here, for a short while (posts under way go on).
	e.sendLoop.stop()
	flush, cancel := context.WithTimeout(context.Background(), flushBudget)
	defer cancel()
	for flush.Err() == nil {
		n := e.sendDue(flush)
		if n == 0 && !e.posts.anyBusy() {
			break // a reply that failed now waits for its next attempt: another process's
		}
		select { // each post pokes it when it ends
		case <-e.sendWake:
		case <-flush.Done():
		}
	}
	cancel()
	e.posts.crew.cancel()
	e.posts.crew.wg.Wait()
	e.signs.finishAll() // their replies wait for another process, which takes the signs down again
	e.beat.stop()
}

// loop is a goroutine of the engine that runs until stopped.
type loop struct {
	cancel context.CancelFunc
	done   chan struct{}
}

func startLoop(run func(ctx context.Context)) *loop {
	ctx, cancel := context.WithCancel(context.Background())
	l := &loop{cancel: cancel, done: make(chan struct{})}
	go func() {
		defer close(l.done)
		run(ctx)
	}()
	return l
}

// stop ends the loop and waits for it.
func (l *loop) stop() {
	l.cancel()
	<-l.done
}

// crew is goroutines started on demand that share a context, cancelled to cut their work short.
type crew struct {
	ctx    context.Context
	cancel context.CancelFunc
	wg     sync.WaitGroup
}

func newCrew() crew {
	ctx, cancel := context.WithCancel(context.Background())
	return crew{ctx: ctx, cancel: cancel}
}

// waitUntil waits for the crew; when ctx ends first it cancels the crew's context and waits for
// it to stop, and reports false. Either way the crew's context ends.
func (c *crew) waitUntil(ctx context.Context) bool {
	done := make(chan struct{})
	go func() { c.wg.Wait(); close(done) }()
	finished := true
	select {
	case <-done:
	case <-ctx.Done():
		finished = false
		c.cancel()
		<-done
	}
	c.cancel()
	return finished
}
