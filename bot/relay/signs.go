package relay

import (
	"context"
	"log/slog"
	"sync"
	"time"

	"github.com/excalibot/excalibot/bot"
	"github.com/excalibot/excalibot/internal/logkey"
)

// statusEvery is the least time between two edits of a run's status line, whatever the platform:
// a fast run must not hit Slack's or Telegram's rate limits, and the reader cannot follow faster.
// It is the one throttle of status edits; adapters edit when they are asked to.
const statusEvery = 1500 * time.Millisecond

// signDelay is how long a run goes on before its signs' handle is stored with it. Most runs
// that end sooner never pay the extra commit (a fifth per picture, which could hold up the
// revision's commit on SQLite); a crash in a run's first second leaves its signs up.
const signDelay = time.Second

// signHold is the longest a run's working signs stay up waiting for its reply to be posted.
const signHold = 10 * time.Minute

// statusLine shows a run's working signs from a goroutine of its own: the run never waits for the
// platform to put them up or edit them, and a failed sign never stops the run. Updates coalesce:
// the latest text is shown, at most one edit per statusEvery.
type statusLine struct {
	key    string
	after  time.Duration // how long the run goes on before the signs go up (Options.WorkingAfter)
	log    *slog.Logger
	record func(ctx context.Context, run int64, sign string) error // stores the signs' handle with the run

	wake  chan struct{} // a new text is waiting
	run   chan int64    // the run's id, once it is recorded (attach)
	stop  chan struct{} // closed by finish
	quiet chan struct{} // closed by settle: the run has ended, signs not up yet stay down
	done  chan struct{} // closed when the goroutine has taken the signs down

	once       sync.Once // finish
	settleOnce sync.Once

	mu     sync.Mutex
	text   string // latest text asked for
	handle string // the signs' handle (SignedStatus), once they are up
}

// working starts showing that work on msg is under way; finish takes the signs down.
func (e *Engine) working(ctx context.Context, a bot.Adapter, msg bot.Message) *statusLine {
	return showStatus(ctx, a, msg, e.opt.WorkingAfter, e.log, e.store.SetRunSign)
}

func showStatus(ctx context.Context, a bot.Adapter, msg bot.Message, after time.Duration, log *slog.Logger,
	record func(context.Context, int64, string) error) *statusLine {
	s := &statusLine{key: msg.Key.String(), after: after, log: log, record: record,
		wake: make(chan struct{}, 1), run: make(chan int64, 1),
		stop: make(chan struct{}), quiet: make(chan struct{}), done: make(chan struct{})}
	go s.show(ctx, a, msg)
	return s
}

// attach names the run the signs belong to, so that their handle (SignedStatus) is stored with it.
func (s *statusLine) attach(runID int64) {
	select {
	case s.run <- runID:
	default: // attached already
	}
}

// update asks for text to be shown; it returns at once.
func (s *statusLine) update(text string) {
	s.mu.Lock()
	s.text = text
	s.mu.Unlock()
	select {
	case s.wake <- struct{}{}:
	default: // a wake-up is already pending; it will read the latest text
	}
}

// settle says the run has ended (its reply is about to be queued): signs that have not gone up
// by now never do.
func (s *statusLine) settle() {
	s.settleOnce.Do(func() { close(s.quiet) })
}

// finish takes the signs down and waits until they are; after the reply (the send loop calls it
// once the run's reply is posted). Calls after the first do nothing.
func (s *statusLine) finish() {
	s.once.Do(func() { close(s.stop) })
	<-s.done
}

// sign is the signs' handle (SignedStatus) if they are up and named one, else "".
func (s *statusLine) sign() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.handle
}

func (s *statusLine) show(ctx context.Context, a bot.Adapter, msg bot.Message) {
	defer close(s.done)
	started := time.Now()
	if s.after > 0 {
		wait := time.NewTimer(s.after)
		defer wait.Stop()
		select {
		case <-wait.C:
		case <-s.quiet:
		case <-s.stop:
		}
		// The timer may have fired together with the run's end: the end wins, so signs never go
		// up after the reply is queued.
		select {
		case <-s.stop:
			return
		case <-s.quiet:
			<-s.stop
			return
		default:
		}
	}
	st, err := a.Working(ctx, msg)
	if err != nil || st == nil {
		if err != nil {
			s.log.Warn("show working sign", logkey.Thread, s.key, logkey.Err, err)
		}
		<-s.stop
		return
	}
	defer func() {
		// ctx may be over (shutdown, timeout): taking the signs down gets its own short budget.
		fctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
		defer cancel()
		if err := st.Finish(fctx); err != nil {
			s.log.Debug("finish status", logkey.Thread, s.key, logkey.Err, err)
		}
	}()
	// The signs' handle is stored with the run once the run is recorded and has gone on for
	// signDelay.
	var sign string
	var attached <-chan int64
	if ss, ok := st.(bot.SignedStatus); ok {
		if sign = ss.Sign(); sign != "" {
			attached = s.run
			s.mu.Lock()
			s.handle = sign
			s.mu.Unlock()
		}
	}
	var runID int64
	var signAt <-chan time.Time
	var shown string
	var last time.Time
	var later <-chan time.Time // set while a text waits for the interval to pass
	for {
		select {
		case <-s.stop:
			return
		case runID = <-attached:
			// A run that lasted signDelay already (its signs went up late) records at once.
			attached, signAt = nil, time.After(max(0, signDelay-time.Since(started)))
			continue
		case <-signAt:
			signAt = nil
			s.recordSign(ctx, runID, sign)
			continue
		case <-s.wake:
		case <-later:
			later = nil
		}
		s.mu.Lock()
		text := s.text
		s.mu.Unlock()
		if text == shown || later != nil {
			continue
		}
		if wait := statusEvery - time.Since(last); shown != "" && wait > 0 {
			later = time.After(wait)
			continue
		}
		// A run that finished meanwhile needs no more edits.
		select {
		case <-s.stop:
			return
		default:
		}
		if err := st.Update(ctx, text); err != nil {
			s.log.Debug("update status", logkey.Thread, s.key, logkey.Err, err)
		}
		shown, last = text, time.Now()
	}
}

// recordSign stores the signs' handle with run id.
func (s *statusLine) recordSign(ctx context.Context, id int64, sign string) {
	rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
	defer cancel()
	if err := s.record(rctx, id, sign); err != nil {
		s.log.Debug("record the working signs with the run", logkey.Thread, s.key, "run", id, logkey.Err, err)
		return
	}
	s.log.Debug("working signs recorded with the run", logkey.Thread, s.key, "run", id)
}

// board is what this process knows of its runs after they end: the working signs still up until
// their replies are posted, and the runs whose thread was told of a failure directly.
type board struct {
	mu   sync.Mutex
	live map[int64]held
	told map[int64]bool
}

// held is a run's signs, with the timer that takes them down when no reply is posted in time.
type held struct {
	st    *statusLine
	timer *time.Timer
}

// hold keeps a run's signs until take (the send loop, once the reply is posted), or signHold at
// most: a reply that waits long (the platform down), or that another replica posts, must not leave
// them up (and Telegram's chat action repeating) for hours.
func (b *board) hold(run int64, st *statusLine) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if h, ok := b.live[run]; ok {
		h.timer.Stop()
	}
	b.live[run] = held{st: st, timer: time.AfterFunc(signHold, func() {
		if b.drop(run, st) {
			st.finish()
		}
	})}
}

// take returns a run's signs and forgets them; nil when none are held.
func (b *board) take(run int64) *statusLine {
	b.mu.Lock()
	defer b.mu.Unlock()
	h, ok := b.live[run]
	if !ok {
		return nil
	}
	h.timer.Stop()
	delete(b.live, run)
	return h.st
}

// drop forgets a run's signs if they are still st, and reports whether they were.
func (b *board) drop(run int64, st *statusLine) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	if h, ok := b.live[run]; !ok || h.st != st {
		return false
	}
	delete(b.live, run)
	return true
}

// finishAll takes down every sign still held (on shutdown: their replies wait for another process,
// which takes the signs down again).
func (b *board) finishAll() {
	b.mu.Lock()
	var left []*statusLine
	for run, h := range b.live {
		h.timer.Stop()
		left = append(left, h.st)
		delete(b.live, run)
	}
	b.mu.Unlock()
	for _, st := range left {
		st.finish()
	}
}

// markTold notes that run's thread was told of its failure directly, so recovery does not tell it
// again.
func (b *board) markTold(run int64) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if len(b.told) > 10_000 { // a bound: recovery usually comes within a lease
		clear(b.told)
	}
	b.told[run] = true
}

// toldOf reports whether run's thread was told directly (and keeps it for wasTold).
func (b *board) toldOf(run int64) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.told[run]
}

// wasTold reports (once) whether run's thread was told directly.
func (b *board) wasTold(run int64) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	t := b.told[run]
	delete(b.told, run)
	return t
}
