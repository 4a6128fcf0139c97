package bot

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/excalibot/excalibot/ratelimit"
	"github.com/excalibot/excalibot/scene"
	"github.com/excalibot/excalibot/store"
)

// Store is the part of the thread store the core uses (store.Store satisfies it).
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

	// The inbox, the thread leases and the runs.
	Accept(ctx context.Context, req store.AcceptRequest) (store.Accepted, error)
	ClaimThreads(ctx context.Context, req store.ClaimRequest) ([]store.Claim, error)
	Pending(ctx context.Context, key store.ThreadKey, limit int) ([]store.InboxMessage, error)
	ReleaseIdle(ctx context.Context, key store.ThreadKey, owner string) (bool, error)
	ReleaseLease(ctx context.Context, key store.ThreadKey, owner string) error
	RenewLeases(ctx context.Context, owner string, ttl time.Duration) (int, error)
	StartRun(ctx context.Context, req store.StartRunRequest) (store.Run, error)
	FinishRun(ctx context.Context, req store.FinishRunRequest) (store.Run, *store.Thread, error)
	RecoverRuns(ctx context.Context, req store.RecoverRequest) ([]store.Run, error)
	SetRunSign(ctx context.Context, id int64, sign string) error

	// The outbox.
	Enqueue(ctx context.Context, items ...store.Outgoing) ([]int64, error)
	ClaimOutbox(ctx context.Context, req store.ClaimOutboxRequest) ([]store.OutboxItem, error)
	RecordPosted(ctx context.Context, id int64, owner, part string) error
	SettleOutbox(ctx context.Context, s store.Settle) error
}

// Drawer runs the drawing agent on a thread's scene.
type Drawer interface {
	// Draw changes req.Scene as req.Prompt asks. An error means nothing should be saved; its text
	// is shown to the user, so it must be a sentence they can act on.
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
	Progress   func(Progress)
}

// Image is one picture for the drawer, as the model gets it.
type Image struct {
	Data          []byte // PNG or JPEG
	Width, Height int
}

// ErrCannotSee is returned (wrapped) by a Drawer whose model cannot read pictures; its message
// names the models that can.
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

// Renderer turns a scene into a picture.
type Renderer interface {
	// Render returns sc as "png" (with the scene embedded) or "svg", in a dark or light theme. doc
	// is sc encoded as the store keeps it: what the picture embeds, so nothing encodes it again.
	Render(ctx context.Context, sc *scene.Scene, doc []byte, format string, dark bool) ([]byte, error)
}

// Links makes the editor links of a thread for a reply that posts th, its current revision.
// Optional.
type Links interface {
	ThreadLinks(ctx context.Context, th *store.Thread) (edit, view string, err error)
}

// Observer is told what the bot does, for metrics. Methods are called concurrently.
type Observer interface {
	RunFinished(outcome string, d time.Duration)
	ToolCalled(tool string, failed bool)
	ModelAnswered(d time.Duration)
	Rendered(format string, d time.Duration, err error)
	Failed(kind string)
}

type noObserver struct{}

func (noObserver) RunFinished(string, time.Duration)     {}
func (noObserver) ToolCalled(string, bool)               {}
func (noObserver) ModelAnswered(time.Duration)           {}
func (noObserver) Rendered(string, time.Duration, error) {}
func (noObserver) Failed(string)                         {}

// Options are the core's limits and identity. Zero fields take defaults.
type Options struct {
	MaxMessageLength  int           // characters per message (4000)
	MaxConcurrentRuns int           // threads this process works on at once (4)
	UserRatePerMinute float64       // drawing requests per user (6), counted by each process
	ChatRatePerMinute float64       // drawing requests per chat (20), counted by each process
	RunTimeout        time.Duration // one run, drawing and rendering (4 min)
	MaxImportBytes    int64         // largest file accepted as an import (20 MB)
	MaxSceneBytes     int           // largest scene inside an import (5 MB)
	MaxImageBytes     int64         // largest picture sent to be redrawn (20 MB)
	ImageSide         int           // longest side of a picture as the model gets it (1024 px)
	MaxElements       int           // elements of an imported scene (500: the agent's own limit)
	MaxTextLength     int           // characters of one text element in an import (5000)
	HistoryListed     int           // revisions shown by history (10)
	// DiscussionMessages and DiscussionChars bound what "draw this thread" reads of the chat:
	// the latest 50 messages before the request, 8000 characters in all.
	DiscussionMessages int
	DiscussionChars    int
	// Owner names this process in leases, runs and outbox claims; it must differ between
	// processes sharing a database (default: NewOwner()).
	Owner string
	// LeaseTTL is how long a thread's lease (and an outbox claim) lasts without a heartbeat; the
	// heartbeat renews it every third of that. A replica that dies loses its threads to the others
	// this long after its last heartbeat (30 s).
	LeaseTTL time.Duration
	// PollInterval is how often the store is asked for threads and replies that wait, besides the
	// wake-ups of this process's own messages (1 s).
	PollInterval time.Duration
	// ReplyGiveUp is how long a reply that cannot be posted is retried, with backoff up to 5
	// minutes between attempts, before it is given up and kept as dead (24 h).
	ReplyGiveUp time.Duration
	// RetryBase is the wait before a failed reply's second attempt; it doubles with each failure
	// up to 5 minutes (2 s). A platform's retry_after replaces it.
	RetryBase time.Duration
	// MaxConcurrentSends is how many threads' replies are posted at once (8).
	MaxConcurrentSends int
	// WorkingAfter is how long a drawing run goes on before its working signs go up: a run that
	// answers sooner shows none, so a fast reply does not flash a status past the reader (1 s).
	// Negative: at once.
	WorkingAfter time.Duration
	// NotifyEdits posts a note into the thread when its diagram was saved in the browser.
	NotifyEdits bool
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
	def(&o.MaxConcurrentRuns, 4)
	def(&o.MaxSceneBytes, 5<<20)
	def(&o.MaxElements, 500)
	def(&o.MaxTextLength, 5000)
	def(&o.HistoryListed, 10)
	def(&o.DiscussionMessages, 50)
	def(&o.DiscussionChars, 8000)
	def(&o.MaxConcurrentSends, 8)
	def(&o.ImageSide, 1024)
	dur := func(v *time.Duration, d time.Duration) {
		if *v <= 0 {
			*v = d
		}
	}
	dur(&o.RunTimeout, 4*time.Minute)
	dur(&o.LeaseTTL, 30*time.Second)
	dur(&o.PollInterval, time.Second)
	dur(&o.ReplyGiveUp, 24*time.Hour)
	dur(&o.RetryBase, 2*time.Second)
	if o.WorkingAfter == 0 {
		o.WorkingAfter = time.Second
	}
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
	if o.Owner == "" {
		o.Owner = NewOwner()
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.Observer == nil {
		o.Observer = noObserver{}
	}
	return o
}

// NewOwner names this process for a store shared with other processes: the host name, the
// process id and a random suffix, so two processes never share a name, on one host or across a
// restart.
func NewOwner() string {
	host, err := os.Hostname()
	if err != nil || host == "" {
		host = "excalibot"
	}
	var r [4]byte
	_, _ = rand.Read(r[:]) // never fails (crypto/rand)
	return fmt.Sprintf("%s:%d:%s", host, os.Getpid(), hex.EncodeToString(r[:]))
}

// Bot is the conversation core shared by every platform.
type Bot struct {
	store  Store
	drawer Drawer
	render Renderer
	links  Links
	opt    Options
	log    *slog.Logger

	userLimit *ratelimit.Limiter
	chatLimit *ratelimit.Limiter

	mu       sync.Mutex
	adapters map[string]Adapter // by platform, for messages without an incoming message
	mermaid  MermaidDrawer      // draws Mermaid messages without the model; nil: the agent does (mermaid.go)
	admitted map[string]string  // first event id → refusal ("" admitted) of a message not kept yet (intake.go)

	w workers
}

var _ Handler = (*Bot)(nil)

// New returns the core. links may be nil (replies then carry no editor link). Its workers start
// with Start (or the first message).
func New(st Store, d Drawer, r Renderer, links Links, opt Options, log *slog.Logger) *Bot {
	opt = opt.withDefaults()
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	b := &Bot{
		store: st, drawer: d, render: r, links: links, opt: opt,
		log:       log.With("component", "bot"),
		userLimit: ratelimit.New(opt.UserRatePerMinute, 3, opt.Now),
		chatLimit: ratelimit.New(opt.ChatRatePerMinute, 5, opt.Now),
		adapters:  map[string]Adapter{},
		admitted:  map[string]string{},
	}
	b.w.init()
	return b
}

// Owner is the name this process holds leases and claims under.
func (b *Bot) Owner() string { return b.opt.Owner }

// Register tells the core about an adapter: the core then works on that platform's threads (its
// own messages, and those another replica kept) and posts its replies. cmd registers each adapter
// once, before Start.
func (b *Bot) Register(a Adapter) {
	b.mu.Lock()
	b.adapters[a.Platform()] = a
	b.mu.Unlock()
}

func (b *Bot) adapter(platform string) Adapter {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.adapters[platform]
}

// platforms are the platforms this process can answer, for its claims.
func (b *Bot) platforms() []string {
	b.mu.Lock()
	defer b.mu.Unlock()
	out := make([]string, 0, len(b.adapters))
	for p := range b.adapters {
		out = append(out, p)
	}
	slices.Sort(out)
	return out
}

// local reports whether a's threads live in this process only.
func local(a Adapter) bool {
	l, ok := a.(LocalAdapter)
	return ok && l.ProcessLocal()
}

// friendly turns an error from a part of the bot into a sentence for the chat.
func friendly(step string, err error) string {
	switch {
	case err == context.DeadlineExceeded: // a bare deadline says nothing more than this
		return fmt.Sprintf("Sorry, %s took too long and was stopped. Nothing in the diagram changed; try a smaller request or send it again.", step)
	case errors.Is(err, context.DeadlineExceeded):
		return fmt.Sprintf("Sorry, %s took too long and was stopped: %s. Nothing in the diagram changed; try a smaller request or send it again.", step, strings.TrimSuffix(err.Error(), "."))
	case errors.Is(err, context.Canceled):
		return "I'm restarting and could not finish your request. Nothing in the diagram changed; please send it again in a minute."
	}
	return fmt.Sprintf("Sorry, %s failed: %s. Nothing in the diagram changed; you can send the request again.", step, strings.TrimSuffix(err.Error(), "."))
}

// friendlyStore is friendly for a step that reads or writes the store. An error the store does not
// name (a dropped connection, a full disk, a locked file) says in plain words that the database
// failed; the driver's words go to the log, where an operator reads them.
func (b *Bot) friendlyStore(key ThreadKey, step string, err error) string {
	for _, known := range []error{context.Canceled, context.DeadlineExceeded, store.ErrNotFound, store.ErrConflict,
		store.ErrTooLarge, store.ErrLeaseHeld, store.ErrNothingToUndo, store.ErrNothingToRedo} {
		if errors.Is(err, known) {
			return friendly(step, err)
		}
	}
	b.log.Error("store failed", "thread", key.String(), "step", step, "err", err)
	return fmt.Sprintf("Sorry, my database did not answer while %s. Nothing in the diagram changed; please send it again in a minute (if this keeps happening, tell whoever runs me).", step)
}

// KnownThread reports whether the bot is part of the thread, so a platform can treat a message
// there as addressed to the bot without a mention (after a restart, or on another replica). A
// thread is known from its first message on (Accept records it), not only once it has a diagram.
func (b *Bot) KnownThread(ctx context.Context, key ThreadKey) (bool, error) {
	return b.store.Exists(ctx, key)
}

// Edited is called when a person saved the thread's diagram in the editor: the thread hears of it
// when Options.NotifyEdits is set, through the outbox. The next run is told what changed by the
// agent's memory.
func (b *Bot) Edited(ctx context.Context, key store.ThreadKey, rev int64) {
	if !b.opt.NotifyEdits {
		return
	}
	a := b.adapter(key.Platform)
	if a == nil {
		return
	}
	text := fmt.Sprintf("The diagram was edited in the browser (revision %d). Reply here to continue from it.", rev)
	if err := b.enqueue(ctx, a, key, Reply{Text: text}); err != nil {
		b.log.Warn("tell thread about browser edit", "thread", key.String(), "err", err)
	}
}
