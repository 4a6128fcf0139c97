package storetest

import (
	"bufio"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/excalibot/excalibot/store"
)

// ChildEnv names the environment variable that makes a test binary act as the durability writer;
// its value is the path or DSN of the database.
const ChildEnv = "EXCALIBOT_STORE_DURABILITY_CHILD"

// durabilityKeys are the threads the child writes, one goroutine each.
var durabilityKeys = []store.ThreadKey{Key(1), Key(2)}

func durabilityScene(k, rev int) []byte {
	// Scenes big enough that a write spans several pages, so a torn write would show.
	return fmt.Appendf(nil, `{"thread":%d,"rev":%d,"pad":"%s"}`, k, rev, strings.Repeat("x", 9000+rev%7*1000))
}

func sum(b []byte) string { h := sha256.Sum256(b); return hex.EncodeToString(h[:8]) }

// DurabilityChild is the body of the child process: it saves revisions on durabilityKeys as fast as
// it can and prints "ack <thread> <rev> <sha>" after each Save returns, until it is killed. TestMain
// calls it when ChildEnv is set.
func DurabilityChild(open func(store.Options) (store.Store, error)) {
	s, err := open(store.Options{HistoryLimit: 1 << 30})
	if err != nil {
		fmt.Fprintln(os.Stderr, "child: open:", err)
		os.Exit(3)
	}
	var mu sync.Mutex
	w := bufio.NewWriter(os.Stdout)
	ack := func(line string) { // the parent counts a revision as acknowledged once it reads the line
		mu.Lock()
		defer mu.Unlock()
		fmt.Fprintln(w, line)
		w.Flush()
	}
	var wg sync.WaitGroup
	for i, key := range durabilityKeys {
		wg.Go(func() { // runs until the process is killed
			for rev := 1; ; rev++ {
				scene := durabilityScene(i, rev)
				_, err := s.Save(context.Background(), store.SaveRequest{Key: key, Base: int64(rev - 1), Scene: scene, Author: store.AuthorAgent})
				if err != nil {
					// The database died under us (the PostgreSQL test kills the server): wait to be
					// killed, as a real writer blocked on its database would.
					fmt.Fprintln(os.Stderr, "child: save:", err)
					select {}
				}
				ack(fmt.Sprintf("ack %d %d %s", i, rev, sum(scene)))
			}
		})
	}
	wg.Wait()
}

// Durability starts the test binary as a writer on the database named by target. After at least
// minAcks acknowledged revisions it calls crash, if not nil (PostgreSQL kills its server here, so
// commits are in flight when the server dies), and kills the child with SIGKILL. Then it calls
// recover, if not nil (restart the server), and checks with a freshly opened store that every
// acknowledged revision is there with its content.
func Durability(t *testing.T, target string, minAcks int, crash, recover func(), open func(store.Options) (store.Store, error)) {
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), ChildEnv+"="+target)
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	acked := map[[2]int]string{} // thread index, rev → content hash
	last := [2]int{}
	sc := bufio.NewScanner(stdout)
	killed := false
	// A child that stops acknowledging (it hit an error) is killed after a while, so the test ends.
	watchdog := time.AfterFunc(2*time.Minute, func() { _ = cmd.Process.Kill() })
	defer watchdog.Stop()
	for sc.Scan() {
		var k, rev int
		var h string
		if _, err := fmt.Sscanf(sc.Text(), "ack %d %d %s", &k, &rev, &h); err != nil {
			t.Fatalf("child said %q: %v", sc.Text(), err)
		}
		acked[[2]int{k, rev}] = h
		last[k] = max(last[k], rev)
		if !killed && len(acked) >= minAcks {
			// Killed mid-stream: writes are in flight in both goroutines.
			if crash != nil {
				crash()
			}
			if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
				t.Fatal(err)
			}
			killed = true
		}
	}
	err = cmd.Wait()
	if !killed {
		t.Fatalf("child stopped after %d of %d acknowledgements (%v): %s", len(acked), minAcks, err, stderr.String())
	}
	if ws, ok := cmd.ProcessState.Sys().(syscall.WaitStatus); !ok || ws.Signal() != syscall.SIGKILL {
		t.Fatalf("child: got %v, want death by SIGKILL; stderr: %s", err, stderr.String())
	}
	t.Logf("child killed after %d acknowledged revisions (last: %v)", len(acked), last)
	if recover != nil {
		recover()
	}
	s, err := open(store.Options{HistoryLimit: 1 << 30})
	if err != nil {
		t.Fatalf("reopen after the crash: %v", err)
	}
	defer s.Close()
	ctx := t.Context()
	for i, key := range durabilityKeys {
		th, err := s.Load(ctx, key)
		if last[i] == 0 && errors.Is(err, store.ErrNotFound) {
			continue // nothing acknowledged on it, and its first save did not land
		}
		if err != nil {
			t.Fatalf("thread %d after the crash: %v", i, err)
		}
		if th.Rev < int64(last[i]) {
			t.Errorf("thread %d: at revision %d after the crash, but %d was acknowledged", i, th.Rev, last[i])
		}
		// The write in flight may or may not have landed; either way it must be whole.
		if th.Rev > int64(last[i])+1 {
			t.Errorf("thread %d: at revision %d, more than one past the last acknowledged %d", i, th.Rev, last[i])
		}
		if got, want := sum(th.Scene), sum(durabilityScene(i, int(th.Rev))); got != want {
			t.Errorf("thread %d: current revision %d has content %s, want %s", i, th.Rev, got, want)
		}
	}
	for kr, h := range acked {
		r, err := s.Revision(ctx, durabilityKeys[kr[0]], int64(kr[1]))
		if err != nil {
			t.Errorf("acknowledged revision %d of thread %d: %v", kr[1], kr[0], err)
			continue
		}
		if got := sum(r.Scene); got != h {
			t.Errorf("acknowledged revision %d of thread %d: content %s, want %s", kr[1], kr[0], got, h)
		}
	}
	// The store still takes writes where the child left off.
	th, _ := s.Load(ctx, durabilityKeys[0])
	if _, err := s.Save(ctx, store.SaveRequest{Key: durabilityKeys[0], Base: th.Rev, Scene: []byte("{}"), Author: store.AuthorAgent}); err != nil {
		t.Fatalf("Save after the crash: %v", err)
	}
}
