package config

import (
	"os"
	"strings"
	"testing"
)

// TestConfigFilePermissions: a config file holding a secret (a token, a signing secret, a
// database URL with a password) is refused unless only its owner may read and write it; the
// refusal names the file and the fix, and never the secret.
func TestConfigFilePermissions(t *testing.T) {
	for _, tc := range []struct {
		name    string
		content string
		mode    os.FileMode
		refused bool
	}{
		{"owner only", "TELEGRAM_BOT_TOKEN=123:secret-token\n", 0o600, false},
		{"owner read-only", "SLACK_BOT_TOKEN=xoxb-secret-token\nSLACK_APP_TOKEN=xapp-secret-token\n", 0o400, false},
		{"group-readable", "TELEGRAM_BOT_TOKEN=123:secret-token\n", 0o640, true},
		{"group-writable", "SLACK_SIGNING_SECRET=secret-token\n", 0o620, true},
		{"world-readable", "SLACK_BOT_TOKEN=xoxb-secret-token\n", 0o604, true},
		{"database password, group-readable", "EXCALIBOT_DATABASE=postgres://bot:secret-token@db/x\n", 0o640, true},
		{"no secrets, group- and world-readable", "EXCALIBOT_MODEL=qwen3:8b\n", 0o644, false},
		{"secret key left empty", "TELEGRAM_BOT_TOKEN=\nEXCALIBOT_MODEL=qwen3:8b\n", 0o644, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := writeFile(t, tc.content, tc.mode)
			_, err := load(t, []string{"--config", p}, nil)
			if !tc.refused {
				if err != nil {
					t.Fatalf("refused: %v", err)
				}
				return
			}
			if err == nil {
				t.Fatalf("mode %v accepted, want a refusal", tc.mode)
			}
			for _, want := range []string{p, "chmod 600 " + p} {
				if !strings.Contains(err.Error(), want) {
					t.Errorf("error %q does not name %q", err, want)
				}
			}
			if strings.Contains(err.Error(), "secret-token") {
				t.Errorf("error leaks the secret: %v", err)
			}
		})
	}
}

func TestConfigFileTooLarge(t *testing.T) {
	p := writeFile(t, "# "+strings.Repeat("x", maxConfigFile)+"\n", 0o600)
	if _, err := load(t, []string{"--config", p}, nil); err == nil || !strings.Contains(err.Error(), "is over") {
		t.Fatalf("err = %v, want a refusal of an oversized config file", err)
	}
}

// TestURLPasswordsStayHidden: a password in an API URL (a proxy in front of Slack) is redacted in
// `excalibot config` and listed for log redaction; OLLAMA_HOST with one is refused without
// repeating it, since the Ollama client has no way to send it.
func TestURLPasswordsStayHidden(t *testing.T) {
	l, err := load(t, []string{"--slack-api-url", "https://relay:proxy-password@slack-proxy.example/api/"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	var out strings.Builder
	l.Print(&out)
	if strings.Contains(out.String(), "proxy-password") {
		t.Errorf("config printout shows the proxy password:\n%s", out.String())
	}
	found := false
	for _, s := range l.Secrets() {
		found = found || s == "proxy-password"
	}
	if !found {
		t.Errorf("Secrets() = %q lacks the proxy password", l.Secrets())
	}
	for _, host := range []string{"http://bot:ollama-pass@gpu:11434", "bot:ollama-pass@gpu:11434", "https://bot:ollama-pass@gpu.example/ollama"} {
		_, err := load(t, []string{"--ollama-host", host}, nil)
		if err == nil || !strings.Contains(err.Error(), "user name or password") {
			t.Errorf("%s: err = %v, want a refusal", host, err)
		} else if strings.Contains(err.Error(), "ollama-pass") {
			t.Errorf("%s: the refusal repeats the password: %v", host, err)
		}
	}
}
