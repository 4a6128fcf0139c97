package relay

import (
	"context"
	"log/slog"
	"slices"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/excalibot/excalibot/bot"
)

// signAdapter is an adapter whose working signs record what they show.
type signAdapter struct {
	release chan struct{} // when set, Working waits for it, as a slow platform's signs
	sign    string        // when set, the status names its signs

	mu       sync.Mutex
	shown    []string
	working  int
	finished int
}

func (a *signAdapter) Platform() string                                     { return "test" }
func (a *signAdapter) Send(context.Context, bot.ThreadKey, bot.Reply) error { return nil }

func (a *signAdapter) Working(ctx context.Context, msg bot.Message) (bot.Status, error) {
	if a.release != nil {
		<-a.release
	}
	a.mu.Lock()
	a.working++
	a.mu.Unlock()
	var st bot.Status = signStatus{a}
	if a.sign != "" {
		st = signedStatus{st, a.sign}
	}
	return st, nil
}

// seen is what the signs showed, and how often they went up and came down.
func (a *signAdapter) seen() (shown []string, working, finished int) {
	a.mu.Lock()
	defer a.mu.Unlock()
	return slices.Clone(a.shown), a.working, a.finished
}

type signStatus struct{ a *signAdapter }

func (s signStatus) Update(ctx context.Context, text string) error {
	s.a.mu.Lock()
	s.a.shown = append(s.a.shown, text)
	s.a.mu.Unlock()
	return nil
}

func (s signStatus) Finish(ctx context.Context) error {
	s.a.mu.Lock()
	s.a.finished++
	s.a.mu.Unlock()
	return nil
}

func noRecord(context.Context, int64, string) error { return nil }

var quiet = slog.New(slog.DiscardHandler)

// TestStatusLineCoalesces: texts asked for while the signs go up collapse into the latest one; a
// text asked for within statusEvery of an edit waits for it, and is dropped when the run ends
// first.
func TestStatusLineCoalesces(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		a := &signAdapter{release: make(chan struct{})}
		s := showStatus(t.Context(), a, bot.Message{Key: thread}, -1, quiet, noRecord)
		for _, text := range []string{"drawing…", "drawing 1 box…", "drawing 2 boxes…"} {
			s.update(text)
		}
		close(a.release)
		synctest.Wait()
		want := []string{"drawing 2 boxes…"}
		if got, _, _ := a.seen(); !slices.Equal(got, want) {
			t.Fatalf("shown %q, want %q", got, want)
		}
		s.update("drawing 3 boxes…")
		s.update("rendering…")
		synctest.Wait()
		if got, _, _ := a.seen(); !slices.Equal(got, want) {
			t.Fatalf("within the interval: shown %q, want %q", got, want)
		}
		time.Sleep(statusEvery)
		synctest.Wait()
		want = append(want, "rendering…")
		if got, _, _ := a.seen(); !slices.Equal(got, want) {
			t.Fatalf("after the interval: shown %q, want %q", got, want)
		}
		s.update("sending…") // the run ends before the interval is over
		s.finish()
		if got, working, finished := a.seen(); !slices.Equal(got, want) || working != 1 || finished != 1 {
			t.Errorf("shown %q, up %d and down %d times; want %q, once each", got, working, finished, want)
		}
	})
}

// TestWorkingSignsOnlyForSlowRuns: a run that ends within WorkingAfter shows no signs at all, not
// even after its end; one that goes on longer shows them.
func TestWorkingSignsOnlyForSlowRuns(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		fast := &signAdapter{}
		s := showStatus(t.Context(), fast, bot.Message{Key: thread}, time.Second, quiet, noRecord)
		s.update("drawing…")
		time.Sleep(time.Second / 2)
		s.settle() // the run ended: its reply is about to be queued
		time.Sleep(time.Hour)
		s.finish()
		if shown, working, _ := fast.seen(); working != 0 || len(shown) != 0 {
			t.Errorf("a run that ended before WorkingAfter showed its signs %d times (%q), want never", working, shown)
		}

		slow := &signAdapter{}
		s = showStatus(t.Context(), slow, bot.Message{Key: thread}, time.Second, quiet, noRecord)
		s.update("drawing…")
		time.Sleep(time.Second)
		synctest.Wait()
		if shown, working, _ := slow.seen(); working != 1 || !slices.Equal(shown, []string{"drawing…"}) {
			t.Errorf("a run past WorkingAfter: signs up %d times showing %q, want once, showing drawing…", working, shown)
		}
		s.settle()
		s.finish()
		if _, _, finished := slow.seen(); finished != 1 {
			t.Errorf("signs came down %d times, want once", finished)
		}
	})
}

// TestSignStoredWithTheRun: the signs' handle is stored with the run once the run has gone on for
// signDelay, not before.
func TestSignStoredWithTheRun(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var mu sync.Mutex
		var stored []string
		record := func(_ context.Context, run int64, sign string) error {
			mu.Lock()
			stored = append(stored, sign)
			mu.Unlock()
			return nil
		}
		got := func() []string {
			mu.Lock()
			defer mu.Unlock()
			return slices.Clone(stored)
		}
		a := &signAdapter{sign: "status-1"}
		s := showStatus(t.Context(), a, bot.Message{Key: thread}, -1, quiet, record)
		s.attach(7)
		synctest.Wait()
		if len(got()) != 0 || s.sign() != "status-1" {
			t.Fatalf("stored %q at once (sign %q); want nothing before signDelay", got(), s.sign())
		}
		time.Sleep(signDelay)
		synctest.Wait()
		if !slices.Equal(got(), []string{"status-1"}) {
			t.Errorf("stored %q after signDelay, want the handle", got())
		}
		s.finish()
	})
}

// TestHeldSignsComeDown: a run's signs held for its reply come down after signHold when no reply
// is posted; taken for the reply, they are not taken down by the hold.
func TestHeldSignsComeDown(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b := board{live: map[int64]held{}, told: map[int64]bool{}}
		a := &signAdapter{}
		s1 := showStatus(t.Context(), a, bot.Message{Key: thread}, -1, quiet, noRecord)
		s2 := showStatus(t.Context(), a, bot.Message{Key: thread}, -1, quiet, noRecord)
		b.hold(1, s1)
		b.hold(2, s2)
		if b.take(2) != s2 {
			t.Fatal("take did not return the held signs")
		}
		time.Sleep(signHold)
		synctest.Wait()
		if _, working, finished := a.seen(); working != 2 || finished != 1 {
			t.Errorf("after signHold: %d up, %d down; want 2 up, the held ones down", working, finished)
		}
		if b.take(1) != nil {
			t.Error("signs taken down by the hold are still held")
		}
		s2.finish()
	})
}
