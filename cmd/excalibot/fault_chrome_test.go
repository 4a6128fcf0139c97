package main

import (
	"bytes"
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/excalibot/excalibot/config"
	"github.com/excalibot/excalibot/scene"
	"github.com/excalibot/excalibot/store/sqlite"
)

// killChromium SIGKILLs every Chromium browser process started by this test process (the
// renderer's, under serve) and returns how many it killed.
func killChromium() int {
	n := 0
	for _, pid := range childrenNamed(os.Getpid(), "chrom") {
		if syscall.Kill(pid, syscall.SIGKILL) == nil {
			n++
		}
	}
	return n
}

// killInRender kills Chromium once serve's log shows the agent's run finished (count says how
// many runs had finished before) and Chromium's processes have then used cpu more CPU time (a
// render is running). Waiting for the run's end first keeps Chromium's own background work during
// the model's turns from setting it off; polling only the noted processes every millisecond
// notices the render within a few milliseconds. It gives up after a minute and kills anyway.
func killInRender(logs *lockedBuffer, count int, cpu time.Duration) int {
	pids := descendants(os.Getpid())
	end := time.Now().Add(time.Minute)
	for time.Now().Before(end) && strings.Count(logs.String(), runFinished) <= count {
		time.Sleep(time.Millisecond)
	}
	start := chromiumCPU(pids)
	for time.Now().Before(end) && chromiumCPU(pids)-start < cpu {
		time.Sleep(time.Millisecond)
	}
	return killChromium()
}

// runFinished is what the agent logs when a run ends.
const runFinished = `msg="run finished" component=agent`

// chromiumCPU is the CPU time used so far by the Chromium processes among pids, from /proc (clock
// ticks of 10 ms).
func chromiumCPU(pids []int) time.Duration {
	var ticks int64
	for _, pid := range pids {
		b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
		if err != nil {
			continue
		}
		i := bytes.LastIndexByte(b, ')')
		if i < 0 || !bytes.Contains(b[:i], []byte("chrom")) {
			continue
		}
		f := strings.Fields(string(b[i+1:]))
		if len(f) < 13 {
			continue
		}
		ut, _ := strconv.ParseInt(f[11], 10, 64) // utime, field 14 of stat
		st, _ := strconv.ParseInt(f[12], 10, 64) // stime
		ticks += ut + st
	}
	return time.Duration(ticks) * 10 * time.Millisecond
}

// childrenNamed lists the direct children of pid whose command name starts with prefix.
func childrenNamed(pid int, prefix string) []int {
	var out []int
	for id, p := range processParents() {
		if p != pid {
			continue
		}
		comm, _ := os.ReadFile(fmt.Sprintf("/proc/%d/comm", id))
		if strings.HasPrefix(strings.TrimSpace(string(comm)), prefix) {
			out = append(out, id)
		}
	}
	return out
}

// bigScene is a .excalidraw file with n labelled boxes: its picture takes long enough to render
// (about a second on a loaded 2-core machine) that a kill lands in the middle of it.
func bigScene(t *testing.T, n int) []byte {
	t.Helper()
	sc := scene.New()
	for i := range n {
		e := scene.NewElement(scene.Rectangle)
		e.ID, e.X, e.Y, e.Width, e.Height = fmt.Sprintf("big%d", i), float64(i%20)*200, float64(i/20)*120, 180, 90
		txt := scene.NewElement(scene.Text)
		txt.ID, txt.X, txt.Y = fmt.Sprintf("big%dt", i), e.X+20, e.Y+30
		txt.Text, txt.OriginalText = fmt.Sprintf("service %d", i), fmt.Sprintf("service %d", i)
		for _, el := range []scene.Element{e, txt} {
			if _, err := sc.Add(el); err != nil {
				t.Fatal(err)
			}
		}
	}
	doc, err := sc.Encode()
	if err != nil {
		t.Fatal(err)
	}
	return doc
}

// Chromium killed with SIGKILL while it renders a bot run's picture. Once: the renderer restarts
// it and the picture still arrives. Again and again for several seconds: the reply carries the
// .excalidraw file with a notice that says the picture failed and how to get it again; then the
// renderer is back, /readyz is healthy, and the picture can be had.
func TestFaultChromeKilled(t *testing.T) {
	if _, err := os.Stat("/proc/self/stat"); err != nil {
		t.Skip("needs /proc to find Chromium's processes")
	}
	var dbPath string
	b := startFaultBot(t, func(c *config.Config) { dbPath = c.Database[len("sqlite:"):] })
	st, err := sqlite.Open(t.Context(), dbPath, storeOptions(), quietLog())
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()

	t.Run("killed once during the render", func(t *testing.T) {
		n := 40
		th := b.sl.start(t, n, "", &upload{Name: "big.excalidraw", Data: bigScene(t, 240)})
		if got, errs := waitSettled(t, b.sl, th, 1); len(got) != 1 || got[0].PNG == nil {
			t.Fatalf("import of the big scene: %d answers, errors %q", len(got), errs)
		}
		// Once the agent's run has finished, the bot saves and renders, and only the render makes
		// Chromium work: it dies when its processes have used 10 ms of CPU more than they had at
		// that moment. A kill that still misses the render (it finished first) is tried again with
		// the next follow-up, five times at most; five misses skip the test.
		var answers []answer
		for try, m := 1, 2; ; try, m = try+1, m+1 {
			before := strings.Count(b.logs.String(), "render attempt failed; retrying on a fresh tab")
			killed := make(chan int, 1)
			runs := strings.Count(b.logs.String(), runFinished)
			go func() { killed <- killInRender(b.logs, runs, 10*time.Millisecond) }()
			b.sl.say(t, th, n, "draw a box "+msgTag(n, m))
			var errs []string
			answers, errs = waitSettled(t, b.sl, th, m)
			if k := <-killed; k == 0 {
				t.Fatal("no Chromium process to kill")
			}
			if len(errs) > 0 || len(answers) != m || answers[m-1].PNG == nil {
				t.Fatalf("after one kill: %d answers, errors %q; want the picture (the renderer retries on a restarted Chromium)", len(answers), errs)
			}
			if strings.Count(b.logs.String(), "render attempt failed; retrying on a fresh tab") > before {
				break
			}
			if try == 5 {
				// Every picture still arrived, so nothing failed; but no kill landed inside a render,
				// which happens when the machine is too busy to time one (CI runs packages side by
				// side). render's TestChromeKilled kills Chromium inside a render deterministically.
				t.Skip("the kills missed the renders in five tries (machine too busy to time a kill inside one); every picture arrived")
			}
			t.Logf("try %d: the kill missed the render; again", try)
			checkHealthy(t, b.addr) // the next try starts with Chromium up
		}
		last := answers[len(answers)-1]
		if got := boxes(t, last); !slices.Contains(got, msgTag(n, len(answers))) {
			t.Errorf("picture's scene has %q, want %s in it", got, msgTag(n, len(answers)))
		}
		checkHealthy(t, b.addr)
	})

	t.Run("killed again and again", func(t *testing.T) {
		n := 41
		th := b.sl.start(t, n, "draw a box "+msgTag(n, 1), nil)
		first, errs := waitSettled(t, b.sl, th, 1)
		if len(first) != 1 || len(errs) > 0 {
			t.Fatalf("before the fault: %d answers, errors %q", len(first), errs)
		}
		before := revisions(t, st, slackKey(th))

		// Kill every Chromium that comes up for 8 s from the follow-up on: the render and its
		// retry both fail. Real time: Chromium is a real process, started when the renderer wants.
		var wg sync.WaitGroup
		wg.Add(1)
		go func() {
			defer wg.Done()
			for end := time.Now().Add(8 * time.Second); time.Now().Before(end); time.Sleep(20 * time.Millisecond) {
				killChromium()
			}
		}()
		b.sl.say(t, th, n, "draw a box "+msgTag(n, 2))
		answers, errs := waitSettled(t, b.sl, th, 2)
		wg.Wait()
		if len(answers) != 2 {
			t.Fatalf("%d answers, errors %q; want the second answer, with or without its picture", len(answers), errs)
		}
		got := answers[1]
		if got.PNG != nil {
			t.Log("the picture made it despite the kills (a render finished between two of them)")
		} else {
			var notice string
			_, texts, _ := b.sl.replies(th)
			for _, s := range texts {
				if strings.Contains(s, "could not render") {
					notice = s
				}
			}
			checkNotice(t, notice, "could not render the picture", "export png")
		}
		if tags := boxes(t, got); len(tags) != 2 {
			t.Errorf("the .excalidraw file of the answer has %q, want both boxes", tags)
		}
		after := revisions(t, st, slackKey(th))
		checkKept(t, before, after)
		if len(after) != len(before)+1 {
			t.Errorf("%d revisions, want %d: the drawing is saved even when its picture is not", len(after), len(before)+1)
		}
		checkHealthy(t, b.addr)

		b.sl.say(t, th, n, "export png")
		var texts []string
		waitLong(t, "the picture from export png", func() bool {
			var busy bool
			answers, texts, busy = b.sl.replies(th)
			return !busy && len(answers) == 3
		}, func() string { return fmt.Sprintf("%d answers, texts %q", len(answers), texts) })
		if answers[2].PNG == nil {
			t.Errorf("export png once Chromium is back: no picture; texts %q", texts)
		}
	})
}
