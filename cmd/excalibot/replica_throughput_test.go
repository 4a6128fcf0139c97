//go:build load

package main

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/excalibot/excalibot/config"
)

// TestReplicaThroughput measures messages per second with one replica and then with two on the
// same database, against a model of fixed turn time: 10 threads × 3 messages each time, each
// follow-up sent once the previous message is answered. The figures are logged, never asserted;
// docs/reliability.md has them:
//
//	go test -tags load ./cmd/excalibot -run '^TestReplicaThroughput$' -v
func TestReplicaThroughput(t *testing.T) {
	sh := newReplicaShared(t)
	const turn = 300 * time.Millisecond
	c := newCluster(t, sh, turn)
	reps := []*replica{c.start("A", "")}
	var rate [3]float64
	for n := 1; n <= 2; n++ {
		if n == 2 {
			reps = append(reps, c.start("B", ""))
		}
		before := map[*replica]int{}
		for _, r := range reps {
			before[r] = len(r.model.Requests())
		}
		tr := newTraffic(t, c, 1+(n-1)*10, 10)
		deadline := time.Now().Add(loadWait)
		playAll(t, tr, 3, func(*rthread, int) bool { return false }, deadline)
		rep, ok := tr.waitSettled(t, time.Until(deadline), false)
		if !ok {
			t.Errorf("waited %s for every acknowledged message to be answered or told", loadWait)
		}
		rep.check(t, true)
		wall := tr.wall()
		rate[n] = float64(rep.Sent) / wall.Seconds()
		var share []string
		for _, r := range reps {
			share = append(share, fmt.Sprintf("%s %d", r.name, len(r.model.Requests())-before[r]))
		}
		t.Logf("throughput, %d replica(s), model %s per turn (3 turns a run), %d runs at once per replica: %d messages in %.1f s: %.2f messages/s, %.2f pictures/s; model requests per replica: %s",
			n, turn, config.Default().MaxConcurrentRuns, rep.Sent, wall.Seconds(), rate[n], float64(rep.Pictures)/wall.Seconds(), strings.Join(share, ", "))
	}
	t.Logf("throughput: two replicas %.2f× one", rate[2]/rate[1])
}

// wall is the time from the first message sent to the last picture seen.
func (tr *traffic) wall() time.Duration {
	var first, last time.Time
	for _, th := range tr.ths {
		posts := tr.run.posts(th.loadThread)
		th.mu.Lock()
		for _, at := range th.sent {
			if first.IsZero() || at.Before(first) {
				first = at
			}
		}
		for _, p := range posts {
			if at := th.seen[p.id]; p.picture && at.After(last) {
				last = at
			}
		}
		th.mu.Unlock()
	}
	return last.Sub(first)
}
