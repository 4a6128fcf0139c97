package config

import (
	"bytes"
	"errors"
	"flag"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

func load(t *testing.T, args, env []string) (*Loaded, error) {
	t.Helper()
	fs := flag.NewFlagSet("test", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	return Load(fs, args, env)
}

func writeFile(t *testing.T, body string, mode os.FileMode) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "excalibot.env")
	if err := os.WriteFile(p, []byte(body), mode); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(p, mode); err != nil { // umask may have narrowed it
		t.Fatal(err)
	}
	return p
}

func TestDefaultsAreValid(t *testing.T) {
	if err := Default().Validate(); err != nil {
		t.Fatalf("Default().Validate() = %v, want nil", err)
	}
}

func TestPrecedence(t *testing.T) {
	file := writeFile(t, "# team settings\nEXCALIBOT_MODEL=from-file\nEXCALIBOT_MAX_TURNS=7\nEXCALIBOT_NUM_CTX=8192\n", 0o600)
	env := []string{"EXCALIBOT_MODEL=from-env", "EXCALIBOT_MAX_TURNS=9", "EXCALIBOT_CONFIG=" + file}
	l, err := load(t, []string{"--model", "from-flag"}, env)
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name    string
		got     any
		want    any
		gotSrc  Source
		wantSrc Source
	}{
		{"model", l.Model, "from-flag", l.Sources["model"], FromFlag},
		{"max-turns", l.MaxTurns, 9, l.Sources["max-turns"], FromEnv},
		{"num-ctx", l.NumCtx, 8192, l.Sources["num-ctx"], FromFile},
		{"render-tabs", l.RenderTabs, 2, l.Sources["render-tabs"], ""},
	}
	for _, tt := range tests {
		if tt.got != tt.want || tt.gotSrc != tt.wantSrc {
			t.Errorf("%s = %v from %q, want %v from %q", tt.name, tt.got, tt.gotSrc, tt.want, tt.wantSrc)
		}
	}
}

func TestOllamaHostForms(t *testing.T) {
	tests := []struct{ in, want string }{
		{"", "http://127.0.0.1:11434"},
		{"0.0.0.0", "http://0.0.0.0:11434"},
		{"gpu-box:1234", "http://gpu-box:1234"},
		{"https://ollama.example.com/", "https://ollama.example.com:443"},
		{"http://box", "http://box:80"},
		{"[::1]", "http://[::1]:11434"},
	}
	for _, tt := range tests {
		var env []string
		if tt.in != "" {
			env = []string{"OLLAMA_HOST=" + tt.in}
		}
		l, err := load(t, nil, env)
		if err != nil {
			t.Fatalf("OLLAMA_HOST=%q: %v", tt.in, err)
		}
		if l.OllamaHost != tt.want {
			t.Errorf("OLLAMA_HOST=%q: got %q, want %q", tt.in, l.OllamaHost, tt.want)
		}
	}
}

func TestValidationNamesEverySetting(t *testing.T) {
	args := []string{"--slack-mode", "carrier-pigeon", "--max-turns", "0", "--render-scale", "9", "--database", "mysql://x"}
	env := []string{"SLACK_BOT_TOKEN=xoxp-user-token", "TELEGRAM_BOT_TOKEN=123:abc", "EXCALIBOT_TELEGRAM_MODE=webhook",
		"EXCALIBOT_SHARE_LINKS=true", "EXCALIBOT_SHARE_URL=ftp://json.example"}
	_, err := load(t, args, env)
	var ve *ValidationError
	if !errors.As(err, &ve) || !errors.Is(err, ErrInvalid) {
		t.Fatalf("err = %v, want a *ValidationError", err)
	}
	want := []string{"slack-mode", "max-turns", "render-scale", "database", "slack-bot-token", "telegram-webhook-secret", "public-url", "share-url"}
	got := map[string]bool{}
	for _, p := range ve.Problems {
		got[p.Setting] = true
		if p.Env == "" || p.Message == "" {
			t.Errorf("problem %+v lacks its variable or message", p)
		}
	}
	for _, w := range want {
		if !got[w] {
			t.Errorf("no problem reported for %s; got %v", w, err)
		}
	}
	if msg := err.Error(); !strings.Contains(msg, "SLACK_BOT_TOKEN") || !strings.Contains(msg, "xoxb-") {
		t.Errorf("message does not say what to fix:\n%s", msg)
	}
}

func TestBadValues(t *testing.T) {
	tests := []struct {
		name string
		args []string
		env  []string
		want string
	}{
		{"not a number", []string{"--max-turns", "many"}, nil, `"many" is not a whole number`},
		{"not a duration", nil, []string{"EXCALIBOT_RUN_TIMEOUT=3 minutes"}, "EXCALIBOT_RUN_TIMEOUT"},
		{"not a bool", []string{"--think", "maybe"}, nil, "not true or false"},
		{"unknown protocol", []string{"--protocol", "magic"}, nil, `--protocol (EXCALIBOT_PROTOCOL): "magic" is not a protocol; use auto`},
		{"unknown protocol in a list", nil, []string{"EXCALIBOT_PROTOCOL=tools,plans"}, `"plans" is not a protocol`},
		{"empty protocol list", []string{"--protocol", " , "}, nil, "--protocol (EXCALIBOT_PROTOCOL): is empty"},
		{"vision model with a space", []string{"--vision-model", "qwen2.5vl 7b"}, nil,
			`--vision-model (EXCALIBOT_VISION_MODEL): is "qwen2.5vl 7b"; it must name one Ollama model`},
		{"vision model as a URL", nil, []string{"EXCALIBOT_VISION_MODEL=http://gpu:11434/qwen2.5vl"}, "the server is --ollama-host"},
		{"image size too small", []string{"--image-size", "100"}, nil, "--image-size (EXCALIBOT_IMAGE_SIZE): is 100; it must be from 256 to 4096 pixels"},
		{"image size not a number", nil, []string{"EXCALIBOT_IMAGE_SIZE=1024px"}, `"1024px" is not a whole number`},
		{"no interruption allowed", nil, []string{"EXCALIBOT_MAX_INTERRUPTIONS=0"}, "--max-interruptions (EXCALIBOT_MAX_INTERRUPTIONS): is 0; it must be at least 1"},
		{"image bytes too few", []string{"--max-image-size", "1000"}, nil, "--max-image-size (EXCALIBOT_MAX_IMAGE_SIZE): is 1000 bytes; it must be at least 65536"},
		{"slack socket without app token", nil, []string{"SLACK_BOT_TOKEN=xoxb-1"}, "SLACK_APP_TOKEN"},
		{"events without secret", []string{"--slack-mode", "events"}, []string{"SLACK_BOT_TOKEN=xoxb-1"}, "SLACK_SIGNING_SECRET"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := load(t, tt.args, tt.env)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("err = %v, want one mentioning %q", err, tt.want)
			}
		})
	}
}

func TestConfigFile(t *testing.T) {
	t.Run("world-readable with a secret is refused", func(t *testing.T) {
		p := writeFile(t, "TELEGRAM_BOT_TOKEN=123:secret-token\n", 0o644)
		_, err := load(t, []string{"--config", p}, nil)
		if err == nil || !strings.Contains(err.Error(), "chmod 600") {
			t.Fatalf("err = %v, want a refusal naming chmod 600", err)
		}
		if strings.Contains(err.Error(), "secret-token") {
			t.Errorf("error leaks the secret: %v", err)
		}
	})
	t.Run("world-readable without secrets is fine", func(t *testing.T) {
		p := writeFile(t, "EXCALIBOT_MODEL='llama3.1:8b'\n", 0o644)
		l, err := load(t, []string{"--config", p}, nil)
		if err != nil {
			t.Fatal(err)
		}
		if l.Model != "llama3.1:8b" {
			t.Errorf("model = %q, want llama3.1:8b (quotes stripped)", l.Model)
		}
	})
	t.Run("unknown key names its line", func(t *testing.T) {
		p := writeFile(t, "\nEXCALIBOT_MODLE=x\n", 0o600)
		_, err := load(t, []string{"--config", p}, nil)
		if err == nil || !strings.Contains(err.Error(), "line 2") || !strings.Contains(err.Error(), "EXCALIBOT_MODLE") {
			t.Fatalf("err = %v, want line 2 and the key", err)
		}
	})
	t.Run("missing file", func(t *testing.T) {
		_, err := load(t, []string{"--config", filepath.Join(t.TempDir(), "nope")}, nil)
		if err == nil || !strings.Contains(err.Error(), "read config file") {
			t.Fatalf("err = %v", err)
		}
	})
}

func TestPrintRedactsSecrets(t *testing.T) {
	env := []string{
		"SLACK_BOT_TOKEN=xoxb-very-secret", "SLACK_APP_TOKEN=xapp-also-secret",
		"EXCALIBOT_DATABASE=postgres://bot:hunter22@db:5432/excalibot",
	}
	l, err := load(t, nil, env)
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	l.Print(&buf)
	out := buf.String()
	for _, secret := range []string{"very-secret", "also-secret", "hunter22"} {
		if strings.Contains(out, secret) {
			t.Errorf("Print leaks %q:\n%s", secret, out)
		}
	}
	for _, want := range []string{"(set, redacted)", "postgres://bot:xxxxx@db:5432/excalibot", "qwen3:8b"} {
		if !strings.Contains(out, want) {
			t.Errorf("Print lacks %q:\n%s", want, out)
		}
	}
	got := l.Secrets()
	if len(got) < 3 || got[0] != "postgres://bot:hunter22@db:5432/excalibot" {
		t.Errorf("Secrets() = %q, want the longest first and the password too", got)
	}
}

func TestStoreTarget(t *testing.T) {
	tests := []struct{ in, kind, target string }{
		{"", "sqlite", ""},
		{"sqlite:/tmp/x.db", "sqlite", "/tmp/x.db"},
		{"postgres://u@h/db", "postgres", "postgres://u@h/db"},
	}
	for _, tt := range tests {
		c := Default()
		c.Database = tt.in
		kind, target, err := c.StoreTarget()
		if err != nil || kind != tt.kind || target != tt.target {
			t.Errorf("StoreTarget(%q) = %q, %q, %v; want %q, %q", tt.in, kind, target, err, tt.kind, tt.target)
		}
	}
}

func TestMissingChat(t *testing.T) {
	c := Default()
	if msg := c.MissingChat(); !strings.Contains(msg, "SLACK_BOT_TOKEN") || !strings.Contains(msg, "TELEGRAM_BOT_TOKEN") {
		t.Errorf("MissingChat() = %q, want both variables named", msg)
	}
	c.TelegramToken = "1:x"
	if msg := c.MissingChat(); msg != "" {
		t.Errorf("MissingChat() with telegram = %q, want empty", msg)
	}
}

func TestProtocols(t *testing.T) {
	tests := []struct {
		args []string
		env  []string
		want []string
	}{
		{nil, nil, []string{"auto"}},
		{[]string{"--protocol", "plan"}, nil, []string{"plan"}},
		{nil, []string{"EXCALIBOT_PROTOCOL=Tools, plan"}, []string{"tools", "plan"}},
		{[]string{"--protocol", "tools"}, []string{"EXCALIBOT_PROTOCOL=plan"}, []string{"tools"}},
	}
	for _, tt := range tests {
		l, err := load(t, tt.args, tt.env)
		if err != nil {
			t.Fatalf("%v %v: %v", tt.args, tt.env, err)
		}
		got, err := l.Protocols()
		if err != nil || strings.Join(got, ",") != strings.Join(tt.want, ",") {
			t.Errorf("%v %v: protocols %v, %v; want %v", tt.args, tt.env, got, err, tt.want)
		}
	}
	var buf strings.Builder
	l, _ := load(t, []string{"--protocol", "plan"}, nil)
	l.Print(&buf)
	if !strings.Contains(buf.String(), "protocol") || !regexp.MustCompile(`(?m)^protocol\s+plan\s+flag$`).MatchString(buf.String()) {
		t.Errorf("config printout lacks the protocol:\n%s", buf.String())
	}
}

func TestLoadOnlyNamedFlags(t *testing.T) {
	fs := flag.NewFlagSet("draw", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	l, err := Load(fs, []string{"--model", "m:1"}, []string{"EXCALIBOT_LISTEN=127.0.0.1:9"}, "model", "ollama-host")
	if err != nil {
		t.Fatal(err)
	}
	if l.Model != "m:1" || l.Listen != "127.0.0.1:9" {
		t.Errorf("model %q, listen %q; want m:1 from the flag and 127.0.0.1:9 from the environment", l.Model, l.Listen)
	}
	var got []string
	fs.VisitAll(func(f *flag.Flag) { got = append(got, f.Name) })
	if want := "config model ollama-host"; strings.Join(got, " ") != want {
		t.Errorf("flags %q, want %q", strings.Join(got, " "), want)
	}

	fs = flag.NewFlagSet("draw", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	if _, err := Load(fs, []string{"--slack-bot-token", "xoxb-1"}, nil, "model"); err == nil ||
		!strings.Contains(err.Error(), "flag provided but not defined: -slack-bot-token") {
		t.Errorf("a setting the command does not take: err %v, want flag provided but not defined", err)
	}

	fs = flag.NewFlagSet("draw", flag.ContinueOnError)
	if _, err := Load(fs, nil, nil, "modle"); err == nil || err.Error() != `no setting named "modle"` {
		t.Errorf("unknown setting name: err %v, want no setting named \"modle\"", err)
	}
}

func TestVisionSettings(t *testing.T) {
	l, err := load(t, nil, []string{"EXCALIBOT_VISION_MODEL=qwen2.5vl:7b", "EXCALIBOT_IMAGE_SIZE=768"})
	if err != nil {
		t.Fatal(err)
	}
	if l.VisionModel != "qwen2.5vl:7b" || l.ImageSize != 768 || l.MaxImageSize != 20<<20 {
		t.Errorf("vision model %q, image size %d, max image size %d; want qwen2.5vl:7b, 768 and the default 20 MB",
			l.VisionModel, l.ImageSize, l.MaxImageSize)
	}
	var buf strings.Builder
	l.Print(&buf)
	if !regexp.MustCompile(`(?m)^vision-model\s+qwen2\.5vl:7b\s+env$`).MatchString(buf.String()) {
		t.Errorf("config printout lacks the vision model:\n%s", buf.String())
	}
	if d := Default(); d.VisionModel != "" || d.ImageSize != 1024 {
		t.Errorf("defaults: vision model %q, image size %d; want none and 1024", d.VisionModel, d.ImageSize)
	}
}
