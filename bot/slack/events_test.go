package slack

import (
	"bytes"
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/excalibot/excalibot/bot/slack/slackfake"
)

// eventsEnv runs the adapter in events mode with its EventsHandler on a test server.
func eventsEnv(t *testing.T, rec *recorder) (*env, string) {
	t.Helper()
	e := start(t, ModeEvents, rec, nil)
	srv := httptest.NewServer(e.a.EventsHandler())
	t.Cleanup(srv.Close)
	// Until Run has learned the bot's identity the handler asks Slack to retry.
	select {
	case <-e.a.selfDone:
	case <-e.ctx.Done():
		t.Fatal("Run did not learn the bot's identity")
	}
	return e, srv.URL + "/slack/events"
}

func TestEventsAPI(t *testing.T) {
	rec := newRecorder()
	e, url := eventsEnv(t, rec)
	p := e.fake.Post(slackfake.UserMessage{Channel: "C1", Text: "<@U0BOT> draw a queue"})
	mention := p.Events[0]

	for _, tc := range []struct {
		name   string
		body   []byte
		opt    slackfake.HTTPOptions
		status int
	}{
		{"forged signature", mention.Body, slackfake.HTTPOptions{Signature: "v0=" + strings.Repeat("ab", 32)}, 401},
		{"wrong secret", mention.Body, slackfake.HTTPOptions{Secret: "not-the-secret"}, 401},
		{"stale timestamp (replay)", mention.Body, slackfake.HTTPOptions{Time: time.Now().Add(-6 * time.Minute)}, 401},
		{"timestamp from the future", mention.Body, slackfake.HTTPOptions{Time: time.Now().Add(6 * time.Minute)}, 401},
		{"blank signature", mention.Body, slackfake.HTTPOptions{Signature: " "}, 401},
		{"tampered body", bytes.Replace(mention.Body, []byte("a queue"), []byte("a trap!"), 1), slackfake.HTTPOptions{Signature: signOf(e.fake, mention.Body)}, 401},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res, err := e.fake.DeliverHTTP(e.ctx, url, tc.body, tc.opt)
			must(t, err)
			if res.Status != tc.status {
				t.Errorf("status = %d, want %d", res.Status, tc.status)
			}
		})
	}

	// Then the genuine event, and Slack's retry of it: both 200, both handed over with the same
	// event id (the core drops the second), nothing of the forged ones.
	for retry := range 2 {
		res, err := e.fake.DeliverHTTP(e.ctx, url, mention.Body, slackfake.HTTPOptions{RetryNum: retry})
		must(t, err)
		if res.Status != http.StatusOK {
			t.Fatalf("genuine event (retry %d): status %d %q, want 200", retry, res.Status, res.Body)
		}
	}
	m := rec.nextText(t, "draw a queue")
	if m.EventID != mention.ID || m.ID != p.TS || m.Key.Thread != p.TS {
		t.Errorf("message = %+v, want event %s, id and thread %s", m, mention.ID, p.TS)
	}
	raw := rec.waitRaw(t, 2)
	if raw[1].EventID != mention.ID {
		t.Errorf("retry handed over with event id %s, want %s", raw[1].EventID, mention.ID)
	}
}

func signOf(f *slackfake.Server, body []byte) string {
	return slackfake.Sign(f.Config().SigningSecret, time.Now(), body)
}

func TestEventsAPIURLVerification(t *testing.T) {
	rec := newRecorder()
	e, url := eventsEnv(t, rec)
	res, err := e.fake.DeliverHTTP(e.ctx, url, slackfake.URLVerificationBody("3eZbrw1aBm2rZgRNFdxV2595E9CY3gmdALWMmHkvFXO7tYXAYM8P"), slackfake.HTTPOptions{})
	must(t, err)
	if res.Status != 200 || res.Body != "3eZbrw1aBm2rZgRNFdxV2595E9CY3gmdALWMmHkvFXO7tYXAYM8P" {
		t.Errorf("url_verification: %d %q, want 200 and the challenge", res.Status, res.Body)
	}
	res, err = e.fake.DeliverHTTP(e.ctx, url, slackfake.URLVerificationBody("x"), slackfake.HTTPOptions{Secret: "forged"})
	must(t, err)
	if res.Status != 401 {
		t.Errorf("forged url_verification: %d %q, want 401", res.Status, res.Body)
	}
}

// The 200 goes out once the core has kept the message; a message it could not keep gets 503, so
// Slack delivers it again, and the redelivery is kept.
func TestEventsAPIAnswersOnceKept(t *testing.T) {
	rec := newRecorder()
	var failing atomic.Bool
	rec.fail = func() error {
		if failing.Load() {
			return errors.New("store: connection refused")
		}
		return nil
	}
	e, url := eventsEnv(t, rec)
	for i, text := range []string{"one", "two"} {
		p := e.fake.Post(slackfake.UserMessage{Channel: "D1", Text: text})
		res, err := e.fake.DeliverHTTP(e.ctx, url, p.Events[0].Body, slackfake.HTTPOptions{})
		must(t, err)
		if res.Status != 200 {
			t.Fatalf("event %d: status %d, want 200", i, res.Status)
		}
		if n := rec.rawCount(); n != i+1 {
			t.Fatalf("after the 200 of event %d the core holds %d messages, want %d", i, n, i+1)
		}
	}
	failing.Store(true)
	p := e.fake.Post(slackfake.UserMessage{Channel: "D1", Text: "three"})
	res, err := e.fake.DeliverHTTP(e.ctx, url, p.Events[0].Body, slackfake.HTTPOptions{})
	must(t, err)
	if res.Status != http.StatusServiceUnavailable {
		t.Fatalf("a message the core could not keep: %d, want 503 so that Slack retries", res.Status)
	}
	failing.Store(false)
	res, err = e.fake.DeliverHTTP(e.ctx, url, p.Events[0].Body, slackfake.HTTPOptions{RetryNum: 1, RetryReason: "http_error"})
	must(t, err)
	if res.Status != 200 {
		t.Fatalf("the redelivery: %d, want 200", res.Status)
	}
	for _, text := range []string{"one", "two", "three"} {
		rec.nextText(t, text)
	}
}

func TestEventsAPIMethodAndSize(t *testing.T) {
	rec := newRecorder()
	e, url := eventsEnv(t, rec)
	req, _ := http.NewRequestWithContext(e.ctx, http.MethodGet, url, nil)
	resp, err := http.DefaultClient.Do(req)
	must(t, err)
	resp.Body.Close()
	if resp.StatusCode != http.StatusMethodNotAllowed {
		t.Errorf("GET: %d, want 405", resp.StatusCode)
	}
	big := bytes.Repeat([]byte("x"), maxEventBody+1)
	res, err := e.fake.DeliverHTTP(e.ctx, url, big, slackfake.HTTPOptions{})
	must(t, err)
	if res.Status != http.StatusRequestEntityTooLarge {
		t.Errorf("oversized body: %d, want 413", res.Status)
	}
}

func TestEventsModeWithoutRunAsksForRetry(t *testing.T) {
	fake := slackfake.New(t, slackfake.Config{})
	a, err := New(Config{BotToken: "xoxb-fake", SigningSecret: fake.Config().SigningSecret, Mode: ModeEvents,
		APIURL: fake.APIURL()}, newRecorder(), nil)
	must(t, err)
	srv := httptest.NewServer(a.EventsHandler())
	defer srv.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	var last int
	for i := 0; i <= inboxSize; i++ {
		p := fake.Post(slackfake.UserMessage{Channel: "D1", Text: "x"})
		res, err := fake.DeliverHTTP(ctx, srv.URL, p.Events[0].Body, slackfake.HTTPOptions{})
		must(t, err)
		last = res.Status
	}
	if last != http.StatusServiceUnavailable {
		t.Errorf("beyond a full inbox: %d, want 503 so that Slack retries", last)
	}
}
