package main

// Helpers of the fault tests (fault_*_test.go): a serve on fake Slack with the tagged model, and
// the checks every fault ends with — each thread got its picture or a clear retry notice, no
// stored revision was lost or changed, the process is healthy.

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ollama/ollama/api"

	"github.com/excalibot/excalibot/agent/ollamafake"
	"github.com/excalibot/excalibot/config"
	"github.com/excalibot/excalibot/internal/waitfor"
	"github.com/excalibot/excalibot/scene"
	"github.com/excalibot/excalibot/store"
)

// faultBot is a serve on fake Slack (Socket Mode) with the tagged model.
type faultBot struct {
	*e2e
	sl *slackDriver
}

// startFaultBot runs serve like startE2E, with the tagged model; setup may change the config.
func startFaultBot(t *testing.T, setup func(*config.Config)) *faultBot {
	t.Helper()
	sl := newSlack(t)
	e := startE2E(t, func(c *config.Config) {
		sl.configure(c, "socket")
		c.UserRatePerMinute, c.ChatRatePerMinute = 1e6, 1e6
		if setup != nil {
			setup(c)
		}
	})
	e.ollama.SetResponder(taggedBoxes)
	sl.ready(t, e)
	return &faultBot{e2e: e, sl: sl}
}

// slackKey is the store's key of a Slack thread in the fake workspace.
func slackKey(th *chatThread) store.ThreadKey {
	return store.ThreadKey{Platform: "slack", Workspace: "T0FAKE", Channel: th.chat, Thread: th.root}
}

// faultWait bounds the waits of the fault tests: after a fault, recovery includes restarting
// Chromium or PostgreSQL, which takes well over a minute on a 2-core machine under load 30 and
// the race detector.
const faultWait = 4 * time.Minute

// waitLong is waitFor with faultWait.
func waitLong(t *testing.T, what string, cond func() bool, describe func() string) {
	t.Helper()
	waitfor.Until(t, faultWait, what, cond, describe)
}

// waitSettled waits until th shows no working sign and has n replies, answers and error replies
// together; it returns the answers and the error replies.
func waitSettled(t *testing.T, d driver, th *chatThread, n int) (answers []answer, errs []string) {
	t.Helper()
	var texts []string
	waitLong(t, fmt.Sprintf("%d answers and error replies", n), func() bool {
		var busy bool
		answers, texts, busy = d.replies(th)
		errs = errs[:0]
		for _, s := range texts {
			if isErrorReply(s) {
				errs = append(errs, s)
			}
		}
		complete := len(answers) == 0 || answers[len(answers)-1].Excalidraw != nil
		return !busy && complete && len(answers)+len(errs) >= n
	}, func() string { return fmt.Sprintf("%d answers, texts %q", len(answers), texts) })
	return answers, errs
}

// checkNotice checks that an error reply says what failed (each of what) and that the request
// can be sent again.
func checkNotice(t *testing.T, notice string, what ...string) {
	t.Helper()
	for _, w := range append(what, "again") {
		if !strings.Contains(strings.ToLower(notice), strings.ToLower(w)) {
			t.Errorf("error reply %q does not say %q", notice, w)
		}
	}
}

// boxes returns the tags of the boxes in an answer's .excalidraw file, sorted.
func boxes(t *testing.T, a answer) []string {
	t.Helper()
	sc, err := scene.Decode(a.Excalidraw)
	if err != nil {
		t.Fatalf("decode the posted .excalidraw file: %v", err)
	}
	var out []string
	for _, e := range sc.Elements() {
		if e.Type == scene.Text {
			out = append(out, tags(e.OriginalText)...)
		}
	}
	slices.Sort(out)
	return out
}

// revisions reads every kept revision of a thread: its number → a digest of its scene. It fails
// the test when a revision cannot be read or its scene does not decode.
func revisions(t *testing.T, st store.Store, key store.ThreadKey) map[int64][32]byte {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), faultWait)
	defer cancel()
	hist, err := st.History(ctx, key, 0)
	if errors.Is(err, store.ErrNotFound) {
		return map[int64][32]byte{}
	}
	if err != nil {
		t.Fatalf("history of %s: %v", key, err)
	}
	out := map[int64][32]byte{}
	for _, h := range hist {
		r, err := st.Revision(ctx, key, h.Rev)
		if err != nil {
			t.Fatalf("revision %d of %s: %v", h.Rev, key, err)
		}
		if _, err := scene.Decode(r.Scene); err != nil {
			t.Errorf("revision %d of %s is corrupted: %v", h.Rev, key, err)
		}
		out[h.Rev] = sha256.Sum256(r.Scene)
	}
	return out
}

// checkKept fails when a revision of before is missing from after or changed.
func checkKept(t *testing.T, before, after map[int64][32]byte) {
	t.Helper()
	for rev, sum := range before {
		got, ok := after[rev]
		switch {
		case !ok:
			t.Errorf("revision %d was lost", rev)
		case got != sum:
			t.Errorf("revision %d changed", rev)
		}
	}
}

// checkHealthy waits until /healthz and /readyz of the serve at addr answer 200 (a restarted
// Chromium or a reconnected database may take a moment).
func checkHealthy(t *testing.T, addr string) {
	t.Helper()
	for _, path := range []string{"/healthz", "/readyz"} {
		var code int
		var body string
		waitLong(t, path+" 200", func() bool {
			code, body = httpGet("http://" + addr + path)
			return code == http.StatusOK
		}, func() string { return fmt.Sprintf("%d %s", code, body) })
	}
}

func httpGet(url string) (int, string) {
	c := http.Client{Timeout: 5 * time.Second}
	resp, err := c.Get(url)
	if err != nil {
		return 0, err.Error()
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// quietLog is a logger for the stores the tests open beside serve.
func quietLog() *slog.Logger { return slog.New(slog.NewTextHandler(io.Discard, nil)) }

// onStep returns a responder that plays the tagged model and calls hook (once) when a run of a
// request containing tag reaches step (0: the first turn, 2: done).
func onStep(tag string, step int, hook func()) ollamafake.Responder {
	var once sync.Once
	return func(req api.ChatRequest) ollamafake.Turn {
		if strings.Contains(ollamafake.Request(req), tag) && turnsSinceRequest(req) == step {
			once.Do(hook)
		}
		return taggedBoxes(req)
	}
}

// storeOptions are serve's store options under the default config, for the stores the tests
// open beside serve to read what it stored.
func storeOptions() store.Options {
	d := config.Default()
	return store.Options{MaxSceneBytes: d.MaxSceneSize, HistoryLimit: d.HistoryKeep}
}
