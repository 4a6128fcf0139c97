package config

import (
	"bufio"
	"bytes"
	"flag"
	"fmt"
	"io"
	"net"
	"net/url"
	"os"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"
)

// setting binds one Config field to its flag and environment variable.
type setting struct {
	name   string // flag name
	env    string // environment variable; also the key in a config file
	usage  string
	secret bool
	field  func(*Config) any // pointer to the field
}

// settings is the one table every source goes through, so a flag, a variable and a file key can
// never disagree about a setting.
var settings = []setting{
	{"ollama-host", "OLLAMA_HOST", "Ollama server URL (host:port is accepted, as the ollama CLI does)", false, func(c *Config) any { return &c.OllamaHost }},
	{"model", "EXCALIBOT_MODEL", "Ollama model that draws", false, func(c *Config) any { return &c.Model }},
	{"num-ctx", "EXCALIBOT_NUM_CTX", "context window in tokens, sent with every request", false, func(c *Config) any { return &c.NumCtx }},
	{"temperature", "EXCALIBOT_TEMPERATURE", "sampling temperature", false, func(c *Config) any { return &c.Temperature }},
	{"keep-alive", "EXCALIBOT_KEEP_ALIVE", "how long Ollama keeps the model loaded", false, func(c *Config) any { return &c.KeepAlive }},
	{"think", "EXCALIBOT_THINK", "let thinking models think", false, func(c *Config) any { return &c.Think }},
	{"model-timeout", "EXCALIBOT_MODEL_TIMEOUT", "limit for one model request", false, func(c *Config) any { return &c.ModelTimeout }},
	{"max-turns", "EXCALIBOT_MAX_TURNS", "model turns per run", false, func(c *Config) any { return &c.MaxTurns }},
	{"max-tool-calls", "EXCALIBOT_MAX_TOOL_CALLS", "tool calls per run", false, func(c *Config) any { return &c.MaxToolCalls }},
	{"run-timeout", "EXCALIBOT_RUN_TIMEOUT", "wall time per run", false, func(c *Config) any { return &c.RunTimeout }},
	{"max-elements", "EXCALIBOT_MAX_ELEMENTS", "elements per scene", false, func(c *Config) any { return &c.MaxElements }},
	{"max-batch", "EXCALIBOT_MAX_BATCH", "elements per batch call", false, func(c *Config) any { return &c.MaxBatch }},
	{"max-label-length", "EXCALIBOT_MAX_LABEL_LENGTH", "characters per label", false, func(c *Config) any { return &c.MaxLabelLength }},
	{"protocol", "EXCALIBOT_PROTOCOL", "how the model draws: auto, tools or plan (eval takes a list, e.g. tools,plan)", false, func(c *Config) any { return &c.Protocol }},
	{"vision-model", "EXCALIBOT_VISION_MODEL", "Ollama model that reads pictures sent with a request, e.g. qwen2.5vl:7b (empty: the model itself, if it can)", false, func(c *Config) any { return &c.VisionModel }},
	{"image-size", "EXCALIBOT_IMAGE_SIZE", "longest side in pixels of a picture as the model gets it", false, func(c *Config) any { return &c.ImageSize }},
	{"max-image-size", "EXCALIBOT_MAX_IMAGE_SIZE", "bytes per picture sent", false, func(c *Config) any { return &c.MaxImageSize }},

	{"database", "EXCALIBOT_DATABASE", "sqlite:PATH or postgres://… (empty: SQLite in the user's data directory)", true, func(c *Config) any { return &c.Database }},
	{"history-keep", "EXCALIBOT_HISTORY_KEEP", "revisions kept per thread", false, func(c *Config) any { return &c.HistoryKeep }},
	{"max-scene-size", "EXCALIBOT_MAX_SCENE_SIZE", "bytes per stored scene", false, func(c *Config) any { return &c.MaxSceneSize }},
	{"prune-after", "EXCALIBOT_PRUNE_AFTER", "remove threads untouched this long (0: never)", false, func(c *Config) any { return &c.PruneAfter }},
	{"lease-ttl", "EXCALIBOT_LEASE_TTL", "how long a replica holds a thread or a reply without its heartbeat: a dead replica's work moves on after this", false, func(c *Config) any { return &c.LeaseTTL }},
	{"poll-interval", "EXCALIBOT_POLL_INTERVAL", "how often the store is asked for messages and replies other replicas kept", false, func(c *Config) any { return &c.PollInterval }},
	{"reply-give-up", "EXCALIBOT_REPLY_GIVE_UP", "how long a reply that cannot be posted is retried before it is kept as dead", false, func(c *Config) any { return &c.ReplyGiveUp }},
	{"max-interruptions", "EXCALIBOT_MAX_INTERRUPTIONS", "how many times a request's run may be cut short (a crash, a kill, a shutdown) before it is given up; until then the next replica or start redoes it", false, func(c *Config) any { return &c.MaxInterruptions }},

	{"chrome", "EXCALIBOT_CHROME", "Chromium binary (empty: look for chromium on PATH)", false, func(c *Config) any { return &c.ChromePath }},
	{"render-tabs", "EXCALIBOT_RENDER_TABS", "warm browser tabs for rendering", false, func(c *Config) any { return &c.RenderTabs }},
	{"render-timeout", "EXCALIBOT_RENDER_TIMEOUT", "limit for one render", false, func(c *Config) any { return &c.RenderTimeout }},
	{"render-scale", "EXCALIBOT_RENDER_SCALE", "PNG scale factor", false, func(c *Config) any { return &c.RenderScale }},

	{"listen", "EXCALIBOT_LISTEN", "HTTP listen address", false, func(c *Config) any { return &c.Listen }},
	{"public-url", "EXCALIBOT_PUBLIC_URL", "base URL of links in replies", false, func(c *Config) any { return &c.PublicURL }},
	{"link-ttl", "EXCALIBOT_LINK_TTL", "editor links expire after this long (0: until reset)", false, func(c *Config) any { return &c.LinkTTL }},
	{"notify-edits", "EXCALIBOT_NOTIFY_EDITS", "tell the thread when its diagram was edited in the browser", false, func(c *Config) any { return &c.NotifyEdits }},
	{"working-after", "EXCALIBOT_WORKING_AFTER", "how long a drawing goes on before its working signs show (0: at once); a quicker answer shows none", false, func(c *Config) any { return &c.WorkingAfter }},
	{"share-links", "EXCALIBOT_SHARE_LINKS", "without a public URL, link replies to excalidraw.com (the scene is uploaded there, encrypted)", false, func(c *Config) any { return &c.ShareLinks }},
	{"share-url", "EXCALIBOT_SHARE_URL", "where share links upload the encrypted scene", false, func(c *Config) any { return &c.ShareURL }},
	{"chat-secret", "EXCALIBOT_CHAT_SECRET", "shared secret for the chat page beyond localhost", true, func(c *Config) any { return &c.ChatSecret }},

	{"slack-bot-token", "SLACK_BOT_TOKEN", "Slack bot token (xoxb-…)", true, func(c *Config) any { return &c.SlackBotToken }},
	{"slack-app-token", "SLACK_APP_TOKEN", "Slack app-level token for Socket Mode (xapp-…)", true, func(c *Config) any { return &c.SlackAppToken }},
	{"slack-signing-secret", "SLACK_SIGNING_SECRET", "Slack signing secret for the Events API", true, func(c *Config) any { return &c.SlackSigningSecret }},
	{"slack-mode", "EXCALIBOT_SLACK_MODE", "socket or events", false, func(c *Config) any { return &c.SlackMode }},
	{"slack-api-url", "EXCALIBOT_SLACK_API_URL", "Slack Web API base URL", false, func(c *Config) any { return &c.SlackAPIURL }},
	{"slack-workspaces", "EXCALIBOT_SLACK_WORKSPACES", "allowed Slack workspace ids, comma-separated (empty: all)", false, func(c *Config) any { return &c.SlackWorkspaces }},
	{"slack-channels", "EXCALIBOT_SLACK_CHANNELS", "allowed Slack channel ids, comma-separated (empty: all)", false, func(c *Config) any { return &c.SlackChannels }},

	{"telegram-token", "TELEGRAM_BOT_TOKEN", "Telegram bot token", true, func(c *Config) any { return &c.TelegramToken }},
	{"telegram-mode", "EXCALIBOT_TELEGRAM_MODE", "polling or webhook", false, func(c *Config) any { return &c.TelegramMode }},
	{"telegram-webhook-secret", "EXCALIBOT_TELEGRAM_WEBHOOK_SECRET", "secret_token for webhook updates", true, func(c *Config) any { return &c.TelegramWebhookSecret }},
	{"telegram-api-url", "EXCALIBOT_TELEGRAM_API_URL", "Telegram Bot API base URL", false, func(c *Config) any { return &c.TelegramAPIURL }},
	{"telegram-chats", "EXCALIBOT_TELEGRAM_CHATS", "allowed Telegram chat ids, comma-separated (empty: all)", false, func(c *Config) any { return &c.TelegramChats }},
	{"telegram-users", "EXCALIBOT_TELEGRAM_USERS", "allowed Telegram user ids, comma-separated (empty: all)", false, func(c *Config) any { return &c.TelegramUsers }},

	{"max-message-length", "EXCALIBOT_MAX_MESSAGE_LENGTH", "characters per chat message", false, func(c *Config) any { return &c.MaxMessageLength }},
	{"max-concurrent-runs", "EXCALIBOT_MAX_CONCURRENT_RUNS", "runs in parallel across threads, in each replica", false, func(c *Config) any { return &c.MaxConcurrentRuns }},
	{"user-rate", "EXCALIBOT_USER_RATE", "drawing requests per user per minute, counted by each replica on its own", false, func(c *Config) any { return &c.UserRatePerMinute }},
	{"chat-rate", "EXCALIBOT_CHAT_RATE", "drawing requests per chat per minute, counted by each replica on its own", false, func(c *Config) any { return &c.ChatRatePerMinute }},

	{"log-level", "EXCALIBOT_LOG_LEVEL", "debug, info, warn or error", false, func(c *Config) any { return &c.LogLevel }},
}

// maxConfigFile bounds a config file; it holds a few dozen KEY=value lines.
const maxConfigFile = 1 << 20

// ConfigFileEnv names the variable that points at a config file (the --config flag wins over it).
const ConfigFileEnv = "EXCALIBOT_CONFIG"

func settingByName(name string) setting {
	for _, s := range settings {
		if s.name == name {
			return s
		}
	}
	panic("config: no setting " + name) // a typo in this package, caught by its tests
}

// Source says where an effective value came from.
type Source string

const (
	FromDefault Source = "default"
	FromFile    Source = "file"
	FromEnv     Source = "env"
	FromFlag    Source = "flag"
)

// Loaded is the effective configuration plus the origin of each value.
type Loaded struct {
	Config
	Sources map[string]Source // by flag name
	File    string            // the config file read, if any
}

// Load builds the configuration from defaults, then the config file, then environment variables,
// then flags (each overriding the one before). args are the subcommand's flags; env is os.Environ().
// It registers the settings on fs, so the subcommand may add flags of its own before calling Load.
// flags names the settings a command takes as flags (its --help lists only those); none given
// means every setting. The others are still read from the file and the environment.
// The result is validated.
func Load(fset *flag.FlagSet, args, env []string, flags ...string) (*Loaded, error) {
	l := &Loaded{Config: Default(), Sources: map[string]Source{}}
	raw := map[string]*string{}
	for _, name := range flags {
		if !slices.ContainsFunc(settings, func(s setting) bool { return s.name == name }) {
			return nil, fmt.Errorf("no setting named %q", name)
		}
	}
	for _, s := range settings {
		if len(flags) > 0 && !slices.Contains(flags, s.name) {
			continue
		}
		v := new(string)
		raw[s.name] = v
		fset.Func(s.name, s.usage+" ($"+s.env+")", func(x string) error { *v = x; return nil })
	}
	configPath := fset.String("config", "", "config file of KEY=value lines, keys as the environment variables ($"+ConfigFileEnv+")")
	if err := fset.Parse(args); err != nil {
		return nil, err
	}
	setByFlag := map[string]bool{}
	fset.Visit(func(f *flag.Flag) { setByFlag[f.Name] = true })

	envMap := map[string]string{}
	for _, kv := range env {
		if k, v, ok := strings.Cut(kv, "="); ok {
			envMap[k] = v
		}
	}
	path := *configPath
	if path == "" {
		path = envMap[ConfigFileEnv]
	}
	if path != "" {
		fileVals, err := readFile(path)
		if err != nil {
			return nil, err
		}
		l.File = path
		if err := l.apply(fileVals, FromFile); err != nil {
			return nil, fmt.Errorf("config file %s: %w", path, err)
		}
	}
	envVals := map[string]string{}
	for _, s := range settings {
		if v, ok := envMap[s.env]; ok && v != "" {
			envVals[s.env] = v
		}
	}
	if err := l.apply(envVals, FromEnv); err != nil {
		return nil, fmt.Errorf("environment: %w", err)
	}
	flagVals := map[string]string{}
	for _, s := range settings {
		if v := raw[s.name]; v != nil && setByFlag[s.name] { // nil: not one of this command's flags
			flagVals[s.env] = *v
		}
	}
	if err := l.apply(flagVals, FromFlag); err != nil {
		return nil, fmt.Errorf("flags: %w", err)
	}
	l.OllamaHost = normalizeOllamaHost(l.OllamaHost)
	if err := l.Validate(); err != nil {
		return l, err
	}
	return l, nil
}

// apply sets the values given by environment-variable name.
func (l *Loaded) apply(vals map[string]string, src Source) error {
	for _, s := range settings {
		v, ok := vals[s.env]
		if !ok {
			continue
		}
		if err := set(s.field(&l.Config), v); err != nil {
			return fmt.Errorf("%s: %w", s.env, err)
		}
		l.Sources[s.name] = src
	}
	return nil
}

func set(p any, v string) error {
	v = strings.TrimSpace(v)
	switch p := p.(type) {
	case *string:
		*p = v
	case *int:
		n, err := strconv.Atoi(v)
		if err != nil {
			return fmt.Errorf("%q is not a whole number", v)
		}
		*p = n
	case *float64:
		f, err := strconv.ParseFloat(v, 64)
		if err != nil {
			return fmt.Errorf("%q is not a number", v)
		}
		*p = f
	case *bool:
		b, err := strconv.ParseBool(v)
		if err != nil {
			return fmt.Errorf("%q is not true or false", v)
		}
		*p = b
	case *time.Duration:
		if v == "0" {
			*p = 0
			return nil
		}
		d, err := time.ParseDuration(v)
		if err != nil {
			return fmt.Errorf("%q is not a duration such as 90s, 5m or 24h", v)
		}
		*p = d
	case *[]string:
		*p = nil
		for _, part := range strings.Split(v, ",") {
			if part = strings.TrimSpace(part); part != "" {
				*p = append(*p, part)
			}
		}
	default:
		return fmt.Errorf("unsupported setting type %T", p)
	}
	return nil
}

// readFile reads KEY=value lines (blank lines and # comments allowed, values may be quoted). A file
// that holds a secret must be the owner's alone: no group or other permission bits, since the
// group of a service file is often a shared one and a group-writable file lets others swap a URL
// or token.
func readFile(path string) (map[string]string, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("read config file: %w", err)
	}
	defer f.Close()
	st, err := f.Stat() // of the file read, not of whatever the path names a moment later
	if err != nil {
		return nil, fmt.Errorf("stat config file: %w", err)
	}
	data, err := io.ReadAll(io.LimitReader(f, maxConfigFile+1))
	if err != nil {
		return nil, fmt.Errorf("read config file: %w", err)
	}
	if len(data) > maxConfigFile {
		return nil, fmt.Errorf("config file %s is over %d KB; it should hold a few KEY=value lines", path, maxConfigFile>>10)
	}
	known := map[string]setting{}
	for _, s := range settings {
		known[s.env] = s
	}
	vals := map[string]string{}
	hasSecret := false
	sc := bufio.NewScanner(bytes.NewReader(data))
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		k, v, ok := strings.Cut(line, "=")
		if !ok {
			return nil, fmt.Errorf("config file %s line %d: expected KEY=value", path, n)
		}
		k = strings.TrimSpace(strings.TrimPrefix(k, "export "))
		s, ok := known[k]
		if !ok {
			return nil, fmt.Errorf("config file %s line %d: unknown key %s (keys are the environment variable names; `excalibot config` lists them)", path, n, k)
		}
		v = strings.TrimSpace(v)
		if len(v) >= 2 && (v[0] == '"' && v[len(v)-1] == '"' || v[0] == '\'' && v[len(v)-1] == '\'') {
			v = v[1 : len(v)-1]
		}
		vals[k] = v
		if s.secret && v != "" {
			hasSecret = true
		}
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("read config file %s: %w", path, err)
	}
	if hasSecret && st.Mode().Perm()&0o077 != 0 {
		return nil, fmt.Errorf("config file %s holds secrets and other users may read or change it (mode %v); run: chmod 600 %s", path, st.Mode().Perm(), path)
	}
	return vals, nil
}

// Print writes every effective setting with its source; secrets show only whether they are set.
func (l *Loaded) Print(w io.Writer) {
	if l.File != "" {
		fmt.Fprintf(w, "# config file: %s\n", l.File)
	}
	for _, s := range settings {
		src := l.Sources[s.name]
		if src == "" {
			src = FromDefault
		}
		fmt.Fprintf(w, "%-24s %-36s %s\n", s.name, display(s, s.field(&l.Config)), src)
	}
}

func display(s setting, p any) string {
	var v string
	switch p := p.(type) {
	case *string:
		v = *p
	case *[]string:
		v = strings.Join(*p, ",")
	case *int:
		v = strconv.Itoa(*p)
	case *float64:
		v = strconv.FormatFloat(*p, 'g', -1, 64)
	case *bool:
		v = strconv.FormatBool(*p)
	case *time.Duration:
		v = p.String()
	}
	if v == "" {
		return "(unset)"
	}
	if s.secret {
		if s.name == "database" {
			return redactURL(v)
		}
		return "(set, redacted)"
	}
	return redactURL(v) // an API URL through a proxy may carry a password
}

// Secrets returns the values of every secret setting that is set, and the password of any URL
// setting that carries one (a proxy in front of the Slack or Telegram API, say), longest first,
// for log redaction.
func (c Config) Secrets() []string {
	var out []string
	for _, s := range settings {
		p, ok := s.field(&c).(*string)
		if !ok {
			continue
		}
		if s.secret && len(*p) >= 6 {
			out = append(out, *p)
		}
		if u, err := url.Parse(*p); err == nil && u.User != nil {
			if pw, ok := u.User.Password(); ok && len(pw) >= 4 {
				out = append(out, pw)
			}
		}
	}
	sort.Slice(out, func(i, j int) bool { return len(out[i]) > len(out[j]) })
	return out
}

// redactURL hides the password of a URL such as postgres://user:pw@host/db.
func redactURL(s string) string {
	u, err := url.Parse(s)
	if err != nil || u.User == nil {
		return s
	}
	if _, ok := u.User.Password(); ok {
		u.User = url.UserPassword(u.User.Username(), "xxxxx")
	}
	return u.String()
}

// normalizeOllamaHost reads OLLAMA_HOST the way Ollama's own envconfig.Host does: "host",
// "host:port" or a URL; without a scheme the port defaults to 11434, with http:// to 80 and with
// https:// to 443.
func normalizeOllamaHost(h string) string {
	h = strings.TrimRight(strings.TrimSpace(h), "/")
	if h == "" {
		return h
	}
	port := "11434"
	scheme, hostport, ok := strings.Cut(h, "://")
	switch {
	case !ok:
		scheme, hostport = "http", h
	case scheme == "http":
		port = "80"
	case scheme == "https":
		port = "443"
	}
	hostport, path, _ := strings.Cut(hostport, "/")
	host, p, err := net.SplitHostPort(hostport)
	if err != nil {
		host = strings.Trim(hostport, "[]")
	} else {
		port = p
	}
	u := url.URL{Scheme: scheme, Host: net.JoinHostPort(host, port)}
	if path != "" {
		u.Path = "/" + path
	}
	return u.String()
}

func checkHTTPURL(s string) error {
	u, err := url.Parse(s)
	if err != nil {
		return fmt.Errorf("%q is not a URL: %v", s, err)
	}
	if u.Scheme != "http" && u.Scheme != "https" {
		return fmt.Errorf("%q must start with http:// or https://", s)
	}
	if u.Host == "" {
		return fmt.Errorf("%q has no host", s)
	}
	return nil
}
