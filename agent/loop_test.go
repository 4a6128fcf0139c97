package agent

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/excalibot/excalibot/agent/ollama"
	"github.com/ollama/ollama/api"
)

const orgChart = `{"elements":[
 {"id":"ceo","type":"rectangle","x":300,"y":0,"text":"CEO"},
 {"id":"cto","type":"rectangle","x":100,"y":200,"text":"CTO"},
 {"id":"cfo","type":"rectangle","x":500,"y":200,"text":"CFO"},
 {"id":"a1","type":"arrow","startElementId":"ceo","endElementId":"cto"},
 {"id":"a2","type":"arrow","startElementId":"ceo","endElementId":"cfo"}]}`

// newAgent returns an agent on the Ollama client pointed at the fake server.
func newAgent(t *testing.T, url string, lim Limits) *Agent {
	t.Helper()
	m, err := ollama.New(ollama.Config{Host: url, Model: "qwen3:8b"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	return New(m, Config{Limits: lim}, nil)
}

func runOn(t *testing.T, a *Agent, b *boardTools, prompt string, mem Memory) (Result, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	return a.Run(ctx, Request{Prompt: prompt, Tools: b, Memory: mem, Scene: b})
}

// toolMessages returns the tool messages of a request, in order.
func toolMessages(req api.ChatRequest) []api.Message {
	var out []api.Message
	for _, m := range req.Messages {
		if m.Role == "tool" {
			out = append(out, m)
		}
	}
	return out
}

// checkAnswered fails unless every tool call in the request's history is answered by a tool
// message with its id, in order, right after the assistant message.
func checkAnswered(t *testing.T, req api.ChatRequest) {
	t.Helper()
	ms := req.Messages
	for i, m := range ms {
		for j, c := range m.ToolCalls {
			k := i + 1 + j
			if k >= len(ms) || ms[k].Role != "tool" || ms[k].ToolCallID != c.ID {
				t.Fatalf("tool call %s (%s) at message %d is not answered in order", c.ID, c.Function.Name, i)
			}
		}
	}
}

func TestOrgChartInOneBatch(t *testing.T) {
	f, srv := newFakeOllama(t,
		calls(call("batch_create_elements", orgChart)),
		calls(call("done", `{"summary":"Drew an org chart: CEO over CTO and CFO."}`)),
	)
	b := newBoard()
	var steps []Step
	a := newAgent(t, srv.URL, Limits{})
	res, err := a.Run(context.Background(), Request{Prompt: "org chart: CEO, CTO, CFO", Tools: b,
		Scene: b, OnStep: func(s Step) { steps = append(steps, s) }})
	if err != nil {
		t.Fatal(err)
	}
	if res.Reason != StopDone || !res.Finished {
		t.Fatalf("reason %s finished %v, want done and finished", res.Reason, res.Finished)
	}
	if got, want := res.Summary, "Drew an org chart: CEO over CTO and CFO."; got != want {
		t.Errorf("summary %q, want %q", got, want)
	}
	if got, want := len(b.labels()), 5; got != want {
		t.Errorf("board has %d elements, want %d", got, want)
	}
	if res.Turns != 2 || res.ToolCalls != 2 || res.ToolErrors != 0 {
		t.Errorf("turns %d calls %d errors %d, want 2 2 0", res.Turns, res.ToolCalls, res.ToolErrors)
	}
	if res.PromptTokens != 2400 || res.OutputTokens != 160 {
		t.Errorf("tokens %d/%d, want 2400/160 (summed from done chunks)", res.PromptTokens, res.OutputTokens)
	}
	kinds := ""
	for _, s := range steps {
		kinds += string(s.Kind)[:1]
	}
	if kinds != "mtmt" || len(res.Steps) != len(steps) {
		t.Errorf("steps %q (%d in result), want mtmt reported as they happen", kinds, len(res.Steps))
	}
	// What went on the wire.
	r0 := f.request(0)
	if r0.Options["num_ctx"] != float64(16384) {
		t.Errorf("num_ctx %v, want 16384 always sent", r0.Options["num_ctx"])
	}
	if r0.Think == nil || r0.Think.Value != false {
		t.Errorf("think %v, want false sent", r0.Think)
	}
	if r0.KeepAlive == nil || r0.KeepAlive.Duration != 10*time.Minute {
		t.Errorf("keep_alive %v, want 10m", r0.KeepAlive)
	}
	if len(r0.Tools) != 5 || r0.Messages[0].Role != "system" || !strings.Contains(r0.Messages[0].Content, "never instructions") {
		t.Errorf("first request: %d tools, first message %q", len(r0.Tools), r0.Messages[0].Role)
	}
	r1 := f.request(1)
	checkAnswered(t, r1)
	tm := toolMessages(r1)
	if len(tm) != 1 || tm[0].Content != "Created 5 elements." || tm[0].ToolName != "batch_create_elements" {
		t.Errorf("tool result sent back: %+v", tm)
	}
	if res.Memory.Exchanges[0].Summary != res.Summary || !res.Memory.HasScene || len(res.Memory.Scene) != 5 {
		t.Errorf("memory %+v", res.Memory)
	}
}

func TestSelfCorrectionAfterError(t *testing.T) {
	bad := `{"elements":[{"id":"a","type":"rectangle","text":"A"},{"id":"x","type":"arrow","startElementId":"a","endElementId":"b"}]}`
	good := `{"elements":[{"id":"a","type":"rectangle","text":"A"},{"id":"b","type":"rectangle","x":300,"text":"B"},{"id":"x","type":"arrow","startElementId":"a","endElementId":"b"}]}`
	f, srv := newFakeOllama(t,
		calls(call("batch_create_elements", bad)),
		calls(call("batch_create_elements", good)),
		calls(call("done", `{}`)),
	)
	b := newBoard()
	res, err := runOn(t, newAgent(t, srv.URL, Limits{}), b, "A points to B", Memory{})
	if err != nil {
		t.Fatal(err)
	}
	if res.Reason != StopDone || res.ToolErrors != 1 || len(b.labels()) != 3 {
		t.Fatalf("reason %s errors %d elements %d, want done 1 3", res.Reason, res.ToolErrors, len(b.labels()))
	}
	tm := toolMessages(f.request(1))
	if len(tm) != 1 || !strings.Contains(tm[0].Content, `no element with id "b"`) {
		t.Errorf("model was not shown the error: %+v", tm)
	}
	if !res.Steps[1].IsError || res.Steps[3].IsError {
		t.Errorf("steps: %+v", res.Steps)
	}
}

func TestInvalidJSONArguments(t *testing.T) {
	broken := `<tool_call>{"name": "batch_create_elements", "arguments": {"elements": [{"id": "a", "type": </tool_call>`
	f, srv := newFakeOllama(t,
		say(broken),
		calls(call("batch_create_elements", `{"elements":[{"id":"a","type":"rectangle","text":"A"}]}`)),
		calls(call("done", `{}`)),
	)
	b := newBoard()
	res, err := runOn(t, newAgent(t, srv.URL, Limits{}), b, "a box", Memory{})
	if err != nil {
		t.Fatal(err)
	}
	r1 := f.request(1)
	checkAnswered(t, r1)
	tm := toolMessages(r1)
	if len(tm) != 1 || tm[0].ToolName != "batch_create_elements" || !strings.Contains(tm[0].Content, "not valid JSON") {
		t.Fatalf("invalid arguments were not answered: %+v", tm)
	}
	batches := 0
	for _, c := range b.calls {
		if strings.HasPrefix(c, "batch_create_elements ") {
			batches++
		}
	}
	if batches != 1 {
		t.Errorf("batch_create_elements ran %d times, want 1 (the broken call must not reach the tools)", batches)
	}
	if res.Reason != StopDone || res.ToolErrors != 1 {
		t.Errorf("reason %s tool errors %d", res.Reason, res.ToolErrors)
	}
}

func TestUnknownTool(t *testing.T) {
	f, srv := newFakeOllama(t,
		calls(call("draw_flowchart", `{"steps":["a","b"]}`), call("get_scene", `{}`)),
		calls(call("done", `{}`)),
	)
	res, err := runOn(t, newAgent(t, srv.URL, Limits{}), newBoard(), "which tools do you have?", Memory{})
	if err != nil {
		t.Fatal(err)
	}
	r1 := f.request(1)
	checkAnswered(t, r1)
	tm := toolMessages(r1)
	if len(tm) != 2 {
		t.Fatalf("got %d tool messages, want 2 (both calls answered, in order)", len(tm))
	}
	if !strings.Contains(tm[0].Content, `no tool named "draw_flowchart"`) || !strings.Contains(tm[0].Content, "batch_create_elements, delete_elements, done, get_scene") {
		t.Errorf("unknown tool answer %q should name the tools", tm[0].Content)
	}
	if !strings.HasPrefix(tm[1].Content, "0 elements") {
		t.Errorf("second call answer %q", tm[1].Content)
	}
	if res.ToolErrors != 1 || res.Reason != StopDone {
		t.Errorf("errors %d reason %s", res.ToolErrors, res.Reason)
	}
}

func TestTurnLimit(t *testing.T) {
	var turns []fakeTurn
	for range 5 {
		turns = append(turns, calls(call("get_scene", `{}`)))
	}
	f, srv := newFakeOllama(t, turns...)
	res, err := runOn(t, newAgent(t, srv.URL, Limits{Turns: 3}), newBoard(), "loop forever", Memory{})
	if err != nil {
		t.Fatal(err)
	}
	if res.Reason != StopTurnLimit || res.Finished || f.count() != 3 {
		t.Fatalf("reason %s finished %v requests %d, want turn_limit false 3", res.Reason, res.Finished, f.count())
	}
	if !strings.Contains(res.Summary, "limit of 3 model turns") {
		t.Errorf("summary %q does not say the limit was hit", res.Summary)
	}
}

func TestToolCallLimit(t *testing.T) {
	// Three different calls: the same call twice in one reply runs once.
	f, srv := newFakeOllama(t, calls(call("get_scene", `{}`), call("get_scene", `{"n":2}`), call("get_scene", `{"n":3}`)))
	res, err := runOn(t, newAgent(t, srv.URL, Limits{ToolCalls: 2}), newBoard(), "x", Memory{})
	if err != nil {
		t.Fatal(err)
	}
	if res.Reason != StopToolCallLimit || res.ToolCalls != 2 || f.count() != 1 {
		t.Fatalf("reason %s calls %d, want tool_call_limit 2", res.Reason, res.ToolCalls)
	}
	if !strings.Contains(res.Summary, "limit of 2 tool calls") {
		t.Errorf("summary %q", res.Summary)
	}
}

// TestToolCallLimitOfOne: the stop sentence counts in the singular too.
func TestToolCallLimitOfOne(t *testing.T) {
	_, srv := newFakeOllama(t, calls(call("get_scene", `{}`), call("get_scene", `{"n":2}`)))
	res, err := runOn(t, newAgent(t, srv.URL, Limits{ToolCalls: 1}), newBoard(), "x", Memory{})
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"reached the limit of 1 tool call.", "(1 tool call made)"} {
		if res.Reason != StopToolCallLimit || !strings.Contains(res.Summary, want) {
			t.Errorf("reason %s, summary %q: want %q", res.Reason, res.Summary, want)
		}
	}
}

func TestRepeatedFailureNudgesThenStops(t *testing.T) {
	bad := call("update_element", `{"id":"nope","text":"X"}`)
	f, srv := newFakeOllama(t, calls(bad), calls(bad), calls(bad), calls(bad))
	res, err := runOn(t, newAgent(t, srv.URL, Limits{}), newBoard(), "rename nope", Memory{})
	if err != nil {
		t.Fatal(err)
	}
	if res.Reason != StopRepeatedFailure || f.count() != 3 {
		t.Fatalf("reason %s after %d requests, want repeated_failure after 3", res.Reason, f.count())
	}
	r2 := f.request(2)
	last := r2.Messages[len(r2.Messages)-1]
	if last.Role != "user" || last.Content != nudgeText {
		t.Errorf("third request should end with the nudge, got %s %q", last.Role, last.Content)
	}
	nudges := 0
	for _, s := range res.Steps {
		if s.Kind == StepNudge {
			nudges++
		}
	}
	if nudges != 1 || !strings.Contains(res.Summary, "kept repeating") {
		t.Errorf("nudges %d summary %q", nudges, res.Summary)
	}
}

func TestStreamCutShort(t *testing.T) {
	turn := say("I will draw")
	turn.cut = true
	_, srv := newFakeOllama(t, turn)
	res, err := runOn(t, newAgent(t, srv.URL, Limits{}), newBoard(), "x", Memory{})
	if !errors.Is(err, ollama.ErrStreamCut) {
		t.Fatalf("err %v, want ollama.ErrStreamCut", err)
	}
	if res.Reason != StopError || len(res.Memory.Exchanges) != 0 {
		t.Errorf("reason %s, memory %d exchanges (a failed run must not be remembered)", res.Reason, len(res.Memory.Exchanges))
	}
}

func TestModelNotPulled(t *testing.T) {
	f, srv := newFakeOllama(t)
	f.model = "llama3.1:8b"
	_, err := runOn(t, newAgent(t, srv.URL, Limits{}), newBoard(), "x", Memory{})
	if !errors.Is(err, ollama.ErrModelNotFound) || !strings.Contains(err.Error(), "ollama pull qwen3:8b") {
		t.Fatalf("err %v, want ollama.ErrModelNotFound telling to pull", err)
	}
}

func TestSlowModelTimesOut(t *testing.T) {
	slow := say("late")
	slow.delay = 5 * time.Second
	_, srv := newFakeOllama(t, slow)
	res, err := runOn(t, newAgent(t, srv.URL, Limits{Request: 50 * time.Millisecond}), newBoard(), "x", Memory{})
	if !errors.Is(err, ollama.ErrModelTimeout) || res.Reason != StopError {
		t.Fatalf("err %v reason %s, want ollama.ErrModelTimeout", err, res.Reason)
	}
}

func TestWallTimeEndsRun(t *testing.T) {
	slow := say("late")
	slow.delay = 5 * time.Second
	_, srv := newFakeOllama(t, calls(call("get_scene", `{}`)), slow)
	res, err := runOn(t, newAgent(t, srv.URL, Limits{Wall: 100 * time.Millisecond, Request: time.Minute}), newBoard(), "x", Memory{})
	if err != nil {
		t.Fatalf("wall time is a limit, not an error: %v", err)
	}
	if res.Reason != StopWallTime || !strings.Contains(res.Summary, "ran out of time") {
		t.Fatalf("reason %s summary %q", res.Reason, res.Summary)
	}
}

func TestToolCallWrittenAsText(t *testing.T) {
	tests := []struct{ name, content string }{
		{"bare JSON", `{"name": "batch_create_elements", "arguments": {"elements": [{"id": "a", "type": "rectangle", "text": "A"}]}}`},
		{"tags", "I'll draw it.\n<tool_call>\n{\"name\": \"batch_create_elements\", \"arguments\": {\"elements\": [{\"id\": \"a\", \"type\": \"rectangle\", \"text\": \"A\"}]}}\n</tool_call>"},
		{"fenced", "```json\n{\"name\": \"batch_create_elements\", \"parameters\": {\"elements\": [{\"id\": \"a\", \"type\": \"rectangle\", \"text\": \"A\"}]}}\n```"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f, srv := newFakeOllama(t, say(tt.content), calls(call("done", `{}`)))
			b := newBoard()
			res, err := runOn(t, newAgent(t, srv.URL, Limits{}), b, "a box", Memory{})
			if err != nil {
				t.Fatal(err)
			}
			if got := b.labels()["a"]; got != "A" {
				t.Fatalf("box label %q, want A: the call in the text did not run", got)
			}
			if !res.Steps[1].FromText {
				t.Errorf("step %+v not marked FromText", res.Steps[1])
			}
			r1 := f.request(1)
			checkAnswered(t, r1)
			asst := r1.Messages[len(r1.Messages)-2]
			if len(asst.ToolCalls) != 1 || strings.Contains(asst.Content, "tool_call") {
				t.Errorf("history should carry the call in the tool-call field: %+v", asst)
			}
		})
	}
}

func TestFollowUpEditsByID(t *testing.T) {
	f, srv := newFakeOllama(t,
		calls(call("batch_create_elements", orgChart)),
		calls(call("done", `{"summary":"Org chart with CEO, CTO and CFO."}`)),
		calls(call("update_element", `{"id":"cfo","text":"Finance"}`)),
		say("Renamed CFO to Finance."),
	)
	b := newBoard()
	a := newAgent(t, srv.URL, Limits{})
	first, err := runOn(t, a, b, "org chart: CEO, CTO, CFO", Memory{})
	if err != nil {
		t.Fatal(err)
	}
	mb, err := first.Memory.Marshal() // as the store keeps it
	if err != nil {
		t.Fatal(err)
	}
	mem, err := UnmarshalMemory(mb)
	if err != nil {
		t.Fatal(err)
	}
	second, err := runOn(t, a, b, "rename CFO to Finance", mem)
	if err != nil {
		t.Fatal(err)
	}
	if got := b.labels()["cfo"]; got != "Finance" {
		t.Fatalf("cfo label %q, want Finance", got)
	}
	if second.Reason != StopNoToolCalls || second.Summary != "Renamed CFO to Finance." {
		t.Errorf("reason %s summary %q", second.Reason, second.Summary)
	}
	r := f.request(2)
	if len(r.Messages) != 4 {
		t.Fatalf("follow-up sent %d messages, want system, request 1, summary 1, request 2", len(r.Messages))
	}
	if r.Messages[1].Content != "org chart: CEO, CTO, CFO" || r.Messages[2].Content != "Org chart with CEO, CTO and CFO." {
		t.Errorf("memory sent: %q / %q", r.Messages[1].Content, r.Messages[2].Content)
	}
	req := r.Messages[3].Content
	if !strings.Contains(req, `cfo rectangle at (500,200) "CFO"`) || strings.Contains(req, "<changes>") {
		t.Errorf("follow-up request should show the scene and no changes:\n%s", req)
	}
	if len(second.Memory.Exchanges) != 2 {
		t.Errorf("memory has %d exchanges, want 2", len(second.Memory.Exchanges))
	}
}

func TestFollowUpAfterHumanEdit(t *testing.T) {
	f, srv := newFakeOllama(t,
		calls(call("batch_create_elements", orgChart)),
		calls(call("done", `{}`)),
		say("Noted."),
	)
	b := newBoard()
	a := newAgent(t, srv.URL, Limits{})
	first, err := runOn(t, a, b, "org chart", Memory{})
	if err != nil {
		t.Fatal(err)
	}
	b.edit(func(els map[string]*boardEl) []string {
		els["ceo"].X = 340
		els["cto"].Text = "VP Engineering"
		delete(els, "cfo")
		els["coo"] = &boardEl{ID: "coo", Type: "rectangle", X: 700, Y: 200, W: 160, H: 70, Text: "COO"}
		return []string{"cfo", "coo"}
	})
	if _, err := runOn(t, a, b, "what changed?", first.Memory); err != nil {
		t.Fatal(err)
	}
	req := f.request(2).Messages[3].Content
	for _, want := range []string{
		"<changes>",
		`added rectangle coo "COO"`,
		`removed rectangle cfo "CFO"`,
		`moved rectangle ceo "CEO" from (300,0) to (340,0)`,
		`relabelled rectangle cto: "CTO" -> "VP Engineering"`,
	} {
		if !strings.Contains(req, want) {
			t.Errorf("request lacks %q:\n%s", want, req)
		}
	}
}

func TestNoToolsAtAll(t *testing.T) {
	if _, err := New(nil, Config{}, nil).Run(context.Background(), Request{Prompt: "x"}); err == nil {
		t.Fatal("want an error for a request without tools")
	}
}

func TestLintWarningsMakeSummaryHonest(t *testing.T) {
	_, srv := newFakeOllama(t, calls(call("done", `{"summary":"All good."}`)))
	b := newBoard()
	b.lint = []string{"shapes a and b overlap"}
	a := newAgent(t, srv.URL, Limits{})
	res, err := a.Run(context.Background(), Request{Prompt: "is it all right?", Tools: b, Scene: b})
	if err != nil {
		t.Fatal(err)
	}
	if res.Finished || !strings.Contains(res.Summary, "1 problem remains in the drawing: shapes a and b overlap") {
		t.Errorf("finished %v summary %q", res.Finished, res.Summary)
	}
	if len(res.Warnings) != 1 {
		t.Errorf("warnings %v", res.Warnings)
	}

	_, srv = newFakeOllama(t, calls(call("done", `{"summary":"All good."}`)))
	b.lint = []string{"shapes a and b overlap", "c is outside its frame"}
	res, err = newAgent(t, srv.URL, Limits{}).Run(context.Background(), Request{Prompt: "and now?", Tools: b, Scene: b})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(res.Summary, "2 problems remain in the drawing") {
		t.Errorf("two warnings: summary %q", res.Summary)
	}
}

func TestArgumentsNestedTooDeep(t *testing.T) {
	f, srv := newFakeOllama(t,
		calls(call("update_element", `{"arguments":{"id":"a","text":"B"}}`)),
		calls(call("done", `{}`)),
	)
	b := newBoard()
	b.edit(func(els map[string]*boardEl) []string {
		els["a"] = &boardEl{ID: "a", Type: "rectangle", Text: "A"}
		return []string{"a"}
	})
	if _, err := runOn(t, newAgent(t, srv.URL, Limits{}), b, "rename", Memory{}); err != nil {
		t.Fatal(err)
	}
	if got := b.labels()["a"]; got != "B" {
		t.Errorf("label %q, want B (one level of nesting undone)", got)
	}
	var args map[string]any
	raw, _ := json.Marshal(f.request(1).Messages[2].ToolCalls[0].Function.Arguments)
	json.Unmarshal(raw, &args)
	if args["id"] != "a" {
		t.Errorf("history carries %s, want the unwrapped arguments", raw)
	}
}

// TestUnparseableToolCallRetriedOnce: Ollama answers 500 when it cannot parse the model's tool
// call (ollama#14492); the loop asks once more, then for a plan (fallback_test.go), then ends.
func TestUnparseableToolCallRetriedOnce(t *testing.T) {
	var bad http.Handler = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusInternalServerError)
		io.WriteString(w, `{"error":"error parsing tool call: raw='{\"name\": \"done\", ' err=unexpected end of JSON input"}`)
	})
	f := &fakeOllama{t: t, model: "qwen3:8b", turns: []fakeTurn{calls(call("done", `{}`))}}
	var badMu sync.Mutex
	var failing atomic.Int32 // requests still to fail
	failing.Store(1)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/api/chat" && failing.Add(-1) >= 0 { // not /api/show, which runs ask first
			badMu.Lock()
			h := bad
			badMu.Unlock()
			h.ServeHTTP(w, r)
			return
		}
		f.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	res, err := runOn(t, newAgent(t, srv.URL, Limits{}), newBoard(), "thanks", Memory{})
	if err != nil || res.Reason != StopDone {
		t.Fatalf("err %v reason %s, want a retry that ends in done", err, res.Reason)
	}
	msgs := f.request(0).Messages
	if last := msgs[len(msgs)-1]; last.Content != badCallText {
		t.Errorf("retry should tell the model what went wrong, ended with %q", last.Content)
	}

	// A model whose calls stay unreadable ends the run like a limit: no error, a summary that says
	// why, and what was drawn kept. The plan request failing the same way is the plan's failure.
	failing.Store(1000) // every request fails now
	res, err = runOn(t, newAgent(t, srv.URL, Limits{}), newBoard(), "x", Memory{})
	if want := "Stopped before finishing: the model kept writing tool calls that Ollama could not read. Asked for a diagram plan " +
		"instead, its answer could not be drawn either: Ollama could not read it. Nothing in the diagram changed."; err != nil ||
		res.Reason != StopUnreadableCalls || res.Summary != want {
		t.Errorf("err %v reason %s summary %q, want unreadable_calls after one retry and a plan, %q", err, res.Reason, res.Summary, want)
	}

	// The same error as an error line inside a streamed 200 response.
	streamed := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/x-ndjson")
		io.WriteString(w, `{"model":"qwen3:8b","message":{"role":"assistant","content":""},"done":false}`+"\n")
		io.WriteString(w, `{"error":"error parsing tool call: raw='{\"name\": \"done\", ' err=unexpected end of JSON input"}`+"\n")
	})
	badMu.Lock()
	bad = streamed
	badMu.Unlock()
	res, err = runOn(t, newAgent(t, srv.URL, Limits{}), newBoard(), "x", Memory{})
	if err != nil || res.Reason != StopUnreadableCalls {
		t.Errorf("err %v reason %s, want unreadable_calls after one retry", err, res.Reason)
	}
}

var update = flag.Bool("update", false, "rewrite golden files in testdata")

// TestRequestGolden pins the first request of a run as it goes on the wire: system prompt,
// opening message, tools and options. Refresh with go test ./agent -update.
func TestRequestGolden(t *testing.T) {
	f, srv := newFakeOllama(t, calls(call("done", `{}`)), calls(call("done", `{}`)))
	if _, err := runOn(t, newAgent(t, srv.URL, Limits{}), newBoard(), "org chart: CEO, CTO, CFO", Memory{}); err != nil {
		t.Fatal(err)
	}
	var pretty bytes.Buffer
	if err := json.Indent(&pretty, f.raw[0], "", "  "); err != nil {
		t.Fatal(err)
	}
	pretty.WriteByte('\n')
	path := filepath.Join("testdata", "request.golden.json")
	if *update {
		if err := os.WriteFile(path, pretty.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test ./agent -update to create it)", err)
	}
	if !bytes.Equal(pretty.Bytes(), want) {
		t.Errorf("request differs from %s (go test ./agent -update after checking):\n%s", path, pretty.String())
	}
}
