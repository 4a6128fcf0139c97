package main

import (
	"cmp"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"os"
	"strings"
	"time"

	tg "github.com/go-telegram/bot"
	"github.com/slack-go/slack"

	slackbot "github.com/excalibot/excalibot/bot/slack"
	"github.com/excalibot/excalibot/config"
	"github.com/excalibot/excalibot/internal/plural"
	"github.com/excalibot/excalibot/render"
	"github.com/excalibot/excalibot/scene"
)

// Bounds of the doctor's checks. Starting Chromium on a busy machine is the slow one.
const (
	doctorNetTimeout    = 10 * time.Second
	doctorRenderTimeout = 90 * time.Second
)

// check statuses, as printed.
const (
	statusOK   = "ok"
	statusWarn = "warn"
	statusFail = "FAIL"
	statusSkip = "skip"
)

// finding is one line of the doctor's report.
type finding struct {
	status string
	name   string // what was checked
	detail string
	fix    string // on FAIL: what to do, one sentence
}

// cmdDoctor checks everything a deployment needs, with the settings serve would use:
//
//	excalibot doctor [settings flags]
func cmdDoctor(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("doctor", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprint(stderr, `usage: excalibot doctor [settings flags]

Checks, with the settings serve would use (flags, environment, config file): Ollama, the
model and its protocol, the model that reads pictures, Chromium, the store, the Slack and
Telegram tokens, and the public URL. Prints one line
per check; exits 1 when a check fails. Settings flags are those of excalibot serve.

`)
		fs.PrintDefaults()
	}
	l, err := config.Load(fs, args, os.Environ(), settingsOf("doctor")...)
	if errors.Is(err, flag.ErrHelp) {
		return 0
	}
	var ve *config.ValidationError
	if l == nil || (err != nil && !errors.As(err, &ve)) {
		fmt.Fprintf(stderr, "excalibot doctor: %v\n", err)
		return 2
	}
	return doctor(ctx, l.Config, l.File, err, stdout)
}

// doctor runs the checks and prints the report; it returns the exit status: 1 when a check
// failed, else 0. settingsErr is what validating the settings said.
func doctor(ctx context.Context, cfg config.Config, file string, settingsErr error, stdout io.Writer) int {
	out := &redactWriter{w: stdout, r: strings.NewReplacer(pairs(cfg.Secrets())...)}
	from := "flags, environment and defaults"
	if file != "" {
		from = "config file " + file + ", " + from
	}
	fmt.Fprintf(out, "excalibot doctor: settings from %s\n\n", from)
	log := slog.New(slog.DiscardHandler) // the report says what matters; library chatter would bury it
	checks := []func(context.Context, config.Config, *slog.Logger) []finding{
		checkOllama, checkRenderer, checkStore, checkSlack, checkTelegram, checkPublicURL,
	}
	all := []finding{settingsFinding(settingsErr)}
	for _, c := range checks {
		all = append(all, c(ctx, cfg, log)...)
	}
	failed := 0
	for _, f := range all {
		fmt.Fprintln(out, f.line())
		if f.status == statusFail {
			failed++
		}
	}
	switch failed {
	case 0:
		fmt.Fprintln(out, "\nevery check passed")
		return 0
	default:
		fmt.Fprintf(out, "\n%s failed\n", plural.Count(failed, "check", ""))
	}
	return 1
}

// line is the finding as the report prints it: status, check, detail and the fix.
func (f finding) line() string {
	line := fmt.Sprintf("%-4s  %-10s  %s", f.status, f.name, oneLine(f.detail))
	if f.fix != "" {
		line += " — " + oneLine(f.fix)
	}
	return line
}

func settingsFinding(err error) finding {
	if err == nil {
		return finding{statusOK, "settings", "valid", ""}
	}
	return finding{statusFail, "settings", err.Error(), "fix the settings named (excalibot config shows each one and where it came from)"}
}

// checkOllama: the server answers, the model is pulled, what it can do fits the settings, and
// the model that reads pictures can.
func checkOllama(ctx context.Context, cfg config.Config, log *slog.Logger) []finding {
	m, err := newModel(cfg, log)
	if err != nil {
		return []finding{{statusFail, "ollama", err.Error(), "set OLLAMA_HOST and EXCALIBOT_MODEL"}}
	}
	return inspectModels(ctx, cfg, m, true).findings()
}

// failure turns an actionable error ("what happened; what to do") into a FAIL line.
func failure(name string, err error) finding {
	msg := err.Error()
	if what, fix, ok := strings.Cut(msg, "; "); ok {
		return finding{statusFail, name, what, fix}
	}
	return finding{statusFail, name, msg, ""}
}

// doctorScene is the test picture: one labelled box.
func doctorScene() ([]byte, error) {
	sc := scene.New()
	e, err := sc.Add(scene.Element{ID: "doctor", Type: scene.Rectangle, X: 0, Y: 0, Width: 160, Height: 60})
	if err != nil {
		return nil, err
	}
	if _, err := sc.SetLabel(e.ID, "excalibot"); err != nil {
		return nil, err
	}
	return sc.Encode()
}

// checkRenderer starts Chromium as serve does and renders a test picture.
func checkRenderer(ctx context.Context, cfg config.Config, log *slog.Logger) []finding {
	ctx, cancel := context.WithTimeout(ctx, doctorRenderTimeout)
	defer cancel()
	doc, err := doctorScene()
	if err != nil {
		return []finding{{statusFail, "renderer", "build the test scene: " + err.Error(), ""}}
	}
	start := time.Now()
	chromium := newLazyRenderer(cfg.ChromePath, cfg.RenderTimeout, false, log)
	defer chromium.close()
	r, err := chromium.get(ctx)
	chrome := "Chromium"
	if cfg.ChromePath != "" {
		chrome = "Chromium at " + cfg.ChromePath
	}
	if errors.Is(err, render.ErrNoChrome) {
		return []finding{{statusFail, "renderer", chrome + " not found",
			"install it (Debian/Ubuntu: apt-get install chromium) or set EXCALIBOT_CHROME to its path"}}
	}
	if err != nil {
		return []finding{{statusFail, "renderer", chrome + " did not start: " + err.Error(),
			"run `excalibot render -v` on an .excalidraw file to see what Chromium says"}}
	}
	started := time.Since(start)
	start = time.Now()
	png, err := r.PNG(ctx, doc, render.Options{Scale: cfg.RenderScale})
	if err != nil {
		return []finding{{statusFail, "renderer", "the test picture did not render: " + err.Error(),
			"run `excalibot render -v` on an .excalidraw file to see what Chromium says"}}
	}
	return []finding{{statusOK, "renderer", fmt.Sprintf("%s started in %d ms and rendered a test picture in %d ms (%d bytes)",
		chrome, started.Milliseconds(), time.Since(start).Milliseconds(), len(png)), ""}}
}

// checkStore opens the store as serve does and reads from it.
func checkStore(ctx context.Context, cfg config.Config, log *slog.Logger) []finding {
	ctx, cancel := context.WithTimeout(ctx, doctorNetTimeout)
	defer cancel()
	kind, target, err := cfg.StoreTarget()
	if err != nil {
		return []finding{{statusFail, "store", err.Error(), "set EXCALIBOT_DATABASE to sqlite:PATH or a postgres:// URL"}}
	}
	what := "SQLite " + target
	fix := "make sure the file's directory exists and the user running excalibot may write there, or set EXCALIBOT_DATABASE=sqlite:PATH"
	switch {
	case kind == "postgres":
		what = "PostgreSQL " + redactedURL(target)
		fix = "check the URL in EXCALIBOT_DATABASE and that the server accepts connections from here"
	case target == "":
		what = "SQLite in the user's data directory"
	}
	st, err := openStore(ctx, cfg, log)
	if err != nil {
		// what already names the store: the cause is what openStore wrapped.
		msg := err.Error()
		if cause := errors.Unwrap(err); cause != nil {
			msg = cause.Error()
		}
		return []finding{{statusFail, "store", what + ": " + msg, fix}}
	}
	defer st.Close()
	if err := st.Ping(ctx); err != nil {
		return []finding{{statusFail, "store", what + " opens but does not answer: " + err.Error(), fix}}
	}
	out := []finding{{statusOK, "store", what + " opens and answers", ""}}
	if c, ok := st.(interface {
		DatabaseTime(context.Context) (time.Time, error)
	}); ok {
		before := time.Now()
		db, err := c.DatabaseTime(ctx)
		if err == nil {
			mid := before.Add(time.Since(before) / 2)
			out = append(out, clockFinding(db.Sub(mid)))
		}
	}
	return out
}

// maxClockSkew is how far this machine's clock may be from the database's before doctor warns:
// leases (30 s by default) are stamped with each replica's own clock.
const maxClockSkew = 3 * time.Second

// clockFinding judges how far the database's clock is ahead of this machine's.
func clockFinding(skew time.Duration) finding {
	if skew.Abs() <= maxClockSkew {
		return finding{statusOK, "clock", fmt.Sprintf("this machine's clock is within %s of the database's", maxClockSkew), ""}
	}
	return finding{statusWarn, "clock", fmt.Sprintf("this machine's clock is %s off the database's: replicas stamp leases with their own clocks, so one running behind or ahead takes over threads too early or too late",
		skew.Round(100*time.Millisecond).Abs()), "keep every replica's clock synchronised (NTP, e.g. systemd-timesyncd or chrony)"}
}

func redactedURL(s string) string {
	u, err := url.Parse(s)
	if err != nil {
		return "(unreadable URL)"
	}
	return u.Redacted()
}

// checkSlack asks Slack whether the tokens are good: auth.test for the bot token and, in Socket
// Mode, apps.connections.open for the app-level token (it hands out a connection URL that is
// never used).
func checkSlack(ctx context.Context, cfg config.Config, _ *slog.Logger) []finding {
	if cfg.SlackBotToken == "" {
		return []finding{{statusSkip, "slack", "SLACK_BOT_TOKEN not set", ""}}
	}
	ctx, cancel := context.WithTimeout(ctx, doctorNetTimeout)
	defer cancel()
	apiURL := cfg.SlackAPIURL
	if apiURL == "" {
		apiURL = slack.APIURL
	}
	if !strings.HasSuffix(apiURL, "/") {
		apiURL += "/"
	}
	scopes := &scopeHeader{next: http.DefaultTransport}
	hc := &http.Client{Timeout: doctorNetTimeout, Transport: scopes}
	opts := []slack.Option{slack.OptionAPIURL(apiURL), slack.OptionHTTPClient(hc)}
	if cfg.SlackAppToken != "" {
		opts = append(opts, slack.OptionAppLevelToken(cfg.SlackAppToken))
	}
	api := slack.New(cfg.SlackBotToken, opts...)
	r, err := api.AuthTestContext(ctx)
	var se slack.SlackErrorResponse
	switch {
	case errors.As(err, &se):
		return []finding{{statusFail, "slack", "auth.test refused the bot token: " + se.Err,
			"copy the Bot User OAuth Token (xoxb-…) from the app's OAuth & Permissions page into SLACK_BOT_TOKEN"}}
	case err != nil:
		return []finding{{statusFail, "slack", "auth.test at " + apiURL + " did not answer: " + err.Error(),
			"check that this machine reaches Slack (proxy, firewall) and EXCALIBOT_SLACK_API_URL if set"}}
	}
	out := []finding{{statusOK, "slack", fmt.Sprintf("bot token accepted: workspace %s (%s), bot user %s (%s)",
		r.Team, r.TeamID, r.User, r.UserID), ""}}
	if missing := missingScopes(scopes.seen); len(missing) > 0 {
		out = append(out, finding{statusWarn, "slack", "the bot token lacks " + strings.Join(missing, ", ") +
			" (the app was installed from an older manifest): the features that need them fail",
			"paste slack-app-manifest.yaml under the app's App Manifest, then Reinstall to Workspace"})
	}
	if cfg.SlackMode != "events" && cfg.SlackAppToken != "" {
		if _, _, err := api.StartSocketModeContext(ctx); err != nil {
			out = append(out, finding{statusFail, "slack", "apps.connections.open refused the app-level token: " + err.Error(),
				"generate an app-level token with connections:write (Basic Information → App-Level Tokens) into SLACK_APP_TOKEN"})
		} else {
			out = append(out, finding{statusOK, "slack", "app-level token accepted for Socket Mode", ""})
		}
	}
	return out
}

// checkTelegram asks Telegram whether the token is good (getMe).
func checkTelegram(ctx context.Context, cfg config.Config, _ *slog.Logger) []finding {
	if cfg.TelegramToken == "" {
		return []finding{{statusSkip, "telegram", "TELEGRAM_BOT_TOKEN not set", ""}}
	}
	ctx, cancel := context.WithTimeout(ctx, doctorNetTimeout)
	defer cancel()
	apiURL := strings.TrimRight(cfg.TelegramAPIURL, "/")
	if apiURL == "" {
		apiURL = "https://api.telegram.org"
	}
	b, err := tg.New(cfg.TelegramToken, tg.WithSkipGetMe(), tg.WithServerURL(apiURL),
		tg.WithHTTPClient(doctorNetTimeout, &http.Client{Timeout: doctorNetTimeout}))
	if err != nil {
		return []finding{{statusFail, "telegram", "the bot token is not usable: " + err.Error(),
			"copy the token @BotFather gave into TELEGRAM_BOT_TOKEN"}}
	}
	me, err := b.GetMe(ctx)
	switch {
	case errors.Is(err, tg.ErrorUnauthorized), errors.Is(err, tg.ErrorNotFound):
		return []finding{{statusFail, "telegram", "getMe refused the bot token",
			"copy the token @BotFather gave into TELEGRAM_BOT_TOKEN (/token in @BotFather shows it again)"}}
	case err != nil:
		return []finding{{statusFail, "telegram", "getMe at " + apiURL + " did not answer: " + err.Error(),
			"check that this machine reaches Telegram (proxy, firewall) and EXCALIBOT_TELEGRAM_API_URL if set"}}
	}
	out := []finding{{statusOK, "telegram", fmt.Sprintf("bot token accepted: @%s (%d), mode %s", me.Username, me.ID,
		cmp.Or(cfg.TelegramMode, "polling")), ""}}
	// Privacy mode decides what "draw this thread" can read in a group.
	if me.CanReadAllGroupMessages {
		return append(out, finding{statusOK, "telegram", "privacy mode off: the bot sees every group message, so “draw this thread” reads the discussion", ""})
	}
	return append(out, finding{statusOK, "telegram", "privacy mode on: in groups the bot sees only messages for it, so “draw this thread” there has little to read",
		"to draw group discussions: @BotFather → /setprivacy → Disable, then add the bot to the group again"})
}

// checkPublicURL fetches the public URL's /healthz, the way a person's browser or Telegram's
// webhook reaches the server.
func checkPublicURL(ctx context.Context, cfg config.Config, _ *slog.Logger) []finding {
	if cfg.PublicURL == "" {
		return []finding{{statusSkip, "public url", "EXCALIBOT_PUBLIC_URL not set", ""}}
	}
	ctx, cancel := context.WithTimeout(ctx, doctorNetTimeout)
	defer cancel()
	target := strings.TrimRight(cfg.PublicURL, "/") + "/healthz"
	fix := "start `excalibot serve` and make sure EXCALIBOT_PUBLIC_URL reaches it (DNS, reverse proxy, firewall)"
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, target, nil)
	if err != nil {
		return []finding{{statusFail, "public url", err.Error(), "set EXCALIBOT_PUBLIC_URL to an http(s) URL"}}
	}
	resp, err := (&http.Client{Timeout: doctorNetTimeout}).Do(req)
	if err != nil {
		return []finding{{statusFail, "public url", "GET " + target + " did not answer: " + shortNetError(err), fix}}
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(io.LimitReader(resp.Body, 64))
	if resp.StatusCode != http.StatusOK || strings.TrimSpace(string(body)) != "ok" {
		return []finding{{statusFail, "public url", fmt.Sprintf("GET %s answered %s, not excalibot's ok", target, resp.Status), fix}}
	}
	return []finding{{statusOK, "public url", "GET " + target + " answers", ""}}
}

// shortNetError drops the request that the HTTP client repeats in front of the cause.
func shortNetError(err error) string {
	var ue *url.Error
	if errors.As(err, &ue) {
		return ue.Err.Error()
	}
	return err.Error()
}

// oneLine folds an error that spans lines (a server's message, a list of problems) into one.
func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }

// redactWriter replaces every configured secret in what it writes.
type redactWriter struct {
	w io.Writer
	r *strings.Replacer
}

func (rw *redactWriter) Write(p []byte) (int, error) {
	if _, err := io.WriteString(rw.w, rw.r.Replace(string(p))); err != nil {
		return 0, err
	}
	return len(p), nil
}

// scopeHeader keeps the X-OAuth-Scopes header of the answers it carries: Slack names a token's
// scopes there, and auth.test is the cheapest call that shows them.
type scopeHeader struct {
	next http.RoundTripper
	seen string // "" until an answer named the scopes
}

func (s *scopeHeader) RoundTrip(req *http.Request) (*http.Response, error) {
	res, err := s.next.RoundTrip(req)
	if err == nil {
		if h := res.Header.Get("X-OAuth-Scopes"); h != "" {
			s.seen = h
		}
	}
	return res, err
}

// missingScopes are the scopes the Slack adapter needs that header (comma-separated, as Slack
// sends it) does not grant; none when Slack named no scopes.
func missingScopes(header string) []string {
	if strings.TrimSpace(header) == "" {
		return nil
	}
	granted := map[string]bool{}
	for _, s := range strings.Split(header, ",") {
		granted[strings.TrimSpace(s)] = true
	}
	var missing []string
	for _, s := range slackbot.Scopes {
		if !granted[s] {
			missing = append(missing, s)
		}
	}
	return missing
}
