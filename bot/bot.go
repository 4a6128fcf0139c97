package bot

import (
	"context"
	"errors"
	"log/slog"
	"time"

	"github.com/excalibot/excalibot/ratelimit"
	"github.com/excalibot/excalibot/render/export"
	"github.com/excalibot/excalibot/scene"
	"github.com/excalibot/excalibot/store"
)

// Store is the thread state the conversation reads and changes: the diagram and its revisions,
// settings, the agent's memory and the editor links (store.Store satisfies it). The work around a
// conversation (inbox, leases, runs, outbox) is the engine's (bot/relay).
type Store interface {
	Load(ctx context.Context, key store.ThreadKey) (*store.Thread, error)
	Exists(ctx context.Context, key store.ThreadKey) (bool, error)
	Save(ctx context.Context, req store.SaveRequest) (*store.Thread, error)
	Undo(ctx context.Context, key store.ThreadKey, from int64) (*store.Thread, error)
	Redo(ctx context.Context, key store.ThreadKey, from int64) (*store.Thread, error)
	History(ctx context.Context, key store.ThreadKey, limit int) ([]store.Revision, error)
	Revision(ctx context.Context, key store.ThreadKey, rev int64) (*store.Revision, error)
	SetSettings(ctx context.Context, key store.ThreadKey, s store.Settings) error
	SetMemory(ctx context.Context, key store.ThreadKey, memory []byte) error
	RevokeLinks(ctx context.Context, key store.ThreadKey, kind store.LinkKind) (int, error)
}

// Drawer runs the drawing agent on a thread's scene.
type Drawer interface {
	// Draw changes req.Scene as req.Prompt asks. An error means nothing should be saved. An error
	// the person can act on has words for them (UserMessager); any other is logged, and they are
	// told that something went wrong.
	Draw(ctx context.Context, req DrawRequest) (DrawResult, error)
}

// DrawRequest is one drawing run.
type DrawRequest struct {
	Prompt string
	// Scene is the thread's current scene, decoded once after the thread loaded, for the drawer
	// to change in place; nil for a new thread.
	Scene  *scene.Scene
	Memory []byte // the agent's memory of the thread; nil for a new thread
	Model  string // the thread's model setting; "" for the default
	// Images are pictures the user sent (a whiteboard photo, a screenshot) to be redrawn as a
	// diagram, already checked and scaled by package picture.
	Images []Image
	// Discussion is what was said before the request when it asks to draw the thread ("draw
	// this thread"): one "Author: text" line per message, oldest first. It is data, fenced as
	// such for the model.
	Discussion string
	// Mermaid is set when the request is one message that is a Mermaid diagram: a drawer that
	// converts Mermaid itself draws it without the model and leaves Memory as it was.
	Mermaid  bool
	Progress func(Progress)
}

// Image is one picture for the drawer, as the model gets it.
type Image struct {
	Data          []byte // PNG or JPEG
	Width, Height int
}

// ErrCannotSee is matched (errors.Is) by the error of a Drawer whose model cannot read pictures;
// its UserMessage names the models that can.
var ErrCannotSee = errors.New("the model cannot read pictures")

// Progress is reported after each step of a run, for the status line.
type Progress struct {
	Step   int
	Tool   string
	Shapes int
	Arrows int
}

// DrawResult is what a run produced.
type DrawResult struct {
	Scene   *scene.Scene // encoded once, by the bot, before it is saved
	Memory  []byte
	Summary string
	// Changed is false when the run left the scene as it was (the model only answered, e.g. with a
	// question): then no revision is made and the reply is the text alone.
	Changed bool
}

// Links makes the editor links of a thread for a reply that posts th, its current revision.
// Optional.
type Links interface {
	ThreadLinks(ctx context.Context, th *store.Thread) (edit, view string, err error)
}

// Observer is told what the bot does, for metrics. Methods are called concurrently.
type Observer interface {
	ToolCalled(tool string, failed bool)
	ModelAnswered(d time.Duration)
	Rendered(format string, d time.Duration, err error)
	Failed(kind string)
}

type noObserver struct{}

func (noObserver) ToolCalled(string, bool)               {}
func (noObserver) ModelAnswered(time.Duration)           {}
func (noObserver) Rendered(string, time.Duration, error) {}
func (noObserver) Failed(string)                         {}

// Options are the conversation's limits. Zero fields take defaults.
type Options struct {
	MaxMessageLength  int     // characters per message (4000)
	UserRatePerMinute float64 // drawing requests per user (6), counted by each process
	ChatRatePerMinute float64 // drawing requests per chat (20), counted by each process
	MaxImportBytes    int64   // largest file accepted as an import (20 MB)
	MaxSceneBytes     int     // largest scene inside an import (5 MB)
	MaxImageBytes     int64   // largest picture sent to be redrawn (20 MB)
	ImageSide         int     // longest side of a picture as the model gets it (1024 px)
	MaxElements       int     // elements of an imported scene (500: the agent's own limit)
	MaxTextLength     int     // characters of one text element in an import (5000)
	HistoryListed     int     // revisions shown by history (10)
	// DiscussionMessages and DiscussionChars bound what "draw this thread" reads of the chat:
	// the latest 50 messages before the request, 8000 characters in all.
	DiscussionMessages int
	DiscussionChars    int
	// Observer receives metrics; nil means none.
	Observer Observer
	Now      func() time.Time
}

func (o Options) withDefaults() Options {
	def := func(v *int, d int) {
		if *v <= 0 {
			*v = d
		}
	}
	def(&o.MaxMessageLength, 4000)
	def(&o.MaxSceneBytes, 5<<20)
	def(&o.MaxElements, 500)
	def(&o.MaxTextLength, 5000)
	def(&o.HistoryListed, 10)
	def(&o.DiscussionMessages, 50)
	def(&o.DiscussionChars, 8000)
	def(&o.ImageSide, 1024)
	if o.UserRatePerMinute <= 0 {
		o.UserRatePerMinute = 6
	}
	if o.ChatRatePerMinute <= 0 {
		o.ChatRatePerMinute = 20
	}
	if o.MaxImportBytes <= 0 {
		o.MaxImportBytes = 20 << 20
	}
	if o.MaxImageBytes <= 0 {
		o.MaxImageBytes = 20 << 20
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.Observer == nil {
		o.Observer = noObserver{}
	}
	return o
}

// Bot is the conversation shared by every platform: what a thread's messages ask for, carried
// out on the thread's diagram, and the reply. It knows nothing of leases, runs or the outbox: the
// engine (bot/relay) hands it a thread's kept messages (Plan, Answer) and commits what it says.
type Bot struct {
	store  Store
	drawer Drawer
	render export.Renderer
	links  Links
	opt    Options
	log    *slog.Logger

	userLimit *ratelimit.Limiter
	chatLimit *ratelimit.Limiter
}

// New returns the conversation. links may be nil (replies then carry no editor link).
func New(st Store, d Drawer, r export.Renderer, links Links, opt Options, log *slog.Logger) *Bot {
	opt = opt.withDefaults()
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &Bot{
		store: st, drawer: d, render: r, links: links, opt: opt,
		log:       log.With("component", "bot"),
		userLimit: ratelimit.New(opt.UserRatePerMinute, 3, opt.Now),
		chatLimit: ratelimit.New(opt.ChatRatePerMinute, 5, opt.Now),
	}
}

// KnownThread reports whether the bot is part of the thread, so a platform can treat a message
// there as addressed to the bot without a mention (after a restart, or on another replica). A
// thread is known from its first message on (Accept records it), not only once it has a diagram.
func (b *Bot) KnownThread(ctx context.Context, key ThreadKey) (bool, error) {
	return b.store.Exists(ctx, key)
}
