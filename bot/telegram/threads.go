package telegram

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/go-telegram/bot/models"

	"github.com/excalibot/excalibot/bot"
	"github.com/excalibot/excalibot/internal/logkey"
)

// thread is a group conversation: a reply chain, inside a forum topic when there is one.
type thread struct {
	topic int // message_thread_id of the forum topic; 0 outside topics
	root  int // first message of the reply chain
}

// String is the ThreadKey.Thread form "topic:root".
func (t thread) String() string { return fmt.Sprintf("%d:%d", t.topic, t.root) }

func parseThread(s string) (thread, error) {
	if s == "" {
		return thread{}, nil
	}
	a, b, ok := strings.Cut(s, ":")
	topic, err1 := strconv.Atoi(a)
	root, err2 := strconv.Atoi(b)
	if !ok || err1 != nil || err2 != nil {
		return thread{}, fmt.Errorf("telegram thread %q is not topic:root", s)
	}
	return thread{topic: topic, root: root}, nil
}

// route finds the thread of an addressed group message from user, whose text is already stripped
// of the bot's mention. byLast reports that the message did not reply into its thread but was
// given the thread its sender last worked on in the topic, so the answer must say which diagram.
//
//   - A reply belongs to the thread of the message it replies to (a request or anything the bot
//     posted). A reply to the bot's message that the index does not know waits a moment for it
//     when the message is new (another replica may be committing it), and otherwise (posted
//     before the index kept it) starts a thread rooted there; a drawing request replying to some other message
//     starts a new thread.
//   - /draw with a request, /new (or reset), a posted file and "draw this thread" start a new
//     diagram.
//   - Everything else (mentions, /undo, /history, /show, /revert, /export, …) goes on with the
//     diagram the sender last worked on here; only when there is none does it start a new one.
func (a *Adapter) route(ctx context.Context, m *models.Message, me *models.User, user int64, text string) (t thread, byLast bool) {
	fresh := thread{topic: topicOf(m), root: m.ID}
	cmd := bot.ParseCommand(text)
	if r := m.ReplyToMessage; r != nil && !isTopicRoot(m) {
		if known, ok := a.lookup(ctx, m.Chat.ID, msgRef(r.ID)); ok {
			return known, false
		}
		if r.From != nil && r.From.ID == me.ID {
			if known, ok := a.justPosted(ctx, m.Chat.ID, r); ok {
				return known, false
			}
			return thread{topic: fresh.topic, root: r.ID}, false
		}
		if cmd.Kind == bot.CmdDraw {
			return fresh, false
		}
		// A command replying to a message of no diagram ("/undo" answering a colleague) can only
		// mean the sender's diagram: as if it replied to nothing.
	}
	if startsNew(m, text, cmd) {
		return fresh, false
	}
	last, ok := a.lookup(ctx, m.Chat.ID, lastRef(fresh.topic, user))
	if !ok || last.topic != fresh.topic {
		return fresh, false
	}
	// A redelivered first request finds the thread it started itself: that is no pick. Help is
	// about no diagram: its answer names none.
	return last, last.root != m.ID && cmd.Kind != bot.CmdHelp
}

// postedWait bounds how long a reply to the bot's message that has just been posted waits for the
// commit that files the message (another replica posted it a moment ago: Telegram shows a message
// before its sender has recorded it).
const postedWait = 3 * time.Second

// justPosted looks r, a message of the bot's posted within the last minute, up again until the
// commit that files it lands or postedWait passes.
func (a *Adapter) justPosted(ctx context.Context, chat int64, r *models.Message) (thread, bool) {
	if a.now().Sub(time.Unix(int64(r.Date), 0)) > time.Minute {
		return thread{}, false // filed long ago or never: nothing is on its way
	}
	ctx, cancel := context.WithTimeout(ctx, postedWait)
	defer cancel()
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return thread{}, false
		case <-tick.C:
		}
		if t, ok := a.lookup(ctx, chat, msgRef(r.ID)); ok {
			return t, true
		}
	}
}

// startsNew tells the messages that begin a diagram even when their sender has one here: a posted
// file (an .excalidraw, a picture to redraw), /new or reset, /draw with a request, and a request
// to draw the discussion.
func startsNew(m *models.Message, text string, cmd bot.Command) bool {
	if m.Document != nil || len(m.Photo) > 0 {
		return true
	}
	if cmd.Kind == bot.CmdReset {
		return true
	}
	if cmd.Kind != bot.CmdDraw {
		return false
	}
	if bot.AsksForDiscussion(cmd.Arg) {
		return true // "draw this thread": a diagram of the discussion, not a change to another
	}
	fields := strings.Fields(strings.ToLower(text))
	if len(fields) == 0 {
		return false
	}
	word, _, _ := strings.Cut(fields[0], "@")
	return word == "/draw"
}

// lookup reads the index; a failure is logged and counts as unknown (the message then starts a
// new thread, which loses nothing stored).
func (a *Adapter) lookup(ctx context.Context, chat int64, ref string) (thread, bool) {
	s, ok, err := a.threads.Thread(ctx, chat, ref)
	if err != nil {
		a.log.Warn("telegram: thread lookup failed; treating the message as a new thread", logkey.Chat, chat, "ref", ref, logkey.Err, err)
		return thread{}, false
	}
	if !ok {
		return thread{}, false
	}
	t, err := parseThread(s)
	if err != nil || t.root == 0 {
		a.log.Warn("telegram: the thread index holds what is not a thread; ignored", logkey.Chat, chat, "ref", ref, logkey.Thread, s)
		return thread{}, false
	}
	return t, true
}

// file records what the index must know of an addressed group message handed to the core: its
// thread (so replies to it continue there), that the thread is now its sender's last in the
// topic, and whether it was given that thread without replying into it. The entries are returned
// for the core to keep in the commit that keeps the message (and set in the index here when the
// core keeps none: Config.IndexKeptByCore).
func (a *Adapter) file(ctx context.Context, m *models.Message, user int64, t thread, byLast bool) []bot.IndexEntry {
	refs := []string{msgRef(m.ID), lastRef(t.topic, user)}
	if byLast {
		refs = append(refs, askedRef(m.ID))
	}
	out := make([]bot.IndexEntry, 0, len(refs))
	for _, ref := range refs {
		if !a.cfg.IndexKeptByCore {
			a.setThread(ctx, m.Chat.ID, ref, t.String())
		}
		out = append(out, storedEntry(m.Chat.ID, ref, t.String()))
	}
	return out
}

// storedEntry is one entry of the index as the store keeps it.
func storedEntry(chat int64, ref, thread string) bot.IndexEntry {
	return bot.IndexEntry{Platform: Platform, Chat: strconv.FormatInt(chat, 10), Msg: ref, Thread: thread}
}

func (a *Adapter) setThread(ctx context.Context, chat int64, ref string, thread string) {
	if err := a.threads.SetThread(ctx, chat, ref, thread); err != nil {
		a.log.Warn("telegram: thread not recorded; replies to this message will start a new thread", logkey.Chat, chat, "ref", ref, logkey.Err, err)
	}
}

// pickedLast reports whether the request a reply answers was given its sender's last thread
// without replying into it. The mark is kept with the request (in its commit, or at intake), so
// it is there before the answer; when the lookup fails, the answer merely does not name its diagram.
func (a *Adapter) pickedLast(ctx context.Context, d dest, replyTo int) bool {
	if d.thread == "" || replyTo == 0 {
		return false
	}
	s, ok, err := a.threads.Thread(ctx, d.chat, askedRef(replyTo))
	if err != nil {
		a.log.Warn("telegram: could not tell whether a request was given its sender's last diagram", logkey.Chat, d.chat, logkey.Err, err)
		return false
	}
	return ok && s == d.thread
}

// Bounds, in characters, of what an answer names its diagram by: the title, or for an untitled
// diagram the request that started it (shorter: it is a quote, and the answer follows it).
const (
	maxQuotedTitle   = 60
	maxQuotedRequest = 32
)

// naming is how an answer to a request that was given its sender's last diagram says which
// diagram that is, so that on a phone, in the notification too, a reader sees which diagram a
// plain /undo changed: "‘Deploy pipeline’ — Undone: …". byTitle names it by the reply's title;
// otherwise literal is the name ("" for none). An untitled diagram is named by the request that
// started its thread, when this process still has it in its record of messages seen:
// "Your diagram ‘draw our deploy pipeline…’ — Undone: …"; otherwise "Your last diagram — Undone: …".
//
// It is decided once, on the first attempt, and kept with the first step's id (see step), so
// every attempt builds the same text. A title may be longer than a step id allows; it comes with
// the reply, so the id only says to use it.
type naming struct {
	byTitle bool
	literal string
}

// nameFor decides how an answer in d names a diagram titled title.
func (a *Adapter) nameFor(d dest, title string) naming {
	if shorten(title, maxQuotedTitle) != "" {
		return naming{byTitle: true}
	}
	if t, err := parseThread(d.thread); err == nil {
		if req := quoteRequest(a.seen.text(convRef{d.chat, d.topic}, t.root)); req != "" {
			return naming{literal: "Your diagram ‘" + req + "’"}
		}
	}
	return naming{literal: "Your last diagram"}
}

// The first step's id carries the naming after the message id: " by-title", or " name:" and
// the name (one line, at most maxQuotedRequest characters of quote).
const (
	stepByTitle = " by-title"
	stepName    = " name:"
)

// step is the recorded id of the first step, message id, with the naming.
func (n naming) step(id int) string {
	switch {
	case n.byTitle:
		return strconv.Itoa(id) + stepByTitle
	case n.literal != "":
		return strconv.Itoa(id) + stepName + n.literal
	}
	return strconv.Itoa(id)
}

// parseStep splits a recorded first step into the message id and the naming kept with it.
func parseStep(s string) (string, naming) {
	if id, ok := strings.CutSuffix(s, stepByTitle); ok {
		return id, naming{byTitle: true}
	}
	if id, name, ok := strings.Cut(s, stepName); ok {
		return id, naming{literal: name}
	}
	return s, naming{}
}

// apply starts r's text with the name, when there is one. Named by title, the alt text's heading
// (which follows in a caption) leaves the title out: a phone shows it once, quoted one way.
func (n naming) apply(r bot.Reply) bot.Reply {
	name := n.literal
	if n.byTitle {
		name = "‘" + shorten(r.Title, maxQuotedTitle) + "’"
		r.Alt = untitledHeading(r.Alt, r.Title)
	}
	switch {
	case name == "":
	case r.Text == "":
		r.Text = name
	default:
		r.Text = name + " — " + r.Text
	}
	return r
}

// untitledHeading drops the quoted title from the heading alt text starts with
// ("Flowchart “Deploy pipeline” with 3 boxes." → "Flowchart with 3 boxes."); a title quoted
// further on (a box's label) stays.
func untitledHeading(alt, title string) string {
	quoted := " “" + strings.TrimSpace(title) + "”"
	i := strings.Index(alt, quoted)
	if title == "" || i <= 0 || strings.ContainsAny(alt[:i], ".:“”") {
		return alt
	}
	return alt[:i] + alt[i+len(quoted):]
}

// quoteRequest is a request as an answer quotes it: on one line, "/draw" written as "draw",
// at most maxQuotedRequest characters.
func quoteRequest(text string) string {
	fields := strings.Fields(text)
	if len(fields) > 0 {
		if cmd, _, _ := strings.Cut(strings.ToLower(fields[0]), "@"); cmd == "/draw" {
			fields[0] = "draw"
		}
	}
	return shorten(strings.Join(fields, " "), maxQuotedRequest)
}

// shorten puts s on one line and cuts it to at most n characters, at a space in the second half
// when there is one, ending the cut with "…".
func shorten(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	head := string(r[:n-1])
	if i := strings.LastIndexByte(head, ' '); i > len(head)/2 && string(r[n-1]) != " " {
		head = head[:i]
	}
	return strings.TrimSpace(head) + "…"
}
