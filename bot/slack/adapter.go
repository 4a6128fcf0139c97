// Package slack connects the conversation core to Slack over github.com/slack-go/slack: Socket
// Mode by default, the Events API over HTTP as an option. It turns mentions, thread follow-ups
// and direct messages into bot.Messages, shows working signs (an "eyes" reaction and a status
// line; Slack's native status in the threads of its AI app surface, assistant.go), and posts
// replies: the PNG (with its alt text) and the .excalidraw file uploaded into the thread, and a
// Block Kit message with the summary and links. It reads a thread's discussion for "draw this
// thread" (discussion.go).
package slack

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/slack-go/slack"
	"github.com/slack-go/slack/socketmode"

	"github.com/excalibot/excalibot/bot"
	"github.com/excalibot/excalibot/internal/logkey"
)

// Platform is the bot.ThreadKey.Platform value of Slack messages.
const Platform = "slack"

// Modes of receiving events.
const (
	ModeSocket = "socket" // Socket Mode: a websocket opened by the bot, no public URL needed
	ModeEvents = "events" // Events API: Slack POSTs signed requests to EventsHandler
)

// Config holds what the adapter needs; cmd/excalibot fills it from the settings.
type Config struct {
	BotToken      string // xoxb-…, for every Web API call
	AppToken      string // xapp-…, Socket Mode only
	SigningSecret string // Events API only: checks each request's signature
	Mode          string // ModeSocket (default) or ModeEvents
	// APIURL is the Web API base URL (default https://slack.com/api/); a missing trailing slash
	// is added, because slack-go appends method names to it.
	APIURL string
	// Workspaces and Channels are allowlists of team and channel ids; empty allows all.
	Workspaces []string
	Channels   []string
	// HTTPTimeout limits each Web API request, uploads included (default 60 s).
	HTTPTimeout time.Duration
	// MaxRetries is how often a rate-limited (429) call is retried after Retry-After (default 3).
	MaxRetries int
	// PingInterval is how long Socket Mode waits for Slack's ping before reconnecting (default 30 s).
	PingInterval time.Duration
	// KnownThread, when set, is asked about a thread message the adapter does not remember (after
	// a restart, or on another replica): true means the bot is part of that thread, so the message
	// needs no mention. The store can answer it; the adapter itself never re-reads Slack threads.
	KnownThread func(ctx context.Context, key bot.ThreadKey) (bool, error)
}

// Adapter is the Slack platform for the conversation core. Create it with New, start it with Run.
type Adapter struct {
	cfg     Config
	api     *slack.Client
	handler bot.Handler
	log     *slog.Logger

	workspaces map[string]bool // nil: all allowed
	channels   map[string]bool

	threads *threadSet // threads the bot is part of
	// assistants are DM threads known to be assistant threads (their start or context change was
	// seen, or the thread's root says so); plainDMs are DM threads known not to be (their root
	// says so, or Slack refused the native status there); titles are the last title set in each assistant thread.
	assistants *threadSet
	plainDMs   *threadSet
	titles     *threadTitles
	names      *nameCache // users.info, for discussions
	// nameContext bounds the name look-ups of one discussion (nameBudget; tests end it at will).
	nameContext func(context.Context) (context.Context, context.CancelFunc)

	// inbox carries Socket Mode events to the dispatcher that runSocket owns, so the websocket
	// reader never waits for the store; the dispatcher acks each once it is kept.
	inbox chan socketEvent

	refusedMu sync.Mutex
	refused   map[string]time.Time // channel → last allowlist refusal posted there
	bg        sync.WaitGroup       // refusals being posted; Run waits for them

	started  atomic.Bool // Run runs once
	mu       sync.Mutex
	self     identity
	selfDone chan struct{} // closed once self is known
}

// identity is the bot's own user and bot ids from auth.test, needed to strip mentions of the
// bot and to ignore its own messages.
type identity struct {
	UserID string
	BotID  string
	TeamID string
}

var _ bot.Adapter = (*Adapter)(nil)

// New checks cfg and builds the adapter. It makes no network call; Run does.
func New(cfg Config, h bot.Handler, log *slog.Logger) (*Adapter, error) {
	if h == nil {
		return nil, errors.New("slack: no handler")
	}
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	if cfg.Mode == "" {
		cfg.Mode = ModeSocket
	}
	var problems []string
	if cfg.BotToken == "" {
		problems = append(problems, "the bot token (SLACK_BOT_TOKEN, xoxb-…) is missing")
	}
	switch cfg.Mode {
	case ModeSocket:
		if cfg.AppToken == "" {
			problems = append(problems, "Socket Mode needs the app-level token (SLACK_APP_TOKEN, xapp-… with connections:write)")
		} else if !strings.HasPrefix(cfg.AppToken, "xapp-") {
			problems = append(problems, "the app-level token (SLACK_APP_TOKEN) must start with xapp-")
		}
	case ModeEvents:
		if cfg.SigningSecret == "" {
			problems = append(problems, "the Events API needs the signing secret (SLACK_SIGNING_SECRET)")
		}
	default:
		problems = append(problems, fmt.Sprintf("mode %q is neither %q nor %q", cfg.Mode, ModeSocket, ModeEvents))
	}
	if len(problems) > 0 {
		return nil, fmt.Errorf("slack: %s", strings.Join(problems, "; "))
	}
	if cfg.APIURL == "" {
		cfg.APIURL = slack.APIURL
	}
	if !strings.HasSuffix(cfg.APIURL, "/") {
		cfg.APIURL += "/"
	}
	if cfg.HTTPTimeout <= 0 {
		cfg.HTTPTimeout = 60 * time.Second
	}
	if cfg.MaxRetries <= 0 {
		cfg.MaxRetries = 3
	}
	if cfg.PingInterval <= 0 {
		cfg.PingInterval = 30 * time.Second
	}
	log = log.With(logkey.Platform, Platform)
	opts := []slack.Option{
		slack.OptionAPIURL(cfg.APIURL),
		slack.OptionHTTPClient(&http.Client{Timeout: cfg.HTTPTimeout}),
		// After OptionHTTPClient, so that the retry wrapper wraps our client (libraries.md).
		slack.OptionRetry(cfg.MaxRetries),
		slack.OptionLog(slog.NewLogLogger(log.Handler(), slog.LevelDebug)),
	}
	if cfg.AppToken != "" {
		opts = append(opts, slack.OptionAppLevelToken(cfg.AppToken))
	}
	return &Adapter{
		cfg:        cfg,
		api:        slack.New(cfg.BotToken, opts...),
		handler:    h,
		log:        log,
		workspaces: allowlist(cfg.Workspaces),
		channels:   allowlist(cfg.Channels),
		threads:    newThreadSet(maxRememberedThreads),
		assistants: newThreadSet(maxRememberedThreads),
		plainDMs:   newThreadSet(maxRememberedThreads),
		titles:     newThreadTitles(maxRememberedThreads),
		names:      newNameCache(maxNames, nameTTL),
		nameContext: func(ctx context.Context) (context.Context, context.CancelFunc) {
			return context.WithTimeout(ctx, nameBudget)
		},
		inbox:    make(chan socketEvent, inboxSize),
		selfDone: make(chan struct{}),
		refused:  map[string]time.Time{},
	}, nil
}

const (
	inboxSize            = 256
	maxRememberedThreads = 50_000
)

// Platform implements bot.Adapter.
func (a *Adapter) Platform() string { return Platform }

// Run connects to Slack and hands incoming messages to the handler until ctx ends; then it
// stops every goroutine it started and returns nil. It returns an error when the bot token is
// refused (auth.test) or, in Socket Mode, when Slack refuses the connection for good. In events
// mode Run must run too: EventsHandler answers 503 until it has learned the bot's identity.
func (a *Adapter) Run(ctx context.Context) error {
	if !a.started.CompareAndSwap(false, true) {
		return errors.New("slack: Run called twice")
	}
	id, err := a.authTest(ctx)
	if err != nil {
		if ctx.Err() != nil {
			return nil
		}
		return err
	}
	a.mu.Lock()
	a.self = id
	a.mu.Unlock()
	close(a.selfDone)
	a.log.Info("slack connected", "mode", a.cfg.Mode, "team", id.TeamID, "bot_user", id.UserID)

	defer a.bg.Wait()
	if a.cfg.Mode != ModeSocket {
		<-ctx.Done()
		return nil
	}
	return a.runSocket(ctx)
}

// authTest learns the bot's identity, retrying transient failures: at start-up Slack or the
// network may be briefly unavailable, but a refused token is final.
func (a *Adapter) authTest(ctx context.Context) (identity, error) {
	wait := time.Second
	for {
		r, err := a.api.AuthTestContext(ctx)
		if err == nil {
			return identity{UserID: r.UserID, BotID: r.BotID, TeamID: r.TeamID}, nil
		}
		var se slack.SlackErrorResponse
		if errors.As(err, &se) {
			return identity{}, fmt.Errorf("slack auth.test: %w (check SLACK_BOT_TOKEN)", err)
		}
		a.log.Warn("slack auth.test failed; retrying", logkey.Err, err, "in", wait)
		select {
		case <-ctx.Done():
			return identity{}, ctx.Err()
		case <-time.After(wait):
		}
		wait = min(2*wait, 30*time.Second)
	}
}

// identity returns the bot's ids, or false before Run has learned them.
func (a *Adapter) identity() (identity, bool) {
	select {
	case <-a.selfDone:
		a.mu.Lock()
		defer a.mu.Unlock()
		return a.self, true
	default:
		return identity{}, false
	}
}

// runSocket reads Socket Mode events until ctx ends or the client gives up.
func (a *Adapter) runSocket(ctx context.Context) error {
	sm := socketmode.New(a.api,
		socketmode.OptionPingInterval(a.cfg.PingInterval),
		socketmode.OptionLog(slog.NewLogLogger(a.log.Handler(), slog.LevelDebug)))
	// Cancel before waiting (defers run last-in first-out), or an early error return would wait
	// for a dispatcher that only stops when ctx ends.
	var wg sync.WaitGroup
	defer wg.Wait()
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	errc := make(chan error, 1)
	wg.Go(func() { errc <- sm.RunContext(ctx) })
	wg.Go(func() { a.dispatch(ctx, sm) })
	for {
		select {
		case <-ctx.Done():
			return nil
		case err := <-errc:
			if ctx.Err() != nil {
				return nil
			}
			return fmt.Errorf("slack socket mode: %w", err)
		case evt := <-sm.Events:
			a.onSocketEvent(ctx, sm, evt)
		}
	}
}

// onSocketEvent passes a message event on to the dispatcher without waiting, which acks it once
// the core has kept it (Slack redelivers what is not acked within 3 s): a blocked reader would
// stop answering Slack's pings and the connection would fall into a reconnect loop. Other
// envelopes are acked at once.
func (a *Adapter) onSocketEvent(ctx context.Context, sm *socketmode.Client, evt socketmode.Event) {
	switch evt.Type {
	case socketmode.EventTypeConnected:
		a.log.Debug("slack socket connected")
		return
	case socketmode.EventTypeConnectionError, socketmode.EventTypeIncomingError, socketmode.EventTypeErrorBadMessage:
		a.log.Warn("slack socket trouble", "type", evt.Type, "data", evt.Data)
		return
	case socketmode.EventTypeInvalidAuth:
		a.log.Error("slack refused the app-level token (SLACK_APP_TOKEN)")
		return
	}
	// hello and disconnect carry no envelope id: acking them is an error (kube-agents#1248).
	if evt.Request == nil || evt.Request.EnvelopeID == "" {
		return
	}
	if evt.Type == socketmode.EventTypeEventsAPI {
		if evt.Request.RetryAttempt > 0 {
			a.log.Info("slack redelivered an event", "attempt", evt.Request.RetryAttempt, "reason", evt.Request.RetryReason)
		}
		if in, ok := parseEventsAPI(evt.Data); ok {
			in.retry = evt.Request.RetryAttempt
			select {
			case a.inbox <- socketEvent{in: in, envelope: evt.Request.EnvelopeID}:
			default:
				// Far behind: leave the envelope unacked, and Slack delivers it again later.
				a.log.Warn("slack: inbox full; event left for Slack to redeliver", "envelope", evt.Request.EnvelopeID)
			}
			return
		}
	}
	// Button clicks (our buttons are plain links) and slash commands are acked with nothing to do.
	if err := sm.AckCtx(ctx, evt.Request.EnvelopeID, nil); err != nil {
		a.log.Warn("slack ack failed", "envelope", evt.Request.EnvelopeID, logkey.Err, err)
	}
}

// socketEvent is a message event waiting for the dispatcher, with the envelope to ack.
type socketEvent struct {
	in       inbound
	envelope string
}

// dispatch hands queued events to the core one at a time, in the order Slack sent them, and acks
// each once it is kept (or deliberately dropped). One that could not be kept is left unacked:
// Slack delivers it again.
func (a *Adapter) dispatch(ctx context.Context, sm *socketmode.Client) {
	for {
		select {
		case <-ctx.Done():
			return
		case ev := <-a.inbox:
			if err := a.accept(ctx, ev.in); err != nil {
				if ctx.Err() == nil {
					a.log.Warn("slack: event not kept; left unacked for Slack to deliver again", "envelope", ev.envelope,
						"event", ev.in.eventID, logkey.Err, err)
				}
				continue
			}
			if err := sm.AckCtx(ctx, ev.envelope, nil); err != nil {
				a.log.Warn("slack ack failed", "envelope", ev.envelope, logkey.Err, err)
			}
		}
	}
}

// accept decides whether in is for the bot and hands it to the core; an error means it was not
// kept, and must not be acknowledged.
func (a *Adapter) accept(ctx context.Context, in inbound) error {
	if in.assistant != notAssistant {
		a.onAssistantThread(ctx, in)
		return nil
	}
	msg, ok, err := a.toMessage(ctx, in)
	if err != nil || !ok {
		return err
	}
	return a.handler.Handle(ctx, a, msg)
}
