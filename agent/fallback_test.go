package agent

import (
	"context"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ollama/ollama/api"

	"github.com/excalibot/excalibot/agent/ollama"
	"github.com/excalibot/excalibot/agent/ollamafake"
	"github.com/excalibot/excalibot/scene"
	"github.com/excalibot/excalibot/tools"
)

// The plan fallback of unreadable turns, through the real Ollama client against the fake Ollama
// and the real tools. The unreadable turns are real models' replies (testdata/realoutputs, each
// with its source) and one more below.

// discardedCall is the reply of qwen2.5:7b-instruct on Ollama 0.32.1 when its tool call failed to
// parse: no content, no tool_calls, 40 tokens reported (https://github.com/ollama/ollama/issues/17274).
func discardedCall() ollamafake.Turn {
	return ollamafake.Turn{Chunks: []api.ChatResponse{{Message: api.Message{Role: "assistant"}, Done: true, DoneReason: "stop",
		Metrics: api.Metrics{PromptEvalCount: 310, EvalCount: 40}}}}
}

// Calls no parser can read, from SGLang's tool-parser tests (sgl-project/sglang
// sgl-model-gateway/tests/tool_parser/tool_parser_fallback.rs@d6645396ff692a91ea327aec8a4d13e300a02e5c,
// test_llama_parser_invalid_format_returns_as_normal_text and
// test_mistral_parser_invalid_format_returns_as_normal_text): the text stays text, no call is made.
const (
	llamaGarbled   = `<|python_tag|>{"name": "test", "arguments": invalid}`
	mistralGarbled = `[TOOL_CALLS] [{"name": invalid json}]`
)

// realTurn is the sample of testdata/realoutputs whose file name starts with prefix, as Ollama
// streams it (or fails with it).
func realTurn(t *testing.T, prefix string) ollamafake.Turn {
	t.Helper()
	for _, o := range loadRealOutputs(t) {
		if strings.HasPrefix(o.file, prefix) {
			return firstTurn(o)
		}
	}
	t.Fatalf("no real output %s*", prefix)
	return ollamafake.Turn{}
}

// unreadableModel answers tool requests with the scripted turns, then as drawingModel does, and
// format requests as drawingModel (a plan built from the schema) or with the scripted plan turns.
type unreadableModel struct {
	mu    sync.Mutex
	tools []ollamafake.Turn
	plans []ollamafake.Turn
}

func (m *unreadableModel) respond(req api.ChatRequest) ollamafake.Turn {
	m.mu.Lock()
	defer m.mu.Unlock()
	next := &m.tools
	if len(req.Format) > 0 {
		next = &m.plans
	}
	if len(*next) == 0 {
		return drawingModel(req)
	}
	t := (*next)[0]
	*next = (*next)[1:]
	return t
}

// fallbackThread draws the architecture with the tool loop, then runs prompt with the turns
// scripted; it returns the second run and the requests it sent.
func fallbackThread(t *testing.T, prompt string, m *unreadableModel) (Result, []api.ChatRequest, *tools.Set) {
	t.Helper()
	var model unreadableModel
	fake := ollamafake.New(t, ollamafake.Config{Responder: func(req api.ChatRequest) ollamafake.Turn {
		return model.respond(req)
	}})
	client, err := ollama.New(ollama.Config{Host: fake.URL(), Model: ollamafake.ToolModel}, nil)
	if err != nil {
		t.Fatal(err)
	}
	a := New(client, Config{Protocol: ProtocolTools}, nil)
	set := tools.New(scene.New(), tools.Limits{})
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	first, err := a.Run(ctx, SetRequest(set, "architecture: web app, API, database", Memory{}, nil))
	if err != nil || first.Reason != StopDone {
		t.Fatalf("first run: %v, %s", err, first.Reason)
	}
	model.mu.Lock()
	model.tools, model.plans = m.tools, m.plans
	model.mu.Unlock()
	start := len(fake.Requests())
	res, err := a.Run(ctx, SetRequest(set, prompt, first.Memory, nil))
	if err != nil {
		t.Fatalf("second run: %v", err)
	}
	return res, fake.Requests()[start:], set
}

// kinds is "tools" or "plan" per request.
func kinds(reqs []api.ChatRequest) []string {
	var out []string
	for _, r := range reqs {
		switch {
		case len(r.Format) > 0 && len(r.Tools) == 0:
			out = append(out, "plan")
		case len(r.Tools) > 0 && len(r.Format) == 0:
			out = append(out, "tools")
		default:
			out = append(out, "other")
		}
	}
	return out
}

func sceneLabels(set *tools.Set) map[string]string {
	out := map[string]string{}
	for _, e := range StateOf(set.Scene()) {
		if e.Label != "" {
			out[e.ID] = e.Label
		}
	}
	return out
}

// TestUnreadableTwiceDrawsThePlan: a follow-up whose tool turns cannot be read twice is asked
// again as one typed plan, which draws the requested change through the tools; the model's next
// turn sees the calls and their results and finishes.
func TestUnreadableTwiceDrawsThePlan(t *testing.T) {
	const change = "rename the API to API v2, make it green, add a cache"
	tests := []struct {
		name     string
		turns    []ollamafake.Turn
		want     Corrections
		nudge    string
		unreadTo StopReason // the model's turn after the plan: done, or unreadable again
	}{
		{"server errors", []ollamafake.Turn{realTurn(t, "035-"), realTurn(t, "034-")},
			Corrections{Retries: 1, PlanFallbacks: 1}, badCallText, StopDone},
		{"empty replies", []ollamafake.Turn{realTurn(t, "063-"), discardedCall()},
			Corrections{Nudges: 1, PlanFallbacks: 1}, emptyReplyText, StopDone},
		{"calls that cannot be read", []ollamafake.Turn{ollamafake.Say(llamaGarbled), ollamafake.Say(mistralGarbled)},
			Corrections{Nudges: 1, PlanFallbacks: 1}, garbledText, StopDone},
		{"a server error, then an empty reply", []ollamafake.Turn{realTurn(t, "032-"), realTurn(t, "064-")},
			Corrections{Retries: 1, PlanFallbacks: 1}, badCallText, StopDone},
		{"unreadable after the plan too", []ollamafake.Turn{realTurn(t, "035-"), realTurn(t, "035-"), realTurn(t, "033-")},
			Corrections{Retries: 1, PlanFallbacks: 1}, badCallText, StopNoToolCalls},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			turns := tt.turns
			if tt.unreadTo == StopDone {
				turns = append(turns, ollamafake.Calls(ollamafake.Call("done", `{}`)))
			}
			res, reqs, set := fallbackThread(t, change, &unreadableModel{tools: turns})
			if got, want := kinds(reqs), []string{"tools", "tools", "plan", "tools"}; !slices.Equal(got, want) {
				t.Fatalf("requests %v, want %v", got, want)
			}
			if res.Reason != tt.unreadTo || !res.Finished || res.Corrections != tt.want {
				t.Errorf("reason %s finished %v corrections %+v, want %s, finished, %+v", res.Reason, res.Finished, res.Corrections, tt.unreadTo, tt.want)
			}
			// The plan writes no summary: the reply says what changed, never the unreadable text.
			if want := "Added Cache after API v2; Renamed API to API v2; Recoloured API v2; 4 boxes, 3 arrows."; res.Summary != want {
				t.Errorf("summary %q, want %q", res.Summary, want)
			}
			got := sceneLabels(set)
			for id, want := range map[string]string{"web": "Web app", "api": "API v2", "db": "Database", "cache": "Cache"} {
				if got[id] != want {
					t.Errorf("node %s is %q, want %q (scene %v)", id, got[id], want, got)
				}
			}
			// The correction went with the second request, and the plan request is the plan
			// protocol's over the scene as it is, with the person's request.
			if m := reqs[1].Messages; m[len(m)-1].Content != tt.nudge {
				t.Errorf("second request ends with %q, want %q", m[len(m)-1].Content, tt.nudge)
			}
			plan := reqs[2].Messages
			if !strings.Contains(plan[0].Content, "You plan diagrams") || !strings.Contains(plan[len(plan)-1].Content, "api rect") ||
				!strings.Contains(plan[len(plan)-1].Content, "<request>\n"+change+"\n</request>") {
				t.Errorf("the plan request is not the plan protocol's over the scene: %q … %q", plan[0].Content, plan[len(plan)-1].Content)
			}
			// The next tool turn sees the calls the plan became, each answered, not the unreadable reply.
			next := reqs[3].Messages
			var calls []string
			answered := 0
			for _, m := range next {
				for _, c := range m.ToolCalls {
					calls = append(calls, c.Function.Name)
				}
				if m.Role == "tool" && strings.HasPrefix(m.ToolCallID, "plan_") {
					answered++
				}
			}
			if last := calls[len(calls)-2:]; !slices.Equal(last, []string{"update_graph", "add_to_graph"}) || answered != 2 {
				t.Errorf("the next turn sees calls %v with %d plan results, want update_graph and add_to_graph answered", calls, answered)
			}
			var fell []Step
			for _, s := range res.Steps {
				if s.Kind == StepFallback {
					fell = append(fell, s)
				}
			}
			if len(fell) != 1 || fell[0].Turn != 3 {
				t.Errorf("fallback steps %+v, want one at turn 3", fell)
			}
		})
	}
}

// TestPlanFallbackFailsKeepsTheDrawing: when the plan cannot be drawn either, the run ends without
// an error, keeps what was drawn (before the run, and in it) and says so in words.
func TestPlanFallbackFailsKeepsTheDrawing(t *testing.T) {
	addCache := ollamafake.Calls(ollamafake.Call("add_to_graph", `{"nodes":[{"id":"cache","label":"Cache"}],"edges":[{"from":"api","to":"cache"}]}`))
	tests := []struct {
		name        string
		model       *unreadableModel
		summary     string
		labels      []string
		corrections Corrections
		partly      bool // the run drew before the plan was asked for
	}{
		{"nothing drawn in the run", &unreadableModel{tools: []ollamafake.Turn{realTurn(t, "035-"), realTurn(t, "063-")},
			plans: []ollamafake.Turn{realTurn(t, "064-")}}, // a thinking model that ignores the format
			"Stopped before finishing: the model kept answering with nothing. Asked for a diagram plan instead, its answer could " +
				"not be drawn either: the answer was empty. Nothing in the diagram changed.",
			[]string{"API", "Database", "Web app"}, Corrections{Retries: 1, PlanFallbacks: 1, PlanFallbacksFailed: 1}, false},
		{"a cache drawn first", &unreadableModel{tools: []ollamafake.Turn{addCache, realTurn(t, "035-"), realTurn(t, "034-")},
			plans: []ollamafake.Turn{realTurn(t, "064-")}},
			"Stopped before finishing: the model kept writing tool calls that Ollama could not read. Asked for a diagram plan " +
				"instead, its answer could not be drawn either: the answer was empty. So far: Added Cache after API; 4 boxes, 3 arrows.",
			[]string{"API", "Cache", "Database", "Web app"}, Corrections{Retries: 1, PlanFallbacks: 1, PlanFallbacksFailed: 1}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res, reqs, set := fallbackThread(t, "add a cache after the API", tt.model)
			if n := len(reqs); n != len(tt.model.tools)+1 {
				t.Errorf("%d requests (%v), want the tool turns and one plan", n, kinds(reqs))
			}
			if res.Reason != StopUnreadableCalls || res.Finished || res.Corrections != tt.corrections {
				t.Errorf("reason %s finished %v corrections %+v, want unreadable_calls, %+v", res.Reason, res.Finished, res.Corrections, tt.corrections)
			}
			if res.Summary != tt.summary {
				t.Errorf("summary\n%q, want\n%q", res.Summary, tt.summary)
			}
			// What the run drew already is pointed out, so the plan does not draw it again.
			plan := reqs[len(reqs)-1].Messages
			if partly := plan[len(plan)-1].Content == partlyDrawnText; partly != tt.partly {
				t.Errorf("the plan request ends with %q", plan[len(plan)-1].Content)
			}
			var got []string
			for _, l := range sceneLabels(set) {
				got = append(got, l)
			}
			slices.Sort(got)
			if !slices.Equal(got, tt.labels) {
				t.Errorf("labels %q, want %q", got, tt.labels)
			}
			if len(res.Memory.Exchanges) == 0 || res.Memory.Exchanges[len(res.Memory.Exchanges)-1].Summary != res.Summary {
				t.Error("the run is not remembered with its words")
			}
		})
	}
}

// TestUnreadableQuestionDrawsNothing: a question answered with nothing is asked once for words,
// never for a plan: a plan would draw where nobody asked for a drawing.
func TestUnreadableQuestionDrawsNothing(t *testing.T) {
	res, reqs, set := fallbackThread(t, "what does this diagram show?",
		&unreadableModel{tools: []ollamafake.Turn{realTurn(t, "063-"), discardedCall()}})
	if got := kinds(reqs); !slices.Equal(got, []string{"tools", "tools"}) {
		t.Errorf("requests %v, want two tool turns and no plan", got)
	}
	if m := reqs[1].Messages; m[len(m)-1].Content != emptyAnswerText {
		t.Errorf("second request ends with %q, want the nudge to answer in words", m[len(m)-1].Content)
	}
	if want := "Stopped before finishing: the model kept answering with nothing. Nothing in the diagram changed."; res.Reason != StopUnreadableCalls ||
		res.Summary != want || res.Changed {
		t.Errorf("reason %s summary %q changed %v, want unreadable_calls, %q", res.Reason, res.Summary, res.Changed, want)
	}
	if res.Corrections != (Corrections{Nudges: 1}) {
		t.Errorf("corrections %+v, want one nudge", res.Corrections)
	}
	if n := len(sceneLabels(set)); n != 3 {
		t.Errorf("%d labels, want the 3 of the first run", n)
	}
}

// TestNoFallbackWithoutFormat: a model that cannot answer in a format ends unreadable after its
// correction, as before.
func TestNoFallbackWithoutFormat(t *testing.T) {
	f, srv := newFakeOllama(t, say(""), say(""))
	m, err := ollama.New(ollama.Config{Host: srv.URL, Model: "qwen3:8b"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	res, err := New(chatOnly{m}, Config{}, nil).Run(context.Background(), Request{Prompt: "draw a box", Tools: newBoard(), Scene: newBoard()})
	if err != nil || res.Reason != StopUnreadableCalls || f.count() != 2 || res.Corrections != (Corrections{Nudges: 1}) {
		t.Errorf("err %v reason %s requests %d corrections %+v, want unreadable_calls after 2 requests and one nudge",
			err, res.Reason, f.count(), res.Corrections)
	}
}

// chatOnly is a Model that is neither a Formatter nor a Describer.
type chatOnly struct{ m Model }

func (c chatOnly) Chat(ctx context.Context, msgs []ollama.Message, specs []tools.Spec) (ollama.Reply, error) {
	return c.m.Chat(ctx, msgs, specs)
}
