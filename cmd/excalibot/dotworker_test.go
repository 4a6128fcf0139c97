package main

import (
	"bytes"
	"log/slog"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/excalibot/excalibot/agent/ollamafake"
	"github.com/excalibot/excalibot/layout"
)

func TestMain(m *testing.M) {
	// serve, chat and eval start this program as their Graphviz worker; in the tests that run
	// them in-process this program is the test binary, which then does what main does.
	if len(os.Args) == 2 && os.Args[1] == dotWorkerCommand {
		os.Exit(dotWorker(os.Stdin, os.Stdout, os.Stderr))
	}
	os.Exit(m.Run())
}

// dotWorkers lists the dot workers among the processes under pid.
func dotWorkers(pid int) []int {
	var out []int
	for _, id := range descendants(pid) {
		cmdline, _ := os.ReadFile("/proc/" + strconv.Itoa(id) + "/cmdline")
		if args := strings.Split(strings.TrimRight(string(cmdline), "\x00"), "\x00"); len(args) == 2 && args[1] == dotWorkerCommand && alive(id) {
			out = append(out, id)
		}
	}
	return out
}

// alive reports whether pid runs: it exists and is not a zombie waiting for a parent to reap it.
func alive(pid int) bool {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return false
	}
	i := bytes.LastIndexByte(b, ')')
	return i >= 0 && i+2 < len(b) && b[i+2] != 'Z'
}

// groupedGraph has what the own layout's dot sources hold: groups, nested, and edge labels.
func groupedGraph() layout.Graph {
	g := layout.Graph{Direction: layout.TopDown,
		Clusters: []layout.Cluster{{ID: "api", TitleHeight: 30}, {ID: "data", TitleHeight: 30}, {ID: "cache", TitleHeight: 30, Parent: "data"}}}
	for i, c := range []string{"", "api", "api", "api", "data", "data", "cache", "cache", ""} {
		g.Nodes = append(g.Nodes, layout.Node{ID: "n" + strconv.Itoa(i), Width: 160, Height: 60, Cluster: c})
	}
	for _, e := range [][2]int{{0, 1}, {0, 2}, {1, 3}, {2, 3}, {3, 4}, {3, 6}, {4, 5}, {6, 7}, {5, 8}, {7, 8}, {8, 0}} {
		g.Edges = append(g.Edges, layout.Edge{From: "n" + strconv.Itoa(e[0]), To: "n" + strconv.Itoa(e[1]), LabelWidth: 70, LabelHeight: 20})
	}
	return g
}

// With the worker set, layouts come from a child process and are the ones laid out in-process; a
// worker SIGKILLed is replaced at the next layout, and stop leaves no worker behind.
func TestDotWorkerLaysOut(t *testing.T) {
	ctx := t.Context()
	g := groupedGraph()
	want, err := layout.Layout(ctx, g)
	if err != nil {
		t.Fatal(err)
	}
	var logs lockedBuffer
	stop := useDotWorker(ctx, slog.New(slog.NewTextHandler(&logs, nil)))
	defer stop()
	workers := dotWorkers(os.Getpid())
	if len(workers) != 1 {
		t.Fatalf("%d dot workers under the test, want 1 started", len(workers))
	}
	for round := range 2 {
		got, err := layout.Layout(ctx, g)
		if err != nil {
			t.Fatalf("round %d: %v", round, err)
		}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("round %d: the worker's layout differs from in-process's:\ngot  %+v\nwant %+v", round, got.Nodes, want.Nodes)
		}
		if round == 0 {
			if err := syscall.Kill(workers[0], syscall.SIGKILL); err != nil {
				t.Fatal(err)
			}
		}
	}
	if now := dotWorkers(os.Getpid()); len(now) != 1 || now[0] == workers[0] {
		t.Errorf("dot workers %v after %d was killed, want one other", now, workers[0])
	}
	if !strings.Contains(logs.String(), "dot worker replaced") {
		t.Errorf("the log does not say the killed worker was replaced:\n%s", logs.String())
	}
	stop()
	if now := dotWorkers(os.Getpid()); len(now) != 0 {
		t.Errorf("dot workers %v after stop, want none", now)
	}
	if _, err := layout.Layout(ctx, g); err != nil {
		t.Errorf("in-process after stop: %v", err)
	}
}

// `excalibot serve` runs its own `excalibot dot-worker`, which does not outlive it: stopped with
// serve, and exiting on its own when serve is SIGKILLed. It gets none of serve's secrets.
func TestServeDotWorker(t *testing.T) {
	if testing.Short() {
		t.Skip("builds excalibot")
	}
	bin := buildExcalibot(t)
	model := ollamafake.New(t, ollamafake.Config{})
	const secret = "chat-secret-that-stays-in-serve"
	for _, end := range []string{"SIGTERM", "SIGKILL"} {
		t.Run(end, func(t *testing.T) {
			addr := freeAddr(t)
			bot := startBot(t, bin, []string{
				"OLLAMA_HOST=" + model.URL(), "EXCALIBOT_MODEL=" + ollamafake.DefaultModel,
				"EXCALIBOT_DATABASE=sqlite:" + filepath.Join(t.TempDir(), "bot.db"), "EXCALIBOT_LISTEN=" + addr,
				"EXCALIBOT_CHROME=" + filepath.Join(t.TempDir(), "no-chromium"), "EXCALIBOT_LOG_LEVEL=debug",
				"EXCALIBOT_CHAT_SECRET=" + secret,
			}, addr)
			workers := dotWorkers(bot.cmd.Process.Pid)
			if len(workers) != 1 {
				t.Fatalf("dot workers under serve: %v, want one\n%s", workers, bot.logs.String())
			}
			if env, err := os.ReadFile("/proc/" + strconv.Itoa(workers[0]) + "/environ"); err != nil || bytes.Contains(env, []byte(secret)) {
				t.Errorf("the dot worker's environment holds serve's secret (read error %v)", err)
			}
			if !strings.Contains(bot.logs.String(), "Graphviz worker started") {
				t.Errorf("serve's log does not say the worker started:\n%s", bot.logs.String())
			}
			// SIGINT and SIGTERM to the whole group (Ctrl-C, a service manager) are for serve,
			// which finishes its drawings with the worker.
			if ign := ignoredSignals(t, workers[0]); ign&(1<<(syscall.SIGINT-1)) == 0 || ign&(1<<(syscall.SIGTERM-1)) == 0 {
				t.Errorf("the dot worker's ignored signals are %#x, want SIGINT and SIGTERM among them", ign)
			}
			if end == "SIGTERM" {
				bot.stop(t)
			} else {
				bot.kill()
			}
			waitLong(t, "the dot worker to exit", func() bool { return !alive(workers[0]) }, nil)
		})
	}
}

// The worker's subcommand is for excalibot itself: usage does not list it, and only main takes
// it, before any command's setup (run, which dispatches the commands, does not).
func TestDotWorkerIsHidden(t *testing.T) {
	_, out, _ := runHelp(t, "help")
	if strings.Contains(out, dotWorkerCommand) {
		t.Errorf("usage lists %s:\n%s", dotWorkerCommand, out)
	}
	if code, _, errText := runHelp(t, dotWorkerCommand); code != 2 || !strings.Contains(errText, "unknown command") {
		t.Errorf("run %s: exit %d, %q; want 2, unknown command", dotWorkerCommand, code, errText)
	}
}

// ignoredSignals is the mask of the signals pid ignores (SigIgn in /proc/PID/status).
func ignoredSignals(t *testing.T, pid int) uint64 {
	t.Helper()
	status, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/status")
	if err != nil {
		t.Fatal(err)
	}
	for line := range strings.Lines(string(status)) {
		if hex, ok := strings.CutPrefix(line, "SigIgn:"); ok {
			mask, err := strconv.ParseUint(strings.TrimSpace(hex), 16, 64)
			if err != nil {
				t.Fatalf("SigIgn of %d: %v", pid, err)
			}
			return mask
		}
	}
	t.Fatalf("no SigIgn in /proc/%d/status", pid)
	return 0
}

func TestDotWorkerEnv(t *testing.T) {
	got := dotWorkerEnv([]string{"TMPDIR=/var/tmp", "SLACK_BOT_TOKEN=xoxb-1", "GOMAXPROCS=2", "GODEBUG=x=1",
		"EXCALIBOT_DATABASE=postgres://u:p@h/db", "PATH=/bin", "HOME=/root", "OLLAMA_HOST=http://x", "GOOGLE_APPLICATION_CREDENTIALS=/k.json", "GOTRACEBACK=all"})
	want := []string{"TMPDIR=/var/tmp", "GOMAXPROCS=2", "GODEBUG=x=1", "GOTRACEBACK=all"}
	if !slices.Equal(got, want) {
		t.Errorf("got %q, want %q", got, want)
	}
	if got := dotWorkerEnv(nil); got == nil {
		t.Error("an empty environment came out nil, which would give the worker this process's")
	}
}
