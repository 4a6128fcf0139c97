package slack

import (
	"reflect"
	"strings"
	"testing"

	"github.com/excalibot/excalibot/bot"
	"github.com/excalibot/excalibot/bot/slack/slackfake"
)

// Working signs degrade gracefully: a sign Slack refuses is left out, and only when none can
// be shown does Working fail.
func TestWorkingSignsPartialFailures(t *testing.T) {
	for _, tc := range []struct {
		name      string
		fail      []string // methods that fail once
		wantErr   bool
		reacted   bool
		statusMsg bool
	}{
		{"both", nil, false, true, true},
		{"no reaction permission", []string{"reactions.add"}, false, false, true},
		{"cannot post", []string{"chat.postMessage"}, false, true, false},
		{"nothing works", []string{"reactions.add", "chat.postMessage"}, true, false, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := start(t, ModeSocket, newRecorder(), nil)
			p := e.fake.Post(slackfake.UserMessage{Channel: "C1", Text: "<@U0BOT> draw"})
			for _, m := range tc.fail {
				e.fake.Fail(m, "missing_scope", 1)
			}
			msg := bot.Message{Key: bot.ThreadKey{Platform: Platform, Workspace: "T0FAKE", Channel: "C1", Thread: p.TS}, ID: p.TS}
			st, err := e.a.Working(e.ctx, msg)
			if (err != nil) != tc.wantErr {
				t.Fatalf("Working err = %v, want error: %v", err, tc.wantErr)
			}
			if err != nil {
				return
			}
			if got := len(e.fake.Reactions("C1", p.TS)) == 1; got != tc.reacted {
				t.Errorf("reacted = %v, want %v", got, tc.reacted)
			}
			if got := len(e.fake.Thread("C1", p.TS)) == 2; got != tc.statusMsg {
				t.Errorf("status line posted = %v, want %v", got, tc.statusMsg)
			}
			must(t, st.Update(e.ctx, "step 1"))
			must(t, st.Finish(e.ctx))
			must(t, st.Finish(e.ctx)) // a second Finish is harmless
			if got := threadShape(t, e.fake.Thread("C1", p.TS)); len(got) != 1 {
				t.Errorf("thread after Finish = %q, want only the request", got)
			}
			if got := e.fake.Reactions("C1", p.TS); len(got) != 0 {
				t.Errorf("reactions after Finish = %v", got)
			}
		})
	}
}

// TestStatusUpdates: each new text edits the status line (the engine spaces them); the same text
// again is not sent.
func TestStatusUpdates(t *testing.T) {
	e := start(t, ModeSocket, newRecorder(), nil)
	p := e.fake.Post(slackfake.UserMessage{Channel: "D1", Text: "draw"})
	st, err := e.a.Working(e.ctx, bot.Message{Key: bot.ThreadKey{Platform: Platform, Workspace: "T0FAKE", Channel: "D1"}, ID: p.TS})
	must(t, err)
	for _, s := range []string{"drawing… 1 shape", "drawing… 1 shape", "drawing… 2 shapes"} {
		must(t, st.Update(e.ctx, s))
	}
	var texts []string
	for _, c := range e.fake.Calls("chat.update") {
		texts = append(texts, c.Form.Get("text"))
	}
	if want := []string{"Drawing… 1 shape", "Drawing… 2 shapes"}; !reflect.DeepEqual(texts, want) {
		t.Errorf("chat.update texts = %q, want %q (a repeated text not sent again)", texts, want)
	}
	// The status is escaped like any text.
	e2 := start(t, ModeSocket, newRecorder(), nil)
	p2 := e2.fake.Post(slackfake.UserMessage{Channel: "D1", Text: "draw"})
	st2, err := e2.a.Working(e2.ctx, bot.Message{Key: bot.ThreadKey{Platform: Platform, Workspace: "T0FAKE", Channel: "D1"}, ID: p2.TS})
	must(t, err)
	must(t, st2.Update(e2.ctx, "a <b> & c"))
	if c := e2.fake.Calls("chat.update"); len(c) != 1 || !strings.Contains(c[0].Form.Get("text"), "A &lt;b&gt; &amp; c") {
		t.Errorf("status text not escaped: %v", c)
	}
}

// The status line stands on its own in the thread, so it starts with a capital as a sentence
// does; the native status does not (Slack puts the app's name before it).
func TestStatusLineCapitalised(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"drawing 4 boxes and 3 arrows…", "Drawing 4 boxes and 3 arrows…"},
		{"équilibrage…", "Équilibrage…"},
		{"Rendering…", "Rendering…"},
		{"", ""},
	} {
		if got := bot.StatusLine(tc.in); got != tc.want {
			t.Errorf("StatusLine(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
	e := start(t, ModeSocket, newRecorder(), nil)
	p := e.fake.Post(slackfake.UserMessage{Channel: "D1", Text: "draw"})
	st, err := e.a.Working(e.ctx, bot.Message{Key: bot.ThreadKey{Platform: Platform, Workspace: "T0FAKE", Channel: "D1"}, ID: p.TS})
	must(t, err)
	must(t, st.Update(e.ctx, "drawing 4 boxes and 3 arrows…"))
	if c := e.fake.Calls("chat.update"); len(c) != 1 || c[0].Form.Get("text") != "Drawing 4 boxes and 3 arrows…" {
		t.Errorf("status line edits = %v, want one to %q", c, "Drawing 4 boxes and 3 arrows…")
	}
}

// TestClearSign: the reaction and status line a dead process left are taken down by the next one
// from the handle the status gave (the core stores it with the run).
func TestClearSign(t *testing.T) {
	e := start(t, ModeSocket, newRecorder(), nil)
	p := e.fake.Post(slackfake.UserMessage{Channel: "C1", Text: "<@U0BOT> draw"})
	key := bot.ThreadKey{Platform: Platform, Workspace: "T0FAKE", Channel: "C1", Thread: p.TS}
	st, err := e.a.Working(e.ctx, bot.Message{Key: key, ID: p.TS})
	if err != nil {
		t.Fatal(err)
	}
	sign := st.(bot.SignedStatus).Sign()
	if len(e.fake.Reactions("C1", p.TS)) != 1 || len(e.fake.Thread("C1", p.TS)) != 2 {
		t.Fatal("the working signs are not up")
	}
	// The process dies here: no Finish. The next one clears the sign.
	must(t, e.a.ClearSign(e.ctx, key, sign))
	if got := threadShape(t, e.fake.Thread("C1", p.TS)); len(got) != 1 {
		t.Errorf("thread after ClearSign = %q, want only the request", got)
	}
	if got := e.fake.Reactions("C1", p.TS); len(got) != 0 {
		t.Errorf("reactions after ClearSign = %v", got)
	}
	must(t, e.a.ClearSign(e.ctx, key, sign)) // gone already: no error
	if err := e.a.ClearSign(e.ctx, key, "garbage"); err == nil {
		t.Error("ClearSign accepted a sign it never gave")
	}
}
