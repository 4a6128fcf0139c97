package main

import (
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/ollama/ollama/api"

	"github.com/excalibot/excalibot/agent/ollamafake"
	"github.com/excalibot/excalibot/config"
	"github.com/excalibot/excalibot/store/sqlite"
)

// Ollama failing in each way it does, in the middle of a thread: the follow-up gets a notice
// naming what failed (or, for an answer the bot has no words for, saying it was logged) and
// inviting a retry, the thread's revisions are untouched, serve stays
// healthy, and once Ollama is back the same thread draws on from where it was.
func TestFaultOllama(t *testing.T) {
	var dbPath string
	b := startFaultBot(t, func(c *config.Config) {
		c.ModelTimeout = 10 * time.Second // "slower than the timeout" waits this long; instant turns can take seconds on a loaded machine
		dbPath = c.Database[len("sqlite:"):]
	})
	st, err := sqlite.Open(t.Context(), dbPath, storeOptions(), quietLog())
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()

	for i, tt := range []struct {
		name  string
		fault func() // breaks Ollama
		heal  func()
		want  []string // what the notice must name
		// logged is Ollama's own words, which only the log may hold: the person reads that
		// something went wrong.
		logged string
	}{
		{name: "down", fault: b.ollama.Stop, heal: b.ollama.Start, want: []string{"Ollama"}},
		{name: "answering 500", fault: func() {
			b.ollama.SetResponder(func(api.ChatRequest) ollamafake.Turn {
				return ollamafake.Fail(http.StatusInternalServerError, "llama runner process has terminated")
			})
		}, want: []string{"something went wrong on my side", "it has been logged"}, logged: "llama runner process has terminated"},
		{name: "stream cut mid-response", fault: func() {
			b.ollama.SetResponder(func(req api.ChatRequest) ollamafake.Turn { return ollamafake.Cut(taggedBoxes(req)) })
		}, want: []string{"Ollama"}},
		{name: "slower than the timeout", fault: func() {
			b.ollama.SetResponder(func(req api.ChatRequest) ollamafake.Turn {
				return ollamafake.Slow(taggedBoxes(req), time.Minute)
			})
		}, want: []string{"took too long", "within 10s"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			n := 20 + i
			th := b.sl.start(t, n, "draw a box "+msgTag(n, 1), nil)
			first, errs := waitSettled(t, b.sl, th, 1)
			if len(errs) > 0 || len(first) != 1 {
				t.Fatalf("before the fault: %d answers, errors %q", len(first), errs)
			}
			key := slackKey(th)
			before := revisions(t, st, key)

			tt.fault()
			b.sl.say(t, th, n, "draw a box "+msgTag(n, 2))
			answers, errs := waitSettled(t, b.sl, th, 2)
			if len(answers) != 1 || len(errs) != 1 {
				t.Fatalf("with Ollama %s: %d answers and error replies %q; want the first answer and one error reply", tt.name, len(answers), errs)
			}
			checkNotice(t, errs[0], append(tt.want, "Nothing in the diagram changed")...)
			if tt.logged != "" && (strings.Contains(errs[0], tt.logged) || !strings.Contains(b.logs.String(), tt.logged)) {
				t.Errorf("Ollama's %q: want it in serve's log and not in the notice %q", tt.logged, errs[0])
			}
			checkKept(t, before, revisions(t, st, key))
			if got := len(revisions(t, st, key)); got != len(before) {
				t.Errorf("%d revisions after the failed run, want %d", got, len(before))
			}
			checkHealthy(t, b.addr)

			if tt.heal != nil {
				tt.heal()
			}
			b.ollama.SetResponder(taggedBoxes)
			b.sl.say(t, th, n, "draw a box "+msgTag(n, 3))
			answers, errs = waitSettled(t, b.sl, th, 3)
			if len(answers) != 2 || len(errs) != 1 {
				t.Fatalf("once Ollama is back: %d answers, error replies %q; want 2 answers", len(answers), errs)
			}
			if got, want := boxes(t, answers[1]), []string{msgTag(n, 1), msgTag(n, 3)}; !slices.Equal(got, want) {
				t.Errorf("after recovery the scene has %q, want %q", got, want)
			}
			checkKept(t, before, revisions(t, st, key))
		})
	}
}
