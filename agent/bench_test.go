package agent

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/excalibot/excalibot/agent/ollama"
	"github.com/excalibot/excalibot/tools"
)

// instantModel answers at once: a get_scene call per turn, then done.
type instantModel struct {
	n, turns int
}

func (m *instantModel) Chat(_ context.Context, _ []ollama.Message, _ []tools.Spec) (ollama.Reply, error) {
	m.n++
	name := "get_scene"
	if m.n >= m.turns {
		name = "done"
	}
	return ollama.Reply{Message: ollama.Message{Role: ollama.RoleAssistant,
		ToolCalls: []ollama.ToolCall{{ID: fmt.Sprintf("call_%d", m.n), Name: name, Args: json.RawMessage(`{}`)}}},
		PromptTokens: 1000, OutputTokens: 20}, nil
}

// instantTools answers every call at once with a scene text of realistic size.
type instantTools struct{ specs []tools.Spec }

var sceneText = strings.Repeat(`r1 rectangle at (0,0) 160x80 "Service"`+"\n", 50)

func (t instantTools) Specs() []tools.Spec { return t.specs }
func (t instantTools) Call(_ context.Context, name string, _ json.RawMessage) tools.Result {
	return tools.Result{Text: sceneText, Done: name == "done"}
}

const benchTurns = 10

// BenchmarkLoopOverhead measures what the loop itself costs per turn with an instant model and
// instant tools ("loop"), against a bare loop of the same model and tool calls without any
// bookkeeping ("bare") and one request to a local fake Ollama over HTTP ("http-request"), all in
// the same run, and prints the ratios.
func BenchmarkLoopOverhead(b *testing.B) {
	tb := instantTools{specs: newBoard().Specs()}
	ctx := context.Background()
	var loopNs, bareNs, httpNs float64
	b.Run("loop", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			a := New(&instantModel{turns: benchTurns}, Config{}, nil)
			res, err := a.Run(ctx, Request{Prompt: "org chart", Tools: tb})
			if err != nil || res.Turns != benchTurns {
				b.Fatalf("run: %v, %d turns", err, res.Turns)
			}
		}
		loopNs = float64(b.Elapsed().Nanoseconds()) / float64(b.N) / benchTurns
		b.ReportMetric(loopNs/1e3, "µs/turn")
	})
	b.Run("bare", func(b *testing.B) {
		for b.Loop() {
			m := &instantModel{turns: benchTurns}
			var msgs []ollama.Message
			for range benchTurns {
				r, _ := m.Chat(ctx, msgs, tb.specs)
				msgs = append(msgs, r.Message)
				for _, c := range r.Message.ToolCalls {
					msgs = append(msgs, ollama.Message{Role: ollama.RoleTool, Content: tb.Call(ctx, c.Name, c.Args).Text})
				}
			}
		}
		bareNs = float64(b.Elapsed().Nanoseconds()) / float64(b.N) / benchTurns
		b.ReportMetric(bareNs/1e3, "µs/turn")
	})
	b.Run("http-request", func(b *testing.B) {
		f, srv := newFakeOllama(b)
		m, err := ollama.New(ollama.Config{Host: srv.URL, Model: "qwen3:8b"}, nil)
		if err != nil {
			b.Fatal(err)
		}
		msgs := []ollama.Message{{Role: ollama.RoleSystem, Content: SystemPrompt()}, {Role: ollama.RoleUser, Content: "org chart"}}
		turn := calls(call("get_scene", `{}`))
		for b.Loop() {
			f.mu.Lock()
			f.turns = append(f.turns, turn)
			f.mu.Unlock()
			if _, err := m.Chat(ctx, msgs, tb.specs); err != nil {
				b.Fatal(err)
			}
		}
		httpNs = float64(b.Elapsed().Nanoseconds()) / float64(b.N)
		b.ReportMetric(httpNs/1e3, "µs/request")
	})
	if loopNs > 0 && bareNs > 0 && httpNs > 0 {
		fmt.Printf("loop overhead per turn: %.1f µs (loop %.1f µs, bare %.1f µs: %.1fx bare); %.3f of one local HTTP request (%.0f µs); target < 1000 µs\n",
			(loopNs-bareNs)/1e3, loopNs/1e3, bareNs/1e3, loopNs/bareNs, (loopNs-bareNs)/httpNs, httpNs/1e3)
	}
}

// BenchmarkPromptSizeFake reports the bytes of system prompt and tool schemas with the test
// toolbox; prompt_size_test.go reports the real toolset.
func BenchmarkPromptSizeFake(b *testing.B) {
	reportPromptSize(b, newBoard().Specs(), false)
}

// Peers' prompt sizes (peers.md): 6.7 KB for 21 tools, 13 KB for 26 tools, 28 KB when a guide
// must be read first. The target is 9 KB.
const (
	peerSmallBytes = 6700
	targetBytes    = 9 * 1024
)

func reportPromptSize(b *testing.B, specs []tools.Spec, allTools bool) {
	var sys, schemas int
	for b.Loop() {
		var err error
		if sys, schemas, err = PromptSize(specs, allTools); err != nil {
			b.Fatal(err)
		}
	}
	total := sys + schemas
	n := len(offered(specs, allTools))
	b.ReportMetric(float64(n), "tools")
	b.ReportMetric(float64(sys), "system-bytes")
	b.ReportMetric(float64(schemas), "schema-bytes")
	b.ReportMetric(float64(total), "total-bytes")
	b.ReportMetric(float64(total)/targetBytes, "x-target-9KB")
	b.ReportMetric(float64(total)/peerSmallBytes, "x-peer-6.7KB")
	fmt.Printf("prompt: %d tools, system %d B + schemas %d B = %d B (%.2fx the 9 KB target, %.2fx the 6.7 KB peer)\n",
		n, sys, schemas, total, float64(total)/targetBytes, float64(total)/peerSmallBytes)
}

// countingModel reports three times the estimated prompt tokens, like a tokenizer that splits
// finer than the estimate, and keeps what it was sent.
type countingModel struct {
	instantModel
	sent [][]ollama.Message
}

func (m *countingModel) Chat(ctx context.Context, msgs []ollama.Message, specs []tools.Spec) (ollama.Reply, error) {
	m.sent = append(m.sent, append([]ollama.Message(nil), msgs...))
	r, err := m.instantModel.Chat(ctx, msgs, specs)
	est := schemaTokens(specs)
	for _, x := range msgs {
		est += messageTokens(x)
	}
	r.PromptTokens = 3 * est
	return r, err
}

func TestBudgetFollowsReportedTokens(t *testing.T) {
	m := &countingModel{instantModel: instantModel{turns: 10}}
	tb := instantTools{specs: newBoard().Specs()}
	a := New(m, Config{ContextTokens: 8000}, nil)
	if _, err := a.Run(context.Background(), Request{Prompt: "x", Tools: tb}); err != nil {
		t.Fatal(err)
	}
	last := m.sent[len(m.sent)-1]
	est := schemaTokens(tb.specs)
	shortened := false
	for _, x := range last {
		est += messageTokens(x)
		shortened = shortened || strings.Contains(x.Content, "shortened to save context")
	}
	// 3 tokens per estimated token: the real prompt must stay within the 6000-token limit.
	if 3*est > 6000 || !shortened {
		t.Errorf("last request ~%d real tokens (shortened: %v), want at most 6000", 3*est, shortened)
	}
}
