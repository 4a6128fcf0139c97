package main

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/excalibot/excalibot/agent"
	"github.com/excalibot/excalibot/agent/ollama"
	"github.com/excalibot/excalibot/agent/ollamafake"
	"github.com/excalibot/excalibot/config"
)

// serve asks Ollama about the model at start and says in its log what it found: the model's
// figures, a setting that does not fit, or the sentence to act on; it keeps running either way.
func TestServeStartupModelCheck(t *testing.T) {
	fake := ollamafake.New(t, ollamafake.Config{Models: []string{ollamafake.ToolModel, ollamafake.ToolLessModel}})
	tests := []struct {
		name  string
		setup func(*config.Config)
		want  []string
	}{
		{"ready", func(c *config.Config) {}, []string{
			`level=INFO msg=model model=qwen3:8b capabilities=completion,tools,thinking context_length=40960 family=qwen3 size=8.2B quantization=Q4_K_M`}},
		{"ollama down", func(c *config.Config) { c.OllamaHost = "http://127.0.0.1:1" }, []string{
			"level=ERROR", "Ollama is not reachable at http://127.0.0.1:1; start it with `ollama serve`"}},
		{"model not pulled", func(c *config.Config) { c.Model = "llama9:1b" }, []string{
			"level=ERROR", "model llama9:1b is not pulled into Ollama at " + fake.URL() + "; run `ollama pull llama9:1b`"}},
		{"num_ctx too big", func(c *config.Config) { c.NumCtx = 65536 }, []string{
			"level=WARN", "num_ctx 65536 is more than the 40960 tokens of context qwen3:8b was trained for; set EXCALIBOT_NUM_CTX to 40960 or less"}},
		{"tool-less model", func(c *config.Config) { c.Model = ollamafake.ToolLessModel }, []string{
			"level=WARN", "gemma3:4b cannot call tools: it will draw through typed plans (EXCALIBOT_PROTOCOL=plan)",
			"protocol=plan"}},
		{"vision model reads pictures", func(c *config.Config) { c.VisionModel = ollamafake.ToolLessModel }, []string{
			"protocol=tools",
			`level=INFO msg="vision model" model=gemma3:4b capabilities=completion,vision context_length=131072`}},
		{"the model itself cannot read pictures", func(c *config.Config) {}, []string{
			`level=WARN msg="vision check: qwen3:8b cannot read pictures; models that can: gemma3:4b (pulled here), or pull one such as qwen2.5vl, gemma3, llama3.2-vision; pictures sent with a request are refused; set EXCALIBOT_VISION_MODEL to a model that reads pictures" model=qwen3:8b`}},
		{"vision model not pulled", func(c *config.Config) { c.VisionModel = "qwen2.5vl:7b" }, []string{
			`level=WARN msg="vision check: model qwen2.5vl:7b is not pulled into Ollama at ` + fake.URL() +
				", so pictures sent with a request are refused; models here that read pictures: gemma3:4b; run `ollama pull qwen2.5vl:7b`, or set EXCALIBOT_VISION_MODEL to a model that reads pictures\" model=qwen2.5vl:7b"}},
		{"vision model without vision", func(c *config.Config) { c.Model, c.VisionModel = ollamafake.ToolLessModel, ollamafake.ToolModel }, []string{
			`level=WARN msg="vision check: qwen3:8b cannot read pictures; models that can: gemma3:4b (pulled here)`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg := testConfig(t)
			cfg.VisionModel = ""
			cfg.OllamaHost, cfg.Model = fake.URL(), ollamafake.ToolModel
			cfg.ChromePath = filepath.Join(t.TempDir(), "no-chromium") // the renderer is not what is checked
			tt.setup(&cfg)
			logs := &lockedBuffer{}
			_, stop := startServe(t, cfg, logs)
			stop()
			got := logs.String()
			for _, w := range tt.want {
				if !strings.Contains(got, w) {
					t.Errorf("log lacks %q:\n%s", w, got)
				}
			}
			if n := strings.Count(got, "model check:"); n > 1 {
				t.Errorf("the model check spoke %d times, want once:\n%s", n, got)
			}
			if n := strings.Count(got, "vision check:"); n > 1 {
				t.Errorf("the vision check spoke %d times, want once:\n%s", n, got)
			}
		})
	}
}

func TestModelWarnings(t *testing.T) {
	qwen := ollama.ModelInfo{Name: "qwen3:8b", Capabilities: []string{"completion", "tools"}, ContextLength: 40960}
	gemma := ollama.ModelInfo{Name: "gemma3:4b", Capabilities: []string{"completion", "vision"}, ContextLength: 131072}
	old := ollama.ModelInfo{Name: "old:7b", ContextLength: 0}
	tests := []struct {
		name   string
		info   ollama.ModelInfo
		numCtx int
		proto  agent.Protocol
		want   []string
	}{
		{"fits", qwen, 16384, agent.ProtocolAuto, nil},
		{"exactly the context", qwen, 40960, agent.ProtocolAuto, nil},
		{"num_ctx over", qwen, 40961, agent.ProtocolAuto, []string{"num_ctx 40961 is more than the 40960 tokens"}},
		{"no tools", gemma, 16384, agent.ProtocolAuto, []string{"gemma3:4b cannot call tools: it will draw through typed plans"}},
		{"no tools, plans asked for", gemma, 16384, agent.ProtocolPlan, nil},
		{"no tools, tools asked for", gemma, 16384, agent.ProtocolTools, nil}, // doctor's protocol line fails
		{"nothing reported", old, 1 << 20, agent.ProtocolAuto, []string{"Ollama did not say what the model can do"}},
	}
	for _, tt := range tests {
		got := modelWarnings(tt.info, tt.numCtx, tt.proto)
		if len(got) != len(tt.want) {
			t.Errorf("%s: got %q, want %d warnings", tt.name, got, len(tt.want))
			continue
		}
		for i, w := range tt.want {
			if !strings.Contains(got[i], w) {
				t.Errorf("%s: warning %q, want it to say %q", tt.name, got[i], w)
			}
		}
	}
}
