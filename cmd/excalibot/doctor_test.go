package main

import (
	"bytes"
	"context"
	"errors"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/excalibot/excalibot/agent/ollamafake"
	slackbot "github.com/excalibot/excalibot/bot/slack"
	"github.com/excalibot/excalibot/bot/slack/slackfake"
	"github.com/excalibot/excalibot/bot/telegram/tgfake"
	"github.com/excalibot/excalibot/config"
	"github.com/excalibot/excalibot/internal/pgtest"
)

const doctorTgToken = "424242:doctor-token"

// doctorWorld is a deployment whose every part answers: a fake Ollama with a tool model, fake
// Slack and Telegram, real Chromium, SQLite in a temp dir, and a running serve at the public URL.
type doctorWorld struct {
	cfg    config.Config
	ollama *ollamafake.Server
}

func newDoctorWorld(t *testing.T) *doctorWorld {
	t.Helper()
	chrome := chromium(t)
	w := &doctorWorld{ollama: ollamafake.New(t, ollamafake.Config{
		Models: []string{ollamafake.ToolModel, ollamafake.ToolLessModel}})}
	sl := slackfake.New(t, slackfake.Config{})
	tgf := tgfake.New(doctorTgToken)
	t.Cleanup(tgf.Close)

	// The server the public URL reaches: serve itself, without chat platforms or Chromium.
	srvCfg := testConfig(t)
	srvCfg.OllamaHost, srvCfg.Model = w.ollama.URL(), ollamafake.ToolModel
	srvCfg.ChromePath = filepath.Join(t.TempDir(), "no-chromium")
	addr, stop := startServe(t, srvCfg, &lockedBuffer{})
	t.Cleanup(stop)

	cfg := config.Default()
	cfg.OllamaHost, cfg.Model = w.ollama.URL(), ollamafake.ToolModel
	cfg.ChromePath = chrome
	cfg.Database = "sqlite:" + filepath.Join(t.TempDir(), "bot.db")
	cfg.SlackBotToken, cfg.SlackAppToken, cfg.SlackAPIURL = sl.Config().BotToken, sl.Config().AppToken, sl.APIURL()
	cfg.TelegramToken, cfg.TelegramAPIURL = doctorTgToken, tgf.URL
	cfg.PublicURL = "http://" + addr
	w.cfg = cfg
	return w
}

func runDoctor(t *testing.T, cfg config.Config) (int, string) {
	t.Helper()
	var out bytes.Buffer
	code := doctor(context.Background(), cfg, "", nil, &out)
	return code, out.String()
}

// lineOf returns the report's lines for a check.
func lineOf(report, name string) []string {
	var out []string
	re := regexp.MustCompile(`^(ok|warn|FAIL|skip)\s+` + regexp.QuoteMeta(name) + `\s{2}`)
	for _, l := range strings.Split(report, "\n") {
		if re.MatchString(l) {
			out = append(out, l)
		}
	}
	return out
}

func TestDoctor(t *testing.T) {
	w := newDoctorWorld(t)
	secrets := []string{w.cfg.SlackBotToken, w.cfg.SlackAppToken, doctorTgToken, "doctor-token"}

	code, report := runDoctor(t, w.cfg)
	if code != 0 {
		t.Fatalf("all green: exit %d, want 0:\n%s", code, report)
	}
	for _, want := range []string{
		"ok    settings    valid",
		"ok    ollama      Ollama 0.17.4 at " + w.ollama.URL(),
		"ok    model       qwen3:8b: completion, tools, thinking; 40960 tokens of context; num_ctx 16384 (qwen3 8.2B Q4_K_M)",
		"ok    renderer    Chromium at " + w.cfg.ChromePath + " started in ",
		"ok    store       SQLite " + strings.TrimPrefix(w.cfg.Database, "sqlite:") + " opens and answers",
		"ok    slack       bot token accepted: workspace Fake Workspace (T0FAKE), bot user excalibot (U0BOT)",
		"ok    slack       app-level token accepted for Socket Mode",
		"ok    telegram    bot token accepted: @draw_bot (424242), mode polling",
		"ok    telegram    privacy mode on: in groups the bot sees only messages for it, so “draw this thread” there has little to read — to draw group discussions: @BotFather → /setprivacy → Disable, then add the bot to the group again",
		"ok    public url  GET " + w.cfg.PublicURL + "/healthz answers",
		"every check passed",
	} {
		if !strings.Contains(report, want) {
			t.Errorf("report lacks %q:\n%s", want, report)
		}
	}
	if !regexp.MustCompile(`rendered a test picture in \d+ ms \(\d{3,} bytes\)`).MatchString(report) {
		t.Errorf("renderer line lacks the time and size:\n%s", report)
	}

	noChrome := filepath.Join(t.TempDir(), "no-chromium")
	// A file where the database's directory should be: no store opens there.
	notDir := filepath.Join(t.TempDir(), "not-a-dir")
	if err := os.WriteFile(notDir, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	badDB := filepath.Join(notDir, "bot.db")
	tests := []struct {
		name  string
		edit  func(*config.Config)
		check string
		want  string // the line's detail and fix
		code  int
	}{
		{"ollama down", func(c *config.Config) { c.OllamaHost = "http://127.0.0.1:1" }, "ollama",
			"FAIL  ollama      Ollama is not reachable at http://127.0.0.1:1 — start it with `ollama serve` or set OLLAMA_HOST to where it runs", 1},
		{"model not pulled", func(c *config.Config) { c.Model = "llama9:1b" }, "model",
			"FAIL  model       model llama9:1b is not pulled into Ollama at " + w.ollama.URL() + " — run `ollama pull llama9:1b`", 1},
		{"model without tools", func(c *config.Config) { c.Model = ollamafake.ToolLessModel }, "model",
			"warn  model       gemma3:4b cannot call tools: it will draw through typed plans (EXCALIBOT_PROTOCOL=plan)", 0},
		{"num_ctx too big", func(c *config.Config) { c.NumCtx = 65536 }, "model",
			"warn  model       num_ctx 65536 is more than the 40960 tokens of context qwen3:8b was trained for; set EXCALIBOT_NUM_CTX to 40960 or less", 0},
		{"invalid Slack token", func(c *config.Config) { c.SlackBotToken = "xoxb-not-the-token" }, "slack",
			"FAIL  slack       auth.test refused the bot token: invalid_auth — copy the Bot User OAuth Token (xoxb-…) from the app's OAuth & Permissions page into SLACK_BOT_TOKEN", 1},
		{"invalid Slack app token", func(c *config.Config) { c.SlackAppToken = "xapp-not-the-token" }, "slack",
			"FAIL  slack       apps.connections.open refused the app-level token: invalid_auth — generate an app-level token", 1},
		{"invalid Telegram token", func(c *config.Config) { c.TelegramToken = "424242:not-the-token" }, "telegram",
			"FAIL  telegram    getMe refused the bot token — copy the token @BotFather gave into TELEGRAM_BOT_TOKEN", 1},
		{"public URL not answering", func(c *config.Config) { c.PublicURL = "http://127.0.0.1:1" }, "public url",
			"FAIL  public url  GET http://127.0.0.1:1/healthz did not answer: dial tcp 127.0.0.1:1: connect: connection refused — start `excalibot serve` and make sure EXCALIBOT_PUBLIC_URL reaches it", 1},
		{"public URL not excalibot", func(c *config.Config) { c.PublicURL = w.ollama.URL() }, "public url",
			"FAIL  public url  GET " + w.ollama.URL() + "/healthz answered 404 Not Found, not excalibot's ok", 1},
		{"Chromium missing", func(c *config.Config) { c.ChromePath = noChrome }, "renderer",
			"FAIL  renderer    Chromium at " + noChrome + " not found — install it (Debian/Ubuntu: apt-get install chromium) or set EXCALIBOT_CHROME to its path", 1},
		{"store unopenable", func(c *config.Config) { c.Database = "sqlite:" + badDB }, "store",
			"FAIL  store       SQLite " + badDB + ": open sqlite store: create directory: mkdir " + notDir + ": not a directory — make sure the file's directory exists", 1},
		{"nothing configured", func(c *config.Config) { c.SlackBotToken, c.TelegramToken, c.PublicURL = "", "", "" }, "slack",
			"skip  slack       SLACK_BOT_TOKEN not set", 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg := w.cfg
			tt.edit(&cfg)
			code, report := runDoctor(t, cfg)
			if code != tt.code {
				t.Errorf("exit %d, want %d:\n%s", code, tt.code, report)
			}
			lines := lineOf(report, tt.check)
			found := false
			for _, l := range lines {
				if strings.Contains(l, tt.want) {
					found = true
				}
			}
			if !found {
				t.Errorf("no line %q:\n%s", tt.want, report)
			}
			// Only the broken part fails.
			if n := strings.Count(report, "FAIL  "); n != tt.code {
				t.Errorf("%d failing lines, want %d:\n%s", n, tt.code, report)
			}
			for _, s := range secrets {
				if strings.Contains(report, s) {
					t.Errorf("report shows the secret %q:\n%s", s, report)
				}
			}
		})
	}
}

// The command reads the settings as serve does; an invalid setting is a failing line, and the
// other checks still run.
func TestDoctorCommand(t *testing.T) {
	fake := ollamafake.New(t, ollamafake.Config{})
	t.Setenv("OLLAMA_HOST", fake.URL())
	t.Setenv("EXCALIBOT_DATABASE", "sqlite:"+filepath.Join(t.TempDir(), "bot.db"))
	t.Setenv("SLACK_BOT_TOKEN", "")
	t.Setenv("TELEGRAM_BOT_TOKEN", "")
	t.Setenv("EXCALIBOT_PUBLIC_URL", "")
	var out, errw bytes.Buffer
	code := run(context.Background(), []string{"doctor", "--num-ctx", "100", "--chrome", filepath.Join(t.TempDir(), "no-chromium")}, &out, &errw)
	if code != 1 {
		t.Errorf("exit %d, want 1\nstdout %s\nstderr %s", code, out.String(), errw.String())
	}
	for _, want := range []string{
		"FAIL  settings    ", "num-ctx",
		"ok    ollama      Ollama 0.17.4 at " + fake.URL(),
		"FAIL  renderer    Chromium at ",
		"ok    store       SQLite ",
		"skip  telegram    TELEGRAM_BOT_TOKEN not set",
		"skip  public url  EXCALIBOT_PUBLIC_URL not set",
		"2 checks failed",
	} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("report lacks %q:\n%s", want, out.String())
		}
	}
	if code := run(context.Background(), []string{"doctor", "--no-such-flag"}, &out, &errw); code != 2 {
		t.Errorf("unknown flag: exit %d, want 2", code)
	}
}

// The store check opens PostgreSQL as serve does; the password never shows.
func TestDoctorStorePostgres(t *testing.T) {
	ctx := t.Context()
	pg, err := pgtest.Start(ctx)
	if errors.Is(err, pgtest.ErrNoServer) {
		t.Skip(err)
	}
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = pg.Stop() })
	dsn, err := pg.CreateDB(ctx)
	if err != nil {
		t.Fatal(err)
	}
	cfg := config.Default()
	cfg.Database = pgURL(t, dsn)
	got := checkStore(ctx, cfg, quietLog())
	if len(got) != 2 || got[0].status != statusOK || !strings.HasPrefix(got[0].detail, "PostgreSQL postgres://") ||
		got[1].name != "clock" || got[1].status != statusOK {
		t.Errorf("reachable database: got %+v, want ok naming PostgreSQL, and its clock agreeing with this machine's", got)
	}
	u, err := url.Parse(cfg.Database)
	if err != nil {
		t.Fatal(err)
	}
	u.User = url.UserPassword(u.User.Username(), "wrong-password-1")
	u.Host, u.RawQuery = "127.0.0.1:1", ""
	cfg.Database = u.String()
	got = checkStore(ctx, cfg, quietLog())
	if len(got) != 1 || got[0].status != statusFail || !strings.Contains(got[0].fix, "EXCALIBOT_DATABASE") ||
		strings.Contains(got[0].detail, "wrong-password-1") {
		t.Errorf("unreachable database: got %+v, want FAIL with the fix and no password", got)
	}
}

// TestDoctorSlackScopes: a bot token installed from an older manifest is told which scopes it
// lacks and how to mend it; one with every scope, or a Slack that names none, gets no warning.
func TestDoctorSlackScopes(t *testing.T) {
	old := slices.DeleteFunc(slices.Clone(slackbot.Scopes), func(s string) bool { return s == "assistant:write" || s == "users:read" })
	for _, tc := range []struct {
		name   string
		scopes []string
		want   string // "" for no warning
	}{
		{"an older install", old, "warn  slack       the bot token lacks assistant:write, users:read (the app was installed from an older manifest): the features that need them fail — paste slack-app-manifest.yaml under the app's App Manifest, then Reinstall to Workspace"},
		{"every scope", append(slices.Clone(slackbot.Scopes), "commands"), ""},
		{"scopes not named", nil, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			sl := slackfake.New(t, slackfake.Config{Scopes: tc.scopes})
			cfg := config.Default()
			cfg.SlackBotToken, cfg.SlackAPIURL = sl.Config().BotToken, sl.APIURL()
			var lines []string
			for _, f := range checkSlack(context.Background(), cfg, nil) {
				lines = append(lines, f.line())
			}
			got := strings.Join(lines, "\n")
			if tc.want == "" && strings.Contains(got, "warn") || tc.want != "" && !strings.Contains(got, tc.want) {
				t.Errorf("slack lines:\n%s\nwant %q", got, tc.want)
			}
		})
	}
}

// TestDoctorTelegramPrivacy: with privacy mode off the report says the bot reads group
// discussions, and gives no advice.
func TestDoctorTelegramPrivacy(t *testing.T) {
	tgf := tgfake.New(doctorTgToken)
	t.Cleanup(tgf.Close)
	tgf.SetPrivacy(false)
	cfg := config.Default()
	cfg.TelegramToken, cfg.TelegramAPIURL = doctorTgToken, tgf.URL
	var lines []string
	for _, f := range checkTelegram(context.Background(), cfg, nil) {
		lines = append(lines, f.line())
	}
	if want := "ok    telegram    privacy mode off: the bot sees every group message, so “draw this thread” reads the discussion"; !slices.Contains(lines, want) {
		t.Errorf("telegram lines %q, want %q", lines, want)
	}
}

// TestClockFinding: doctor warns when this machine's clock is more than a few seconds off the
// database's, either way, and says how to fix it.
func TestClockFinding(t *testing.T) {
	for _, tc := range []struct {
		skew time.Duration
		want string
	}{
		{0, statusOK},
		{-2 * time.Second, statusOK},
		{3 * time.Second, statusOK},
		{3*time.Second + time.Millisecond, statusWarn},
		{-10 * time.Second, statusWarn},
	} {
		f := clockFinding(tc.skew)
		if f.status != tc.want || f.status == statusWarn && (f.fix == "" || !strings.Contains(f.detail, "off the database's")) {
			t.Errorf("clockFinding(%s) = %+v, want %s with a fix when it warns", tc.skew, f, tc.want)
		}
	}
}
