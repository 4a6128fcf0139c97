package bot

import (
	"context"
	"fmt"
	"strings"

	"github.com/excalibot/excalibot/internal/clip"
	"github.com/excalibot/excalibot/internal/logkey"
	"github.com/excalibot/excalibot/internal/plural"
	"github.com/excalibot/excalibot/store"
)

// The conversation is a function of a thread's kept messages: Plan says which of them one turn
// answers and what the turn is for, Answer carries it out and says how it ended. The engine
// (bot/relay) keeps the messages, records the run between the two calls and commits the outcome
// with its reply; nothing here knows of leases, runs or the outbox.

// Turn is one run of a thread as the conversation plans it: the first of the thread's waiting
// messages that it answers, and what it is for.
type Turn struct {
	Key     ThreadKey
	Adapter Adapter
	// Inbox are the ids of the kept messages the turn answers, in the order received.
	Inbox []int64
	// Detail says what the turn is for, in a few words, kept with its run.
	Detail string
	// Working is the message whose working signs show while the turn runs (a drawing request);
	// nil when the turn shows none (a command, answered at once).
	Working *Message

	jobs []job
}

// Outcome is how a turn ended: its run's final state and detail, the revision to commit with it
// (nil for none) and the reply.
type Outcome struct {
	State  store.RunState
	Detail string
	Save   *store.SaveRequest
	Reply  Reply
}

// job is one kept message, read back for its turn.
type job struct {
	inbox  int64
	msg    Message
	cmd    Command
	broken error // the kept message could not be read
	redo   bool  // an earlier run of it was cut short
}

// commandDetail starts the detail of a turn that carries out a command ("command: undo").
const commandDetail = "command: "

// unreadableDetail is the detail of a turn whose message could not be read back.
const unreadableDetail = "unreadable message"

// commandOf is what a message asks for; a file with no text is an import.
func commandOf(msg Message) Command {
	cmd := ParseCommand(msg.Text)
	if len(msg.Files) > 0 && cmd.Kind == CmdHelp && cmd.Err == nil {
		cmd = Command{Kind: CmdDraw}
	}
	return cmd
}

// Plan reads the first of waiting, a thread's kept messages in the order received (at least one),
// that go into one turn: a command alone, or consecutive drawing requests (only the first may
// carry a file) merged. a is the adapter of the thread's platform; the messages' files download
// through it.
func (b *Bot) Plan(key ThreadKey, a Adapter, waiting []store.InboxMessage) Turn {
	read := func(m store.InboxMessage) job {
		msg, err := DecodeMessage(key, m.Body, a)
		if err != nil {
			return job{inbox: m.ID, msg: Message{Key: key}, broken: err}
		}
		return job{inbox: m.ID, msg: msg, cmd: commandOf(msg), redo: m.Interruptions > 0}
	}
	first := read(waiting[0])
	t := Turn{Key: key, Adapter: a, jobs: []job{first}}
	switch {
	case first.broken != nil:
		t.Detail = unreadableDetail
	case first.cmd.Kind != CmdDraw:
		word := strings.Fields(strings.ToLower(strings.TrimSpace(first.msg.Text)) + " help")[0]
		t.Detail = commandDetail + clip.Runes(word, 40)
	default:
		for _, m := range waiting[1:] {
			j := read(m)
			if j.broken != nil || j.cmd.Kind != CmdDraw || len(j.msg.Files) > 0 {
				break
			}
			t.jobs = append(t.jobs, j)
		}
		var prompts []string
		for _, j := range t.jobs {
			if p := strings.TrimSpace(j.cmd.Arg); p != "" {
				prompts = append(prompts, p)
			}
		}
		t.Detail = clip.Runes(strings.Join(prompts, " | "), 200)
		last := t.jobs[len(t.jobs)-1].msg
		t.Working = &last
	}
	for _, j := range t.jobs {
		t.Inbox = append(t.Inbox, j.inbox)
	}
	return t
}

// Answer carries t out and says how it ended; status shows how a drawing goes ("drawing 4
// boxes…") and returns at once. Whatever Answer saved itself (an import a drawing builds on, a
// command's undo) is saved; the outcome's revision is the engine's to commit. The reply quotes the
// latest message the turn answers.
//
// On the way from message to picture the store commits: the message, the thread's claim, the
// run's start, its revision with its end and its reply, then the reply's posting. The picture
// renders while the editor links are made, before the revision commits.
func (b *Bot) Answer(ctx context.Context, t Turn, status func(text string)) Outcome {
	var o Outcome
	first := t.jobs[0]
	switch {
	case first.broken != nil:
		b.log.Error("a kept message could not be read; its thread is told", logkey.Thread, t.Key.String(), "inbox", first.inbox, logkey.Err, first.broken)
		o = failed(store.RunFailed, first.broken.Error(),
			"Sorry, I could not read one of your messages back from my database. Nothing in the diagram changed; please send it again.")
	case first.cmd.Kind == CmdDraw:
		o = b.drawing(ctx, t, status)
	default:
		o = b.command(ctx, t)
	}
	if o.Reply.ReplyTo == "" {
		o.Reply.ReplyTo = t.jobs[len(t.jobs)-1].msg.ID
	}
	return o
}

// Admit decides whether msg is refused as it arrives (too long, or beyond a rate limit) and says
// why, for the reply; "" admits it. A drawing request admitted uses up its sender's and its
// chat's rate.
func (b *Bot) Admit(msg Message) (refusal string) {
	if n := len([]rune(msg.Text)); n > b.opt.MaxMessageLength {
		return fmt.Sprintf("That message is %s long; I take at most %s. Please shorten it.",
			plural.Count(n, "character", ""), plural.Count(b.opt.MaxMessageLength, "character", ""))
	}
	if commandOf(msg).Kind != CmdDraw {
		return ""
	}
	if ok, wait := b.userLimit.Allow(msg.Key.Platform + ":" + msg.User); !ok {
		return fmt.Sprintf("You're sending requests faster than I can draw. Please try again in %s.", wait)
	}
	if ok, wait := b.chatLimit.Allow(msg.Key.Platform + ":" + msg.Key.Workspace + ":" + msg.Key.Channel); !ok {
		return fmt.Sprintf("This chat has sent many requests in a short time. Please try again in %s.", wait)
	}
	return ""
}

// Redoable reports whether a run its owner left unfinished may be done again from its messages:
// a drawing may (nothing of it is stored before its end commits, an import it saved is not saved
// again); a command may not (its effect and its reply are not one commit, so it may have been done),
// nor a message that could not be read.
func (b *Bot) Redoable(r store.Run) bool {
	return !strings.HasPrefix(r.Detail, commandDetail) && r.Detail != unreadableDetail
}

// GivenUp is what a thread is told of a request given up because its runs were cut short times
// times (the process working on it stopped or died each time).
func (b *Bot) GivenUp(r store.Run, times int) Reply {
	return Reply{Text: fmt.Sprintf("Sorry, I could not finish this request: I was stopped %s while working on it, so I gave up on it. Nothing in the diagram changed.",
		plural.Count(times, "time", "")), Error: true}
}

// Interrupted is what a thread is told of a run its owner left unfinished that is not redone (it
// was restarted, or lost the thread to another replica).
func (b *Bot) Interrupted(r store.Run) Reply {
	text := "I was restarted while working on your last request, so it was not finished. Nothing in the diagram changed; please send it again."
	if cmd, ok := strings.CutPrefix(r.Detail, commandDetail); ok {
		text = fmt.Sprintf("I was restarted while carrying out %q, so I cannot tell whether it was done; say history to see where the diagram is.", cmd)
	}
	return Reply{Text: text, Error: true}
}
