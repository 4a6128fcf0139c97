package main

// End-to-end tests: the real serve (core, adapters, agent, renderer, SQLite, web server) against
// fake Slack, fake Telegram and fake Ollama speaking their wire protocols. The scenarios are
// written once over a small driver interface; e2e_slack_test.go and e2e_telegram_test.go drive
// each platform in each of its receive modes.

import (
	"bytes"
	"fmt"
	"io"
	"net"
	"net/http"
	"os/exec"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/excalibot/excalibot/agent/ollamafake"
	"github.com/excalibot/excalibot/config"
	"github.com/excalibot/excalibot/internal/waitfor"
	"github.com/excalibot/excalibot/scene"
	"github.com/ollama/ollama/api"
)

// e2eWait bounds every wait for the bot; runs take well under a second each with the instant
// model, so this only matters when something is broken.
const e2eWait = 45 * time.Second

// chromium returns the browser for the renderer, or skips: the end-to-end tests need the real
// renderer.
func chromium(t testing.TB) string {
	t.Helper()
	for _, p := range []string{"/usr/bin/chromium", "chromium"} {
		if path, err := exec.LookPath(p); err == nil {
			return path
		}
	}
	t.Skip("end-to-end tests need Chromium (apt-get install chromium; CI installs it)")
	return ""
}

// lockedBuffer collects serve's log; the test reads it while serve writes.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// e2e is one running serve with its fake model.
type e2e struct {
	addr   string
	ollama *ollamafake.Server
	logs   *lockedBuffer
	stop   func() // as on SIGTERM: returns once serve has ended; called again, does nothing
}

// startE2E runs serve against a fake Ollama with the Boxes model, the real renderer and SQLite in
// a temp dir; setup adds the chat platforms. serve stops when the test ends, and its log is shown
// when the test failed.
func startE2E(t testing.TB, setup func(*config.Config)) *e2e {
	t.Helper()
	chrome := chromium(t)
	e := &e2e{logs: &lockedBuffer{}}
	e.ollama = ollamafake.New(t, ollamafake.Config{Responder: ollamafake.Boxes})
	cfg := config.Default()
	cfg.Listen = "127.0.0.1:0"
	cfg.Database = "sqlite:" + t.TempDir() + "/bot.db"
	cfg.OllamaHost = e.ollama.URL()
	cfg.Model = ollamafake.DefaultModel
	cfg.ChromePath = chrome
	cfg.RenderTabs = 1   // one warm tab: Chromium start is the slow part of these tests
	cfg.WorkingAfter = 0 // the fake model answers at once; the scenarios look for the working signs
	cfg.LogLevel = "debug"
	setup(&cfg)
	addr, stop := startServe(t, cfg, e.logs)
	e.addr = addr
	e.stop = sync.OnceFunc(stop)
	t.Cleanup(func() {
		e.stop()
		if t.Failed() {
			t.Logf("serve's log:\n%s", e.logs.String())
		}
	})
	return e
}

// freeAddr reserves a local port for a server whose public URL must be known before it starts
// (Telegram's setWebhook).
func freeAddr(t testing.TB) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	return addr
}

func (e *e2e) get(t testing.TB, path string) (int, string) {
	t.Helper()
	resp, err := http.Get("http://" + e.addr + path)
	if err != nil {
		t.Fatalf("GET %s: %v", path, err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(body)
}

// answer is one picture the bot posted: the PNG, the .excalidraw file and the text that came
// with them.
type answer struct {
	PNG, Excalidraw []byte
	Text            string
}

// chatThread names a conversation on a platform.
type chatThread struct {
	chat string // Slack channel, Telegram chat id
	root string // Slack thread ts; empty on Telegram (a private chat is one thread)
	last any    // the platform's handle on the latest message, for redelivery
}

// driver is what the scenarios need from a platform and its fake.
type driver interface {
	// start posts text from user where it starts a new conversation with the bot (a mention in
	// a channel, a private chat), with an optional file.
	start(t *testing.T, user int, text string, file *upload) *chatThread
	// say posts a follow-up in th.
	say(t *testing.T, th *chatThread, user int, text string)
	// redeliver hands the latest message of th to the bot once more, as the platform does after
	// a lost acknowledgement.
	redeliver(t *testing.T, th *chatThread)
	// replies is what the bot posted in th: answers with a picture, every text, and whether a
	// working sign is still shown.
	replies(th *chatThread) (answers []answer, texts []string, busy bool)
	// workingShown reports whether the working signs were shown in th.
	workingShown(th *chatThread) bool
}

type upload struct {
	Name string
	Data []byte
}

// waitFor polls cond until it holds or e2eWait passes; then it fails with what describe says.
func waitFor(t *testing.T, what string, cond func() bool, describe func() string) {
	t.Helper()
	waitfor.Until(t, e2eWait, what, cond, describe)
}

// waitAnswers waits until th holds n answers and every text in want, with no working sign left.
func waitAnswers(t *testing.T, d driver, th *chatThread, n int, want ...string) []answer {
	t.Helper()
	var got []answer
	var texts []string
	waitFor(t, fmt.Sprintf("%d answers with %q", n, want), func() bool {
		var busy bool
		got, texts, busy = d.replies(th)
		if busy || len(got) < n {
			return false
		}
		for _, a := range got {
			if a.Excalidraw == nil { // the file follows the picture on Telegram
				return false
			}
		}
		for _, w := range want {
			if !slices.ContainsFunc(texts, func(s string) bool { return strings.Contains(s, w) }) {
				return false
			}
		}
		return true
	}, func() string { return fmt.Sprintf("%d answers, texts %q", len(got), texts) })
	if len(got) != n {
		t.Fatalf("%d answers, want %d; texts %q", len(got), n, texts)
	}
	return got
}

// labels decodes an answer's .excalidraw file and the scene embedded in its PNG, checks they are
// the same scene, and returns the labels of its text elements, sorted.
func labels(t *testing.T, a answer) []string {
	t.Helper()
	if !bytes.HasPrefix(a.PNG, []byte("\x89PNG\r\n\x1a\n")) {
		t.Fatalf("the picture is not a PNG: %q…", a.PNG[:min(len(a.PNG), 16)])
	}
	embedded, err := scene.EmbeddedScene(a.PNG, 5<<20)
	if err != nil {
		t.Fatalf("scene embedded in the PNG: %v", err)
	}
	fromPNG := sceneLabels(t, "PNG", embedded)
	fromFile := sceneLabels(t, ".excalidraw", a.Excalidraw)
	if !slices.Equal(fromPNG, fromFile) {
		t.Errorf("PNG scene labels %q, .excalidraw labels %q: want the same scene", fromPNG, fromFile)
	}
	return fromFile
}

func sceneLabels(t *testing.T, what string, doc []byte) []string {
	t.Helper()
	sc, err := scene.Decode(doc)
	if err != nil {
		t.Fatalf("decode the %s scene: %v", what, err)
	}
	out := []string{}
	for _, e := range sc.Elements() {
		if e.Type == scene.Text {
			out = append(out, e.OriginalText)
		}
	}
	slices.Sort(out)
	return out
}

func hasText(texts []string, want string) bool {
	return slices.ContainsFunc(texts, func(s string) bool { return strings.Contains(s, want) })
}

// importDoc is a .excalidraw file as someone would post it: two shapes with labels.
func importDoc(t *testing.T) []byte {
	t.Helper()
	sc := scene.New()
	for i, label := range []string{"Imported A", "Imported B"} {
		e := scene.NewElement(scene.Rectangle)
		e.ID, e.X, e.Width, e.Height = fmt.Sprintf("imp%d", i), float64(i*240), 180, 80
		if _, err := sc.Add(e); err != nil {
			t.Fatal(err)
		}
		txt := scene.NewElement(scene.Text)
		txt.ID, txt.X, txt.Y, txt.Text, txt.OriginalText = fmt.Sprintf("imp%dt", i), float64(i*240)+20, 30, label, label
		if _, err := sc.Add(txt); err != nil {
			t.Fatal(err)
		}
	}
	doc, err := sc.Encode()
	if err != nil {
		t.Fatal(err)
	}
	return doc
}

// runScenarios plays the conversations every platform must get right, in one serve. Each
// subtest uses its own users and threads, so the rate limits of one do not reach another.
func runScenarios(t *testing.T, e *e2e, d driver) {
	t.Run("draw, follow-up, undo, redelivery", func(t *testing.T) {
		th := d.start(t, 1, "draw a web server", nil)
		first := waitAnswers(t, d, th, 1, "Drew a box for: draw a web server.")[0]
		if !d.workingShown(th) {
			t.Error("no working signs were shown")
		}
		if got, want := labels(t, first), []string{"draw a web server"}; !slices.Equal(got, want) {
			t.Errorf("revision 1 labels = %q, want %q", got, want)
		}

		d.say(t, th, 1, "add a database")
		d.redeliver(t, th) // the follow-up again: must not be drawn twice
		second := waitAnswers(t, d, th, 2, "Drew a box for: add a database.")[1]
		if got, want := labels(t, second), []string{"add a database", "draw a web server"}; !slices.Equal(got, want) {
			t.Errorf("revision 2 labels = %q, want %q", got, want)
		}

		d.say(t, th, 1, "undo")
		third := waitAnswers(t, d, th, 3, "back to revision 1")[2]
		if got, want := labels(t, third), []string{"draw a web server"}; !slices.Equal(got, want) {
			t.Errorf("after undo labels = %q, want %q (revision 1 again)", got, want)
		}
		// history goes through the same queue: once it is answered, a redelivery wrongly taken
		// for a new request would have been answered too.
		d.say(t, th, 1, "history")
		waitAnswers(t, d, th, 3, "Revisions, newest first")
	})

	t.Run("import", func(t *testing.T) {
		th := d.start(t, 2, "", &upload{Name: "team.excalidraw", Data: importDoc(t)})
		got := waitAnswers(t, d, th, 1, "Imported team.excalidraw as revision 1.")[0]
		if l, want := labels(t, got), []string{"Imported A", "Imported B"}; !slices.Equal(l, want) {
			t.Errorf("imported scene labels = %q, want %q", l, want)
		}
		d.say(t, th, 2, "add a cache")
		got = waitAnswers(t, d, th, 2, "Drew a box for: add a cache.")[1]
		if l, want := labels(t, got), []string{"Imported A", "Imported B", "add a cache"}; !slices.Equal(l, want) {
			t.Errorf("after a follow-up on the import: labels = %q, want %q", l, want)
		}
	})

	t.Run("ollama down", func(t *testing.T) {
		e.ollama.Stop()
		th := d.start(t, 3, "draw a queue", nil)
		_, texts, _ := d.replies(th)
		waitFor(t, "a friendly error", func() bool {
			var busy bool
			_, texts, busy = d.replies(th)
			return !busy && hasText(texts, "Sorry, drawing failed")
		}, func() string { return fmt.Sprintf("%q", texts) })
		if !hasText(texts, "Ollama") || !hasText(texts, "Nothing in the diagram changed") {
			t.Errorf("error reply %q does not name Ollama and say nothing changed", texts)
		}
		if code, body := e.get(t, "/healthz"); code != http.StatusOK {
			t.Errorf("healthz with Ollama down = %d %s, want 200", code, body)
		}
		e.ollama.Start()
		d.say(t, th, 3, "draw a queue")
		if got := labels(t, waitAnswers(t, d, th, 1, "Drew a box for: draw a queue.")[0]); !slices.Equal(got, []string{"draw a queue"}) {
			t.Errorf("once Ollama is back: labels = %q, want [draw a queue]", got)
		}
	})

	t.Run("rate limit", func(t *testing.T) {
		// A user may start 3 drawings at once (the bucket's burst); the 4th is refused.
		var threads []*chatThread
		for i := range 4 {
			threads = append(threads, d.start(t, 4, fmt.Sprintf("draw rate %d", i), nil))
		}
		refused := func() bool {
			for _, th := range threads {
				if _, texts, _ := d.replies(th); hasText(texts, "faster than I can draw") {
					return true
				}
			}
			return false
		}
		waitFor(t, "a polite refusal", refused, func() string {
			var all []string
			for _, th := range threads {
				_, texts, _ := d.replies(th)
				all = append(all, texts...)
			}
			return fmt.Sprintf("%q", all)
		})
		// Every request not refused is drawn. Not being busy is no sign of that: a kept request
		// shows its working sign only once a run takes it.
		answered := 0
		for _, th := range threads {
			if _, texts, _ := d.replies(th); hasText(texts, "faster than I can draw") {
				continue
			}
			waitFor(t, "the accepted request to be drawn", func() bool {
				a, _, busy := d.replies(th)
				return len(a) > 0 && !busy
			}, func() string { _, texts, _ := d.replies(th); return fmt.Sprintf("%q", texts) })
			answered++
		}
		if answered == 0 { // the bucket may hold less than its burst after the subtests before
			t.Error("no request of the user was drawn before the limit")
		}
	})

	t.Run("two threads at once", func(t *testing.T) {
		// The model holds each run's first turn until both runs are in it: the test passes only
		// if the two threads are drawn at the same time.
		var mu sync.Mutex
		waiting := map[string]bool{}
		both := make(chan struct{})
		e.ollama.SetResponder(func(req api.ChatRequest) ollamafake.Turn {
			p := ollamafake.Request(req)
			if strings.HasPrefix(p, "draw parallel") && req.Messages[len(req.Messages)-1].Role == "user" {
				mu.Lock()
				waiting[p] = true
				if len(waiting) == 2 {
					close(both)
				}
				mu.Unlock()
				select {
				case <-both:
				case <-time.After(e2eWait / 2):
					return ollamafake.Fail(http.StatusInternalServerError, "the other thread's run never started")
				}
			}
			return ollamafake.Boxes(req)
		})
		defer e.ollama.SetResponder(ollamafake.Boxes)
		a := d.start(t, 5, "draw parallel alpha", nil)
		b := d.start(t, 6, "draw parallel beta", nil)
		for _, c := range []struct {
			th   *chatThread
			want string
		}{{a, "draw parallel alpha"}, {b, "draw parallel beta"}} {
			got := waitAnswers(t, d, c.th, 1, "Drew a box for: "+c.want+".")
			if l := labels(t, got[0]); !slices.Equal(l, []string{c.want}) {
				t.Errorf("thread %s labels = %q, want only [%s]", c.th.chat, l, c.want)
			}
		}
	})
}
