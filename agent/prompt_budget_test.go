package agent

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/tiktoken-go/tokenizer"

	"github.com/excalibot/excalibot/agent/ollama"
	"github.com/excalibot/excalibot/agent/plan"
	"github.com/excalibot/excalibot/scene"
	"github.com/excalibot/excalibot/tools"
)

// TestPromptBudget keeps the system prompt plus the core tools' schemas, as Ollama receives them,
// within the 9 KB target (BenchmarkPromptSize prints the figures). Raising the target is a
// decision for docs/agent.md and docs/tools.md, not a number to bump here.
func TestPromptBudget(t *testing.T) {
	sys, schemas, err := PromptSize(tools.New(scene.New(), tools.Limits{}).Specs(), false)
	if err != nil {
		t.Fatal(err)
	}
	if total := sys + schemas; total > targetBytes {
		t.Errorf("system %d B + core schemas %d B = %d B, over the %d B budget by %d B: tighten the wording", sys, schemas, total, targetBytes, total-targetBytes)
	}
}

// TestPromptRouting: the system prompt steers new diagrams and structural changes to the graph
// tools and fine edits to the element tools, and every tool it names exists (a renamed tool must
// not leave the prompt pointing at nothing).
func TestPromptRouting(t *testing.T) {
	known := map[string]bool{}
	for _, sp := range tools.New(scene.New(), tools.Limits{}).Specs() {
		known[sp.Name] = true
	}
	prompt := SystemPrompt()
	for _, name := range regexp.MustCompile(`\b[a-z]+(?:_[a-z]+)+\b`).FindAllString(prompt, -1) {
		if !known[name] && name != "left_of" && name != "right_of" {
			t.Errorf("the prompt names %q, which is no tool", name)
		}
	}
	for _, tc := range []struct{ line, tools string }{
		{"New flowcharts", "create_graph"},
		{"Graph structure changes", "add_to_graph update_graph remove_from_graph"},
		{"Small edits", "update_element delete_elements batch_create_elements"},
		{"Sequence diagrams", "create_sequence"},
	} {
		line := ""
		for _, l := range strings.Split(prompt, "\n") {
			if strings.Contains(l, tc.line) {
				line = l
			}
		}
		if line == "" {
			t.Errorf("no line about %q", tc.line)
			continue
		}
		for _, name := range strings.Fields(tc.tools) {
			if !strings.Contains(line, name) {
				t.Errorf("the line %q does not send to %s", line, name)
			}
		}
	}
}

// TestPromptTokens keeps in testdata/prompt-tokens.golden what every request sends before the
// user's words, in tokens (cl100k_base, a real BPE that works offline): the tool loop's system
// prompt and core tool schemas as Ollama receives them, and the plan protocol's prompt (its
// schema becomes a grammar, not prompt text). docs/agent.md quotes the figures.
func TestPromptTokens(t *testing.T) {
	enc, err := tokenizer.Get(tokenizer.Cl100kBase)
	if err != nil {
		t.Fatal(err)
	}
	count := func(s string) int {
		ids, _, err := enc.Encode(s)
		if err != nil {
			t.Fatal(err)
		}
		return len(ids)
	}
	ts, err := ollama.APITools(offered(tools.New(scene.New(), tools.Limits{}).Specs(), false))
	if err != nil {
		t.Fatal(err)
	}
	schemas, err := json.Marshal(ts)
	if err != nil {
		t.Fatal(err)
	}
	sys, sch, pl := count(SystemPrompt()), count(string(schemas)), count(plan.Prompt())
	got := fmt.Sprintf("tools: system prompt %d tokens + core tool schemas %d tokens = %d tokens (%d B)\nplan: prompt %d tokens (%d B)\n",
		sys, sch, sys+sch, len(SystemPrompt())+len(schemas), pl, len(plan.Prompt()))
	path := filepath.Join("testdata", "prompt-tokens.golden")
	if *update {
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if got != string(want) {
		t.Errorf("prompt sizes changed (go test ./agent -run TestPromptTokens -update, then docs/agent.md):\ngot  %swant %s", got, want)
	}
}
