package main

import (
	"context"
	"errors"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/excalibot/excalibot/config"
	"github.com/excalibot/excalibot/internal/pgtest"
	"github.com/excalibot/excalibot/store/postgres"
)

// pgURL turns pgtest's keyword DSN into the postgres:// URL serve takes.
func pgURL(t *testing.T, dsn string) string {
	t.Helper()
	kv := map[string]string{}
	for _, f := range strings.Fields(dsn) {
		k, v, _ := strings.Cut(f, "=")
		kv[k] = v
	}
	q := url.Values{"host": {kv["host"]}, "sslmode": {kv["sslmode"]}}
	return "postgres://" + kv["user"] + "@/" + kv["dbname"] + "?" + q.Encode()
}

// PostgreSQL crashing (SIGKILL of the whole server) under a running bot, twice: once staying down
// until the run that needed it has failed, once coming back within the run. Each run fails with a
// notice that names the store and the retry, or succeeds; the thread's revisions are all there
// afterwards; /readyz says the store is down while it is and healthy again after; the thread draws
// on once PostgreSQL is back.
func TestFaultPostgresRestart(t *testing.T) {
	ctx := t.Context()
	pg, err := pgtest.Start(ctx)
	if errors.Is(err, pgtest.ErrNoServer) {
		t.Skip(err)
	}
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = pg.Stop() })
	dsn, err := pg.CreateDB(ctx)
	if err != nil {
		t.Fatal(err)
	}
	dbURL := pgURL(t, dsn)
	b := startFaultBot(t, func(c *config.Config) { c.Database = dbURL })
	st, err := postgres.Open(ctx, dbURL, storeOptions(), quietLog())
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()

	// draw starts thread n with one box and returns it with its revisions.
	draw := func(t *testing.T, n int) (*chatThread, map[int64][32]byte) {
		th := b.sl.start(t, n, "draw a box "+msgTag(n, 1), nil)
		if got, errs := waitSettled(t, b.sl, th, 1); len(got) != 1 || len(errs) > 0 {
			t.Fatalf("before the fault: %d answers, errors %q", len(got), errs)
		}
		return th, revisions(t, st, slackKey(th))
	}
	// drawsOn checks that thread n draws message m on top of what it had.
	drawsOn := func(t *testing.T, th *chatThread, n, m, replies int, want []string) {
		t.Helper()
		b.sl.say(t, th, n, "draw a box "+msgTag(n, m))
		answers, errs := waitSettled(t, b.sl, th, replies)
		last := answers[len(answers)-1]
		if got := boxes(t, last); !slices.Equal(got, want) {
			t.Errorf("with PostgreSQL back: the scene has %q, want %q (error replies %q)", got, want, errs)
		}
	}

	t.Run("down until the run failed", func(t *testing.T) {
		n := 50
		th, before := draw(t, n)
		downErr := make(chan error, 1)
		b.ollama.SetResponder(onStep(msgTag(n, 2), 1, func() { downErr <- pg.Kill() }))
		defer b.ollama.SetResponder(taggedBoxes)
		b.sl.say(t, th, n, "draw a box "+msgTag(n, 2))
		answers, errs := waitSettled(t, b.sl, th, 2)
		if err := <-downErr; err != nil {
			t.Fatal(err)
		}
		if len(answers) != 1 || len(errs) != 1 {
			t.Fatalf("with PostgreSQL down: %d answers, error replies %q; want one error reply", len(answers), errs)
		}
		t.Logf("notice: %s", errs[0])
		checkNotice(t, errs[0], "my database did not answer", "Nothing in the diagram changed")
		if code, body := b.get(t, "/readyz"); code != http.StatusServiceUnavailable || !strings.Contains(body, "store") {
			t.Errorf("/readyz with PostgreSQL down = %d %q, want 503 naming the store", code, body)
		}
		if code, _ := b.get(t, "/healthz"); code != http.StatusOK {
			t.Errorf("/healthz with PostgreSQL down = %d, want 200 (the process is alive)", code)
		}

		if err := pg.Restart(ctx); err != nil {
			t.Fatal(err)
		}
		checkHealthy(t, b.addr)
		checkKept(t, before, revisions(t, st, slackKey(th)))
		drawsOn(t, th, n, 3, 3, []string{msgTag(n, 1), msgTag(n, 3)})
	})

	t.Run("restarted within a run", func(t *testing.T) {
		n := 51
		th, before := draw(t, n)
		restartErr := make(chan error, 1)
		b.ollama.SetResponder(onStep(msgTag(n, 2), 1, func() {
			err := pg.Kill()
			if err == nil {
				rctx, cancel := context.WithTimeout(ctx, 3*time.Minute)
				err = pg.Restart(rctx)
				cancel()
			}
			restartErr <- err
		}))
		defer b.ollama.SetResponder(taggedBoxes)
		b.sl.say(t, th, n, "draw a box "+msgTag(n, 2))
		answers, errs := waitSettled(t, b.sl, th, 2)
		if err := <-restartErr; err != nil {
			t.Fatal(err)
		}
		switch {
		case len(answers) == 2 && len(errs) == 0:
			t.Log("the run went through: the store reconnected")
		case len(answers) == 1 && len(errs) == 1:
			t.Logf("notice: %s", errs[0])
			checkNotice(t, errs[0], "Nothing in the diagram changed")
		default:
			t.Fatalf("%d answers, error replies %q; want the picture or one clear error", len(answers), errs)
		}
		checkHealthy(t, b.addr)
		checkKept(t, before, revisions(t, st, slackKey(th)))
		want := []string{msgTag(n, 1), msgTag(n, 3)}
		if len(answers) == 2 {
			want = []string{msgTag(n, 1), msgTag(n, 2), msgTag(n, 3)}
		}
		drawsOn(t, th, n, 3, 3, want)
	})
}
