package main

import (
	"bytes"
	"context"
	"strings"
	"testing"
)

// runHelp runs excalibot with args and returns the exit code, stdout and stderr.
func runHelp(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	var stdout, stderr bytes.Buffer
	code := run(context.Background(), args, &stdout, &stderr)
	return code, stdout.String(), stderr.String()
}

func TestHelpListsACommandsOwnFlags(t *testing.T) {
	platform := []string{"-slack-bot-token", "-slack-mode", "-telegram-token", "-telegram-mode", "-listen", "-database"}
	for _, tc := range []struct {
		cmd        string
		has, lacks []string
	}{
		{"draw", []string{"-model", "-ollama-host", "-max-turns", "-chrome", "-o", "-q"}, platform},
		{"chat", []string{"-model", "-render-timeout", "-in"}, platform},
		{"eval", []string{"-model", "-protocol", "-suite"}, platform},
		{"serve", platform, nil},
		{"config", platform, nil},
		{"doctor", platform, nil},
		{"render", []string{"-chrome"}, platform},
	} {
		code, _, stderr := runHelp(t, tc.cmd, "--help")
		if code != 0 {
			t.Errorf("%s --help: exit %d, want 0\n%s", tc.cmd, code, stderr)
		}
		if !strings.HasPrefix(stderr, "usage: excalibot "+tc.cmd) {
			t.Errorf("%s --help begins %q, want usage: excalibot %s", tc.cmd, oneLine(strings.SplitN(stderr, "\n", 2)[0]), tc.cmd)
		}
		for _, f := range tc.has {
			if !strings.Contains(stderr, "  "+f+" ") && !strings.Contains(stderr, "  "+f+"\t") {
				t.Errorf("%s --help lacks %s", tc.cmd, f)
			}
		}
		for _, f := range tc.lacks {
			if strings.Contains(stderr, "  "+f+" ") {
				t.Errorf("%s --help lists %s, which %s does not use", tc.cmd, f, tc.cmd)
			}
		}
	}
}

func TestHelpCommandIsTheCommandsHelp(t *testing.T) {
	for _, c := range commands {
		if c.name == "help" {
			continue
		}
		code, out, errText := runHelp(t, "help", c.name)
		wantCode, wantOut, wantErr := runHelp(t, c.name, "--help")
		if code != 0 || code != wantCode || out != wantOut || errText != wantErr {
			t.Errorf("help %s: exit %d, %d bytes out, %d err; %s --help: exit %d, %d, %d; want the same, exit 0",
				c.name, code, len(out), len(errText), c.name, wantCode, len(wantOut), len(wantErr))
		}
		if !strings.HasPrefix(errText, "usage: excalibot "+c.name) {
			t.Errorf("help %s begins %q, want usage: excalibot %s", c.name, oneLine(strings.SplitN(errText, "\n", 2)[0]), c.name)
		}
	}
}

func TestHelpErrors(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"help", "nope"}, `excalibot help: unknown command "nope"; the commands are help, serve,`},
		{[]string{"help", "draw", "serve"}, "excalibot help: takes one command, got 2 arguments"},
	} {
		code, out, stderr := runHelp(t, tc.args...)
		if code != 2 || !strings.HasPrefix(stderr, tc.want) || out != "" {
			t.Errorf("%q: exit %d, stderr %q, stdout %q; want exit 2 and %q", tc.args, code, stderr, out, tc.want)
		}
	}
	code, out, _ := runHelp(t, "help")
	if code != 0 || !strings.Contains(out, "  draw ") || !strings.Contains(out, "help COMMAND") {
		t.Errorf("help: exit %d, stdout %q; want 0 and the list of commands", code, out)
	}
}
