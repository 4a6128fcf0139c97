package agent

import (
	"testing"

	"github.com/excalibot/excalibot/agent/ollama"
)

// TestProtocolFor: what serve and doctor say a model will draw with is what a run picks.
func TestProtocolFor(t *testing.T) {
	tools := ollama.ModelInfo{Name: "qwen3:8b", Capabilities: []string{"completion", "tools", "thinking"}}
	noTools := ollama.ModelInfo{Name: "gemma3:4b", Capabilities: []string{"completion", "vision"}}
	old := ollama.ModelInfo{Name: "old:7b"} // a server before 0.6.4 reports no capabilities
	for _, tc := range []struct {
		p    Protocol
		info ollama.ModelInfo
		want Protocol
	}{
		{ProtocolAuto, tools, ProtocolTools},
		{ProtocolAuto, noTools, ProtocolPlan},
		{ProtocolAuto, old, ProtocolTools},
		{"", noTools, ProtocolPlan},
		{ProtocolTools, noTools, ProtocolTools},
		{ProtocolPlan, tools, ProtocolPlan},
	} {
		if got := tc.p.For(tc.info); got != tc.want {
			t.Errorf("%q.For(%s %v) = %q, want %q", tc.p, tc.info.Name, tc.info.Capabilities, got, tc.want)
		}
	}
}
