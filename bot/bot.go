package bot

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
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
	Save(ctx context.Context, req store.SaveRequest) (*store.Thread, error)
	Undo(ctx context.Context, key store.ThreadKey, from int64) (*store.Thread, error)
	Redo(ctx context.Context, key store.ThreadKey, from int64) (*store.Thread, error)
	History(ctx context.Context, key store.ThreadKey, limit int) ([]store.Revision, error)
	SetSettings(ctx context.Context, key store.ThreadKey, s store.Settings) error
	SetMemory(ctx context.Context, key store.ThreadKey, memory []byte) error
	RevokeLinks(ctx context.Context, key store.ThreadKey, kind store.LinkKind) (int, error)
	ClaimEvents(ctx context.Context, eventIDs ...string) (bool, error)
	ReleaseLease(ctx context.Context, key store.ThreadKey, owner string) error
	ReleaseOwner(ctx context.Context, owner string) (int, error)
	StartRun(ctx context.Context, req store.StartRunRequest) (store.Run, error)
	FinishRun(ctx context.Context, req store.FinishRunRequest) (store.Run, *store.Thread, error)
	RecoverRuns(ctx context.Context, req store.RecoverRequest) ([]store.Run, error)
	SetRunSign(ctx context.Context, id int64, sign string) error
	// SingleProcess true means no other process works on this database: the thread's queue
	// already keeps its runs apart, and leases are skipped.
	SingleProcess() bool
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
	Scene    *scene.Scene
	Memory   []byte // the agent's memory of the thread; nil for a new thread
	Model    string // the thread's model setting; "" for the default
	Progress func(Progress)
}

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
	MaxConcurrentRuns int           // threads working at once (4)
	UserRatePerMinute float64       // drawing requests per user (6)
	ChatRatePerMinute float64       // drawing requests per chat (20)
	RunTimeout        time.Duration // one run, drawing and rendering (4 min)
	MaxImportBytes    int64         // largest file accepted as an import (20 MB)
	MaxSceneBytes     int           // largest scene inside an import (5 MB)
	MaxElements       int           // elements of an imported scene (500: the agent's own limit)
	MaxTextLength     int           // characters of one text element in an import (5000)
	HistoryListed     int           // revisions shown by history (10)
	// Owner names this process for leases and runs; stable across restarts of the same replica
	// (default: "excalibot"), so that a restarted process can recover its own interrupted runs.
	Owner string
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
	if o.UserRatePerMinute <= 0 {
		o.UserRatePerMinute = 6
	}
	if o.ChatRatePerMinute <= 0 {
		o.ChatRatePerMinute = 20
	}
	if o.RunTimeout <= 0 {
		o.RunTimeout = 4 * time.Minute
	}
	if o.MaxImportBytes <= 0 {
		o.MaxImportBytes = 20 << 20
	}
	if o.Owner == "" {
		o.Owner = "excalibot"
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.Observer == nil {
		o.Observer = noObserver{}
	}
	return o
}

// Bot is the conversation core shared by every platform.
type Bot struct {
	store  Store
	drawer Drawer
	render Renderer
	links  Links
	opt    Options
	log    *slog.Logger

	queue     *Queue
	userLimit *ratelimit.Limiter
	chatLimit *ratelimit.Limiter

	mu       sync.Mutex
	adapters map[string]Adapter // by platform, for messages without an incoming message
	mermaid  MermaidDrawer      // draws Mermaid messages without the model; nil: the agent does (mermaid.go)
}

var _ Handler = (*Bot)(nil)

// New returns the core. links may be nil (replies then carry no editor link).
func New(st Store, d Drawer, r Renderer, links Links, opt Options, log *slog.Logger) *Bot {
	opt = opt.withDefaults()
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &Bot{
		store: st, drawer: d, render: r, links: links, opt: opt,
		log:       log.With("component", "bot"),
		queue:     NewQueue(opt.MaxConcurrentRuns),
		userLimit: ratelimit.New(opt.UserRatePerMinute, 3, opt.Now),
		chatLimit: ratelimit.New(opt.ChatRatePerMinute, 5, opt.Now),
		adapters:  map[string]Adapter{},
	}
}

// Register tells the core about an adapter so it can post into its threads unprompted (after a
// restart, or when the diagram was edited in the browser). cmd registers each adapter once, as it
// starts it.
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

// Recover tells every thread whose run was cut short by a crash or restart that it can retry.
// Call it once at start, after registering the adapters.
func (b *Bot) Recover(ctx context.Context) error {
	// This replica restarted, so leases under its own name belong to a dead process.
	if _, err := b.store.ReleaseOwner(ctx, b.opt.Owner); err != nil {
		return fmt.Errorf("release leases of the previous process: %w", err)
	}
	runs, err := b.store.RecoverRuns(ctx, store.RecoverRequest{})
	if err != nil {
		return fmt.Errorf("recover interrupted runs: %w", err)
	}
	told := map[string]bool{}
	for _, r := range runs {
		key := r.Key
		a := b.adapter(key.Platform)
		if a == nil {
			b.log.Warn("interrupted run on a platform that is not running", "thread", key.String())
			continue
		}
		// The dead process's "working…" signs would otherwise stay in the thread for good.
		if c, ok := a.(SignClearer); ok && r.Sign != "" {
			if err := c.ClearSign(ctx, key, r.Sign); err != nil {
				b.log.Warn("take down the working signs of an interrupted run", "thread", key.String(), "err", err)
			}
		}
		if told[key.String()] {
			continue
		}
		told[key.String()] = true
		msg := "I was restarted while working on your last request, so it was not finished. Nothing in the diagram changed; please send it again."
		if err := a.Send(ctx, key, Reply{Text: msg, Error: true}); err != nil {
			b.log.Warn("tell thread about interrupted run", "thread", key.String(), "err", err)
		}
	}
	return nil
}

// Close stops taking messages and lets running work finish until ctx ends; threads whose work was
// cut short are told to retry.
func (b *Bot) Close(ctx context.Context) {
	interrupted := b.queue.Close(ctx)
	// ctx is over by now when anything was interrupted: the notices get a short budget of their own.
	notify, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
	defer cancel()
	for _, key := range interrupted {
		if a := b.adapter(key.Platform); a != nil {
			_ = a.Send(notify, key, Reply{Error: true,
				Text: "I'm restarting and could not finish your request. Nothing in the diagram changed; please send it again in a minute."})
		}
	}
}

// QueueDepth reports waiting messages and active threads, for metrics.
func (b *Bot) QueueDepth() (waiting, active int) { return b.queue.Depth() }

// job is one message waiting in its thread's queue.
type job struct {
	a   Adapter
	msg Message
	cmd Command
}

// Handle takes one incoming message. It returns quickly: checks and refusals happen here, the work
// is queued behind the thread's earlier messages.
func (b *Bot) Handle(ctx context.Context, a Adapter, msg Message) {
	log := b.log.With("thread", msg.Key.String(), "event", msg.EventID)
	if dup, err := b.seen(ctx, msg); err != nil {
		log.Warn("event dedup failed; handling the message anyway", "err", err)
	} else if dup {
		log.Info("redelivered event ignored")
		return
	}
	if n := len([]rune(msg.Text)); n > b.opt.MaxMessageLength {
		b.refuse(ctx, a, msg, fmt.Sprintf("That message is %d characters long; I take at most %d. Please shorten it.", n, b.opt.MaxMessageLength))
		return
	}
	cmd := ParseCommand(msg.Text)
	if len(msg.Files) > 0 && cmd.Kind == CmdHelp && cmd.Err == "" {
		cmd = Command{Kind: CmdDraw} // a file with no text is an import
	}
	if cmd.Kind == CmdDraw {
		if ok, wait := b.userLimit.Allow(msg.Key.Platform + ":" + msg.User); !ok {
			b.refuse(ctx, a, msg, fmt.Sprintf("You're sending requests faster than I can draw. Please try again in %s.", wait))
			return
		}
		if ok, wait := b.chatLimit.Allow(msg.Key.Platform + ":" + msg.Key.Workspace + ":" + msg.Key.Channel); !ok {
			b.refuse(ctx, a, msg, fmt.Sprintf("This chat has sent many requests in a short time. Please try again in %s.", wait))
			return
		}
	}
	_, err := Submit(b.queue, msg.Key, job{a: a, msg: msg, cmd: cmd}, b.work)
	if err != nil {
		b.refuse(ctx, a, msg, "I'm restarting right now. Please send that again in a minute.")
	}
}

// seen claims the message's event id and (channel, message id) in one commit; either seen before
// means a redelivery.
func (b *Bot) seen(ctx context.Context, msg Message) (bool, error) {
	ids := make([]string, 0, 2)
	if msg.EventID != "" {
		ids = append(ids, msg.Key.Platform+":event:"+msg.EventID)
	}
	if msg.ID != "" {
		ids = append(ids, msg.Key.Platform+":msg:"+msg.Key.Workspace+":"+msg.Key.Channel+":"+msg.ID)
	}
	if len(ids) == 0 {
		return false, nil
	}
	fresh, err := b.store.ClaimEvents(ctx, ids...)
	if err != nil {
		return false, err
	}
	return !fresh, nil
}

func (b *Bot) refuse(ctx context.Context, a Adapter, msg Message, text string) {
	if err := a.Send(ctx, msg.Key, Reply{Text: text, Error: true}); err != nil {
		b.log.Warn("send refusal", "thread", msg.Key.String(), "err", err)
	}
}

// work runs one turn of a thread: commands in order, consecutive drawing requests merged.
func (b *Bot) work(ctx context.Context, batch Batch[job]) {
	items := batch.Items
	for i := 0; i < len(items); {
		j := items[i]
		if j.cmd.Kind != CmdDraw {
			b.command(ctx, j)
			i++
			continue
		}
		k := i + 1
		for k < len(items) && items[k].cmd.Kind == CmdDraw && len(items[k].msg.Files) == 0 {
			k++
		}
		b.draw(ctx, items[i:k])
		i = k
	}
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

// KnownThread reports whether the bot has a diagram in the thread, so a platform can treat a
// message there as addressed to the bot without a mention (after a restart, or on another replica).
func (b *Bot) KnownThread(ctx context.Context, key ThreadKey) (bool, error) {
	_, err := b.store.Load(ctx, key)
	if errors.Is(err, store.ErrNotFound) {
		return false, nil
	}
	return err == nil, err
}

// Edited is called when a person saved the thread's diagram in the editor: the thread hears of it
// when Options.NotifyEdits is set. The next run is told what changed by the agent's memory.
func (b *Bot) Edited(ctx context.Context, key store.ThreadKey, rev int64) {
	if !b.opt.NotifyEdits {
		return
	}
	k := key
	a := b.adapter(k.Platform)
	if a == nil {
		return
	}
	text := fmt.Sprintf("The diagram was edited in the browser (revision %d). Reply here to continue from it.", rev)
	if err := a.Send(ctx, k, Reply{Text: text}); err != nil {
		b.log.Warn("tell thread about browser edit", "thread", k.String(), "err", err)
	}
}
