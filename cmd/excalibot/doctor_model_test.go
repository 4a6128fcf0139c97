package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/excalibot/excalibot/agent/ollamafake"
	"github.com/excalibot/excalibot/config"
)

var update = flag.Bool("update", false, "rewrite golden files in testdata")

// TestDoctorModelGolden: doctor's lines for Ollama, the model, its protocol and the model that
// reads pictures, for each state a deployment meets, through the fake Ollama and the real
// client. testdata/doctor-model.golden holds them (-update rewrites it).
func TestDoctorModelGolden(t *testing.T) {
	fake := ollamafake.New(t, ollamafake.Config{
		Models: []string{ollamafake.ToolModel, ollamafake.ToolLessModel, ollamafake.VisionToolModel},
		Info: map[string]ollamafake.ModelSpec{ // an Ollama before 0.6.4 reports no capabilities
			"old:7b": {Capabilities: []string{}, ContextLength: 8192, Family: "llama", ParameterSize: "6.7B", Quantization: "Q4_0"}},
	})
	for _, tc := range []struct {
		name string
		edit func(*config.Config)
	}{
		{"a tool model that cannot read pictures, no vision model named", func(*config.Config) {}},
		{"a vision model named that reads pictures", func(c *config.Config) { c.VisionModel = ollamafake.ToolLessModel }},
		{"the vision model named is the model itself", func(c *config.Config) { c.VisionModel = ollamafake.ToolModel }},
		{"the vision model is not pulled", func(c *config.Config) { c.VisionModel = "qwen2.5vl:7b" }},
		{"the vision model cannot read pictures", func(c *config.Config) {
			c.Model, c.VisionModel = ollamafake.VisionToolModel, ollamafake.ToolModel
		}},
		{"the model itself reads pictures", func(c *config.Config) { c.Model = ollamafake.VisionToolModel }},
		{"a model without tools, protocol auto", func(c *config.Config) { c.Model = ollamafake.ToolLessModel }},
		{"a model without tools, protocol tools", func(c *config.Config) { c.Model, c.Protocol = ollamafake.ToolLessModel, "tools" }},
		{"protocol plan", func(c *config.Config) { c.Protocol, c.VisionModel = "plan", ollamafake.ToolLessModel }},
		{"an Ollama too old to report capabilities", func(c *config.Config) { c.Model = "old:7b" }},
		{"the model is not pulled", func(c *config.Config) { c.Model = "llama9:1b" }},
		{"the model is not pulled, the vision model is", func(c *config.Config) { c.Model, c.VisionModel = "llama9:1b", ollamafake.ToolLessModel }},
		{"Ollama down", func(c *config.Config) { c.OllamaHost = "http://127.0.0.1:1" }},
	} {
		cfg := config.Default()
		cfg.OllamaHost, cfg.Model = fake.URL(), ollamafake.ToolModel
		tc.edit(&cfg)
		var b strings.Builder
		fmt.Fprintf(&b, "# %s\n", tc.name)
		for _, f := range checkOllama(context.Background(), cfg, quietLog()) {
			fmt.Fprintln(&b, f.line())
		}
		b.WriteString("\n")
		t.Run(tc.name, func(t *testing.T) {
			golden(t, filepath.Join("testdata", "doctor-model", slug(tc.name)+".golden"),
				strings.ReplaceAll(b.String(), fake.URL(), "OLLAMA_URL"))
		})
	}
}

// golden compares got with the file, or rewrites the file with -update.
func golden(t *testing.T, path, got string) {
	t.Helper()
	if *update {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test ./cmd/excalibot -run %s -update)", err, t.Name())
	}
	if got != string(want) {
		t.Errorf("%s differs:\ngot:\n%s\nwant:\n%s", path, got, want)
	}
}

// slug is a name as a file name: lower-case words joined by dashes.
func slug(name string) string {
	return strings.Join(strings.FieldsFunc(strings.ToLower(name), func(r rune) bool {
		return !('a' <= r && r <= 'z' || '0' <= r && r <= '9')
	}), "-")
}
