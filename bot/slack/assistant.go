package slack

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/slack-go/slack"

	"github.com/excalibot/excalibot/bot"
	"github.com/excalibot/excalibot/internal/logkey"
)

// Slack's assistant surface ("Agents & AI Apps", the manifest's assistant_view): a person opens
// the app's container and gets a thread in their direct message with the app. The adapter offers
// suggested prompts when such a thread starts, shows the native status ("is drawing…") instead of
// a reaction and a status line while it works there, and titles the thread after the diagram.

// promptsTitle heads the suggested prompts.
const promptsTitle = "Try one of these"

// suggestedPrompts are offered when an assistant thread starts; the manifest's assistant_view
// lists the same ones (manifest_test.go checks). Each is a request the bot draws well as it is:
// an org chart, a flow with decisions, an architecture.
var suggestedPrompts = []slack.AssistantThreadsPrompt{
	{Title: "Org chart of a small company",
		Message: "Draw an org chart: Maya Chen (CEO) leads Sam Ortiz (CTO), Priya Nair (CFO) and Leo Park (COO). " +
			"Sam leads the Platform team and the Mobile team, Priya leads Finance, Leo leads Support and Operations."},
	{Title: "Flow of a pull request",
		Message: "Draw a flowchart of a pull request: opened → CI runs the tests → tests pass? If not, back to the author. " +
			"If they pass → code review → approved? If not, back to the author; if approved → merge → deploy to staging → deploy to production."},
	{Title: "Architecture of a web app",
		Message: "Draw the architecture of a web app: browser → CDN → load balancer → two API servers → Postgres primary with a read replica. " +
			"The API servers use Redis as a cache and put jobs on a queue that a worker reads."},
}

// workingStatus is the native status while a run starts; the core's steps replace it.
const workingStatus = "is drawing…"

// assistantSign is the bot.SignedStatus of the native status: it names no message, the thread
// key says where it is.
const assistantSign = "assistant"

// onAssistantThread answers assistant_thread_started with the suggested prompts, and notes from
// both it and assistant_thread_context_changed that the thread is an assistant thread. The
// prompts do not depend on where the person is in Slack, so a context change offers nothing new.
// A failure is logged and the event still acknowledged: prompts are a help, not a request.
func (a *Adapter) onAssistantThread(ctx context.Context, in inbound) {
	self, _ := a.identity()
	team := in.teamID
	if team == "" {
		team = self.TeamID
	}
	key := bot.ThreadKey{Platform: Platform, Workspace: team, Channel: in.channel, Thread: in.threadTS}
	log := a.log.With(logkey.Thread, key.String(), "event", in.eventID)
	if in.channel == "" || in.threadTS == "" {
		log.Warn("slack: assistant thread event without its channel or thread; ignored")
		return
	}
	if why := a.refusal(team, in.channel); why != "" {
		log.Info("slack: assistant thread outside the allowlist", "why", why)
		if in.assistant == assistantStarted {
			a.refuse(ctx, key, in.threadTS, why)
		}
		return
	}
	a.assistants.add(key.String())
	a.plainDMs.forget(key.String())
	if in.assistant != assistantStarted {
		return
	}
	// From a goroutine Run waits for, as the allowlist refusal is: the dispatcher (and the
	// Events API's answer) never waits on Slack.
	a.bg.Go(func() {
		pctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
		defer cancel()
		err := a.api.SetAssistantThreadsSuggestedPromptsContext(pctx, slack.AssistantThreadsSetSuggestedPromptsParameters{
			Title: promptsTitle, ChannelID: in.channel, ThreadTS: in.threadTS, Prompts: suggestedPrompts,
		})
		if err != nil {
			log.Warn("slack: cannot offer suggested prompts"+scopeHint(err), logkey.Err, err)
		}
	})
}

// scopeHint tells the operator what to do about a missing scope: new scopes need the app
// reinstalled.
func scopeHint(err error) string {
	if isSlackError(err, "missing_scope") {
		return " (the app lacks a scope: update it from slack-app-manifest.yaml and reinstall it)"
	}
	return ""
}

// isAssistantThread reports whether key is an assistant thread. Only there does the adapter use
// the assistant methods: what Slack answers them in any other DM thread is not documented, and
// an "ok" there would leave the person with no sign at all. A thread is known to be one from
// its assistant_thread_started or assistant_thread_context_changed event; one the adapter has
// not seen (it started before a restart, or its memory was full) is told by its root message,
// which Slack posts with subtype assistant_app_thread. The answer is remembered either way; a
// root that cannot be read counts as a plain thread this once.
func (a *Adapter) isAssistantThread(ctx context.Context, key bot.ThreadKey) bool {
	if key.Thread == "" || !strings.HasPrefix(key.Channel, "D") {
		return false // Slack's DM ids start with D; assistant threads are threads in one
	}
	k := key.String()
	switch {
	case a.assistants.has(k):
		return true
	case a.plainDMs.has(k):
		return false
	}
	msgs, _, _, err := a.api.GetConversationRepliesContext(ctx, &slack.GetConversationRepliesParameters{
		ChannelID: key.Channel, Timestamp: key.Thread, Latest: key.Thread, Inclusive: true, Limit: 1,
	})
	if err != nil {
		a.log.Warn("slack: cannot read the thread's root to tell an assistant thread; showing the usual working signs",
			logkey.Thread, k, logkey.Err, err)
		return false
	}
	if len(msgs) > 0 && msgs[0].Timestamp == key.Thread && msgs[0].SubType == slack.MsgSubTypeAssistantAppThread {
		a.assistants.add(k)
		return true
	}
	a.plainDMs.add(k)
	return false
}

// assistantWorking puts up the native status in an assistant thread. false means Slack refused
// it (a missing scope, or the thread is not one after all: remembered, so the next run goes
// straight to the usual signs) or could not be reached: the caller shows the usual signs instead.
func (a *Adapter) assistantWorking(ctx context.Context, msg bot.Message) (bot.Status, bool) {
	key := msg.Key
	err := a.setStatus(ctx, key, workingStatus)
	if err != nil {
		if isRefusal(err) && !isSlackError(err, "missing_scope") {
			a.plainDMs.add(key.String())
			a.assistants.forget(key.String())
		}
		a.log.Warn("slack: no assistant status here; showing the usual working signs"+scopeHint(err), logkey.Thread, key.String(), logkey.Err, err)
		return nil, false
	}
	return &assistantStatus{a: a, key: key, last: workingStatus}, true
}

func (a *Adapter) setStatus(ctx context.Context, key bot.ThreadKey, text string) error {
	return a.api.SetAssistantThreadsStatusContext(ctx, slack.AssistantThreadsSetStatusParameters{
		ChannelID: key.Channel, ThreadTS: key.Thread, Status: text,
	})
}

// maxStatusText bounds a status; Slack shows one short line.
const maxStatusText = 150

// assistantStatus is the native status of an assistant thread.
type assistantStatus struct {
	a   *Adapter
	key bot.ThreadKey

	mu       sync.Mutex
	last     string
	finished bool
}

var _ bot.SignedStatus = (*assistantStatus)(nil)

// Update shows the core's step as the status (the engine spaces the steps, as for the status
// line). Slack puts the app's name before a status ("excalibot is drawing…"), so a step gets an
// "is" in front: "is rendering…".
func (s *assistantStatus) Update(ctx context.Context, text string) error {
	text = strings.Join(strings.Fields(text), " ")
	if text != "" && !strings.HasPrefix(text, "is ") {
		text = "is " + text
	}
	text = truncate(text, maxStatusText)
	s.mu.Lock()
	if s.finished || text == "" || text == s.last {
		s.mu.Unlock()
		return nil
	}
	s.last = text
	s.mu.Unlock()
	if err := s.a.setStatus(ctx, s.key, text); err != nil {
		return fmt.Errorf("slack assistant status: %w", err)
	}
	return nil
}

// Finish clears the status. Slack clears it too once the reply is posted, and after two minutes
// without one; clearing it here covers a run that posted nothing.
func (s *assistantStatus) Finish(ctx context.Context) error {
	s.mu.Lock()
	if s.finished {
		s.mu.Unlock()
		return nil
	}
	s.finished = true
	s.mu.Unlock()
	if err := s.a.setStatus(ctx, s.key, ""); err != nil && !isSlackError(err, "invalid_thread_ts", "channel_not_found") {
		return fmt.Errorf("slack clear assistant status: %w", err)
	}
	return nil
}

// Sign implements bot.SignedStatus.
func (s *assistantStatus) Sign() string { return assistantSign }

// maxTitle bounds a thread's title; Slack shows it in one line of the app's history.
const maxTitle = 255

// setTitle names an assistant thread after its diagram whenever the title differs from the last
// one set there: a reply carries the title every time, the thread keeps it, and showing an older
// revision brings its title back. A failure is logged only; the reply is posted.
func (a *Adapter) setTitle(ctx context.Context, key bot.ThreadKey, title string) {
	title = truncate(strings.Join(strings.Fields(title), " "), maxTitle)
	if title == "" || !a.isAssistantThread(ctx, key) {
		return
	}
	if a.titles.get(key.String()) == title {
		return
	}
	err := a.api.SetAssistantThreadsTitleContext(ctx, slack.AssistantThreadsSetTitleParameters{
		ChannelID: key.Channel, ThreadTS: key.Thread, Title: title,
	})
	if err != nil {
		a.log.Warn("slack: cannot title the assistant thread"+scopeHint(err), logkey.Thread, key.String(), logkey.Err, err)
		return
	}
	a.titles.set(key.String(), title)
}

// threadTitles remembers the last title set in each thread, for at most max threads (the
// oldest forgotten first: a forgotten thread is titled again on its next reply, which is harmless).
type threadTitles struct {
	mu     sync.Mutex
	max    int
	titles map[string]string
	order  []string // insertion order, for eviction
}

func newThreadTitles(max int) *threadTitles {
	return &threadTitles{max: max, titles: map[string]string{}}
}

// get is the last title set in thread, or "".
func (t *threadTitles) get(thread string) string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.titles[thread]
}

func (t *threadTitles) set(thread, title string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if _, ok := t.titles[thread]; !ok {
		t.order = append(t.order, thread)
	}
	t.titles[thread] = title
	for len(t.order) > t.max {
		delete(t.titles, t.order[0])
		t.order = t.order[1:]
	}
}
