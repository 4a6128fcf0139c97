// Package telegram is the Telegram adapter of the bot: it receives updates by long polling (or a
// webhook), turns the messages meant for the bot into bot.Messages with a thread key, and posts the
// core's replies with github.com/go-telegram/bot.
//
// Threads: a private chat is one thread (ThreadKey.Thread "", one diagram until /new). In groups
// the bot answers mentions, replies to its own messages and commands; a reply chain is a thread,
// keyed "topic:root": the forum topic (message_thread_id, 0 outside topics) and the chain's first
// request. A message that replies into no chain goes on with the diagram its sender last worked on
// in the topic, unless it starts one (/draw, /new, a file): see route. Answers reply to the
// request they answer, inside the topic, and name the diagram when the request did not reply into
// it.
//
// Discussion reads what the adapter was sent in a chat, kept in memory (seen.go).
//
// Wiring: New, then Run(ctx) in a goroutine; in webhook mode the web server mounts WebhookHandler
// at WebhookPath.
package telegram

import (
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	tg "github.com/go-telegram/bot"
	"github.com/go-telegram/bot/models"

	"github.com/excalibot/excalibot/bot"
	"github.com/excalibot/excalibot/internal/logkey"
)

// Platform is the ThreadKey.Platform of Telegram messages.
const Platform = "telegram"

// WebhookPath is where the web server mounts WebhookHandler; PublicURL+WebhookPath is registered.
const WebhookPath = "/telegram/webhook"

// Config holds the adapter's settings; cmd/excalibot fills it from config.Config.
type Config struct {
	Token         string   // bot token from @BotFather
	Mode          string   // "polling" (default) or "webhook"
	WebhookSecret string   // secret_token for webhook mode: 1–256 of [A-Za-z0-9_-]
	PublicURL     string   // webhook mode: Telegram posts to PublicURL + WebhookPath
	APIURL        string   // Bot API base URL; default https://api.telegram.org
	Chats         []string // allowed chat ids; empty allows every chat
	Users         []string // allowed user ids; empty allows every user

	PollTimeout    time.Duration // long-poll wait per getUpdates; default 30 s
	RequestTimeout time.Duration // limit for every other call (uploads included); default 60 s
	MaxRetryWait   time.Duration // longest 429 retry_after honoured; default 60 s

	// Threads remembers which group message belongs to which thread, and which thread each user
	// last worked on. Nil keeps the latest 50 000 entries in memory, so after a restart a reply to
	// an older picture starts a new thread, and so does a plain /undo; a persistent index (over
	// the store) keeps them across restarts and replicas.
	Threads ThreadIndex
	// IndexKeptByCore says the core keeps the index entries the adapter hands it, in the commits
	// that make them true (bot.Message.Index with the message, bot.Record's entries with the
	// posted step), as the work engine does: the adapter then writes to Threads only what no
	// commit carries (its status message). Otherwise it writes every entry to Threads itself.
	IndexKeptByCore bool
}

// Adapter is the Telegram side of the bot. It implements bot.Adapter.
type Adapter struct {
	cfg     Config
	client  *tg.Bot
	httpc   *http.Client // file downloads
	pollc   *http.Client // getUpdates (poll.go)
	handler bot.Handler
	log     *slog.Logger
	chats   map[int64]bool
	users   map[int64]bool
	threads ThreadIndex
	seen    *seenLog // what was said in each chat, for Discussion

	me      atomic.Pointer[models.User] // set by Run once getMe answered
	started atomic.Bool

	// Webhook deliveries are handed to the core only while Run is serving them.
	hookMu  sync.RWMutex
	hookCtx context.Context // nil when not serving
	hookWG  sync.WaitGroup

	refusedMu sync.Mutex
	refused   map[int64]time.Time // chat → last allowlist refusal, to answer at most every refuseEvery

	// Hooks for tests: sleep waits for a 429's retry_after; now is the clock of refusals.
	sleep func(ctx context.Context, d time.Duration) error
	now   func() time.Time
	// How often the chat action is repeated (actionEvery by default); tests shorten it.
	actionEvery time.Duration
}

var _ bot.Adapter = (*Adapter)(nil)

var secretRE = regexp.MustCompile(`^[A-Za-z0-9_-]{1,256}$`)

// New checks cfg and builds the adapter. It does no network I/O: Run calls getMe.
func New(cfg Config, h bot.Handler, log *slog.Logger) (*Adapter, error) {
	if strings.TrimSpace(cfg.Token) == "" {
		return nil, errors.New("telegram: the bot token is empty (set TELEGRAM_BOT_TOKEN)")
	}
	if h == nil {
		return nil, errors.New("telegram: no handler")
	}
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	switch cfg.Mode {
	case "", "polling":
		cfg.Mode = "polling"
	case "webhook":
		if !secretRE.MatchString(cfg.WebhookSecret) {
			return nil, errors.New("telegram: webhook mode needs a webhook secret of 1–256 characters from A-Z, a-z, 0-9, _ and -")
		}
		if !strings.HasPrefix(cfg.PublicURL, "https://") && !strings.HasPrefix(cfg.PublicURL, "http://") {
			return nil, fmt.Errorf("telegram: webhook mode needs the public https URL Telegram posts to, got %q", cfg.PublicURL)
		}
	default:
		return nil, fmt.Errorf("telegram: mode is %q; it must be polling or webhook", cfg.Mode)
	}
	cfg.APIURL = strings.TrimRight(cfg.APIURL, "/") // the library appends "/bot<token>/"
	if cfg.APIURL == "" {
		cfg.APIURL = "https://api.telegram.org"
	}
	if u, err := url.Parse(cfg.APIURL); err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" {
		return nil, fmt.Errorf("telegram: the Bot API URL %q is not an http(s) URL", cfg.APIURL)
	}
	if cfg.PollTimeout <= 0 {
		cfg.PollTimeout = 30 * time.Second
	}
	if cfg.PollTimeout < 2*time.Second {
		cfg.PollTimeout = 2 * time.Second // the library sends timeout = PollTimeout − 1 s
	}
	if cfg.RequestTimeout <= 0 {
		cfg.RequestTimeout = 60 * time.Second
	}
	if cfg.MaxRetryWait <= 0 {
		cfg.MaxRetryWait = 60 * time.Second
	}
	chats, err := idSet("chat", cfg.Chats)
	if err != nil {
		return nil, err
	}
	users, err := idSet("user", cfg.Users)
	if err != nil {
		return nil, err
	}
	if cfg.Threads == nil {
		cfg.Threads = NewMemoryIndex(50_000)
	}
	a := &Adapter{
		cfg: cfg, handler: h, log: log.With(logkey.Platform, Platform),
		chats: chats, users: users, threads: cfg.Threads, seen: newSeenLog(),
		httpc:   &http.Client{Timeout: cfg.RequestTimeout},
		refused: map[int64]time.Time{},
		sleep:   sleepCtx,
		now:     time.Now,

		actionEvery: actionEvery,
	}
	// The client timeout must outlast an upload; each call also gets its own deadline from a
	// context. Updates are polled by the adapter itself (poll.go), not by the library.
	httpc := &http.Client{Timeout: max(cfg.PollTimeout, cfg.RequestTimeout) + 10*time.Second}
	a.pollc = &http.Client{Timeout: cfg.PollTimeout + 20*time.Second}
	a.client, err = tg.New(cfg.Token,
		tg.WithSkipGetMe(),
		tg.WithServerURL(cfg.APIURL),
		tg.WithHTTPClient(cfg.PollTimeout, httpc),
		tg.WithErrorsHandler(func(err error) { a.log.Warn("telegram client", logkey.Err, err) }),
	)
	if err != nil {
		return nil, fmt.Errorf("telegram: create client: %w", err)
	}
	return a, nil
}

func idSet(what string, ids []string) (map[int64]bool, error) {
	set := map[int64]bool{}
	for _, s := range ids {
		s = strings.TrimSpace(s)
		if s == "" {
			continue
		}
		id, err := strconv.ParseInt(s, 10, 64)
		if err != nil {
			return nil, fmt.Errorf("telegram: allowed %s %q is not a numeric Telegram id", what, s)
		}
		set[id] = true
	}
	return set, nil
}

func sleepCtx(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// Platform implements bot.Adapter.
func (a *Adapter) Platform() string { return Platform }

// commands are registered with setMyCommands so clients offer them after "/": the core's, with
// /draw described as what it does in a group here, start a new diagram.
var commands = func() []models.BotCommand {
	var out []models.BotCommand
	for _, c := range bot.Commands {
		d := c.Description
		if c.Name == "draw" {
			d = "Draw a new diagram: /draw how a request reaches Postgres"
		}
		out = append(out, models.BotCommand{Command: c.Name, Description: d})
	}
	return out
}()

// Run identifies the bot (getMe), registers its commands, and receives updates until ctx ends:
// by long polling, or in webhook mode by registering the webhook and serving WebhookHandler. It
// returns nil when ctx ends, or an error when Telegram refuses the token or the webhook. Every
// goroutine it starts has stopped when it returns. Send and Working keep working afterwards, so
// running work can still reply during a shutdown grace period.
func (a *Adapter) Run(ctx context.Context) error {
	if !a.started.CompareAndSwap(false, true) {
		return errors.New("telegram: Run called twice")
	}
	me, err := a.identify(ctx)
	if err != nil {
		if ctx.Err() != nil {
			return nil
		}
		return err
	}
	a.me.Store(me)
	a.log.Info("telegram bot identified", "username", me.Username, "id", me.ID, "mode", a.cfg.Mode,
		"reads_all_group_messages", me.CanReadAllGroupMessages)
	if err := a.call(ctx, "setMyCommands", func(ctx context.Context) error {
		_, err := a.client.SetMyCommands(ctx, &tg.SetMyCommandsParams{Commands: commands})
		return err
	}); err != nil {
		a.log.Warn("telegram: commands not registered; the bot works without the menu", logkey.Err, err)
	}
	if a.cfg.Mode == "webhook" {
		return a.serveWebhook(ctx)
	}
	// A leftover webhook makes every getUpdates fail with 409 Conflict.
	if err := a.startup(ctx, "deleteWebhook", func(ctx context.Context) error {
		_, err := a.client.DeleteWebhook(ctx, &tg.DeleteWebhookParams{})
		return err
	}); err != nil && ctx.Err() == nil {
		return fmt.Errorf("telegram: switch to polling: %w", err)
	}
	a.poll(ctx)
	return nil
}

// identify calls getMe; a rejected token is named as such.
func (a *Adapter) identify(ctx context.Context) (*models.User, error) {
	var me *models.User
	err := a.startup(ctx, "getMe", func(ctx context.Context) (err error) {
		me, err = a.client.GetMe(ctx)
		return err
	})
	if errors.Is(err, tg.ErrorUnauthorized) || errors.Is(err, tg.ErrorNotFound) {
		return nil, fmt.Errorf("telegram: the bot token was rejected (check TELEGRAM_BOT_TOKEN): %w", err)
	}
	return me, err
}

// startup runs a call Run cannot do without, retrying network trouble and server errors with
// backoff (the bot may start before the network is up), but not answers that will not change:
// a rejected token (401, 404), a bad request (400) or a refusal (403).
func (a *Adapter) startup(ctx context.Context, what string, fn func(ctx context.Context) error) error {
	backoff := time.Second
	for {
		err := a.call(ctx, what, fn)
		if err == nil || ctx.Err() != nil {
			return err
		}
		for _, permanent := range []error{tg.ErrorUnauthorized, tg.ErrorNotFound, tg.ErrorBadRequest, tg.ErrorForbidden} {
			if errors.Is(err, permanent) {
				return err
			}
		}
		a.log.Warn("telegram: call failed; retrying", "call", what, logkey.Err, err, "in", backoff)
		if err := a.sleep(ctx, backoff); err != nil {
			return err
		}
		backoff = min(2*backoff, 30*time.Second)
	}
}

func (a *Adapter) serveWebhook(ctx context.Context) error {
	url := strings.TrimRight(a.cfg.PublicURL, "/") + WebhookPath
	if err := a.startup(ctx, "setWebhook", func(ctx context.Context) error {
		// One connection: Telegram then sends the next update only after the previous one got
		// its 200, so a thread's messages reach the core in the order they were written (with
		// the default 40, two quick messages could overtake each other, as polling never does).
		_, err := a.client.SetWebhook(ctx, &tg.SetWebhookParams{URL: url, SecretToken: a.cfg.WebhookSecret,
			AllowedUpdates: []string{"message"}, MaxConnections: 1})
		return err
	}); err != nil {
		if ctx.Err() != nil {
			return nil
		}
		return fmt.Errorf("telegram: register webhook %s: %w", url, err)
	}
	a.log.Info("telegram webhook registered", "url", url)
	a.hookMu.Lock()
	a.hookCtx = ctx
	a.hookMu.Unlock()
	<-ctx.Done()
	// The webhook stays registered on purpose: updates wait at Telegram for the next start.
	a.hookMu.Lock()
	a.hookCtx = nil
	a.hookMu.Unlock()
	a.hookWG.Wait()
	return nil
}

// maxUpdateBytes bounds a webhook body; a message update is a few kilobytes.
const maxUpdateBytes = 1 << 20

// WebhookHandler receives updates in webhook mode, mounted at WebhookPath. It checks the
// X-Telegram-Bot-Api-Secret-Token header in constant time and answers 401 to a wrong or missing
// secret without looking at the body (the library's own handler answers 200 and only logs). It
// answers 200 once the core has kept the message; while Run is not serving (not started yet, or
// shutting down), or when the core could not keep it, it answers 503 so Telegram delivers the
// update again later.
func (a *Adapter) WebhookHandler() http.Handler {
	want := sha256.Sum256([]byte(a.cfg.WebhookSecret))
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if a.cfg.Mode != "webhook" {
			http.Error(w, "telegram webhook mode is off", http.StatusNotFound)
			return
		}
		if r.Method != http.MethodPost {
			w.Header().Set("Allow", http.MethodPost)
			http.Error(w, "POST only", http.StatusMethodNotAllowed)
			return
		}
		// Hashing first makes the comparison constant-time in the length as well.
		got := sha256.Sum256([]byte(r.Header.Get("X-Telegram-Bot-Api-Secret-Token")))
		if subtle.ConstantTimeCompare(got[:], want[:]) != 1 {
			a.log.Warn("telegram webhook: wrong secret token", "remote", r.RemoteAddr)
			http.Error(w, "wrong secret token", http.StatusUnauthorized)
			return
		}
		var u models.Update
		if err := json.NewDecoder(http.MaxBytesReader(w, r.Body, maxUpdateBytes)).Decode(&u); err != nil {
			a.log.Warn("telegram webhook: unreadable update", logkey.Err, err)
			http.Error(w, "unreadable update: "+err.Error(), http.StatusBadRequest)
			return
		}
		a.hookMu.RLock()
		ctx := a.hookCtx
		if ctx != nil {
			a.hookWG.Add(1)
		}
		a.hookMu.RUnlock()
		if ctx == nil {
			http.Error(w, "not ready", http.StatusServiceUnavailable)
			return
		}
		defer a.hookWG.Done()
		if err := a.handleUpdate(ctx, &u); err != nil { // quick: one commit
			a.log.Warn("telegram webhook: update not kept; asking Telegram to deliver it again", "update_id", u.ID, logkey.Err, err)
			http.Error(w, "not kept, retry later", http.StatusServiceUnavailable)
			return
		}
		w.WriteHeader(http.StatusOK)
	})
}

// call runs one Bot API call with the request timeout and honours 429 retry_after a bounded
// number of times. fn must build its parameters afresh on each call: an upload's reader is
// consumed by the first attempt.
func (a *Adapter) call(ctx context.Context, what string, fn func(ctx context.Context) error) error {
	const maxRetries = 3
	for attempt := 0; ; attempt++ {
		cctx, cancel := context.WithTimeout(ctx, a.cfg.RequestTimeout)
		err := fn(cctx)
		cancel()
		if err == nil {
			return nil
		}
		var tmr *tg.TooManyRequestsError // errors.Is(err, ErrorTooManyRequests) is always false
		if !errors.As(err, &tmr) || attempt == maxRetries {
			return fmt.Errorf("%s: %w", what, err)
		}
		wait := time.Duration(max(tmr.RetryAfter, 1)) * time.Second
		if wait > a.cfg.MaxRetryWait {
			return fmt.Errorf("%s: Telegram asks to wait %s, longer than the %s allowed: %w", what, wait, a.cfg.MaxRetryWait, err)
		}
		a.log.Info("telegram: rate limited; waiting", "call", what, "retry_after", wait, "attempt", attempt+1)
		if err := a.sleep(ctx, wait); err != nil {
			return fmt.Errorf("%s: waiting out a rate limit: %w", what, err)
		}
	}
}
