package main

import (
	"fmt"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ollama/ollama/api"

	"github.com/excalibot/excalibot/agent/ollamafake"
	"github.com/excalibot/excalibot/bot/telegram/tgfake"
	"github.com/excalibot/excalibot/internal/waitfor"
)

// outageTime is how long a platform stays down in the outbox tests.
const outageTime = 5 * time.Second

// The platform fails just as a reply goes out — down (503, 502) for a few seconds, or answering
// 429 more often than a call's own retries wait out — and comes back: the reply is posted once,
// with its picture, and a restart afterwards sends nothing again.
func testReplicaPlatformDown(t *testing.T, sh *replicaShared) {
	c := newCluster(t, sh, 100*time.Millisecond)
	a := c.start("A", "")
	tr := newTraffic(t, c, 1, 2)
	sl, tg := tr.ths[0], tr.ths[1]
	tr.send(t, sl, 1, nil)
	tr.send(t, tg, 1, nil)
	waitAnswered(t, tr, c.waitTO, msgTag(1, 1), msgTag(2, 1))

	tgReplies := []string{"sendMessage", "sendPhoto", "sendDocument", "editMessageText", "deleteMessage", "sendChatAction"}
	for _, tc := range []struct {
		name  string
		th    *rthread
		fault func()
		hit   func() bool // the fault met the reply
	}{
		{"Slack down", sl, func() {
			c.sl.fake.Down()
			time.AfterFunc(outageTime, c.sl.fake.Up)
		}, func() bool { return slackRefused(c, http.StatusServiceUnavailable) > 0 }},
		{"Telegram down", tg, func() {
			c.tg.fake.Down(tgReplies...)
			time.AfterFunc(outageTime, c.tg.fake.Up)
		}, func() bool { return tgRefused(c, 502) > 0 }},
		// slack-go waits out three 429s of a call by itself; the fourth reaches the bot.
		{"Slack 429 beyond the retries", sl, func() { c.sl.fake.RateLimit("chat.postMessage", 8, 1) },
			func() bool { return slackRefused(c, http.StatusTooManyRequests) >= 4 }},
		// The adapter waits out three 429s of a call; the fourth reaches the bot.
		{"Telegram 429 beyond the retries", tg, func() {
			c.tg.fake.Fail("sendPhoto", tgfake.Failure{Code: 429, RetryAfter: 1, Times: 6})
		}, func() bool { return tgRefused(c, 429) >= 4 }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			k := len(tc.th.msgs) + 1
			tag := msgTag(tc.th.n, k)
			var once sync.Once
			faulted := make(chan struct{})
			// The fault begins with the model's last turn: the next calls to the platform are the
			// reply's.
			c.setHook(func(_ *replica, req api.ChatRequest) (ollamafake.Turn, bool) {
				if slices.Contains(tags(ollamafake.Request(req)), tag) && turnsSinceRequest(req) == 2 {
					once.Do(func() { tc.fault(); close(faulted) })
				}
				return ollamafake.Turn{}, false
			})
			defer c.setHook(nil)
			tr.send(t, tc.th, k, nil)
			select {
			case <-faulted:
			case <-time.After(faultWait):
				t.Fatalf("the run of %s never reached the model's last turn", tag)
			}
			// The platform is back after outageTime (or its 429s run out): the reply must follow.
			waitfor.Within(outageTime+c.waitTO, func() bool { return tr.answers(tag) > 0 })
			if !tc.hit() {
				t.Errorf("the fault never met a call of the reply: the test did not test it")
			}
			tr.waitQuiet(t, outageTime+c.waitTO) // a second copy would have been posted by then
			rep := tr.account()
			t.Logf("%s", rep)
			if n := tr.answers(tag); n != 1 {
				t.Errorf("%s: %d answers after the platform came back, want 1 (error replies %q; refused calls: %s)", tag, n, rep.Notices, describeCalls(c))
			}
			rep.check(t, true)
		})
	}

	// The replies are out: a restart must not send any again.
	settled := tr.account()
	a.kill()
	c.start("A2", "")
	tr.waitQuiet(t, c.waitTO) // anything A2 queued at its start is posted by then
	if final := tr.account(); final.Answered != settled.Answered || final.Pictures != settled.Pictures || len(final.Notices) != len(settled.Notices) {
		t.Errorf("the restart posted again: before %s; after %s; error replies %q", settled, final, final.Notices)
	}
}

// slackRefused counts the Web API calls fake Slack answered with status.
func slackRefused(c *cluster, status int) int {
	n := 0
	for _, call := range c.sl.fake.Calls("") {
		if call.Status == status {
			n++
		}
	}
	return n
}

// tgRefused counts the Bot API calls fake Telegram answered with error code.
func tgRefused(c *cluster, code int) int {
	n := 0
	for _, call := range c.tg.fake.Calls("") {
		if call.Code == code {
			n++
		}
	}
	return n
}

// describeCalls lists the platform calls answered with an error, for failure messages.
func describeCalls(c *cluster) string {
	var b strings.Builder
	for _, call := range c.sl.fake.Calls("") {
		if call.Status != http.StatusOK {
			fmt.Fprintf(&b, "slack %s %d; ", call.Method, call.Status)
		}
	}
	for _, call := range c.tg.fake.Calls("") {
		if call.Code != http.StatusOK {
			fmt.Fprintf(&b, "telegram %s %d; ", call.Method, call.Code)
		}
	}
	return b.String()
}
