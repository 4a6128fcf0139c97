package ratelimit

import (
	"testing"
	"time"
)

func TestLimiter(t *testing.T) {
	now := time.Unix(1_700_000_000, 0)
	r := New(6, 2, func() time.Time { return now }) // one token every 10 s, bursts of 2
	steps := []struct {
		advance time.Duration
		key     string
		ok      bool
	}{
		{0, "alice", true},
		{0, "alice", true},
		{0, "alice", false}, // burst spent
		{0, "bob", true},    // buckets are per key
		{5 * time.Second, "alice", false},
		{5 * time.Second, "alice", true}, // 10 s refill one token
		{0, "alice", false},
	}
	for i, s := range steps {
		now = now.Add(s.advance)
		ok, retry := r.Allow(s.key)
		if ok != s.ok {
			t.Fatalf("step %d (%s): Allow = %v, want %v", i, s.key, ok, s.ok)
		}
		if !ok && (retry <= 0 || retry > 11*time.Second) {
			t.Errorf("step %d: retryAfter = %v, want within (0, 11s]", i, retry)
		}
	}
	now = now.Add(time.Hour)
	r.Allow("carol")
	r.mu.Lock()
	n := len(r.buckets)
	r.mu.Unlock()
	if n != 1 {
		t.Errorf("after an idle hour %d buckets remain, want 1 (only carol)", n)
	}
}
