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
	h := newHarness(t, Options{}, nil)
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
