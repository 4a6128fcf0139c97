package bot

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/excalibot/excalibot/internal/logkey"
	"github.com/excalibot/excalibot/internal/plural"
)

// A request asks to draw the discussion when it names the thread itself ("draw this thread",
// "diagram our conversation as a flow", "the discussion above") or what was said in it ("what we
// discussed", "the messages above"). A noun that goes on is a thing to draw: "the thread pool",
// "this chat app", "the chat: web, api, db", "the chat with the support agent". "The thread"
// alone names the discussion only in a short request ("draw the thread") or followed by
// "above" or "so far".
var (
	nounEnd = `(?:\s*(?:[.!?)]|$)|\s+(?:as|into|please)\b)`
	// this/our thread, up to the end of the request or a word that says how to draw it
	ownThread = regexp.MustCompile(`(?i)\b(?:this|our|that|whole|entire)\s+(?:thread|conversation|discussion|chat)` +
		`(?:\s+(?:above|so\s+far|here|until\s+now))?` + nounEnd)
	// the thread above / so far
	thatThread = regexp.MustCompile(`(?i)\bthe\s+(?:thread|conversation|discussion|chat)\s+(?:above|so\s+far|until\s+now)\b`)
	// "draw the thread": the noun ends a request of a few words
	shortThread = regexp.MustCompile(`(?i)^\W*(?:\w+\W+){0,3}the\s+(?:thread|conversation|discussion|chat)\W*$`)
	saidThings  = regexp.MustCompile(`(?i)\bwhat\s+(?:we|you|they|everyone|people|y'all)(?:\s+(?:have|just|all))?\s+` +
		`(?:discussed|talked\s+about|said|decided|agreed(?:\s+on)?)\b|\b(?:the\s+)?messages\s+above\b`)
)

// AsksForDiscussion reports whether a drawing request's text (Command.Arg) asks to draw what was
// said before it. The core reads the discussion for it; an adapter may give such a request a new
// diagram of its own rather than the one its sender was working on (Telegram groups).
func AsksForDiscussion(text string) bool {
	for _, re := range []*regexp.Regexp{ownThread, thatThread, shortThread, saidThings} {
		if re.MatchString(text) {
			return true
		}
	}
	return false
}

// discussion is what a drawing run reads of the chat for a request that asks to draw it.
type discussion struct {
	text string // one "Author: text" line per message, oldest first
	n    int    // messages
	note string // the adapter's note for the user when there were few
}

// readDiscussion reads what was said before msg in its thread, through a's DiscussionReader. Its
// error is a refusal: there is nothing to read, or this chat cannot be read.
func (b *Bot) readDiscussion(ctx context.Context, a Adapter, msg Message) (discussion, error) {
	r, ok := a.(DiscussionReader)
	if !ok {
		return discussion{}, refuse(errors.New("the platform cannot read a discussion"), "I cannot read the earlier messages of this chat",
			"Paste what should go into the diagram, or describe it, and I will draw it.")
	}
	d, err := r.Discussion(ctx, msg, DiscussionLimit{Messages: b.opt.DiscussionMessages, Chars: b.opt.DiscussionChars})
	if err != nil {
		// An adapter's error names API calls and thread keys: the log gets it, the thread a
		// sentence (with the adapter's words, when it has some).
		b.log.Warn("read the discussion", logkey.Thread, msg.Key.String(), logkey.Err, err)
		err = fmt.Errorf("read the discussion: %w", err)
		if why := userMessage(err); why != "" {
			return discussion{}, refuse(err, "Sorry, I could not read the earlier messages of this thread: "+why,
				"Nothing in the diagram changed; paste what should go into the diagram, or describe it.")
		}
		return discussion{}, refuse(err, "Sorry, I could not read the earlier messages of this thread just now",
			"Nothing in the diagram changed; ask again in a minute, or paste what should go into the diagram.")
	}
	var lines []string
	for _, s := range d.Said {
		text := strings.Join(strings.Fields(s.Text), " ")
		if text == "" {
			continue
		}
		author := strings.Join(strings.Fields(s.Author), " ")
		if author == "" {
			author = "someone"
		}
		lines = append(lines, author+": "+text)
	}
	out := discussion{text: strings.Join(lines, "\n"), n: len(lines)}
	out.note = strings.TrimSpace(d.Note) // the reader gives one only when it may miss messages
	if out.n == 0 {
		tail := out.note
		if tail == "" {
			tail = "Ask me in the thread where the discussion is, or describe what to draw."
		}
		return discussion{}, refuse(errors.New("no earlier messages in the thread"), "I found no earlier messages in this thread to draw from", tail)
	}
	return out, nil
}

// used is what the reply says the drawing came from.
func (d discussion) used() string {
	s := "From the " + plural.Count(d.n, "message", "messages") + " above."
	if d.n == 1 {
		s = "From the message above."
	}
	if d.note != "" {
		s += " " + d.note
	}
	return s
}

// Latest is what a DiscussionReader returns of said (a thread's earlier messages, oldest first):
// the latest messages within limit, oldest first. A message that does not fit whole is cut at its
// start ("…" and its last words: the ones that lead to the request) and is the oldest kept.
// Every reader bounds its discussion this one way.
func Latest(said []Said, limit DiscussionLimit) []Said {
	var out []Said
	chars := 0
	for i := len(said) - 1; i >= 0; i-- {
		if limit.Messages > 0 && len(out) >= limit.Messages {
			break
		}
		s := said[i]
		n := utf8.RuneCountInString(s.Text)
		if limit.Chars > 0 && chars+n > limit.Chars {
			if room := limit.Chars - chars; room >= 2 {
				r := []rune(s.Text)
				s.Text = "…" + string(r[len(r)-(room-1):])
				out = append(out, s)
			}
			break
		}
		chars += n
		out = append(out, s)
	}
	slices.Reverse(out)
	return out
}
