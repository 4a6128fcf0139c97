// Package ratelimit keeps token buckets per key, for chat users and chats (the bot) and editor
// tokens and addresses (the web server).
//
// The buckets live in this process's memory: each replica counts on its own, so with N replicas
// behind one bot a key may make up to N times the configured rate.
package ratelimit

import (
	"math"
	"sync"
	"time"
)

// Limiter keeps one token bucket per key (a user, a chat). Buckets idle long enough to be full
// again are forgotten, so memory stays bounded by the number of recently active keys.
type Limiter struct {
	rate  float64 // tokens per second
	burst float64
	now   func() time.Time

	mu      sync.Mutex
	buckets map[string]*bucket
	sweep   time.Time
}

type bucket struct {
	tokens float64
	last   time.Time
}

// New allows perMinute requests per key on average, with bursts of burst requests.
// now may be nil (time.Now).
func New(perMinute float64, burst int, now func() time.Time) *Limiter {
	if now == nil {
		now = time.Now
	}
	if burst < 1 {
		burst = 1
	}
	return &Limiter{rate: perMinute / 60, burst: float64(burst), now: now, buckets: map[string]*bucket{}}
}

// Allow takes a token from key's bucket. When the bucket is empty it returns false and how long
// until the next token, so the refusal can say when to try again.
func (r *Limiter) Allow(key string) (ok bool, retryAfter time.Duration) {
	r.mu.Lock()
	defer r.mu.Unlock()
	now := r.now()
	r.forgetIdle(now)
	b := r.buckets[key]
	if b == nil {
		b = &bucket{tokens: r.burst, last: now}
		r.buckets[key] = b
	}
	b.tokens = min(r.burst, b.tokens+now.Sub(b.last).Seconds()*r.rate)
	b.last = now
	if b.tokens >= 1 {
		b.tokens--
		return true, 0
	}
	return false, time.Duration(math.Ceil((1-b.tokens)/r.rate)) * time.Second
}

// forgetIdle drops buckets that have refilled completely; it runs at most once a minute.
func (r *Limiter) forgetIdle(now time.Time) {
	if now.Sub(r.sweep) < time.Minute {
		return
	}
	r.sweep = now
	full := time.Duration(r.burst / r.rate * float64(time.Second))
	for k, b := range r.buckets {
		if now.Sub(b.last) > full {
			delete(r.buckets, k)
		}
	}
}
