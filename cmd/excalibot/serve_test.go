package main

import (
	"bytes"
	"context"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/excalibot/excalibot/config"
)

// testConfig is a config for serve on a free port with SQLite in a temp dir.
func testConfig(t *testing.T) config.Config {
	t.Helper()
	cfg := config.Default()
	cfg.Listen = "127.0.0.1:0"
	cfg.Database = "sqlite:" + filepath.Join(t.TempDir(), "bot.db")
	cfg.OllamaHost = "http://127.0.0.1:1" // nothing listens there
	return cfg
}

// startServe opens and runs the bot as serve does, in the background, and returns its HTTP address
// and a stop function that waits for it to end.
func startServe(t testing.TB, cfg config.Config, logs io.Writer) (string, func()) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	m := newMain(cfg, slog.New(slog.NewTextHandler(logs, nil)))
	done := make(chan error, 1)
	go func() {
		if err := m.Open(ctx); err != nil {
			done <- err
			return
		}
		done <- m.Run(ctx)
	}()
	select {
	case <-m.Ready():
		return m.Addr(), func() {
			cancel()
			if err := <-done; err != nil {
				t.Errorf("serve returned %v", err)
			}
			if err := m.Close(); err != nil {
				t.Errorf("close: %v", err)
			}
		}
	case err := <-done:
		cancel()
		m.Close()
		t.Fatalf("serve ended before it was ready: %v", err)
	case <-time.After(3 * time.Minute): // Chromium starts slowly on a busy 2-core machine
		cancel()
		t.Fatal("serve did not get ready")
	}
	return "", nil
}

func TestServeWithoutChatCredentials(t *testing.T) {
	if _, err := exec.LookPath("chromium"); err != nil {
		t.Skip("chromium is not installed (apt-get install chromium); .ci/run installs it")
	}
	var logs bytes.Buffer
	addr, stop := startServe(t, testConfig(t), &logs)
	for _, path := range []string{"/healthz", "/readyz"} {
		resp, err := http.Get("http://" + addr + path)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 200 {
			t.Errorf("GET %s = %d %s, want 200", path, resp.StatusCode, body)
		}
	}
	// Ollama is down (testConfig points at a closed port): the home page says so with the fix,
	// without the address, and the other parts still read ready.
	resp, err := http.Get("http://" + addr + "/")
	if err != nil {
		t.Fatal(err)
	}
	page, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	for _, want := range []string{
		`Health: <span class="bad">drawing is not ready</span>`,
		`<li>store: <span class="ok">ready</span></li>`, `<li>renderer: <span class="ok">ready</span></li>`,
		`<li>Ollama: <span class="bad">not reachable</span></li>`,
		"Ollama does not answer</span>: start it (`ollama serve`) or set OLLAMA_HOST to where it runs",
	} {
		if !strings.Contains(string(page), want) {
			t.Errorf("the home page lacks %q:\n%s", want, page)
		}
	}
	if strings.Contains(string(page), "127.0.0.1:1") {
		t.Errorf("the home page shows Ollama's address:\n%s", page)
	}
	stop()
	if !strings.Contains(logs.String(), "SLACK_BOT_TOKEN") || !strings.Contains(logs.String(), "TELEGRAM_BOT_TOKEN") {
		t.Errorf("log does not say which settings to set:\n%s", logs.String())
	}
}

func TestLocalURL(t *testing.T) {
	tests := []struct{ addr, want string }{
		{"0.0.0.0:8080", "http://localhost:8080"},
		{"[::]:8080", "http://localhost:8080"},
		{"127.0.0.1:9000", "http://127.0.0.1:9000"},
		{"[::1]:9000", "http://[::1]:9000"},
	}
	for _, tt := range tests {
		addr, err := net.ResolveTCPAddr("tcp", tt.addr)
		if err != nil {
			t.Fatal(err)
		}
		if got := localURL(addr); got != tt.want {
			t.Errorf("localURL(%s) = %s, want %s", tt.addr, got, tt.want)
		}
	}
}
