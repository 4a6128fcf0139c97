//go:build load

package main

import (
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ollama/ollama/api"

	"github.com/excalibot/excalibot/agent/ollamafake"
)

// TestReplicaKillLoop SIGKILLs a replica again and again while several drawings run on it, with a
// second replica alive: each round sends one message to each of 4 threads (2 Slack, 2 Telegram)
// through the victim, waits until the victim's model is drawing them (turns of 1.5 s, three to a
// run, so a kill always finds the runs in flight), kills it, waits until every message is
// answered, and starts a replacement; the victims alternate, so replacements are killed too.
// Every drawing cut short must be redone by the live replica and answered once, in order, with
// no error reply and no thread asked to send anything again. It logs, per round and over all, how
// many runs the kill cut short and the takeover time (from the kill to each of the victim's
// threads' next post); docs/store.md has the figures:
//
//	go test -tags load ./cmd/excalibot -run '^TestReplicaKillLoop$' -v -timeout 2h
//
// EXCALIBOT_TEST_KILLS sets the number of rounds (20).
func TestReplicaKillLoop(t *testing.T) {
	rounds := 20
	if s := os.Getenv("EXCALIBOT_TEST_KILLS"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n < 1 {
			t.Fatalf("EXCALIBOT_TEST_KILLS=%q: want a positive number", s)
		}
		rounds = n
	}
	sh := newReplicaShared(t)
	const threads, turn = 4, 1500 * time.Millisecond
	c := newCluster(t, sh, turn)
	c.settings = []string{"EXCALIBOT_MAX_CONCURRENT_RUNS=8"}
	live := []*replica{c.start("A0", ""), c.start("B0", "")}
	tr := newTraffic(t, c, 1, threads)

	type began struct {
		r  *replica
		at time.Time
	}
	var mu sync.Mutex
	drawn := map[string][]began{} // tag → each run's first model request of it, in order
	drawnBy := func(tag string) *replica {
		mu.Lock()
		defer mu.Unlock()
		if b := drawn[tag]; len(b) > 0 {
			return b[0].r
		}
		return nil
	}
	c.setHook(func(r *replica, req api.ChatRequest) (ollamafake.Turn, bool) {
		if turnsSinceRequest(req) == 0 {
			mu.Lock()
			for _, tag := range tags(ollamafake.Request(req)) {
				drawn[tag] = append(drawn[tag], began{r, time.Now()})
			}
			mu.Unlock()
		}
		return ollamafake.Turn{}, false
	})

	var takeovers, answered []time.Duration
	inFlight := 0
	for k := 1; k <= rounds; k++ {
		slot := (k - 1) % 2
		victim := live[slot]
		var round []string
		for _, th := range tr.ths {
			tr.send(t, th, k, victim)
			round = append(round, msgTag(th.n, k))
		}
		waitLong(t, fmt.Sprintf("round %d: the round's drawings under way", k), func() bool {
			for _, tag := range round {
				if drawnBy(tag) == nil {
					return false
				}
			}
			return true
		}, func() string { return tr.account().String() })
		var cut []string
		for _, tag := range round {
			if drawnBy(tag) == victim {
				cut = append(cut, tag)
			}
		}
		inFlight += len(cut)

		seen := tr.seenIDs()
		killed := time.Now()
		victim.kill()
		waitAnswered(t, tr, c.waitTO, round...)
		var took []string
		for _, th := range tr.ths {
			tag := msgTag(th.n, k)
			if !slices.Contains(cut, tag) {
				continue
			}
			// The poll notes when a post appeared; it may not have looked since the answer came.
			waitLong(t, th.String()+"'s answer seen by the poll", func() bool { return !tr.firstPostSince(th, seen).IsZero() },
				func() string { return tr.account().String() })
			mu.Lock()
			redo := drawn[tag][len(drawn[tag])-1]
			mu.Unlock()
			if redo.r == victim {
				t.Errorf("%s: no run of it began after the kill", tag)
				continue
			}
			d, a := redo.at.Sub(killed), tr.firstPostSince(th, seen).Sub(killed)
			takeovers, answered = append(takeovers, d), append(answered, a)
			took = append(took, fmt.Sprintf("T%d redone by %s after %.1f s, answered after %.1f s", th.n, redo.r.name, d.Seconds(), a.Seconds()))
		}
		t.Logf("round %d: killed %s with %d of %d drawings under way (%s); %s", k, victim, len(cut), len(round),
			strings.Join(cut, " "), strings.Join(took, "; "))
		live[slot] = c.start(fmt.Sprintf("%c%d", 'A'+slot, k), "")
	}

	rep, ok := tr.waitSettled(t, c.waitTO, true)
	t.Logf("after %d kills: %s", rounds, rep)
	if !ok {
		t.Errorf("waited %s for every acknowledged message to be answered", c.waitTO)
	}
	rep.check(t, true) // nothing told, no error reply: every cut run redone
	runs := interruptedRuns(t, c.st)
	if runs != inFlight {
		t.Errorf("%d runs cut short in the store, want the %d the kills found under way", runs, inFlight)
	}
	if len(takeovers) > 0 {
		t.Logf("kill loop: %d kills, %d drawings under way at the kills, %d runs cut short and redone, %d messages answered once each; from the kill to the redo's start %s; to its answer %s",
			rounds, inFlight, runs, rep.Answered, spread(takeovers), spread(answered))
	}
}

// spread is the least, median and greatest of ds.
func spread(ds []time.Duration) string {
	ds = slices.Clone(ds)
	slices.Sort(ds)
	return fmt.Sprintf("min %.1f s, median %.1f s, max %.1f s", ds[0].Seconds(), ds[len(ds)/2].Seconds(), ds[len(ds)-1].Seconds())
}
