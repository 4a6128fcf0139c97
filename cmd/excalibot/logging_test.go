package main

import (
	"bytes"
	"errors"
	"strings"
	"testing"

	"github.com/excalibot/excalibot/config"
)

func TestLoggerRedactsSecrets(t *testing.T) {
	cfg := config.Default()
	cfg.TelegramToken = "123456:AAE-secret-token"
	cfg.Database = "postgres://bot:pg-password@db/excalibot"
	var buf bytes.Buffer
	log := newLogger(&buf, cfg).With("base", "https://api.telegram.org/bot123456:AAE-secret-token/")
	log.Error("request to https://api.telegram.org/bot123456:AAE-secret-token/getMe failed",
		"err", errors.New("dial postgres://bot:pg-password@db/excalibot: refused"),
		"detail", "pg-password")
	out := buf.String()
	for _, s := range []string{"AAE-secret-token", "pg-password"} {
		if strings.Contains(out, s) {
			t.Errorf("log leaks %q:\n%s", s, out)
		}
	}
	if !strings.Contains(out, "[redacted]") {
		t.Errorf("log has no redaction marks:\n%s", out)
	}
}
