package agent

import (
	"regexp"
	"strings"
	"testing"

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
