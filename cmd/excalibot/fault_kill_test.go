package main

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/excalibot/excalibot/agent/ollamafake"
	"github.com/excalibot/excalibot/internal/waitfor"
	"github.com/excalibot/excalibot/store/sqlite"
)

// botProcess is an `excalibot serve` child process.
type botProcess struct {
	cmd  *exec.Cmd
	addr string
	logs *tailBuffer
	done chan error
}

// buildExcalibot builds the binary of this package into a temp dir.
func buildExcalibot(t *testing.T) string {
	t.Helper()
	goBin, err := exec.LookPath("go")
	if err != nil {
		t.Skip("needs the go command to build excalibot")
	}
	bin := filepath.Join(t.TempDir(), "excalibot")
	ctx, cancel := context.WithTimeout(t.Context(), 5*time.Minute)
	defer cancel()
	if out, err := exec.CommandContext(ctx, goBin, "build", "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	return bin
}

// startBot starts `bin serve` with env and waits until /healthz answers.
func startBot(t *testing.T, bin string, env []string, addr string) *botProcess {
	t.Helper()
	p := &botProcess{addr: addr, logs: &tailBuffer{max: 64 << 10}, done: make(chan error, 1)}
	p.cmd = exec.Command(bin, "serve")
	p.cmd.Env = append([]string{"PATH=" + os.Getenv("PATH"), "HOME=" + t.TempDir()}, env...)
	p.cmd.Stdout, p.cmd.Stderr = p.logs, p.logs
	if err := p.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { p.done <- p.cmd.Wait() }() // owned by kill, which waits for it
	t.Cleanup(func() {
		p.kill()
		if t.Failed() {
			t.Logf("the end of the log of excalibot serve (pid %d):\n%s", p.cmd.Process.Pid, p.logs.String())
		}
	})
	waitLong(t, "excalibot serve to answer /healthz", func() bool {
		code, _ := httpGet("http://" + addr + "/healthz")
		return code == 200
	}, func() string { return p.logs.String() })
	return p
}

// kill SIGKILLs the process (once) and waits until it is gone.
func (p *botProcess) kill() {
	_ = p.cmd.Process.Signal(syscall.SIGKILL)
	err := <-p.done
	p.done <- err // for the next kill or stop
}

// stop ends the process as SIGTERM does and waits for it.
func (p *botProcess) stop(t *testing.T) {
	t.Helper()
	_ = p.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case err := <-p.done:
		p.done <- err
		if err != nil {
			t.Errorf("excalibot serve after SIGTERM: %v", err)
		}
	case <-time.After(shutdownGrace + 10*time.Second):
		t.Error("excalibot serve did not stop after SIGTERM")
		p.kill()
	}
}

// descendants lists every process under pid.
func descendants(pid int) []int {
	parent := processParents()
	var out []int
	for id := range parent {
		for p := parent[id]; p > 1; p = parent[p] {
			if p == pid {
				out = append(out, id)
				break
			}
		}
	}
	return out
}

// The bot process SIGKILLed while it draws, then started again on the same SQLite file: the
// new process takes the killed run's working signs down and redoes the run, so the thread gets
// the drawing it asked for, once, and no error reply; nothing stored is lost or corrupted, the
// thread draws on, and the killed process's Chromium does not outlive it.
func TestFaultBotKilled(t *testing.T) {
	chrome := chromium(t)
	bin := buildExcalibot(t)
	sl := newSlack(t)
	model := ollamafake.New(t, ollamafake.Config{Responder: taggedBoxes})
	dbPath := filepath.Join(t.TempDir(), "bot.db")
	addr := freeAddr(t)
	fc := sl.fake.Config()
	env := []string{
		"OLLAMA_HOST=" + model.URL(), "EXCALIBOT_MODEL=" + ollamafake.DefaultModel,
		"EXCALIBOT_DATABASE=sqlite:" + dbPath, "EXCALIBOT_CHROME=" + chrome, "EXCALIBOT_RENDER_TABS=1",
		"EXCALIBOT_LISTEN=" + addr, "EXCALIBOT_LOG_LEVEL=debug",
		"SLACK_BOT_TOKEN=" + fc.BotToken, "SLACK_APP_TOKEN=" + fc.AppToken,
		"EXCALIBOT_SLACK_API_URL=" + sl.fake.APIURL(), "EXCALIBOT_SLACK_MODE=socket",
		"EXCALIBOT_USER_RATE=1000", "EXCALIBOT_CHAT_RATE=1000",
	}
	first := startBot(t, bin, env, addr)
	ctx, cancel := context.WithTimeout(t.Context(), faultWait)
	defer cancel()
	if err := sl.fake.WaitConnected(ctx); err != nil {
		t.Fatal(err)
	}

	n := 60
	th := sl.start(t, n, "draw a box "+msgTag(n, 1), nil)
	posted, errs := waitSettled(t, sl, th, 1)
	if len(posted) != 1 || len(errs) > 0 {
		t.Fatalf("before the kill: %d answers, errors %q", len(posted), errs)
	}

	// SIGKILL in the middle of the next run, while the model is answering its second turn. The
	// run's working signs are up then: its status line, and the reaction on the request.
	var chromes []int
	var statusLines, reacted []string // ts of each
	earlier := map[string]bool{}      // the thread before the run: the first answer
	for _, m := range sl.fake.Thread(th.chat, th.root) {
		earlier[m.TS] = true
	}
	model.SetResponder(onStep(msgTag(n, 2), 1, func() {
		// A run stores its signs' handle once it has gone on for a second (bot's signDelay). This
		// runs in the fake model's goroutine, where the test may not stop: it only reports.
		if !waitfor.Within(faultWait, func() bool { return strings.Contains(first.logs.String(), "working signs recorded with the run") }) {
			t.Errorf("the run's working signs were not recorded with it within %s", faultWait)
		}
		for _, m := range sl.fake.Thread(th.chat, th.root) {
			// The status line, not the rest of the first answer (its text may still be on its way:
			// that run was quick and showed no signs to wait for).
			if m.BotID != "" && !earlier[m.TS] && len(m.Files) == 0 && (m.Text == slackWorking || m.Edits > 0) {
				statusLines = append(statusLines, m.TS)
			}
			if m.BotID == "" && len(sl.fake.Reactions(th.chat, m.TS)) > 0 {
				reacted = append(reacted, m.TS)
			}
		}
		chromes = descendants(first.cmd.Process.Pid)
		first.kill()
	}))
	connections := sl.fake.Connections()
	sl.say(t, th, n, "draw a box "+msgTag(n, 2))
	select {
	case err := <-first.done:
		first.done <- err
	case <-time.After(faultWait):
		t.Fatal("the run never reached the model's second turn")
	}
	model.SetResponder(taggedBoxes)
	if len(chromes) == 0 {
		t.Error("the killed process had no Chromium under it")
	}
	waitLong(t, "the killed process's Chromium to exit", func() bool {
		for _, pid := range chromes {
			if syscall.Kill(pid, 0) == nil {
				if comm, _ := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/comm"); len(comm) > 0 {
					return false
				}
			}
		}
		return true
	}, func() string { return fmt.Sprint(chromes) })
	// SQLite serves one process at a time: the store is read between the two processes, and
	// after the second has stopped.
	checkIntegrity(t, dbPath)
	before := readRevisions(t, dbPath, th)
	if got, want := before[1], sha256.Sum256(posted[0].Excalidraw); got != want || len(before) != 1 {
		t.Errorf("after the kill: %d revisions, revision 1 the posted scene: %v; want exactly it", len(before), got == want)
	}

	second := startBot(t, bin, env, addr)
	waitLong(t, "the new process's Socket Mode connection", func() bool { return sl.fake.Connections() > connections },
		func() string { return second.logs.String() })
	var answers []answer
	replies := func(wantAnswers, wantErrs int) func() bool {
		return func() bool {
			var texts []string
			answers, texts, _ = sl.replies(th)
			errs = slices.DeleteFunc(texts, func(s string) bool { return !isErrorReply(s) })
			return len(answers) >= wantAnswers && len(errs) >= wantErrs && answers[len(answers)-1].Excalidraw != nil
		}
	}
	describe := func() string { return fmt.Sprintf("%d answers, error replies %q", len(answers), errs) }
	waitLong(t, "the interrupted request redone", replies(2, 0), describe)
	if len(answers) != 2 || len(errs) != 0 {
		t.Fatalf("after the restart: %s; want the first answer and the redone one, no error reply", describe())
	}
	if got, want := boxes(t, answers[1]), []string{msgTag(n, 1), msgTag(n, 2)}; !slices.Equal(got, want) {
		t.Errorf("the redone run's scene has %q, want %q", got, want)
	}
	checkHealthy(t, addr)
	// The new process took the killed run's signs down (the store kept their handle with the run),
	// and the redo's own came down after its answer.
	if len(statusLines) == 0 || len(reacted) == 0 {
		t.Errorf("at the kill: status lines %v, reacted requests %v; want the run's signs up", statusLines, reacted)
	}
	for _, ts := range statusLines {
		if m, ok := sl.fake.Message(th.chat, ts); !ok || !m.Deleted {
			t.Errorf("the killed run's status line %s (%q) is still in the thread", ts, m.Text)
		}
	}
	for _, ts := range reacted {
		waitLong(t, "the request's reactions to come down", func() bool { return len(sl.fake.Reactions(th.chat, ts)) == 0 },
			func() string { return fmt.Sprint(sl.fake.Reactions(th.chat, ts)) })
	}

	// The thread is known from the store: a follow-up without a mention draws on.
	sl.say(t, th, n, "draw a box "+msgTag(n, 3))
	waitLong(t, "the answer after the restart", replies(3, 0), describe)
	if got, want := boxes(t, answers[len(answers)-1]), []string{msgTag(n, 1), msgTag(n, 2), msgTag(n, 3)}; !slices.Equal(got, want) {
		t.Errorf("after the restart the scene has %q, want %q", got, want)
	}
	if len(errs) != 0 {
		t.Errorf("error replies %q, want none", errs)
	}
	second.stop(t)
	checkIntegrity(t, dbPath)
	after := readRevisions(t, dbPath, th)
	checkKept(t, before, after)
	if len(after) != 3 {
		t.Errorf("%d revisions at the end, want 3", len(after))
	}
}

// readRevisions opens the SQLite file (no bot process may hold it) and reads th's revisions.
func readRevisions(t *testing.T, path string, th *chatThread) map[int64][32]byte {
	t.Helper()
	st, err := sqlite.Open(t.Context(), path, storeOptions(), quietLog())
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	return revisions(t, st, slackKey(th))
}

// checkIntegrity runs SQLite's own consistency check on the database file.
func checkIntegrity(t *testing.T, path string) {
	t.Helper()
	db, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var res string
	if err := db.QueryRow("PRAGMA integrity_check").Scan(&res); err != nil || res != "ok" {
		t.Errorf("integrity_check after the kill: %q %v, want ok", res, err)
	}
}
