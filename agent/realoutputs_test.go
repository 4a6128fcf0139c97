package agent

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"sync"
	"testing"

	"github.com/ollama/ollama/api"

	"github.com/excalibot/excalibot/agent/ollama"
	"github.com/excalibot/excalibot/agent/ollamafake"
	"github.com/excalibot/excalibot/internal/clip"
	"github.com/excalibot/excalibot/tools"
)

// realOutput is one verbatim answer of a real model, with its source (testdata/realoutputs).
type realOutput struct {
	file   string
	Source string `json:"source"`
	Model  string `json:"model"`
	Family string `json:"family"`
	Note   string `json:"note"`
	Tools  []struct {
		Name   string            `json:"name"`
		Params []string          `json:"params"`
		Types  map[string]string `json:"types"` // JSON Schema types of params, where the source gives them
	} `json:"tools"`
	Content   string         `json:"content"`
	Thinking  string         `json:"thinking"`
	ToolCalls []recordedCall `json:"tool_calls"`
	Error     string         `json:"error"`
	ErrorKey  string         `json:"error_key"` // the key of an error line mid-stream, when not "error"
	Status    int            `json:"status"`
	Prompt    string         `json:"prompt"` // the request, when the source shows it (default "use the tools")
	Expect    struct {
		Calls []recordedCall `json:"calls"`
		// FieldCalls are the calls of tool_calls as they should run, when not as Ollama sent them.
		FieldCalls []recordedCall `json:"field_calls"`
		Text       string         `json:"text"`
	} `json:"expect"`
}

type recordedCall struct {
	Name      string `json:"name"`
	Arguments any    `json:"arguments"`
}

func loadRealOutputs(t *testing.T) []realOutput {
	t.Helper()
	files, err := filepath.Glob(filepath.Join("testdata", "realoutputs", "*.json"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no real outputs in testdata/realoutputs (%v)", err)
	}
	var out []realOutput
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		var o realOutput
		if err := json.Unmarshal(b, &o); err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		if o.Source == "" || o.Family == "" || o.Model == "" {
			t.Fatalf("%s: every sample needs its source, model and family", f)
		}
		o.file = filepath.Base(f)
		out = append(out, o)
	}
	return out
}

// recordingTools is a toolbox of the tools the model was offered in the sample; every call is
// recorded and answered "ok".
type recordingTools struct {
	specs []tools.Spec
	mu    sync.Mutex
	calls []recordedCall
}

func (rt *recordingTools) Specs() []tools.Spec { return rt.specs }

func (rt *recordingTools) Call(_ context.Context, name string, args json.RawMessage) tools.Result {
	var v any
	if err := json.Unmarshal(args, &v); err != nil {
		return tools.Result{IsError: true, Text: "Error: " + err.Error()}
	}
	rt.mu.Lock()
	rt.calls = append(rt.calls, recordedCall{Name: name, Arguments: v})
	rt.mu.Unlock()
	return tools.Result{Text: "ok"}
}

func toolboxFor(o realOutput) *recordingTools {
	rt := &recordingTools{}
	for _, tl := range o.Tools {
		props := map[string]any{}
		for _, p := range tl.Params {
			ty := tl.Types[p]
			if ty == "" {
				ty = "string"
			}
			props[p] = map[string]any{"type": ty}
		}
		schema, _ := json.Marshal(map[string]any{"type": "object", "properties": props})
		rt.specs = append(rt.specs, tools.Spec{Name: tl.Name, Description: "a tool of the sample", Parameters: schema})
	}
	if len(rt.specs) == 0 { // Run needs a toolbox; a sample without tools gets one unrelated tool
		rt.specs = []tools.Spec{{Name: "noop", Description: "does nothing", Parameters: json.RawMessage(`{"type":"object","properties":{}}`)}}
	}
	return rt
}

// firstTurn is the sample as Ollama streams it: the content in a few chunks (as a real stream
// splits it), the parsed tool calls, the done chunk; or the server's error.
func firstTurn(o realOutput) ollamafake.Turn {
	if o.Error != "" {
		if o.Status != 0 {
			return ollamafake.Fail(o.Status, o.Error)
		}
		return ollamafake.Turn{Chunks: []api.ChatResponse{{Message: api.Message{Role: "assistant", Content: o.Content}}}, Error: o.Error, ErrorKey: o.ErrorKey}
	}
	var chunks []api.ChatResponse
	content := []rune(o.Content)
	for i := 0; i < len(content); i += 40 {
		chunks = append(chunks, api.ChatResponse{Message: api.Message{Role: "assistant", Content: string(content[i:min(i+40, len(content))])}})
	}
	var calls []api.ToolCall
	for _, c := range o.ToolCalls {
		args, _ := json.Marshal(c.Arguments)
		calls = append(calls, ollamafake.Call(c.Name, string(args)))
	}
	if len(calls) > 0 {
		chunks = append(chunks, api.ChatResponse{Message: api.Message{Role: "assistant", ToolCalls: calls}})
	}
	return ollamafake.Turn{Chunks: append(chunks, ollamafake.DoneChunk())}
}

// TestRealModelOutputs runs every verbatim model answer through the real Ollama client and agent
// loop, and checks that the calls that ran are the ones the model meant and that the user reads
// only words. testdata/realoutputs.golden records each verdict (go test ./agent -update).
func TestRealModelOutputs(t *testing.T) {
	samples := loadRealOutputs(t)
	var lines []string
	type tally struct{ ok, all int }
	families := map[string]*tally{}
	for _, o := range samples {
		verdict := runRealOutput(t, o)
		f := families[o.Family]
		if f == nil {
			f = &tally{}
			families[o.Family] = f
		}
		f.all++
		if verdict == "" {
			f.ok++
			verdict = "ok"
		} else {
			t.Errorf("%s (%s, %s): %s", o.file, o.Model, o.Family, verdict)
			verdict = "WRONG: " + verdict
		}
		lines = append(lines, fmt.Sprintf("%s\t%s\t%s", o.file, o.Family, verdict))
	}
	var names []string
	for n := range families {
		names = append(names, n)
	}
	sort.Strings(names)
	ok := 0
	lines = append(lines, "", "by family:")
	for _, n := range names {
		lines = append(lines, fmt.Sprintf("%s\t%d/%d", n, families[n].ok, families[n].all))
		ok += families[n].ok
	}
	lines = append(lines, fmt.Sprintf("handled\t%d/%d", ok, len(samples)))
	checkGolden(t, filepath.Join("testdata", "realoutputs.golden"), strings.Join(lines, "\n")+"\n")
}

// runRealOutput returns "" when the loop did what the sample expects, else what went wrong.
func runRealOutput(t *testing.T, o realOutput) string {
	fake := ollamafake.New(t, ollamafake.Config{Responder: ollamafake.Script(firstTurn(o),
		ollamafake.Say(""), ollamafake.Say(""), ollamafake.Say(""))})
	m, err := ollama.New(ollama.Config{Host: fake.URL(), Model: ollamafake.DefaultModel}, nil)
	if err != nil {
		t.Fatal(err)
	}
	box := toolboxFor(o)
	prompt := o.Prompt
	if prompt == "" {
		prompt = "use the tools"
	}
	res, err := New(m, Config{}, nil).Run(context.Background(), Request{Prompt: prompt, Tools: box})
	if err != nil {
		return "run failed: " + err.Error()
	}
	var problems []string
	if o.Error != "" {
		if len(res.Steps) < 2 || res.Steps[0].Kind != StepNudge || res.Steps[0].Result != badCallText {
			problems = append(problems, fmt.Sprintf("server error not retried with a nudge (steps %+v)", res.Steps))
		}
	}
	// The calls the loop ran are the assistant message of the next request, as it went on the wire
	// (unknown tools included: the loop answers those itself).
	var ran []recordedCall
	if reqs := fake.Requests(); o.Error == "" && len(reqs) > 1 {
		for _, m := range reqs[1].Messages {
			if m.Role != "assistant" {
				continue
			}
			for _, c := range m.ToolCalls {
				b, _ := json.Marshal(c.Function.Arguments)
				var v any
				_ = json.Unmarshal(b, &v)
				ran = append(ran, recordedCall{Name: c.Function.Name, Arguments: v})
			}
		}
	}
	field := o.ToolCalls
	if o.Expect.FieldCalls != nil {
		field = o.Expect.FieldCalls
	}
	want := append(append([]recordedCall(nil), field...), o.Expect.Calls...)
	if !sameCalls(ran, want) {
		problems = append(problems, fmt.Sprintf("calls %s, want %s", callsText(ran), callsText(want)))
	}
	for _, c := range box.calls {
		if !containsCall(want, c) {
			problems = append(problems, fmt.Sprintf("the toolbox ran %s, which the model did not mean", callsText([]recordedCall{c})))
		}
	}
	// An answer for the user is not nudged about as if it were a broken call or a missing drawing.
	if len(want) == 0 && o.Error == "" && o.Expect.Text != "" {
		for _, s := range res.Steps {
			if s.Kind == StepNudge {
				problems = append(problems, fmt.Sprintf("the answer was nudged about: %q", s.Result))
				break
			}
		}
	}
	wantText := clip.Runes(oneLine(o.Expect.Text), 300)
	switch {
	case wantText != "" && res.Summary != wantText:
		problems = append(problems, fmt.Sprintf("user reads %q, want %q", res.Summary, wantText))
	case wantText == "" && o.Error == "" && res.Summary != "Nothing in the diagram changed." && res.Reason != StopUnreadableCalls:
		// A reply with nothing to read ends the run with the loop's words, never the model's.
		problems = append(problems, fmt.Sprintf("user reads %q, want no words of the model", res.Summary))
	}
	if s := res.Summary; strings.Contains(s, "<|") || strings.Contains(s, "[TOOL_CALLS]") || strings.Contains(s, "<tool_call") {
		problems = append(problems, fmt.Sprintf("control tokens reach the user: %q", s))
	}
	return strings.Join(problems, "; ")
}

func sameCalls(got, want []recordedCall) bool {
	if len(got) != len(want) {
		return false
	}
	for i := range got {
		if got[i].Name != want[i].Name || !reflect.DeepEqual(normal(got[i].Arguments), normal(want[i].Arguments)) {
			return false
		}
	}
	return true
}

// normal is v as encoding/json decodes it, so numbers and nil maps compare equal.
func normal(v any) any {
	if v == nil {
		return map[string]any{}
	}
	b, _ := json.Marshal(v)
	var out any
	_ = json.Unmarshal(b, &out)
	return out
}

func containsCall(list []recordedCall, c recordedCall) bool {
	for _, w := range list {
		if sameCalls([]recordedCall{w}, []recordedCall{c}) {
			return true
		}
	}
	return false
}

func callsText(cs []recordedCall) string {
	var parts []string
	for _, c := range cs {
		b, _ := json.Marshal(normal(c.Arguments))
		parts = append(parts, c.Name+string(b))
	}
	return "[" + strings.Join(parts, " ") + "]"
}

// checkGolden compares got with the golden file at path, rewriting it under -update.
func checkGolden(t *testing.T, path, got string) {
	t.Helper()
	if *update {
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (create it with go test ./agent -update)", err)
	}
	if got != string(want) {
		t.Errorf("%s differs from this run (refresh with -update when the change is right):\ngot:\n%s", path, got)
	}
}
