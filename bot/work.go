package bot

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/excalibot/excalibot/store"
)

// How work moves: Handle keeps each message in the store's inbox and wakes the claim loop; the
// claim loop (in every replica, also on a timer) takes the leases of threads with pending messages
// that no live owner holds, and serves each in a goroutine that drains the thread's inbox in the
// order received, one run at a time; a run's replies go to the outbox with its end, and the send
// loop posts them. A heartbeat renews the leases and outbox claims this process holds, so a
// process that dies loses them to the others within Options.LeaseTTL.

// workers is the core's goroutines and what they share.
type workers struct {
	startOnce sync.Once
	closeOnce sync.Once
	started   atomic.Bool
	closing   atomic.Bool

	runCtx     context.Context // the runs' context; cancelled when the shutdown grace is over
	cancelRuns context.CancelFunc
	claimCtx   context.Context // the claim loop's; stopped first on shutdown
	stopClaims context.CancelFunc
	sendCtx    context.Context // the send loop's
	stopSends  context.CancelFunc
	postCtx    context.Context // the posts'; cancelled once Close has posted what it could
	stopPosts  context.CancelFunc
	beatCtx    context.Context // the heartbeat's; stopped last
	stopBeat   context.CancelFunc

	wake     chan struct{} // a message was kept, or a thread was let go: claim
	sendWake chan struct{} // a reply was queued, or a thread's replies were posted: send

	mu         sync.Mutex
	serving    map[ThreadKey]int     // threads served here → messages waiting behind the run
	sending    map[ThreadKey]bool    // threads whose replies are being posted here
	live       map[int64]*statusLine // runs whose working signs are up, until their replies are out
	told       map[int64]bool        // runs whose thread was told of a failure directly (store down)
	unreleased map[ThreadKey]bool    // leases to give back once the store answers again
	threads    sync.WaitGroup        // serving goroutines
	sends      sync.WaitGroup        // posting goroutines
	claiming   sync.WaitGroup        // claim loop: the only starter of serving goroutines
	loops      sync.WaitGroup        // send loop
	beat       sync.WaitGroup        // heartbeat
}

func (w *workers) init() {
	w.runCtx, w.cancelRuns = context.WithCancel(context.Background())
	w.claimCtx, w.stopClaims = context.WithCancel(context.Background())
	w.sendCtx, w.stopSends = context.WithCancel(context.Background())
	w.postCtx, w.stopPosts = context.WithCancel(context.Background())
	w.beatCtx, w.stopBeat = context.WithCancel(context.Background())
	w.wake = make(chan struct{}, 1)
	w.sendWake = make(chan struct{}, 1)
	w.serving = map[ThreadKey]int{}
	w.sending = map[ThreadKey]bool{}
	w.live = map[int64]*statusLine{}
	w.told = map[int64]bool{}
	w.unreleased = map[ThreadKey]bool{}
}

func poke(c chan struct{}) {
	select {
	case c <- struct{}{}:
	default: // a wake-up is pending already
	}
}

// Start starts the core's workers: from now on this process works on the threads of the
// registered adapters' platforms, its own messages and those others kept, and posts their
// replies. Handle starts them too. Register the adapters first.
func (b *Bot) Start() {
	b.w.startOnce.Do(func() {
		if b.w.closing.Load() {
			return
		}
		b.w.started.Store(true)
		b.log.Info("bot workers started", "owner", b.opt.Owner, "lease", b.opt.LeaseTTL, "platforms", strings.Join(b.platforms(), ","))
		b.w.claiming.Add(1)
		b.w.loops.Add(1)
		go b.claimLoop()
		go b.sendLoop()
		b.w.beat.Add(1)
		go b.heartbeat()
	})
}

// Recover starts the workers and tells at once every thread whose run was left unfinished by a
// process that is gone (its lease ran out), taking down that run's working signs first; the
// workers go on doing so periodically. Call it at start, after registering the adapters.
//
// On a store only this process can use (SQLite), every other owner's work belongs to a process that
// is gone, so it is taken over at once instead of when its leases lapse.
func (b *Bot) Recover(ctx context.Context) error {
	req := store.RecoverRequest{Notice: b.notice}
	if sp, ok := b.store.(interface{ SingleProcess() bool }); ok && sp.SingleProcess() {
		req.SoleOwner = b.opt.Owner
	}
	err := b.recoverRuns(ctx, req)
	b.Start()
	return err
}

func (b *Bot) recoverRuns(ctx context.Context, req store.RecoverRequest) error {
	runs, err := b.store.RecoverRuns(ctx, req)
	if err != nil {
		return fmt.Errorf("recover interrupted runs: %w", err)
	}
	for _, r := range runs {
		b.log.Warn("run interrupted: its owner is gone; the thread is told", "thread", r.Key.String(), "run", r.ID, "owner", r.Owner)
	}
	if len(runs) > 0 {
		poke(b.w.sendWake)
	}
	return nil
}

// notice is what a thread is told, through the outbox, of a run its owner left unfinished: the
// run's working signs come down, then a sentence says what happened.
func (b *Bot) notice(r store.Run) []store.Outgoing {
	b.w.mu.Lock()
	told := b.w.told[r.ID]
	delete(b.w.told, r.ID)
	b.w.mu.Unlock()
	if told {
		return nil // its thread heard of the failure already, directly
	}
	var out []store.Outgoing
	if r.Sign != "" {
		out = append(out, store.Outgoing{Key: r.Key, Kind: kindSigns, Body: encodeSigns(r.Sign)})
	}
	text := "I was restarted while working on your last request, so it was not finished. Nothing in the diagram changed; please send it again."
	if cmd, ok := strings.CutPrefix(r.Detail, commandDetail); ok {
		text = fmt.Sprintf("I was restarted while carrying out %q, so I cannot tell whether it was done; say history to see where the diagram is.", cmd)
	}
	body, err := EncodeReply(Reply{Text: text, Error: true})
	if err == nil {
		out = append(out, store.Outgoing{Key: r.Key, Kind: kindReply, Body: body})
	}
	return out
}

// commandDetail starts the detail of a run that carries out a command ("command: undo").
const commandDetail = "command: "

func (b *Bot) claimLoop() {
	defer b.w.claiming.Done()
	ctx := b.w.claimCtx
	tick := time.NewTicker(b.opt.PollInterval)
	defer tick.Stop()
	// A dead owner's run with nothing waiting behind it is found by this pass: a thread hears of
	// it at most a lease and a sixth of one after the owner's last heartbeat.
	recoverEvery := max(b.opt.LeaseTTL/6, b.opt.PollInterval)
	lastRecover := time.Now()
	for {
		select {
		case <-ctx.Done():
			return
		case <-b.w.wake:
		case <-tick.C:
		}
		if time.Since(lastRecover) >= recoverEvery {
			lastRecover = time.Now()
			if err := b.recoverRuns(ctx, store.RecoverRequest{Notice: b.notice}); err != nil && ctx.Err() == nil {
				b.log.Warn("recover interrupted runs", "err", err)
			}
		}
		b.claim(ctx)
	}
}

// claim takes as many threads as this process has room for.
func (b *Bot) claim(ctx context.Context) {
	b.w.mu.Lock()
	free := b.opt.MaxConcurrentRuns - len(b.w.serving)
	b.w.mu.Unlock()
	if free <= 0 || b.w.closing.Load() {
		return
	}
	claims, err := b.store.ClaimThreads(ctx, store.ClaimRequest{Owner: b.opt.Owner, TTL: b.opt.LeaseTTL, Limit: free,
		Platforms: b.platforms(), Notice: b.notice})
	if err != nil {
		if ctx.Err() == nil {
			b.log.Warn("claim threads with waiting messages", "err", err)
		}
		return
	}
	told := false
	for _, c := range claims {
		key := c.Lease.Key
		for _, r := range c.Interrupted {
			told = true
			b.log.Warn("thread taken over from an owner whose lease ran out; its run is interrupted and the thread told",
				"thread", key.String(), "run", r.ID, "owner", r.Owner)
		}
		b.w.mu.Lock()
		_, already := b.w.serving[key] // this process's own lease, renewed: it is served already
		if !already {
			b.w.serving[key] = 0
			b.w.threads.Add(1)
		}
		b.w.mu.Unlock()
		if !already {
			go b.serveThread(key)
		}
	}
	if told {
		poke(b.w.sendWake)
	}
	if len(claims) == free {
		poke(b.w.wake) // there may be more
	}
}

// serveThread drains a thread's inbox while this process holds its lease, one run at a time.
func (b *Bot) serveThread(key ThreadKey) {
	defer b.w.threads.Done()
	defer func() {
		b.w.mu.Lock()
		delete(b.w.serving, key)
		b.w.mu.Unlock()
		poke(b.w.wake)
	}()
	log := b.log.With("thread", key.String())
	ctx := context.WithoutCancel(b.w.runCtx) // store calls between runs finish even on shutdown
	for {
		if b.w.closing.Load() {
			b.release(ctx, key) // the messages still waiting go to whoever claims the thread next
			return
		}
		msgs, err := b.store.Pending(ctx, key, 50)
		if err != nil {
			log.Warn("read the thread's waiting messages; letting the thread go", "err", err)
			b.release(ctx, key)
			return
		}
		if len(msgs) == 0 {
			released, err := b.store.ReleaseIdle(ctx, key, b.opt.Owner)
			switch {
			case errors.Is(err, store.ErrLeaseHeld):
				log.Info("thread taken over by another owner", "err", err)
				return
			case err != nil:
				log.Warn("release an idle thread", "err", err)
				b.release(ctx, key)
				return
			case released:
				return
			}
			continue // a message arrived meanwhile
		}
		a := b.adapter(key.Platform)
		if a == nil {
			log.Error("no adapter for the thread's platform; letting the thread go")
			b.release(ctx, key)
			return
		}
		jobs := b.nextJobs(key, a, msgs)
		b.w.mu.Lock()
		b.w.serving[key] = len(msgs) - len(jobs)
		b.w.mu.Unlock()
		if !b.runJobs(key, a, jobs) {
			b.release(ctx, key)
			return
		}
	}
}

// release gives a thread's lease back, or leaves it to the heartbeat when the store fails now.
func (b *Bot) release(ctx context.Context, key ThreadKey) {
	rctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	if err := b.store.ReleaseLease(rctx, key, b.opt.Owner); err != nil {
		b.log.Warn("release a thread's lease; trying again later", "thread", key.String(), "err", err)
		b.w.mu.Lock()
		b.w.unreleased[key] = true
		b.w.mu.Unlock()
	}
}

// job is one kept message, read back for its run.
type job struct {
	inbox  int64
	msg    Message
	cmd    Command
	broken error // the kept message could not be read
}

// commandOf is what a message asks for; a file with no text is an import.
func commandOf(msg Message) Command {
	cmd := ParseCommand(msg.Text)
	if len(msg.Files) > 0 && cmd.Kind == CmdHelp && cmd.Err == "" {
		cmd = Command{Kind: CmdDraw}
	}
	return cmd
}

// nextJobs reads the first messages of msgs that go into one run: a command alone, or consecutive
// drawing requests (only the first may carry a file) merged.
func (b *Bot) nextJobs(key ThreadKey, a Adapter, msgs []store.InboxMessage) []job {
	read := func(m store.InboxMessage) job {
		msg, err := DecodeMessage(key, m.Body, a)
		if err != nil {
			return job{inbox: m.ID, msg: Message{Key: key}, broken: err}
		}
		return job{inbox: m.ID, msg: msg, cmd: commandOf(msg)}
	}
	first := read(msgs[0])
	if first.broken != nil || first.cmd.Kind != CmdDraw {
		return []job{first}
	}
	jobs := []job{first}
	for _, m := range msgs[1:] {
		j := read(m)
		if j.broken != nil || j.cmd.Kind != CmdDraw || len(j.msg.Files) > 0 {
			break
		}
		jobs = append(jobs, j)
	}
	return jobs
}

// runJobs runs one turn of the thread; false means this process should stop serving it (its lease
// went to another owner, or the store failed).
func (b *Bot) runJobs(key ThreadKey, a Adapter, jobs []job) bool {
	ctx, cancel := context.WithTimeout(b.w.runCtx, b.opt.RunTimeout)
	defer cancel()
	switch {
	case jobs[0].broken != nil:
		return b.unreadable(ctx, key, a, jobs[0])
	case jobs[0].cmd.Kind == CmdDraw:
		return b.draw(ctx, key, a, jobs)
	default:
		return b.command(ctx, key, a, jobs[0])
	}
}

// heartbeat renews this process's leases and outbox claims (those its runs left for its own
// sender too), every third of the lease.
func (b *Bot) heartbeat() {
	defer b.w.beat.Done()
	ctx := b.w.beatCtx
	tick := time.NewTicker(max(b.opt.LeaseTTL/3, 10*time.Millisecond))
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
		b.w.mu.Lock()
		var stale []ThreadKey
		for k := range b.w.unreleased {
			stale = append(stale, k)
		}
		b.w.mu.Unlock()
		// A lease this process let go of must not be renewed with the others.
		for _, k := range stale {
			if err := b.store.ReleaseLease(ctx, k, b.opt.Owner); err == nil {
				b.w.mu.Lock()
				delete(b.w.unreleased, k)
				b.w.mu.Unlock()
			}
		}
		b.w.mu.Lock()
		stale = stale[:0]
		for k := range b.w.unreleased {
			stale = append(stale, k)
		}
		b.w.mu.Unlock()
		if len(stale) > 0 {
			continue // renewing now would keep those alive too; the store is failing anyway
		}
		if _, err := b.store.RenewLeases(ctx, b.opt.Owner, b.opt.LeaseTTL); err != nil && ctx.Err() == nil {
			b.log.Warn("renew this process's leases; other replicas take its threads over if this goes on", "err", err)
		}
	}
}

// QueueDepth reports messages waiting behind the runs of this process's threads and the threads it
// works on, for metrics.
func (b *Bot) QueueDepth() (waiting, active int) {
	b.w.mu.Lock()
	defer b.w.mu.Unlock()
	for _, n := range b.w.serving {
		waiting += n
	}
	return waiting, len(b.w.serving)
}

// flushBudget is how long Close goes on posting replies after the runs ended.
const flushBudget = 10 * time.Second

// Close stops taking threads, lets running work finish until ctx ends (then cancels it: those runs
// end interrupted, and their threads are told), posts what replies it can for a short while, and
// stops. Messages still waiting stay in the store for another replica or the next start.
func (b *Bot) Close(ctx context.Context) {
	b.w.closeOnce.Do(func() { b.close(ctx) })
}

func (b *Bot) close(ctx context.Context) {
	b.w.closing.Store(true)
	b.w.stopClaims()
	if !b.w.started.Load() {
		b.w.stopSends()
		b.w.stopPosts()
		b.w.stopBeat()
		b.w.cancelRuns()
		return
	}
	// The claim loop ends before the serving goroutines are waited for: a claim under way could
	// start one after the wait began.
	b.w.claiming.Wait()
	done := make(chan struct{})
	go func() { b.w.threads.Wait(); close(done) }()
	select {
	case <-done:
	case <-ctx.Done():
		b.log.Warn("shutdown grace over: interrupting running work")
		b.w.cancelRuns()
		<-done
	}
	b.w.cancelRuns()
	// The send loop stops; what is left is posted here, for a short while (posts under way go on).
	b.w.stopSends()
	b.w.loops.Wait()
	flush, cancel := context.WithTimeout(context.Background(), flushBudget)
	defer cancel()
	for flush.Err() == nil {
		n := b.sendDue(flush)
		b.w.mu.Lock()
		busy := len(b.w.sending) > 0
		b.w.mu.Unlock()
		if n == 0 && !busy {
			break // a reply that failed now waits for its next attempt: another process's
		}
		select { // each post pokes it when it ends
		case <-b.w.sendWake:
		case <-flush.Done():
		}
	}
	cancel()
	b.w.stopPosts()
	b.w.sends.Wait()
	b.w.mu.Lock()
	var left []*statusLine
	for id, st := range b.w.live {
		left = append(left, st)
		delete(b.w.live, id)
	}
	b.w.mu.Unlock()
	for _, st := range left {
		st.finish() // their replies wait for another process, which takes the signs down again
	}
	b.w.stopBeat()
	b.w.beat.Wait()
}
