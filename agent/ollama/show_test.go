package ollama

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/excalibot/excalibot/agent/ollamafake"
	"github.com/excalibot/excalibot/tools"
	"github.com/ollama/ollama/api"
)

func describeClient(t *testing.T, url, model string) *Client {
	t.Helper()
	o, err := New(Config{Host: url, Model: model}, nil)
	if err != nil {
		t.Fatal(err)
	}
	return o
}

func TestDescribe(t *testing.T) {
	f := ollamafake.New(t, ollamafake.Config{
		Models: []string{ollamafake.ToolModel, ollamafake.ToolLessModel, ollamafake.VisionToolModel},
		Info: map[string]ollamafake.ModelSpec{
			"old:7b":   {Capabilities: []string{}, ContextLength: 8192, Family: "llama", ParameterSize: "6.7B", Quantization: "Q4_0"},
			"long:14b": {Capabilities: []string{"completion", "tools"}, ContextLength: 262144, Family: "qwen3moe"},
		},
	})
	tests := []struct {
		model string
		want  ModelInfo
		tools bool
		known bool
	}{
		{ollamafake.ToolModel, ModelInfo{Name: "qwen3:8b", Capabilities: []string{"completion", "tools", "thinking"},
			ContextLength: 40960, Family: "qwen3", ParameterSize: "8.2B", Quantization: "Q4_K_M"}, true, true},
		{ollamafake.ToolLessModel, ModelInfo{Name: "gemma3:4b", Capabilities: []string{"completion", "vision"},
			ContextLength: 131072, Family: "gemma3", ParameterSize: "4.3B", Quantization: "Q4_K_M"}, false, true},
		{ollamafake.VisionToolModel, ModelInfo{Name: "mistral-small3.2:24b", Capabilities: []string{"completion", "vision", "tools"},
			ContextLength: 131072, Family: "mistral3", ParameterSize: "24.0B", Quantization: "Q4_K_M"}, true, true},
		{"old:7b", ModelInfo{Name: "old:7b", ContextLength: 8192, Family: "llama", ParameterSize: "6.7B", Quantization: "Q4_0"}, false, false},
		{"long:14b", ModelInfo{Name: "long:14b", Capabilities: []string{"completion", "tools"},
			ContextLength: 262144, Family: "qwen3moe", ParameterSize: "8.2B", Quantization: "Q4_K_M"}, true, true},
	}
	for _, tt := range tests {
		t.Run(tt.model, func(t *testing.T) {
			got, err := describeClient(t, f.URL(), tt.model).Describe(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			if !equalInfo(got, tt.want) {
				t.Errorf("got %+v\nwant %+v", got, tt.want)
			}
			if got.Has(CapTools) != tt.tools || got.Known() != tt.known {
				t.Errorf("Has(tools) = %v, Known = %v; want %v, %v", got.Has(CapTools), got.Known(), tt.tools, tt.known)
			}
		})
	}
}

func equalInfo(a, b ModelInfo) bool {
	return a.Name == b.Name && slices.Equal(a.Capabilities, b.Capabilities) && a.ContextLength == b.ContextLength &&
		a.Family == b.Family && a.ParameterSize == b.ParameterSize && a.Quantization == b.Quantization
}

func TestDescribeErrors(t *testing.T) {
	f := ollamafake.New(t, ollamafake.Config{})
	_, err := describeClient(t, f.URL(), "llama9:1b").Describe(context.Background())
	if !errors.Is(err, ErrModelNotFound) || !strings.Contains(err.Error(), "run `ollama pull llama9:1b`") {
		t.Errorf("not pulled: err = %v, want ErrModelNotFound saying to pull it", err)
	}

	o := describeClient(t, f.URL(), ollamafake.DefaultModel)
	f.Stop()
	_, err = o.Describe(context.Background())
	if !errors.Is(err, ErrUnreachable) || !strings.Contains(err.Error(), "Ollama is not reachable at "+f.URL()) {
		t.Errorf("down: err = %v, want ErrUnreachable naming the address", err)
	}
	// A failure is not kept: once the server is up, the next call answers.
	f.Start()
	info, err := o.Describe(context.Background())
	if err != nil || !info.Has(CapTools) {
		t.Fatalf("up again: got %+v, err %v; want the model described", info, err)
	}
	// The answer is kept: with the server down again, it still comes back.
	f.Stop()
	if again, err := o.Describe(context.Background()); err != nil || !equalInfo(again, info) {
		t.Errorf("cached: got %+v, err %v; want the first answer", again, err)
	}
}

func TestDescribeTimeout(t *testing.T) {
	f := ollamafake.New(t, ollamafake.Config{})
	o := describeClient(t, f.URL(), ollamafake.DefaultModel)
	ctx, cancel := context.WithDeadline(context.Background(), time.Now().Add(-time.Second))
	defer cancel()
	if _, err := o.Describe(ctx); !errors.Is(err, ErrUnreachable) || !strings.Contains(err.Error(), "did not answer in time") {
		t.Errorf("deadline passed: err = %v, want ErrUnreachable saying it did not answer in time", err)
	}
}

func TestVersion(t *testing.T) {
	f := ollamafake.New(t, ollamafake.Config{})
	o := describeClient(t, f.URL(), ollamafake.DefaultModel)
	if v, err := o.Version(context.Background()); err != nil || v != "0.17.4" {
		t.Errorf("version = %q, err %v; want 0.17.4", v, err)
	}
	f.Stop()
	if _, err := o.Version(context.Background()); !errors.Is(err, ErrUnreachable) {
		t.Errorf("down: err = %v, want ErrUnreachable", err)
	}
}

// The fake refuses tools to a tool-less model with Ollama's text, which Chat explains.
func TestChatToolsToToolLessModel(t *testing.T) {
	f := ollamafake.New(t, ollamafake.Config{Models: []string{ollamafake.ToolLessModel},
		Responder: func(api.ChatRequest) ollamafake.Turn { return ollamafake.Say("hi") }})
	o := describeClient(t, f.URL(), ollamafake.ToolLessModel)
	msgs := []Message{{Role: RoleUser, Content: "draw"}}
	_, err := o.Chat(context.Background(), msgs, []tools.Spec{{Name: "get_scene", Description: "the scene"}})
	if !errors.Is(err, ErrNoToolSupport) || !strings.Contains(err.Error(), "model gemma3:4b cannot call tools") {
		t.Errorf("err = %v, want ErrNoToolSupport", err)
	}
	if r, err := o.Chat(context.Background(), msgs, nil); err != nil || r.Message.Content != "hi" {
		t.Errorf("without tools: got %q, err %v; want the answer", r.Message.Content, err)
	}
}

// TestModelsWith: the models that report a capability, most recently pulled first; what each
// can do is asked once per digest, so a second listing asks /api/show about nothing, and a model
// pulled anew is asked about again.
func TestModelsWith(t *testing.T) {
	f := ollamafake.New(t, ollamafake.Config{Models: []string{ollamafake.ToolModel, ollamafake.ToolLessModel, ollamafake.VisionToolModel}})
	o := describeClient(t, f.URL(), ollamafake.ToolModel)
	got, err := o.ModelsWith(context.Background(), CapVision)
	if want := []string{ollamafake.ToolLessModel, ollamafake.VisionToolModel}; err != nil || !slices.Equal(got, want) {
		t.Fatalf("vision: got %q, %v; want %q", got, err, want)
	}
	if n := len(f.Shown()); n != 3 {
		t.Errorf("first listing asked /api/show %d times, want 3 (one per model)", n)
	}
	// Another client of the same server (the vision model's) shares what was learnt.
	if got, err := o.ForModel(ollamafake.ToolLessModel).ModelsWith(context.Background(), CapTools); err != nil ||
		!slices.Equal(got, []string{ollamafake.VisionToolModel, ollamafake.ToolModel}) {
		t.Errorf("tools: got %q, %v", got, err)
	}
	if n := len(f.Shown()); n != 3 {
		t.Errorf("second listing asked /api/show again: %d calls in all, want 3", n)
	}
	// qwen3:8b pulled again, now a build that reads pictures: a new digest, asked about again.
	f.Pull(ollamafake.ToolModel, ollamafake.ModelSpec{Capabilities: []string{"completion", "tools", "vision"}})
	got, err = o.ModelsWith(context.Background(), CapVision)
	if want := []string{ollamafake.ToolModel, ollamafake.ToolLessModel, ollamafake.VisionToolModel}; err != nil || !slices.Equal(got, want) {
		t.Errorf("after a pull: got %q, %v; want %q", got, err, want)
	}
	if shown := f.Shown(); !slices.Equal(shown[3:], []string{ollamafake.ToolModel}) {
		t.Errorf("after a pull /api/show was asked about %q, want only the model pulled again", shown[3:])
	}
	f.Stop()
	if _, err := o.ModelsWith(context.Background(), CapVision); !errors.Is(err, ErrUnreachable) {
		t.Errorf("down: err = %v, want ErrUnreachable", err)
	}
}

// TestInspectAsksAgain: Describe keeps its first answer for runs; Inspect says what the server
// has now, so a model removed since is not pulled any more.
func TestInspectAsksAgain(t *testing.T) {
	f := ollamafake.New(t, ollamafake.Config{})
	o := describeClient(t, f.URL(), ollamafake.DefaultModel)
	if _, err := o.Describe(context.Background()); err != nil {
		t.Fatal(err)
	}
	f.Remove(ollamafake.DefaultModel)
	if _, err := o.Describe(context.Background()); err != nil {
		t.Errorf("Describe after removal: %v, want the kept answer", err)
	}
	if _, err := o.Inspect(context.Background()); !errors.Is(err, ErrModelNotFound) {
		t.Errorf("Inspect after removal: err = %v, want ErrModelNotFound", err)
	}
}
