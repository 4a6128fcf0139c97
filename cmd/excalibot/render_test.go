package main

import (
	"bytes"
	"context"
	"image/png"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

func TestRenderCommandFlags(t *testing.T) {
	tests := []struct {
		name     string
		args     []string
		wantCode int
		wantErr  string
	}{
		{"no input", []string{}, 2, "usage: excalibot render"},
		{"two inputs", []string{"a.excalidraw", "b.excalidraw"}, 2, "one input file only"},
		{"bad viewport", []string{"a.excalidraw", "--viewport", "1,2,3"}, 2, "want X,Y,WIDTH,HEIGHT"},
		{"stdin without -o", []string{"-"}, 2, "needs -o"},
		{"missing file", []string{filepath.Join(t.TempDir(), "nope.excalidraw")}, 1, "read scene"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			code := cmdRender(context.Background(), tt.args, &stdout, &stderr)
			if code != tt.wantCode || !strings.Contains(stderr.String(), tt.wantErr) {
				t.Errorf("code %d, stderr %q; want code %d and %q", code, stderr.String(), tt.wantCode, tt.wantErr)
			}
		})
	}
}

func TestRenderCommand(t *testing.T) {
	if _, err := exec.LookPath("chromium"); err != nil {
		t.Skip("skipping: needs Chromium (apt-get install chromium)")
	}
	dir := t.TempDir()
	in := filepath.Join(dir, "shapes.excalidraw")
	doc, err := os.ReadFile("../../render/testdata/shapes.excalidraw")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(in, doc, 0o644); err != nil {
		t.Fatal(err)
	}
	var stdout, stderr bytes.Buffer
	// Flags after the input file, as in the README.
	if code := cmdRender(context.Background(), []string{in, "--scale", "1", "--dark", "--svg=false"}, &stdout, &stderr); code != 0 {
		t.Fatalf("exit %d: %s", code, stderr.String())
	}
	f, err := os.Open(filepath.Join(dir, "shapes.png"))
	if err != nil {
		t.Fatalf("default output: %v", err)
	}
	defer f.Close()
	cfg, err := png.DecodeConfig(f)
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Width != 500 || cfg.Height != 360 {
		t.Errorf("size %dx%d, want 500x360", cfg.Width, cfg.Height)
	}

	stdout.Reset()
	if code := cmdRender(context.Background(), []string{"--svg", "-o", "-", in}, &stdout, &stderr); code != 0 {
		t.Fatalf("svg: exit %d: %s", code, stderr.String())
	}
	if !strings.HasPrefix(stdout.String(), "<svg") {
		t.Errorf("svg on stdout starts with %.40q", stdout.String())
	}
	// The SVG says what it shows: the outline's sentence, naming the drawing's text.
	_, desc, _ := strings.Cut(stdout.String(), "<desc>")
	desc, _, _ = strings.Cut(desc, "</desc>")
	if !strings.Contains(desc, "Hello") {
		t.Errorf("svg <desc> is %q, want a sentence naming the drawing's text", desc)
	}
}
