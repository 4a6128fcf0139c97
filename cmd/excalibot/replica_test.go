package main

import (
	"context"
	"fmt"
	"sync"
	"syscall"
	"testing"
	"time"
)

// TestReplica runs `excalibot serve` as several replicas on one PostgreSQL, through fake Slack
// (Socket Mode, events spread over every replica's connection) and fake Telegram (webhooks spread
// over the replicas), with a fake model of fixed turn time: under load, with replicas killed and
// restarted, with the platform down when a reply goes out. Each ends with the account of
// replica_traffic_test.go: every acknowledged message answered once or its thread told, nothing
// out of order or mixed between threads. The subtests share one build and one PostgreSQL server;
// docs/reliability.md has the figures they log (the takeover time after a kill, memory during
// maximum-size editor saves; throughput is TestReplicaThroughput, build tag load).
func TestReplica(t *testing.T) {
	if testing.Short() {
		t.Skip("replicas: skipped in -short")
	}
	sh := newReplicaShared(t)
	t.Run("load", func(t *testing.T) {
		t.Run("distinct host names", func(t *testing.T) {
			requireUnshare(t)
			testReplicaLoad(t, sh, "replica-a", "replica-b")
		})
		t.Run("same host name", func(t *testing.T) { testReplicaLoad(t, sh, "", "") })
	})
	t.Run("kill", func(t *testing.T) { requireUnshare(t); testReplicaKill(t, sh) })
	t.Run("rolling restart", func(t *testing.T) { testReplicaRolling(t, sh) })
	t.Run("platform down", func(t *testing.T) { testReplicaPlatformDown(t, sh) })
	t.Run("editor saves", func(t *testing.T) { testSaveMemory(t, sh) })
	t.Run("slack duplicates", func(t *testing.T) { testReplicaSlackDuplicates(t, sh) })
	t.Run("telegram chain", func(t *testing.T) { testReplicaTelegramChain(t, sh) })
	t.Run("poison", func(t *testing.T) { requireUnshare(t); testReplicaPoison(t, sh) })
}

// loadWait bounds a load without faults: it takes seconds; a message lost stops its conversation
// (the next waits for its answer), and the test reports it once this much time has passed.
const loadWait = 2 * time.Minute

// playAll plays every thread of tr at once (each starting a little after the previous one) until
// deadline, and fails the test for a message no replica acknowledged.
func playAll(t *testing.T, tr *traffic, msgs int, early func(th *rthread, k int) bool, deadline time.Time) {
	t.Helper()
	ctx, cancel := context.WithDeadline(context.Background(), deadline)
	defer cancel()
	var wg sync.WaitGroup
	errc := make(chan error, len(tr.ths))
	for i, th := range tr.ths {
		wg.Go(func() {
			sleepCtx(ctx, time.Duration(i)*50*time.Millisecond)
			if err := tr.converse(ctx, th, msgs, func(k int) bool { return early(th, k) }, nil); err != nil {
				errc <- err
			}
		})
	}
	wg.Wait()
	close(errc)
	for err := range errc {
		t.Error(err)
	}
}

// earlyFollowUps sends follow-ups while their thread still works, each to the other replica than
// the message before: the second message of T1, T5, T9 (Slack) right after the first, before the
// thread has a revision (it carries no mention, and the replica it reaches has not seen the thread:
// it must know the thread from its first message); every follow-up of T2, T6, T10 (Telegram) right
// after the one before (answered in the order sent, whichever replica got each). The other threads
// wait for each answer.
func earlyFollowUps(th *rthread, k int) bool {
	return (th.n%4 == 1 && k == 2) || th.n%4 == 2
}

// Two replicas, 10 threads × 3 messages spread over both: nothing lost, duplicated, out of order
// or mixed between threads, no error reply, and both replicas draw.
func testReplicaLoad(t *testing.T, sh *replicaShared, hostA, hostB string) {
	c := newCluster(t, sh, 100*time.Millisecond)
	reps := c.startAll([]string{"A", "B"}, []string{hostA, hostB})
	tr := newTraffic(t, c, 1, 10)
	start := time.Now()
	playAll(t, tr, 3, earlyFollowUps, start.Add(loadWait))
	rep, ok := tr.waitSettled(t, time.Until(start.Add(loadWait)), true)
	t.Logf("%s in %.1f s", rep, time.Since(start).Seconds())
	if !ok {
		t.Errorf("waited %s for every acknowledged message to be answered or told", loadWait)
	}
	rep.check(t, true)
	for _, r := range reps {
		if n := len(r.model.Requests()); n == 0 {
			t.Errorf("%s drew nothing (0 model requests): the replicas do not share the work", r)
		} else {
			t.Logf("%s: %d model requests", r, n)
		}
	}
}

// A rolling restart under traffic, with one host name: A works alone, B starts while A draws,
// A stops (SIGTERM) while it draws, A2 starts while B draws. No message is lost, told or answered
// twice, and nothing B or A2 does at its start touches A's live work.
func testReplicaRolling(t *testing.T, sh *replicaShared) {
	c := newCluster(t, sh, 400*time.Millisecond)
	a := c.start("A", "")
	tr := newTraffic(t, c, 1, 10)
	played := make(chan struct{})
	deadline := time.Now().Add(loadWait + 2*faultWait) // three starts and a stop under way
	go func() {
		defer close(played)
		playAll(t, tr, 3, earlyFollowUps, deadline)
	}()
	working := func(r *replica, what string) {
		t.Helper()
		n := len(r.model.Requests())
		waitLong(t, fmt.Sprintf("%s to draw (%s)", r, what), func() bool { return len(r.model.Requests()) > n },
			func() string { return tr.account().String() })
	}
	working(a, "before B starts")
	c.start("B", "")
	working(a, "before it is stopped")
	a.signal(syscall.SIGTERM)
	select {
	case <-a.exited:
	case <-time.After(shutdownGrace + 30*time.Second):
		t.Errorf("%s did not stop within %s of SIGTERM", a, shutdownGrace+30*time.Second)
	}
	c.start("A2", "")
	<-played
	rep, ok := tr.waitSettled(t, time.Until(deadline), true)
	t.Log(rep)
	if !ok {
		t.Errorf("waited until %s for every acknowledged message to be answered or told", deadline.Format(time.TimeOnly))
	}
	rep.check(t, true)
}
