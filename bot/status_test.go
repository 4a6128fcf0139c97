package bot

import (
	"context"
	"slices"
	"testing"
	"time"
)

// slowSigns is an adapter whose working signs take until release to go up, as a slow platform's.
type slowSigns struct {
	*recorder
	release chan struct{}
}

func (s slowSigns) Working(ctx context.Context, msg Message) (Status, error) {
	<-s.release
	return s.recorder.Working(ctx, msg)
}

// TestWorkingSignsDoNotHoldTheRun: the reply goes out while the platform is still putting up the
// working signs; they still go up, and come down once.
func TestWorkingSignsDoNotHoldTheRun(t *testing.T) {
	h := newHarness(t, Options{WorkingAfter: -1}, nil)
	a := slowSigns{recorder: h.rec, release: make(chan struct{})}
	h.bot.Handle(context.Background(), a, Message{Key: thread, EventID: "e1", ID: "1", Text: "draw a box"})
	h.rec.wait(t, 1) // would time out if the run waited for the signs
	if r := h.rec.last(thread); r.Image == nil {
		t.Fatalf("reply = %+v; want the picture", r)
	}
	close(a.release)
	h.bot.Close(context.Background())
	h.rec.mu.Lock()
	defer h.rec.mu.Unlock()
	if h.rec.working != 1 || h.rec.finish != 1 {
		t.Errorf("signs shown %d and taken down %d times, want 1 and 1", h.rec.working, h.rec.finish)
	}
}

// TestStatusLineCoalesces: texts asked for while the signs go up collapse into the latest one;
// a text asked for within the interval after an edit waits, and is dropped when the run ends first.
func TestStatusLineCoalesces(t *testing.T) {
	h := newHarness(t, Options{}, nil)
	a := slowSigns{recorder: h.rec, release: make(chan struct{})}
	s := h.bot.working(context.Background(), a, Message{Key: thread})
	for _, text := range []string{"drawing…", "drawing… 1 shape", "drawing… 2 shapes"} {
		s.update(text)
	}
	close(a.release)
	shown := func() []string {
		h.rec.mu.Lock()
		defer h.rec.mu.Unlock()
		return slices.Clone(h.rec.status)
	}
	deadline := time.Now().Add(10 * time.Second)
	for len(shown()) == 0 && time.Now().Before(deadline) {
		time.Sleep(time.Millisecond)
	}
	s.update("rendering…") // within the interval: waits, then the run ends
	s.finish()
	if got, want := shown(), []string{"drawing… 2 shapes"}; !slices.Equal(got, want) {
		t.Errorf("status edits = %q, want %q", got, want)
	}
	h.rec.mu.Lock()
	defer h.rec.mu.Unlock()
	if h.rec.finish != 1 {
		t.Errorf("signs taken down %d times, want 1", h.rec.finish)
	}
}

// TestWorkingSignsOnlyForSlowRuns: a run that answers within WorkingAfter shows no signs at all,
// not even after its reply; one that goes on longer shows them, and they come down after the reply.
func TestWorkingSignsOnlyForSlowRuns(t *testing.T) {
	fast := newHarness(t, Options{WorkingAfter: time.Hour}, nil) // every run here answers sooner
	fast.say(thread, "draw a box")
	fast.rec.wait(t, 1)
	fast.bot.Close(context.Background()) // the run's signs are done with: never up
	fast.rec.mu.Lock()
	shown := fast.rec.working
	fast.rec.mu.Unlock()
	if shown != 0 {
		t.Errorf("a run that answered before WorkingAfter showed its signs %d times, want none", shown)
	}

	h := newHarness(t, Options{WorkingAfter: 20 * time.Millisecond}, nil)
	h.drawer.block = make(chan struct{}) // this run lasts until the signs are up
	h.say(thread, "add another")
	waitFor(t, "the signs of the slow run", func() bool {
		h.rec.mu.Lock()
		defer h.rec.mu.Unlock()
		return h.rec.working == 1
	})
	close(h.drawer.block)
	h.rec.wait(t, 1)
	waitFor(t, "the signs to come down", func() bool {
		h.rec.mu.Lock()
		defer h.rec.mu.Unlock()
		return h.rec.finish == 1
	})
}

func TestProgressLine(t *testing.T) {
	for _, c := range []struct {
		p    Progress
		want string
	}{
		{Progress{Step: 1}, "drawing…"},
		{Progress{Step: 2, Shapes: 1}, "drawing 1 box…"},
		{Progress{Step: 3, Shapes: 4, Arrows: 1}, "drawing 4 boxes and 1 arrow…"},
		{Progress{Step: 5, Arrows: 2}, "drawing 2 arrows…"},
	} {
		if got := progressLine(c.p); got != c.want {
			t.Errorf("progressLine(%+v) = %q, want %q", c.p, got, c.want)
		}
	}
}
