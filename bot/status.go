package bot

import (
	"context"
	"sync"
	"time"
)

// statusInterval is the least time between two status edits, so a fast run does not hit the
// platform's rate limits.
const statusInterval = 1500 * time.Millisecond

// statusLine shows a run's working signs from a goroutine of its own: the run never waits for the
// platform to put them up or edit them, and a failed sign never stops the run. Updates coalesce:
// the latest text is shown, at most one edit per statusInterval.
type statusLine struct {
	b     *Bot
	key   string
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
func (b *Bot) working(ctx context.Context, a Adapter, msg Message) *statusLine {
	s := &statusLine{b: b, key: msg.Key.String(), wake: make(chan struct{}, 1), run: make(chan int64, 1),
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

func (s *statusLine) show(ctx context.Context, a Adapter, msg Message) {
	defer close(s.done)
	started := time.Now()
	if after := s.b.opt.WorkingAfter; after > 0 {
		wait := time.NewTimer(after)
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
			s.b.log.Warn("show working sign", "thread", s.key, "err", err)
		}
		<-s.stop
		return
	}
	defer func() {
		// ctx may be over (shutdown, timeout): taking the signs down gets its own short budget.
		fctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
		defer cancel()
		if err := st.Finish(fctx); err != nil {
			s.b.log.Debug("finish status", "thread", s.key, "err", err)
		}
	}()
	// The signs' handle is stored with the run once the run is recorded and has gone on for
	// signDelay (see recordSign).
	var sign string
	var attached <-chan int64
	if ss, ok := st.(SignedStatus); ok {
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
		if wait := statusInterval - time.Since(last); shown != "" && wait > 0 {
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
			s.b.log.Debug("update status", "thread", s.key, "err", err)
		}
		shown, last = text, time.Now()
	}
}

// signDelay is how long a run goes on before its signs' handle is stored with it. Most runs
// that end sooner never pay the extra commit (a fifth per picture, which could hold up the
// revision's commit on SQLite); a crash in a run's first second leaves its signs up.
const signDelay = time.Second

// recordSign stores the signs' handle with run id.
func (s *statusLine) recordSign(ctx context.Context, id int64, sign string) {
	rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
	defer cancel()
	if err := s.b.store.SetRunSign(rctx, id, sign); err != nil {
		s.b.log.Debug("record the working signs with the run", "thread", s.key, "run", id, "err", err)
		return
	}
	s.b.log.Debug("working signs recorded with the run", "thread", s.key, "run", id)
}
