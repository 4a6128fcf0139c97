package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"

	"github.com/excalibot/excalibot/config"
)

// TestLoggerRedactsErrorPaths logs what failing calls really produce — net/http errors that quote
// a Bot API URL with the token in its path, a token escaped into a query string, errors nested in
// groups and in WithAttrs, values that are not strings — and checks no configured secret, nor a
// proxy password in an API URL, survives in any form.
func TestLoggerRedactsErrorPaths(t *testing.T) {
	cfg := config.Default()
	cfg.TelegramToken = "123456789:AAE-tg_secret-token"
	cfg.SlackBotToken = "xoxb-1111-2222-slackbotsecret"
	cfg.SlackAppToken = "xapp-1-A111-333-slackappsecret"
	cfg.SlackSigningSecret = "8f742231b10e8888abcd99yyyzzz85a5"
	cfg.ChatSecret = "chat-page-secret"
	cfg.Database = "postgres://bot:pg-password@db/excalibot"
	cfg.SlackAPIURL = "https://relay:proxy-password@slack-proxy.example/api/"
	var buf bytes.Buffer
	log := newLogger(&buf, cfg)

	dead := httptest.NewServer(http.NotFoundHandler())
	base := dead.URL
	dead.Close()
	_, getErr := http.Get(base + "/bot" + cfg.TelegramToken + "/getMe")
	if getErr == nil || !strings.Contains(getErr.Error(), cfg.TelegramToken) {
		t.Fatalf("the net/http error %v does not quote the token; the test proves nothing", getErr)
	}
	form := url.Values{"token": {cfg.SlackBotToken}, "secret": {cfg.TelegramToken}}
	log.Error("telegram getMe failed", "err", getErr)
	log.Warn("slack call failed", "err", fmt.Errorf("post %s?%s: %w", cfg.SlackAPIURL+"chat.postMessage", form.Encode(), context.DeadlineExceeded))
	log.With("client", slog.GroupValue(slog.String("base", base+"/bot"+cfg.TelegramToken))).
		WithGroup("socket").Info("connected", "app_token", cfg.SlackAppToken, "url", "wss://x/?ticket="+url.QueryEscape(cfg.SlackAppToken))
	log.Info("settings", "value", struct{ Secret, Sig string }{cfg.ChatSecret, cfg.SlackSigningSecret}, "db", errors.New("dial "+cfg.Database+": refused"))
	log.Error("path " + url.PathEscape(cfg.TelegramToken) + " and query " + url.QueryEscape(cfg.TelegramToken))

	out := buf.String()
	for _, s := range []string{"AAE-tg_secret-token", "AAE-tg_secret", "slackbotsecret", "slackappsecret", "8f742231b10e", "chat-page-secret", "pg-password", "proxy-password"} {
		if strings.Contains(out, s) {
			t.Errorf("log leaks %q:\n%s", s, out)
		}
	}
	if n := strings.Count(out, "[redacted]"); n < 10 {
		t.Errorf("only %d redaction marks:\n%s", n, out)
	}
}
