// Package waitfor is how tests wait for what other goroutines and processes do when there is no
// event to wait on: a condition checked until it holds, and a failure that says what was awaited
// and what was seen instead. A test that can wait on a channel, or run in a testing/synctest
// bubble, needs none of it.
package waitfor

import (
	"fmt"
	"testing"
	"time"
)

// Every is how often a condition is checked.
const Every = 5 * time.Millisecond

// Until checks cond until it holds. When within passes first it fails t with what it waited for
// and, when seen is not nil, what seen reports then.
func Until(t testing.TB, within time.Duration, what string, cond func() bool, seen func() string) {
	t.Helper()
	if Within(within, cond) {
		return
	}
	msg := fmt.Sprintf("waited %s for %s", within, what)
	if seen != nil {
		msg += "; got " + seen()
	}
	t.Fatal(msg)
}

// Within checks cond until it holds or within passes, and reports whether it held: for
// goroutines other than the test's own, which may not stop the test.
func Within(within time.Duration, cond func() bool) bool {
	deadline := time.Now().Add(within)
	for !cond() {
		if time.Now().After(deadline) {
			return false
		}
		time.Sleep(Every)
	}
	return true
}
