// Package config holds excalibot's settings: their defaults, where they come from (flags, then
// environment variables, then an optional config file), validation with messages an operator can act
// on, and a printout with secrets redacted. Only cmd/excalibot reads configuration; it hands the
// values to the packages it wires.
package config

import (
	"errors"
	"fmt"
	"strings"
	"time"
)

// Config is every setting of the program. The field comments are the documentation that
// `excalibot config` prints; the table in settings.go binds each field to its flag and variable.
type Config struct {
	// Ollama
	OllamaHost     string        // base URL of the Ollama server
	Model          string        // model name as `ollama list` shows it
	NumCtx         int           // context window sent with every request
	Temperature    float64       // sampling temperature
	KeepAlive      time.Duration // how long Ollama keeps the model loaded
	Think          bool          // let thinking models think (slower; off by default)
	ModelTimeout   time.Duration // limit for one model request
	MaxTurns       int           // model turns per run
	MaxToolCalls   int           // tool calls per run
	RunTimeout     time.Duration // wall time per run
	MaxElements    int           // elements per scene
	MaxBatch       int           // elements per batch call
	MaxLabelLength int           // characters per label
	// Protocol is how the model is asked to draw: auto (tool calls when the model has them, typed
	// plans otherwise), tools or plan. eval takes a comma-separated list to compare them.
	Protocol string
	// VisionModel is the model that reads pictures sent with a request (a whiteboard photo, a
	// screenshot); requests without pictures use Model. Empty: Model reads them, if it can.
	VisionModel  string
	ImageSize    int // longest side in pixels of a picture as the model gets it
	MaxImageSize int // bytes per picture sent

	// Store
	Database     string        // "sqlite:PATH" or a postgres:// URL; empty = SQLite at the default path
	HistoryKeep  int           // revisions kept per thread
	MaxSceneSize int           // bytes per stored scene
	PruneAfter   time.Duration // threads untouched this long are removed; 0 = never
	// LeaseTTL is how long a process's hold on a thread (or on a reply it posts) lasts without its
	// heartbeat: the time after which a dead replica's work moves to another.
	LeaseTTL     time.Duration
	PollInterval time.Duration // how often the store is asked for work kept by other replicas
	ReplyGiveUp  time.Duration // how long a reply that cannot be posted is retried
	// MaxInterruptions is how many times a request's run may be cut short (a crash, a kill, a
	// shutdown past its grace) before the request is given up; until then the thread's next holder
	// (another replica, or the next start) redoes it.
	MaxInterruptions int

	// Renderer
	ChromePath    string        // Chromium binary; empty = look for chromium, chromium-browser, google-chrome
	RenderTabs    int           // warm tabs in the pool
	RenderTimeout time.Duration // limit for one render
	RenderScale   float64       // PNG scale factor

	// HTTP server: editor links, chat page, health, metrics, webhooks
	Listen      string        // address to listen on
	PublicURL   string        // base URL that links in chat replies use
	ChatSecret  string        // shared secret for the chat page beyond localhost
	LinkTTL     time.Duration // editor links expire after this long; 0 = until reset
	NotifyEdits bool          // tell the thread when its diagram was edited in the browser
	// WorkingAfter is how long a drawing goes on before its working signs show (0: at once).
	WorkingAfter time.Duration
	// ShareLinks, with no PublicURL, makes reply links excalidraw.com #json= links: the scene goes
	// encrypted to excalidraw.com's store (ShareURL), the key only into the link. Off by default.
	ShareLinks bool
	ShareURL   string // where share payloads are posted (excalidraw.com's store by default)

	// Slack
	SlackBotToken      string // xoxb-… bot token
	SlackAppToken      string // xapp-… app-level token for Socket Mode
	SlackSigningSecret string // signing secret for the Events API over HTTP
	SlackMode          string // "socket" or "events"
	SlackAPIURL        string // Web API base URL (Slack for government workspaces, tests)
	SlackWorkspaces    []string
	SlackChannels      []string

	// Telegram
	TelegramToken         string // bot token from @BotFather
	TelegramMode          string // "polling" or "webhook"
	TelegramWebhookSecret string // secret_token checked on every webhook update
	TelegramAPIURL        string // Bot API base URL (self-hosted Bot API server, tests)
	TelegramChats         []string
	TelegramUsers         []string

	// Limits of the conversation core
	MaxMessageLength  int     // characters per chat message
	MaxConcurrentRuns int     // runs in parallel across all threads
	UserRatePerMinute float64 // drawing requests per user per minute, per replica
	ChatRatePerMinute float64 // drawing requests per chat per minute, per replica

	LogLevel string // debug, info, warn or error
}

// Default returns the settings used when nothing overrides them. They run the bot on one machine
// with an embedded SQLite store and a local Ollama.
func Default() Config {
	return Config{
		OllamaHost:     "http://127.0.0.1:11434",
		Model:          "qwen3:8b",
		NumCtx:         16384,
		Temperature:    0.2,
		KeepAlive:      10 * time.Minute,
		ModelTimeout:   90 * time.Second,
		MaxTurns:       20,
		MaxToolCalls:   100,
		RunTimeout:     3 * time.Minute,
		MaxElements:    500,
		MaxBatch:       200,
		MaxLabelLength: 500,
		Protocol:       "auto",
		ImageSize:      1024,
		MaxImageSize:   20 << 20,

		HistoryKeep:  50,
		MaxSceneSize: 5 << 20,
		LeaseTTL:     30 * time.Second,
		PollInterval: time.Second,
		ReplyGiveUp:  24 * time.Hour,

		MaxInterruptions: 2,

		RenderTabs:    2,
		RenderTimeout: 30 * time.Second,
		RenderScale:   2,

		Listen:       "127.0.0.1:8080",
		NotifyEdits:  true,
		WorkingAfter: time.Second,
		ShareURL:     "https://json.excalidraw.com/api/v2/post/",

		SlackMode:    "socket",
		TelegramMode: "polling",

		MaxMessageLength:  4000,
		MaxConcurrentRuns: 4,
		UserRatePerMinute: 6,
		ChatRatePerMinute: 20,

		LogLevel: "info",
	}
}

// Problem is one invalid or missing setting, named the way the operator sets it.
type Problem struct {
	Setting string // flag name, e.g. "slack-mode"
	Env     string // environment variable, e.g. "EXCALIBOT_SLACK_MODE"
	Message string // what is wrong and what would be right
}

func (p Problem) String() string {
	return fmt.Sprintf("--%s (%s): %s", p.Setting, p.Env, p.Message)
}

// ValidationError lists every problem found, not just the first, so one edit fixes them all.
type ValidationError struct{ Problems []Problem }

func (e *ValidationError) Error() string {
	lines := make([]string, len(e.Problems))
	for i, p := range e.Problems {
		lines[i] = "  " + p.String()
	}
	return "invalid settings:\n" + strings.Join(lines, "\n")
}

// ErrInvalid is matched by errors.Is for any *ValidationError.
var ErrInvalid = errors.New("invalid settings")

func (e *ValidationError) Is(target error) bool { return target == ErrInvalid }

// Validate checks every setting and returns a *ValidationError naming each bad one.
func (c Config) Validate() error {
	var ps []Problem
	bad := func(name, msg string, args ...any) {
		s := settingByName(name)
		ps = append(ps, Problem{Setting: name, Env: s.env, Message: fmt.Sprintf(msg, args...)})
	}
	if hasUserInfo(c.OllamaHost) {
		// Ollama has no authentication, so the client sends none; the value is not repeated
		// here because it holds a password.
		bad("ollama-host", "carries a user name or password, which excalibot cannot send (Ollama has no authentication); give host:port only")
	} else if err := checkHTTPURL(c.OllamaHost); err != nil {
		bad("ollama-host", "%v (example: http://127.0.0.1:11434)", err)
	}
	if strings.TrimSpace(c.Model) == "" {
		bad("model", "must name an Ollama model, e.g. qwen3:8b")
	}
	positive := []struct {
		name string
		v    int
		min  int
	}{
		{"num-ctx", c.NumCtx, 2048}, {"max-turns", c.MaxTurns, 1}, {"max-tool-calls", c.MaxToolCalls, 1},
		{"max-elements", c.MaxElements, 1}, {"max-batch", c.MaxBatch, 1}, {"max-label-length", c.MaxLabelLength, 1},
		{"history-keep", c.HistoryKeep, 1}, {"max-scene-size", c.MaxSceneSize, 1024},
		{"render-tabs", c.RenderTabs, 1}, {"max-message-length", c.MaxMessageLength, 1},
		{"max-concurrent-runs", c.MaxConcurrentRuns, 1}, {"max-interruptions", c.MaxInterruptions, 1},
	}
	for _, p := range positive {
		if p.v < p.min {
			bad(p.name, "is %d; it must be at least %d", p.v, p.min)
		}
	}
	durations := []struct {
		name string
		v    time.Duration
	}{
		{"model-timeout", c.ModelTimeout}, {"run-timeout", c.RunTimeout}, {"render-timeout", c.RenderTimeout},
		{"poll-interval", c.PollInterval}, {"reply-give-up", c.ReplyGiveUp},
	}
	for _, d := range durations {
		if d.v <= 0 {
			bad(d.name, "is %s; it must be a positive duration such as 30s or 2m", d.v)
		}
	}
	if c.WorkingAfter < 0 {
		bad("working-after", "is %s; it must be 0 (signs at once) or a duration such as 1s", c.WorkingAfter)
	}
	if c.LeaseTTL < 3*time.Second {
		bad("lease-ttl", "is %s; it must be at least 3s (the heartbeat renews it every third of it)", c.LeaseTTL)
	}
	if _, err := c.Protocols(); err != nil {
		bad("protocol", "%v", err)
	}
	if v := c.VisionModel; strings.ContainsAny(v, " \t,") || strings.Contains(v, "://") {
		bad("vision-model", "is %q; it must name one Ollama model as `ollama list` shows it, e.g. qwen2.5vl:7b (the server is --ollama-host)", v)
	}
	if c.ImageSize < 256 || c.ImageSize > 4096 {
		bad("image-size", "is %d; it must be from 256 to 4096 pixels (vision models read pictures at about 1024)", c.ImageSize)
	}
	if c.MaxImageSize < 64<<10 {
		bad("max-image-size", "is %d bytes; it must be at least 65536 (64 KB): phone photos are several megabytes", c.MaxImageSize)
	}
	if c.KeepAlive < 0 {
		bad("keep-alive", "is %s; it must be zero or positive", c.KeepAlive)
	}
	if c.LinkTTL < 0 {
		bad("link-ttl", "is %s; use 0 for links that live until reset", c.LinkTTL)
	}
	if c.PruneAfter < 0 {
		bad("prune-after", "is %s; use 0 to keep threads forever", c.PruneAfter)
	}
	if c.Temperature < 0 || c.Temperature > 2 {
		bad("temperature", "is %g; it must be between 0 and 2", c.Temperature)
	}
	if c.RenderScale < 0.5 || c.RenderScale > 4 {
		bad("render-scale", "is %g; it must be between 0.5 and 4", c.RenderScale)
	}
	if c.UserRatePerMinute <= 0 {
		bad("user-rate", "is %g; it must be positive", c.UserRatePerMinute)
	}
	if c.ChatRatePerMinute <= 0 {
		bad("chat-rate", "is %g; it must be positive", c.ChatRatePerMinute)
	}
	if _, _, err := c.StoreTarget(); err != nil {
		bad("database", "%v", err)
	}
	if c.PublicURL != "" {
		if err := checkHTTPURL(c.PublicURL); err != nil {
			bad("public-url", "%v (example: https://draw.example.com)", err)
		}
	}
	if c.ShareLinks {
		if err := checkHTTPURL(c.ShareURL); err != nil {
			bad("share-url", "%v (default: https://json.excalidraw.com/api/v2/post/)", err)
		}
	}
	switch c.SlackMode {
	case "socket":
		if c.SlackBotToken != "" && c.SlackAppToken == "" {
			bad("slack-app-token", "is required for Socket Mode (an xapp-… token with connections:write); or set --slack-mode=events")
		}
	case "events":
		if c.SlackBotToken != "" && c.SlackSigningSecret == "" {
			bad("slack-signing-secret", "is required for the Events API over HTTP (Basic Information → Signing Secret)")
		}
	default:
		bad("slack-mode", "is %q; it must be socket or events", c.SlackMode)
	}
	if c.SlackBotToken != "" && !strings.HasPrefix(c.SlackBotToken, "xoxb-") {
		bad("slack-bot-token", "must be a bot token starting with xoxb-")
	}
	if c.SlackAppToken != "" && !strings.HasPrefix(c.SlackAppToken, "xapp-") {
		bad("slack-app-token", "must be an app-level token starting with xapp-")
	}
	if c.SlackAPIURL != "" {
		if err := checkHTTPURL(c.SlackAPIURL); err != nil {
			bad("slack-api-url", "%v", err)
		}
	}
	switch c.TelegramMode {
	case "polling":
	case "webhook":
		if c.TelegramToken != "" && !validWebhookSecret(c.TelegramWebhookSecret) {
			bad("telegram-webhook-secret", "is required in webhook mode: 1–256 characters of A-Z, a-z, 0-9, _ and -")
		}
		if c.TelegramToken != "" && c.PublicURL == "" {
			bad("public-url", "is required in Telegram webhook mode: Telegram must reach {public-url}/telegram/webhook")
		}
	default:
		bad("telegram-mode", "is %q; it must be polling or webhook", c.TelegramMode)
	}
	if c.TelegramAPIURL != "" {
		if err := checkHTTPURL(c.TelegramAPIURL); err != nil {
			bad("telegram-api-url", "%v", err)
		}
	}
	switch strings.ToLower(c.LogLevel) {
	case "debug", "info", "warn", "error":
	default:
		bad("log-level", "is %q; it must be debug, info, warn or error", c.LogLevel)
	}
	if len(ps) > 0 {
		return &ValidationError{Problems: ps}
	}
	return nil
}

// StoreTarget says which store the Database setting selects: ("sqlite", path) — an empty path
// means the default location — or ("postgres", url).
func (c Config) StoreTarget() (kind, target string, err error) {
	d := strings.TrimSpace(c.Database)
	switch {
	case d == "":
		return "sqlite", "", nil
	case strings.HasPrefix(d, "sqlite:"):
		p := strings.TrimPrefix(d, "sqlite:")
		if p == "" {
			return "", "", errors.New(`"sqlite:" needs a file path, e.g. sqlite:/var/lib/excalibot/excalibot.db`)
		}
		return "sqlite", p, nil
	case strings.HasPrefix(d, "postgres://"), strings.HasPrefix(d, "postgresql://"):
		return "postgres", d, nil
	default:
		return "", "", fmt.Errorf("%q is neither sqlite:PATH nor a postgres:// URL", redactURL(d))
	}
}

// Chat says which chat platforms have credentials. With none, serve still runs the HTTP side.
func (c Config) Chat() (slack, telegram bool) {
	return c.SlackBotToken != "", c.TelegramToken != ""
}

// MissingChat explains what to set when no chat platform is configured.
func (c Config) MissingChat() string {
	slack, tg := c.Chat()
	if slack || tg {
		return ""
	}
	return "no chat platform is configured: set SLACK_BOT_TOKEN and SLACK_APP_TOKEN (Slack, Socket Mode) " +
		"or TELEGRAM_BOT_TOKEN (Telegram); the chat page and editor links are served over HTTP meanwhile"
}

// hasUserInfo reports whether a host setting carries "user:password@", also after
// normalizeOllamaHost folded it into the host ("%40").
func hasUserInfo(s string) bool {
	_, rest, ok := strings.Cut(s, "://")
	if !ok {
		rest = s
	}
	authority, _, _ := strings.Cut(rest, "/")
	return strings.Contains(authority, "@") || strings.Contains(authority, "%40")
}

func validWebhookSecret(s string) bool {
	if len(s) < 1 || len(s) > 256 {
		return false
	}
	for _, r := range s {
		ok := r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '_' || r == '-'
		if !ok {
			return false
		}
	}
	return true
}

// Protocols are the drawing protocols named by Protocol, in order: one for draw, chat and serve,
// one or more for eval. Each is auto, tools or plan.
func (c Config) Protocols() ([]string, error) {
	var out []string
	for _, p := range strings.Split(c.Protocol, ",") {
		p = strings.ToLower(strings.TrimSpace(p))
		switch p {
		case "auto", "tools", "plan":
			out = append(out, p)
		case "":
		default:
			return nil, fmt.Errorf("%q is not a protocol; use auto (tools when the model has them, typed plans otherwise), tools or plan", p)
		}
	}
	if len(out) == 0 {
		return nil, errors.New("is empty; use auto, tools or plan")
	}
	return out, nil
}
