package waitfor

import (
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"
)

func TestWithin(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var n atomic.Int32
		go func() {
			time.Sleep(time.Second)
			n.Store(1)
		}()
		start := time.Now()
		if !Within(time.Minute, func() bool { return n.Load() == 1 }) {
			t.Fatal("Within: false for a condition that came true after a second")
		}
		if got := time.Since(start); got < time.Second || got > time.Second+Every {
			t.Errorf("Within returned after %s, want within %s of the condition holding (1s)", got, Every)
		}
		start = time.Now()
		if Within(time.Second, func() bool { return false }) {
			t.Fatal("Within: true for a condition that never holds")
		}
		if got := time.Since(start); got < time.Second {
			t.Errorf("Within gave up after %s, want 1s", got)
		}
	})
}

// recorder is a testing.TB that records a failure instead of stopping the test.
type recorder struct {
	testing.TB
	failed string
}

func (r *recorder) Helper() {}
func (r *recorder) Fatal(args ...any) {
	r.failed = args[0].(string)
}

func TestUntil(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		tests := []struct {
			name string
			cond func() bool
			seen func() string
			want string // the failure; "" for none
		}{
			{"holds", func() bool { return true }, nil, ""},
			{"never, nothing to show", func() bool { return false }, nil, "waited 1s for the answer"},
			{"never, with what was seen", func() bool { return false }, func() string { return "2 answers" }, "waited 1s for the answer; got 2 answers"},
		}
		for _, tc := range tests {
			r := &recorder{TB: t}
			Until(r, time.Second, "the answer", tc.cond, tc.seen)
			if got := r.failed; got != tc.want {
				t.Errorf("%s: failure %q, want %q", tc.name, got, tc.want)
			}
		}
	})
}
