package slack

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/excalibot/excalibot/bot"
	"github.com/excalibot/excalibot/bot/slack/slackfake"
	"github.com/excalibot/excalibot/internal/waitfor"
)

// TestSendStepsResume: a reply is posted in steps, each recorded; an attempt that failed after
// its first step goes on after it, so nothing is posted twice.
func TestSendStepsResume(t *testing.T) {
	e := start(t, ModeSocket, newRecorder(), func(c *Config) { c.MaxRetries = 1 })
	key := bot.ThreadKey{Platform: "slack", Workspace: "T0FAKE", Channel: "D1"}
	reply := bot.Reply{Text: "A flow", Image: &bot.File{Name: "diagram.png", Content: pngBytes},
		Files: []bot.File{{Name: "diagram.excalidraw", Content: sceneJSON}}, EditURL: "https://excalibot.example/edit/x"}
	var posted []string
	record := func(id string, _ ...bot.IndexEntry) error {
		if id == "" || strings.Contains(id, "\n") || len(id) > 256 {
			t.Errorf("recorded part %q: want one line of at most 256 bytes", id)
		}
		posted = append(posted, id)
		return nil
	}
	// The links message fails after the files were shared.
	e.fake.Fail("chat.postMessage", "internal_error", 1)
	err := e.a.SendSteps(e.ctx, key, reply, nil, record)
	if err == nil || isPermanentErr(err) {
		t.Fatalf("first attempt: err = %v, want a failure worth trying again", err)
	}
	if len(posted) != 1 || !strings.HasPrefix(posted[0], "files:F") {
		t.Fatalf("recorded %q after the first attempt, want the shared files", posted)
	}
	uploads := len(e.fake.Calls("files.completeUploadExternal"))
	must(t, e.a.SendSteps(e.ctx, key, reply, slices.Clone(posted), record))
	if n := len(e.fake.Calls("files.completeUploadExternal")); n != uploads {
		t.Errorf("the retry shared the files again (%d completions, want %d)", n, uploads)
	}
	if len(posted) != 2 {
		t.Fatalf("recorded %q, want the files and the message", posted)
	}
	// Both steps done: a third attempt posts nothing.
	must(t, e.a.SendSteps(e.ctx, key, reply, slices.Clone(posted), record))
	got := threadShape(t, e.fake.Thread("D1", ""))
	if len(got) != 2 || !strings.Contains(got[0], "[file diagram.png") || !strings.Contains(got[1], "{button Open in editor") {
		t.Errorf("DM after the retries:\n%q\nwant one file share and one message with the button", got)
	}
}

// TestSendFewerFilesShared: when Slack shares fewer files than asked, those shared are recorded
// with the one missing, the reply says which is missing, and an attempt after it (as the outbox
// makes after a crash) posts no file twice.
func TestSendFewerFilesShared(t *testing.T) {
	for _, links := range []bool{false, true} {
		t.Run(map[bool]string{false: "plain", true: "links"}[links], func(t *testing.T) {
			e := start(t, ModeSocket, newRecorder(), func(c *Config) { c.MaxRetries = 1 })
			key := bot.ThreadKey{Platform: "slack", Workspace: "T0FAKE", Channel: "D1"}
			reply := bot.Reply{Text: "A flow", Image: &bot.File{Name: "flow-r1.png", Content: pngBytes},
				Files: []bot.File{{Name: "flow-r1.excalidraw", Content: sceneJSON}}}
			if links {
				reply.EditURL = "https://excalibot.example/edit/x"
			}
			var posted []string
			record := func(id string, _ ...bot.IndexEntry) error { posted = append(posted, id); return nil }
			e.fake.ShareFewer(1)
			for attempt := range 3 {
				if err := e.a.SendSteps(e.ctx, key, reply, slices.Clone(posted), record); err != nil && attempt == 2 {
					t.Fatalf("attempt %d: %v", attempt, err)
				}
			}
			if n := len(e.fake.Calls("files.completeUploadExternal")); n != 1 {
				t.Errorf("files shared in %d calls, want 1", n)
			}
			got := threadShape(t, e.fake.Thread("D1", ""))
			pngs := 0
			for _, m := range got {
				pngs += strings.Count(m, "[file flow-r1.png")
			}
			if pngs != 1 {
				t.Errorf("the PNG is in the DM %d times, want once:\n%s", pngs, strings.Join(got, "\n"))
			}
			if !slices.ContainsFunc(got, func(m string) bool { return strings.Contains(m, "did not attach `flow-r1.excalidraw`") }) {
				t.Errorf("DM:\n%s\nwant a note naming flow-r1.excalidraw", strings.Join(got, "\n"))
			}
			if len(posted) == 0 || posted[0] != "files:"+e.fake.Files()[0].ID+",-" {
				t.Errorf("recorded %q, want the shared PNG and the missing file first", posted)
			}
		})
	}
}

// TestSendErrorsForTheOutbox: what Slack answers decides what the outbox does with a reply: a
// rate limit carries its Retry-After, a refusal is permanent, a server error is tried again.
func TestSendErrorsForTheOutbox(t *testing.T) {
	e := start(t, ModeSocket, newRecorder(), func(c *Config) { c.MaxRetries = 1 })
	key := bot.ThreadKey{Platform: "slack", Workspace: "T0FAKE", Channel: "D1"}
	none := func(string, ...bot.IndexEntry) error { return nil }

	e.fake.RateLimit("chat.postMessage", 2, 1) // the call and its one retry
	err := e.a.SendSteps(e.ctx, key, bot.Reply{Text: "hi"}, nil, none)
	var rl *bot.RateLimitError
	if !errors.As(err, &rl) || rl.Wait != time.Second {
		t.Errorf("rate limited beyond the retries: err = %v, want a RateLimitError waiting 1s", err)
	}

	e.fake.Fail("chat.postMessage", "channel_not_found", 1)
	if err := e.a.SendSteps(e.ctx, key, bot.Reply{Text: "hi"}, nil, none); !isPermanentErr(err) {
		t.Errorf("channel_not_found: err = %v, want permanent", err)
	}
	e.fake.Fail("chat.postMessage", "internal_error", 1)
	if err := e.a.SendSteps(e.ctx, key, bot.Reply{Text: "hi"}, nil, none); err == nil || isPermanentErr(err) {
		t.Errorf("internal_error: err = %v, want a failure worth trying again", err)
	}
	if err := e.a.SendSteps(e.ctx, key, bot.Reply{}, nil, none); !isPermanentErr(err) {
		t.Errorf("an empty reply: err = %v, want permanent", err)
	}
}

func isPermanentErr(err error) bool {
	var p *bot.PermanentError
	return errors.As(err, &p)
}

// TestFollowUpWhenTheStoreCannotTell: a follow-up without a mention in a thread this adapter does
// not remember, while the store cannot say whether the bot is in it, is not acknowledged (Slack
// delivers it again) and leaves a log line; once the store answers, the redelivery is handed over.
// A follow-up in a thread the bot is not part of is dropped with a log line saying so.
func TestFollowUpWhenTheStoreCannotTell(t *testing.T) {
	var down atomic.Bool
	down.Store(true)
	rec := newRecorder()
	e := start(t, ModeSocket, rec, func(c *Config) {
		c.KnownThread = func(_ context.Context, k bot.ThreadKey) (bool, error) {
			if down.Load() {
				return false, errors.New("store: connection refused")
			}
			return k.Thread == "1700000000.000100", nil
		}
	})
	p := e.fake.Post(slackfake.UserMessage{Channel: "C1", Text: "make it red", ThreadTS: "1700000000.000100"})
	env, err := e.fake.Deliver(e.ctx, p.Events[0], slackfake.DeliverOptions{})
	must(t, err)
	short, cancel := context.WithTimeout(e.ctx, 300*time.Millisecond)
	defer cancel()
	if err := e.fake.WaitAck(short, env); err == nil {
		t.Fatal("acked a follow-up the store could not place")
	}
	if !strings.Contains(e.logs(), "connection refused") {
		t.Errorf("no log line for the follow-up:\n%s", e.logs())
	}
	down.Store(false)
	env2, err := e.fake.Deliver(e.ctx, p.Events[0], slackfake.DeliverOptions{RetryAttempt: 1, RetryReason: "timeout"})
	must(t, err)
	must(t, e.fake.WaitAck(e.ctx, env2))
	if m := rec.nextText(t, "make it red"); m.Key.Thread != "1700000000.000100" {
		t.Errorf("follow-up thread = %q", m.Key.Thread)
	}
	_, err = e.fake.Send(e.ctx, slackfake.UserMessage{Channel: "C1", Text: "not ours", ThreadTS: "1700000000.000200"})
	must(t, err)
	waitLog(t, e, "a thread the bot is not part of")
}

func waitLog(t *testing.T, e *env, want string) {
	t.Helper()
	waitfor.Until(t, 5*time.Second, fmt.Sprintf("the log to say %q", want), func() bool { return strings.Contains(e.logs(), want) },
		func() string { return "the log:\n" + e.logs() })
}
