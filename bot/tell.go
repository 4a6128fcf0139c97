package bot

import (
	"context"
	"errors"
	"strings"

	"github.com/excalibot/excalibot/diagram/mermaid"
	"github.com/excalibot/excalibot/internal/logkey"
	"github.com/excalibot/excalibot/scene"
	"github.com/excalibot/excalibot/store"
)

// UserMessager is an error with words for the person who asked: what went wrong and what they,
// or whoever runs the bot, can do. UserMessage has no final period, as a Go error has none
// ("Ollama is not reachable at …; start it with `ollama serve`"), so a reply can carry it in its
// own sentence; Error stays the Go text, for the log. The packages that make such errors
// (agent/ollama, picture, diagram/mermaid, the adapters) need not import this one: the method is
// the contract, found through any wrapping with errors.As.
type UserMessager interface {
	error
	UserMessage() string
}

// userMessage is what err says to a person: the words of the first error in its chain that has
// some; "" when none has.
func userMessage(err error) string {
	var u UserMessager
	if errors.As(err, &u) {
		return strings.TrimSpace(u.UserMessage())
	}
	return ""
}

// UserError is err with words for the person who asked: msg, a clause without its final period,
// is its UserMessage; Error and Unwrap are err's (msg's words when err is nil). For an adapter whose
// failure a person can act on ("I am not in this channel").
func UserError(msg string, err error) error { return &userError{msg: msg, err: err} }

type userError struct {
	msg string
	err error
}

var _ UserMessager = (*userError)(nil)

func (e *userError) Error() string {
	if e.err == nil {
		return e.msg
	}
	return e.err.Error()
}
func (e *userError) UserMessage() string { return e.msg }
func (e *userError) Unwrap() error       { return e.err }

// refusal is the conversation's own answer to a request it will not or cannot carry out (a file it
// cannot import, a command with nothing to do, a discussion it cannot read): msg and tail are the
// whole reply, err what happened, in Go's words.
type refusal struct {
	msg  string // what the person reads first, without its final period
	tail string // what follows it: what became of the diagram, what to do; may be ""
	err  error
}

var _ UserMessager = (*refusal)(nil)

func refuse(err error, msg, tail string) *refusal { return &refusal{msg: msg, tail: tail, err: err} }

func (r *refusal) Error() string       { return r.err.Error() }
func (r *refusal) Unwrap() error       { return r.err }
func (r *refusal) UserMessage() string { return r.msg }

// storeError marks an error of the store, so a failure the store does not name reads as the
// database not answering.
type storeError struct{ err error }

func (e storeError) Error() string { return e.err.Error() }
func (e storeError) Unwrap() error { return e.err }

// fromStore marks err (nil stays nil) as the store's.
func fromStore(err error) error {
	if err == nil {
		return nil
	}
	return storeError{err}
}

// The sentences of a failure, and what follows them.
const (
	unchanged   = "Nothing in the diagram changed; you can send the request again."
	restarting  = "I'm restarting and could not finish your request. Nothing in the diagram changed; please send it again in a minute."
	tooLongTail = "Nothing in the diagram changed; try a smaller request or send it again."
)

// Failure is the one way a failure reaches a chat: what the person who asked is told when step
// ("drawing", "reading the history") failed with err. A restart, a deadline and a database that
// does not answer have their own sentences; a refusal of the conversation's is its whole answer;
// an error with a UserMessage is said in the step's sentence. Any other error is Go's words, which
// belong in the log: the person reads a plain sentence instead, and plain is true.
func Failure(step string, err error) (text string, plain bool) {
	msg := userMessage(err)
	var (
		own     *refusal
		diagram *mermaid.Error
		stored  storeError
		tooBig  *store.TooLargeError
	)
	switch {
	case errors.Is(err, context.Canceled):
		return restarting, false
	case errors.As(err, &own):
		return sentence(own.msg, own.tail), false
	case errors.As(err, &diagram):
		return sentence(diagram.UserMessage(), "Nothing in the diagram changed; send the corrected diagram to try again."), false
	case errors.Is(err, ErrCannotSee) && msg != "":
		return sentence("I cannot redraw this picture: "+msg,
			"Whoever runs me can set EXCALIBOT_VISION_MODEL to one of them. Nothing in the diagram changed."), false
	case errors.Is(err, context.DeadlineExceeded):
		lead := "Sorry, " + step + " took too long and was stopped"
		if msg != "" {
			lead += ": " + msg
		}
		return sentence(lead, tooLongTail), false
	case msg != "":
		return sentence("Sorry, "+step+" failed: "+msg, unchanged), false
	case errors.Is(err, store.ErrConflict):
		return sentence("Sorry, "+step+" failed: the diagram was changed elsewhere (in the editor?) at the same time", unchanged), false
	case errors.As(err, &tooBig) && tooBig.What == "scene":
		return sentence("Sorry, "+step+" failed: the diagram would be "+scene.ByteSize(int64(tooBig.Size))+
			"; I keep diagrams up to "+scene.ByteSize(int64(tooBig.Limit)), unchanged), false
	case errors.As(err, &stored) && !named(err):
		return "Sorry, my database did not answer while " + step + ". Nothing in the diagram changed; please send it again in a minute (if this keeps happening, tell whoever runs me).", true
	}
	return "Sorry, something went wrong on my side while " + step + "; it has been logged. " + unchanged, true
}

// named reports whether err is one the store names, rather than its database's own.
func named(err error) bool {
	for _, k := range []error{store.ErrNotFound, store.ErrConflict, store.ErrTooLarge, store.ErrLeaseHeld,
		store.ErrNothingToUndo, store.ErrNothingToRedo, store.ErrSchemaTooNew, store.ErrBadTransition, store.ErrInvalid} {
		if errors.Is(err, k) {
			return true
		}
	}
	return false
}

// StoreFailure is Failure for a step that reads or writes the store: an error the store does
// not name (a dropped connection, a full disk, a locked file) reads as the database not answering.
func StoreFailure(step string, err error) (text string, plain bool) {
	return Failure(step, fromStore(err))
}

// sentence ends msg and puts tail after it.
func sentence(msg, tail string) string {
	if tail == "" {
		return msg + "."
	}
	return msg + ". " + tail
}

// tell is Failure for a thread, with err in the log: at error level when the person was told
// only that something went wrong, else as what happened.
func (b *Bot) tell(key ThreadKey, step string, err error) string {
	text, plain := Failure(step, err)
	var own *refusal
	switch {
	case plain:
		b.log.Error("failed", logkey.Thread, key.String(), "step", step, logkey.Err, err)
	case errors.As(err, &own):
		b.log.Info("refused", logkey.Thread, key.String(), "step", step, logkey.Err, err)
	default:
		b.log.Warn("failed", logkey.Thread, key.String(), "step", step, logkey.Err, err)
	}
	return text
}
