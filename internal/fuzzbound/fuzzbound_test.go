package fuzzbound

import (
	"errors"
	"strings"
	"testing"
	"time"
)

func TestWithin(t *testing.T) {
	want := errors.New("refused")
	if got := Within(time.Second, "quick", func() error { return want }); got != want {
		t.Errorf("got %v, want fn's error %v", got, want)
	}
	defer func() {
		msg, _ := recover().(string)
		if !strings.Contains(msg, "slow: no result after 10ms") {
			t.Errorf("panic %q, want one naming the step and the budget", msg)
		}
	}()
	release := make(chan struct{})
	defer close(release)
	Within(10*time.Millisecond, "slow", func() error { <-release; return nil })
	t.Error("Within returned for a call that outlived its budget")
}
