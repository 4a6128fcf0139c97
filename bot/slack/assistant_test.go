package slack

import (
	"context"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/excalibot/excalibot/bot"
	"github.com/excalibot/excalibot/bot/slack/slackfake"
)

// openAssistant starts an assistant thread as a person opening the app's container does, and
// delivers its event over Socket Mode.
func openAssistant(t *testing.T, e *env, st slackfake.AssistantStart) string {
	t.Helper()
	p := e.fake.StartAssistantThread(st)
	for _, ev := range p.Events {
		env, err := e.fake.Deliver(e.ctx, ev, slackfake.DeliverOptions{})
		must(t, err)
		must(t, e.fake.WaitAck(e.ctx, env))
	}
	return p.TS
}

// waitPrompts waits until the suggested prompts were offered in a thread (from a goroutine of
// the adapter's).
func waitPrompts(t *testing.T, e *env, channel, ts string) {
	t.Helper()
	waitUntil(t, "the suggested prompts", func() bool {
		th, _ := e.fake.Assistant(channel, ts)
		return len(th.Prompts) > 0
	})
}

func assistantOf(t *testing.T, e *env, channel, ts string) slackfake.AssistantThread {
	t.Helper()
	th, ok := e.fake.Assistant(channel, ts)
	if !ok {
		t.Fatalf("no assistant thread %s/%s in the fake", channel, ts)
	}
	return th
}

// The assistant surface end to end: prompts when the thread opens, a message there is a request,
// the native status while drawing (no reaction, no status line), cleared at the end, and the
// thread titled after the diagram.
func TestAssistantThreadFlow(t *testing.T) {
	var mu sync.Mutex
	var whileWorking slackfake.AssistantThread
	var reactionsWhileWorking []string
	var errs []error
	rec := newRecorder()
	title := "Deploy pipeline"
	rec.reply = func(ctx context.Context, a bot.Adapter, m bot.Message) {
		fail := func(err error) {
			mu.Lock()
			errs = append(errs, err)
			mu.Unlock()
		}
		st, err := a.Working(ctx, m)
		if err != nil {
			fail(err)
			return
		}
		if err := st.Update(ctx, "drawing… 4 shapes, 3 arrows"); err != nil {
			fail(err)
		}
		th, _ := rec.fake.Assistant(m.Key.Channel, m.Key.Thread)
		mu.Lock()
		whileWorking, reactionsWhileWorking = th, rec.fake.Reactions(m.Key.Channel, m.ID)
		mu.Unlock()
		if err := a.Send(ctx, m.Key, bot.Reply{Text: "A pipeline of 4 steps.", Title: title,
			Alt:   "Flowchart Deploy pipeline: Build, Test, Stage and Release, in that order.",
			Image: &bot.File{Name: "deploy-pipeline-r1.png", MIME: "image/png", Content: pngBytes},
			Files: []bot.File{{Name: "deploy-pipeline-r1.excalidraw", MIME: "application/json", Content: sceneJSON}},
		}); err != nil {
			fail(err)
		}
		if err := st.Finish(ctx); err != nil {
			fail(err)
		}
	}
	e := start(t, ModeSocket, rec, nil)
	ts := openAssistant(t, e, slackfake.AssistantStart{User: "U1", Channel: "D1", Context: "C7"})

	waitPrompts(t, e, "D1", ts)
	th := assistantOf(t, e, "D1", ts)
	if len(th.Prompts) != 1 {
		t.Fatalf("suggested prompts set %d times, want once", len(th.Prompts))
	}
	if got := th.Prompts[0]; got.Title != promptsTitle || len(got.Prompts) != 3 {
		t.Fatalf("prompts = %+v, want 3 under %q", got, promptsTitle)
	}
	for i, want := range []string{"org chart", "flowchart", "architecture"} {
		if p := th.Prompts[0].Prompts[i]; !strings.Contains(p.Message, want) {
			t.Errorf("prompt %d = %q, want one asking for an %s", i, p.Message, want)
		}
	}

	// A message in the assistant thread (message.im with thread_ts) is a request.
	_, err := e.fake.Send(e.ctx, slackfake.UserMessage{Channel: "D1", ThreadTS: ts, User: "U1", Text: "draw our deploy pipeline"})
	must(t, err)
	m := rec.nextText(t, "draw our deploy pipeline")
	if want := (bot.ThreadKey{Platform: Platform, Workspace: "T0FAKE", Channel: "D1", Thread: ts}); m.Key != want {
		t.Fatalf("key = %+v, want %+v", m.Key, want)
	}
	rec.waitReplied(t)
	mu.Lock()
	defer mu.Unlock()
	if len(errs) > 0 {
		t.Fatal(errs)
	}
	if whileWorking.Status != "is drawing… 4 shapes, 3 arrows" {
		t.Errorf("status while working = %q, want the step after %q", whileWorking.Status, "is ")
	}
	if len(reactionsWhileWorking) != 0 {
		t.Errorf("reactions while working = %v, want none in an assistant thread", reactionsWhileWorking)
	}
	th = assistantOf(t, e, "D1", ts)
	if want := []string{"is drawing…", "is drawing… 4 shapes, 3 arrows", ""}; !slices.Equal(th.Statuses, want) {
		t.Errorf("statuses = %q, want %q (cleared at the end)", th.Statuses, want)
	}
	if !slices.Equal(th.Titles, []string{title}) {
		t.Errorf("titles = %q, want [%q]", th.Titles, title)
	}
	for _, method := range []string{"reactions.add", "chat.update", "chat.delete"} {
		if n := len(e.fake.Calls(method)); n != 0 {
			t.Errorf("%s called %d times in an assistant thread, want 0", method, n)
		}
	}
	got := threadShape(t, e.fake.Thread("D1", ts))
	want := []string{"user: New chat", "user: draw our deploy pipeline",
		fmt.Sprintf("bot: A pipeline of 4 steps. [file deploy-pipeline-r1.png image/png 2008B] [file deploy-pipeline-r1.excalidraw application/json %dB]", len(sceneJSON))}
	if !slices.Equal(got, want) {
		t.Errorf("thread:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}

	// The next reply with the same title does not set it again; a new title does, and so does
	// the first one again (an older revision shown): the thread follows the latest title.
	key := m.Key
	must(t, e.a.Send(e.ctx, key, bot.Reply{Text: "Undid it.", Title: title}))
	must(t, e.a.Send(e.ctx, key, bot.Reply{Text: "Renamed.", Title: "Release train"}))
	must(t, e.a.Send(e.ctx, key, bot.Reply{Text: "Revision 1.", Title: title}))
	must(t, e.a.Send(e.ctx, key, bot.Reply{Text: "Still revision 1.", Title: " " + title + " "}))
	wantTitles := []string{title, "Release train", title}
	if th := assistantOf(t, e, "D1", ts); !slices.Equal(th.Titles, wantTitles) {
		t.Errorf("titles = %q, want %q: each change set once", th.Titles, wantTitles)
	}

	// Channel mentions keep their reaction and status line, and touch no assistant method.
	before := len(e.fake.Calls("assistant.threads.setStatus"))
	p := e.fake.Post(slackfake.UserMessage{Channel: "C1", Text: "<@U0BOT> draw"})
	cst, err := e.a.Working(e.ctx, bot.Message{Key: bot.ThreadKey{Platform: Platform, Workspace: "T0FAKE", Channel: "C1", Thread: p.TS}, ID: p.TS})
	must(t, err)
	if got := e.fake.Reactions("C1", p.TS); !slices.Equal(got, []string{"eyes"}) {
		t.Errorf("channel reactions = %v, want [eyes]", got)
	}
	must(t, e.a.Send(e.ctx, bot.ThreadKey{Platform: Platform, Workspace: "T0FAKE", Channel: "C1", Thread: p.TS}, bot.Reply{Text: "ok", Title: "X"}))
	must(t, cst.Finish(e.ctx))
	if after := len(e.fake.Calls("assistant.threads.setStatus")); after != before || len(e.fake.Calls("assistant.threads.setTitle")) != len(wantTitles) {
		t.Errorf("a channel thread called assistant methods (setStatus %d→%d, setTitle %d)", before, after,
			len(e.fake.Calls("assistant.threads.setTitle")))
	}
}

// The assistant thread's start arrives over the Events API too.
func TestAssistantThreadStartedOverHTTP(t *testing.T) {
	e, url := eventsEnv(t, newRecorder())
	p := e.fake.StartAssistantThread(slackfake.AssistantStart{User: "U2"})
	res, err := e.fake.DeliverHTTP(e.ctx, url, p.Events[0].Body, slackfake.HTTPOptions{})
	must(t, err)
	if res.Status != http.StatusOK {
		t.Fatalf("status = %d, want 200", res.Status)
	}
	waitPrompts(t, e, "DU2", p.TS)
	if th := assistantOf(t, e, "DU2", p.TS); len(th.Prompts) != 1 || len(th.Prompts[0].Prompts) != len(suggestedPrompts) {
		t.Errorf("prompts = %+v, want the suggested prompts once", th.Prompts)
	}
}

// A context change (the person moved to another channel) offers nothing new, but tells the
// adapter the thread is an assistant thread. Both events are acknowledged even when Slack
// refuses the prompts, and a missing scope is logged with what to do.
func TestAssistantEvents(t *testing.T) {
	e := start(t, ModeSocket, newRecorder(), nil)
	e.fake.Fail("assistant.threads.setSuggestedPrompts", "missing_scope", 1)
	ts := openAssistant(t, e, slackfake.AssistantStart{User: "U3", Channel: "D3"})
	waitUntil(t, "the refused prompts logged with a hint to reinstall the app", func() bool {
		return strings.Contains(e.logs(), "cannot offer suggested prompts") && strings.Contains(e.logs(), "reinstall")
	})
	if th := assistantOf(t, e, "D3", ts); len(th.Prompts) != 0 {
		t.Errorf("prompts = %+v after a refusal", th.Prompts)
	}
	ev := e.fake.ChangeAssistantContext("D3", ts, "C9")
	env, err := e.fake.Deliver(e.ctx, ev, slackfake.DeliverOptions{})
	must(t, err)
	must(t, e.fake.WaitAck(e.ctx, env))
	if n := len(e.fake.Calls("assistant.threads.setSuggestedPrompts")); n != 1 {
		t.Errorf("setSuggestedPrompts calls = %d, want 1 (none for the context change)", n)
	}
	key := bot.ThreadKey{Platform: Platform, Workspace: "T0FAKE", Channel: "D3", Thread: ts}
	if !e.a.assistants.has(key.String()) {
		t.Error("the thread is not known as an assistant thread")
	}
}

// A DM thread that is not an assistant thread gets the usual signs, even where Slack would take
// the native status (its answer there is not documented, and the person would see nothing):
// the adapter reads the thread's root once, remembers it, and never calls the assistant methods
// there. A missing scope in an assistant thread falls back the same way without marking it.
func TestAssistantStatusFallsBack(t *testing.T) {
	e := startWith(t, slackfake.New(t, slackfake.Config{AssistantAnywhere: true}), ModeSocket, newRecorder(), nil)
	root := e.fake.Post(slackfake.UserMessage{Channel: "D1", Text: "hello"})
	q := e.fake.Post(slackfake.UserMessage{Channel: "D1", Text: "draw", ThreadTS: root.TS})
	msg := bot.Message{Key: bot.ThreadKey{Platform: Platform, Workspace: "T0FAKE", Channel: "D1", Thread: root.TS}, ID: q.TS}
	for run := range 2 {
		st, err := e.a.Working(e.ctx, msg)
		must(t, err)
		if got := e.fake.Reactions("D1", q.TS); !slices.Equal(got, []string{"eyes"}) {
			t.Errorf("run %d: reactions = %v, want [eyes]", run, got)
		}
		if got := threadShape(t, e.fake.Thread("D1", root.TS)); !slices.Contains(got, "bot: "+workingText) {
			t.Errorf("run %d: thread = %q, want the status line %q", run, got, workingText)
		}
		if s := st.(bot.SignedStatus).Sign(); s == assistantSign {
			t.Errorf("run %d: sign = %q, want the usual signs'", run, s)
		}
		must(t, st.Finish(e.ctx))
	}
	if n := len(e.fake.Calls("conversations.replies")); n != 1 {
		t.Errorf("conversations.replies calls = %d, want 1 (the root is read once)", n)
	}
	must(t, e.a.Send(e.ctx, msg.Key, bot.Reply{Text: "done", Title: "A title"}))
	for _, method := range []string{"assistant.threads.setStatus", "assistant.threads.setTitle"} {
		if n := len(e.fake.Calls(method)); n != 0 {
			t.Errorf("%s calls = %d in a DM thread that is no assistant thread, want 0", method, n)
		}
	}

	ts := openAssistant(t, e, slackfake.AssistantStart{User: "U4", Channel: "D4"})
	e.fake.Fail("assistant.threads.setStatus", "missing_scope", 1)
	akey := bot.ThreadKey{Platform: Platform, Workspace: "T0FAKE", Channel: "D4", Thread: ts}
	st, err := e.a.Working(e.ctx, bot.Message{Key: akey, ID: ts})
	must(t, err)
	if s := st.(bot.SignedStatus).Sign(); s == assistantSign {
		t.Errorf("sign = %q after a missing scope, want the usual signs", s)
	}
	must(t, st.Finish(e.ctx))
	st, err = e.a.Working(e.ctx, bot.Message{Key: akey, ID: ts})
	must(t, err)
	if s := st.(bot.SignedStatus).Sign(); s != assistantSign {
		t.Errorf("sign = %q once the scope is there, want %q", s, assistantSign)
	}
	must(t, st.Finish(e.ctx))
}

// An assistant thread that started before the adapter did (no event seen) is told by its root
// message, of subtype assistant_app_thread: it gets the native status and its title.
func TestAssistantThreadKnownByItsRoot(t *testing.T) {
	e := start(t, ModeSocket, newRecorder(), nil)
	p := e.fake.StartAssistantThread(slackfake.AssistantStart{User: "U7", Channel: "D7"}) // its event is not delivered
	q := e.fake.Post(slackfake.UserMessage{Channel: "D7", User: "U7", Text: "draw", ThreadTS: p.TS})
	key := bot.ThreadKey{Platform: Platform, Workspace: "T0FAKE", Channel: "D7", Thread: p.TS}
	st, err := e.a.Working(e.ctx, bot.Message{Key: key, ID: q.TS})
	must(t, err)
	if s := st.(bot.SignedStatus).Sign(); s != assistantSign {
		t.Errorf("sign = %q, want %q", s, assistantSign)
	}
	if got := e.fake.Reactions("D7", q.TS); len(got) != 0 {
		t.Errorf("reactions = %v, want none in an assistant thread", got)
	}
	must(t, st.Finish(e.ctx))
	must(t, e.a.Send(e.ctx, key, bot.Reply{Text: "done", Title: "A title"}))
	th := assistantOf(t, e, "D7", p.TS)
	if want := []string{workingStatus, ""}; !slices.Equal(th.Statuses, want) {
		t.Errorf("statuses = %q, want %q", th.Statuses, want)
	}
	if want := []string{"A title"}; !slices.Equal(th.Titles, want) {
		t.Errorf("titles = %q, want %q", th.Titles, want)
	}
	if n := len(e.fake.Calls("conversations.replies")); n != 1 {
		t.Errorf("conversations.replies calls = %d, want 1 (remembered)", n)
	}
}

// A native status a dead process left up is cleared by the next one from its sign.
func TestClearAssistantSign(t *testing.T) {
	e := start(t, ModeSocket, newRecorder(), nil)
	ts := openAssistant(t, e, slackfake.AssistantStart{User: "U5", Channel: "D5"})
	key := bot.ThreadKey{Platform: Platform, Workspace: "T0FAKE", Channel: "D5", Thread: ts}
	st, err := e.a.Working(e.ctx, bot.Message{Key: key, ID: ts})
	must(t, err)
	sign := st.(bot.SignedStatus).Sign()
	if th := assistantOf(t, e, "D5", ts); th.Status != workingStatus {
		t.Fatalf("status = %q, want %q", th.Status, workingStatus)
	}
	// The process dies here: no Finish.
	must(t, e.a.ClearSign(e.ctx, key, sign))
	if th := assistantOf(t, e, "D5", ts); th.Status != "" {
		t.Errorf("status after ClearSign = %q, want it cleared", th.Status)
	}
	if err := e.a.ClearSign(e.ctx, bot.ThreadKey{Platform: Platform, Channel: "D5"}, sign); err == nil {
		t.Error("ClearSign of an assistant status without a thread: no error")
	}
}

func TestAssistantStatusText(t *testing.T) {
	e := start(t, ModeSocket, newRecorder(), nil)
	ts := openAssistant(t, e, slackfake.AssistantStart{User: "U6", Channel: "D6"})
	st, err := e.a.Working(e.ctx, bot.Message{Key: bot.ThreadKey{Platform: Platform, Workspace: "T0FAKE", Channel: "D6", Thread: ts}, ID: ts})
	must(t, err)
	for _, text := range []string{"rendering…", "is checking the labels…", "  ", strings.Repeat("long ", 100)} {
		must(t, st.Update(e.ctx, text))
	}
	must(t, st.Finish(e.ctx))
	must(t, st.Update(e.ctx, "after the end"))
	got := assistantOf(t, e, "D6", ts).Statuses
	if len(got) != 5 || got[1] != "is rendering…" || got[2] != "is checking the labels…" || got[4] != "" {
		t.Fatalf("statuses = %q, want start, two steps, the long one, the clear", got)
	}
	if n := len([]rune(got[3])); n > maxStatusText || !strings.HasSuffix(got[3], "…") {
		t.Errorf("long status = %d characters %q, want at most %d, cut with …", n, got[3], maxStatusText)
	}
}

// The titles remembered are bounded: the oldest thread is forgotten first, and a thread set
// again keeps its place and takes the new title.
func TestThreadTitlesBounded(t *testing.T) {
	tt := newThreadTitles(2)
	tt.set("a", "A1")
	tt.set("b", "B1")
	tt.set("a", "A2")
	tt.set("c", "C1")
	for _, tc := range []struct{ thread, want string }{{"a", ""}, {"b", "B1"}, {"c", "C1"}} {
		if got := tt.get(tc.thread); got != tc.want {
			t.Errorf("title of %s = %q, want %q", tc.thread, got, tc.want)
		}
	}
	tt.set("b", "B2")
	if got := tt.get("b"); got != "B2" {
		t.Errorf("title of b = %q, want the latest, B2", got)
	}
}
