package bot

import (
	"context"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/excalibot/excalibot/store"
)

// ThreadKey names one conversation; it is the store's key, so a thread is known by one value from
// the adapter that makes it to the row that keeps it.
type ThreadKey = store.ThreadKey

// Attachment is a file posted with a message. Content is fetched only when the core needs it
// (an import), and never beyond max bytes.
type Attachment struct {
	Name string
	MIME string
	Size int64 // as the platform reports it; 0 when unknown
	// Unnamed says the person gave the file no name (a Telegram photo): Name is the adapter's
	// stand-in, not to be shown as theirs.
	Unnamed bool
	// Ref is the adapter's handle on the file (a file id), kept with the message in the store;
	// the adapter's FetchFile downloads it, in whichever process answers the message.
	Ref string
	// Fetch downloads the file. Adapters leave it nil; the core sets it from FetchFile when it
	// reads the message back from the store.
	Fetch func(ctx context.Context, max int64) ([]byte, error)
}

// Called is how a reply names the file: its name, or "your photo" / "your file" when the person
// gave it none.
func (a Attachment) Called() string {
	switch {
	case !a.Unnamed:
		return a.Name
	case strings.HasPrefix(a.MIME, "image/"):
		return "your photo"
	}
	return "your file"
}

// FileFetcher is an Adapter that can download the files its messages carry, from their Ref.
type FileFetcher interface {
	FetchFile(ctx context.Context, f Attachment, max int64) ([]byte, error)
}

// Message is one incoming chat message, already stripped of the bot mention. Adapters drop the
// bot's own messages, other bots, and senders outside their allowlists before handing it over.
type Message struct {
	Key      ThreadKey
	EventID  string // platform event id, for recognising redeliveries
	ID       string // platform message id (Slack ts, Telegram message_id)
	User     string // platform user id
	UserName string
	Text     string
	Files    []Attachment
	Received time.Time
	// Index is what a platform threading by replies (Telegram) must know of this message: kept
	// in the commit that keeps the message, not in the message.
	Index []IndexEntry
	// Refusal, when set, is the adapter's answer to a message it does not take (a chat outside
	// the allowlists): the core keeps it as the reply, posted through the outbox like any other,
	// and keeps no message.
	Refusal string
}

// File is a document attached to a reply.
type File struct {
	Name    string // e.g. "diagram.excalidraw"
	MIME    string
	Content []byte
}

// Reply is what the core posts into a thread.
type Reply struct {
	Text    string // summary, answer to a command, or what failed in words for people (Failure)
	Image   *File  // the rendered diagram (PNG); nil for text-only replies
	Files   []File // the .excalidraw file and exports
	EditURL string // link to the editor; empty until links exist
	ViewURL string // view-only link; may be empty
	Error   bool   // the request failed; Text says why and what to do next
	// Alt describes the picture for those who cannot see it: the diagram's kind, nodes and
	// connections in a sentence or two (Slack's alt text, Telegram's caption, the web's alt).
	Alt string
	// Title is the diagram's title ("Deploy pipeline"), for a platform that titles its threads;
	// "" when the diagram has none.
	Title string
	// ReplyTo is the platform id of the message this reply answers (Message.ID), so a platform
	// that quotes can reply to the request rather than to the thread's first message; "" for
	// notices that answer nothing (a restart, an edit in the browser).
	ReplyTo string
}

// Status is the visible sign that work on a message is under way: a reaction plus a status line
// on Slack, a repeated chat action plus an edited status message on Telegram.
type Status interface {
	// Update replaces the status line, e.g. "drawing… 4 shapes, 3 arrows".
	Update(ctx context.Context, text string) error
	// Finish removes the working signs. It is called exactly once, after the reply was sent.
	Finish(ctx context.Context) error
}

// WorkingText is the first text of a status line that stands on its own in the thread, before the
// run names its first step.
const WorkingText = "Working on it…"

// StatusLine is a step as a status line standing on its own in the thread shows it: its first
// letter a capital, as a sentence starts ("Drawing… 4 shapes, 3 arrows"). The steps themselves are
// lower case, as they end a sentence elsewhere (Slack's native status: "excalibot is drawing…").
func StatusLine(step string) string {
	r, n := utf8.DecodeRuneInString(step)
	if n == 0 || r == utf8.RuneError {
		return step
	}
	return string(unicode.ToUpper(r)) + step[n:]
}

// SignedStatus is a Status that can name its signs in a short string (Telegram: the status
// message's id), which the core stores with the run. If the process dies before Finish, the next
// one hands that string to the adapter's ClearSign.
type SignedStatus interface {
	Status
	Sign() string
}

// SignClearer is an Adapter that can take down the working signs a dead process left behind,
// given what their SignedStatus said.
type SignClearer interface {
	ClearSign(ctx context.Context, key ThreadKey, sign string) error
}

// Adapter is what the core needs from a chat platform. Methods may be called concurrently for
// different threads; for one thread the core calls them in order.
type Adapter interface {
	// Platform is the ThreadKey.Platform value of this adapter's messages.
	Platform() string
	// Working shows that work on msg has started and returns the handle that updates it.
	Working(ctx context.Context, msg Message) (Status, error)
	// Send posts a reply into a thread. It is also used without an incoming message: to tell a
	// thread that its run was interrupted by a restart, or that the diagram was edited in the browser.
	Send(ctx context.Context, key ThreadKey, r Reply) error
}

// StepSender is an Adapter that posts a reply in steps (the picture, the text, each file, the
// links) and can go on after the steps an earlier attempt posted: the core keeps what record was
// given and hands it back as posted, so a reply is never posted twice over a retry. record must be
// called once per step the platform accepted, in order, with the platform's id for it (one line,
// at most 256 bytes); when it fails, SendSteps stops and returns its error.
type StepSender interface {
	SendSteps(ctx context.Context, key ThreadKey, r Reply, posted []string, record Record) error
}

// Record keeps a step a StepSender posted: the platform's id for it, and what the platform's
// reply chains must know of the message it posted (Telegram), in the same commit, so a reply to
// that message reaching another replica at once finds its thread.
type Record func(part string, index ...IndexEntry) error

// IndexEntry files a platform's message under a thread in the store's message→thread index.
type IndexEntry = store.MessageThread

// LocalAdapter is an Adapter whose threads live in this process's memory (the web chat's
// sessions): their messages and replies are handled by this process only while it lives. When it
// dies, the replica that takes such a thread over tells its own adapter of the messages it adopted
// (Adopt), so the person, whose page now talks to that replica, sees them answered there.
type LocalAdapter interface {
	ProcessLocal() bool
	// Adopt adds to this process's memory a message another process kept and did not answer,
	// before this process answers it.
	Adopt(ctx context.Context, msg Message)
}

// Handler is the core as adapters see it. Handle keeps the message in the store and returns:
// nil means it is kept (or deliberately dropped, or a redelivery), and the adapter may tell the
// platform it arrived; an error means it was not kept, and the adapter must not acknowledge it,
// so the platform delivers it again. It returns quickly (one commit), so webhook handlers answer
// within the platform's limit.
type Handler interface {
	Handle(ctx context.Context, a Adapter, msg Message) error
}

// DiscussionReader is an Adapter that can read what was said in a thread before a message, for
// "draw this thread": Slack asks for the thread's replies, Telegram keeps the messages it was
// sent. The bot's own messages are left out.
type DiscussionReader interface {
	// Discussion's error may have a short reason the person who asked may read ("I am not in this
	// channel"; UserMessager), without API names or thread keys; the core says it, and only logs
	// any other error.
	Discussion(ctx context.Context, msg Message, limit DiscussionLimit) (Discussion, error)
}

// DiscussionLimit bounds what a DiscussionReader returns: the latest Messages messages before
// the request, and no more than Chars characters of them in all (the latest kept first).
type DiscussionLimit struct {
	Messages int
	Chars    int
}

// Discussion is what was said before a request, oldest first.
type Discussion struct {
	Said []Said
	// Note says, for the user, why messages may be missing (Telegram: the bot sees a group's
	// messages only when its privacy mode is off); "" when there is no reason to think so. It
	// goes with the reply however many messages were read.
	Note string
}

// Said is one earlier message of a discussion.
type Said struct {
	Author string // display name, or the platform's user id when it has none
	Text   string
	At     time.Time
}
