package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/excalibot/excalibot/bot"
	"github.com/excalibot/excalibot/bot/agentdraw"
	"github.com/excalibot/excalibot/diagram/mermaid"
	"github.com/excalibot/excalibot/render"
	"github.com/excalibot/excalibot/scene"
	"github.com/excalibot/excalibot/tools"
)

func TestMermaidCommandFlags(t *testing.T) {
	for _, tt := range []struct {
		name     string
		args     []string
		wantCode int
		wantErr  string
	}{
		{"no input", []string{}, 2, "usage: excalibot mermaid"},
		{"two inputs", []string{"a.mmd", "b.mmd"}, 2, "one input file only"},
		{"stdin without -o", []string{"-"}, 2, "-o is required"},
		{"missing file", []string{filepath.Join(t.TempDir(), "nope.mmd")}, 1, "read"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			code := cmdMermaid(context.Background(), tt.args, &stdout, &stderr)
			if code != tt.wantCode || !strings.Contains(stderr.String(), tt.wantErr) {
				t.Errorf("code %d, stderr %q; want code %d and %q", code, stderr.String(), tt.wantCode, tt.wantErr)
			}
		})
	}
}

// TestMermaidWiring runs the real renderer through both paths serve wires: the agent's tool and the
// bot's Mermaid messages, and the subcommand.
func TestMermaidWiring(t *testing.T) {
	if _, err := exec.LookPath("chromium"); err != nil {
		t.Skip("skipping: needs Chromium (apt-get install chromium)")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	r, err := render.New(ctx, render.Config{Tabs: 1, RenderTimeout: time.Minute}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	conv := r.Converter()

	// The tool: a flowchart beside an existing box, then edited by another tool.
	set := tools.New(nil, tools.Limits{})
	set.SetMermaid(conv)
	res := set.Call(ctx, "batch_create_elements", json.RawMessage(`{"elements":[{"id":"note","type":"rectangle","x":0,"y":0,"text":"Notes"}]}`))
	if res.IsError {
		t.Fatal(res.Text)
	}
	res = set.Call(ctx, "create_from_mermaid", json.RawMessage(`{"mermaid":"flowchart LR\n  api[API] -->|SQL| db[(Database)]"}`))
	if res.IsError || !strings.Contains(res.Text, `api "API"`) {
		t.Fatalf("create_from_mermaid: %s", res.Text)
	}
	if res = set.Call(ctx, "update_element", json.RawMessage(`{"id":"api","backgroundColor":"blue"}`)); res.IsError {
		t.Fatalf("update_element on a converted shape: %s", res.Text)
	}
	sc := set.Scene()
	if got := sc.LabelText("db"); got != "Database" {
		t.Errorf("label of db = %q, want Database", got)
	}
	res = set.Call(ctx, "create_from_mermaid", json.RawMessage(`{"mermaid":"flowchart LR\n  A[Start --> B"}`))
	if !res.IsError || !strings.Contains(res.Text, "line 2") || !strings.Contains(res.Text, "Hint:") {
		t.Errorf("syntax error: %s", res.Text)
	}

	// The bot's drawer: a fenced diagram onto a stored scene; a syntax error as a *mermaid.Error.
	d := agentdraw.New(nil, agentdraw.Options{Mermaid: conv, Limits: tools.Limits{MaxElements: 500}}, nil)
	out, err := d.Draw(ctx, bot.DrawRequest{Prompt: "```mermaid\nsequenceDiagram\n  Alice->>Bob: hi\n```", Scene: sc.Clone(), Mermaid: true})
	if err != nil {
		t.Fatal(err)
	}
	if next := out.Scene; next.Len() <= sc.Len() || !strings.Contains(out.Summary, "sequence") {
		t.Errorf("drawn scene: %d elements (was %d), summary %q", next.Len(), sc.Len(), out.Summary)
	}
	_, err = d.Draw(ctx, bot.DrawRequest{Prompt: "sequenceDiagram\n  Alice->>Bob hi", Scene: sc.Clone(), Mermaid: true})
	var me *mermaid.Error
	if !errors.As(err, &me) || me.Line != 2 || me.Hint == "" {
		t.Errorf("err = %v, want a *mermaid.Error on line 2 with a hint", err)
	}

	// The subcommand.
	dir := t.TempDir()
	in := filepath.Join(dir, "flow.mmd")
	if err := os.WriteFile(in, []byte("flowchart TD\n  A --> B\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	var stdout, stderr bytes.Buffer
	if code := cmdMermaid(ctx, []string{in, "--png", filepath.Join(dir, "flow.png")}, &stdout, &stderr); code != 0 {
		t.Fatalf("exit %d: %s", code, stderr.String())
	}
	if _, err := os.Stat(filepath.Join(dir, "flow.png")); err != nil {
		t.Error(err)
	}
	written, err := os.ReadFile(filepath.Join(dir, "flow.excalidraw"))
	if err != nil {
		t.Fatal(err)
	}
	if fsc, err := scene.Decode(written); err != nil || !fsc.Has("A") || !fsc.Has("B") {
		t.Errorf("written scene: %v", err)
	}
}
