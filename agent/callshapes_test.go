package agent

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/ollama/ollama/api"

	"github.com/excalibot/excalibot/agent/ollama"
	"github.com/excalibot/excalibot/agent/ollamafake"
	"github.com/excalibot/excalibot/tools"
)

// editTools is a toolbox with the shapes of the drawing tools that edit by id.
func editTools() *recordingTools {
	spec := func(name, props string) tools.Spec {
		return tools.Spec{Name: name, Description: "a tool", Parameters: json.RawMessage(`{"type":"object","properties":` + props + `}`)}
	}
	return &recordingTools{specs: []tools.Spec{
		spec("update_element", `{"id":{"type":"string"},"text":{"type":"string"}}`),
		spec("delete_elements", `{"ids":{"type":"array","items":{"type":"string"}}}`),
		spec("done", `{"summary":{"type":"string"}}`),
	}}
}

func textTurn(content string, calls ...api.ToolCall) ollamafake.Turn {
	chunks := []api.ChatResponse{{Message: api.Message{Role: "assistant", Content: content}}}
	if len(calls) > 0 {
		chunks = append(chunks, api.ChatResponse{Message: api.Message{Role: "assistant", ToolCalls: calls}})
	}
	return ollamafake.Turn{Chunks: append(chunks, ollamafake.DoneChunk())}
}

// TestCallShapesThroughTheLoop runs each shape of call through the fake Ollama, the real client and
// the loop, and checks what the toolbox ran and whether the model was nudged.
func TestCallShapesThroughTheLoop(t *testing.T) {
	tests := []struct {
		name   string
		prompt string
		turn   ollamafake.Turn
		want   string // the calls the toolbox ran, as callsText writes them
		nudge  string // the nudge sent after the first reply, if any
	}{
		{"harmony token glued to the name", "rename r1 to Antwerp",
			textTurn("", ollamafake.Call("update_element<|channel|>commentary", `{"id":"r1","text":"Antwerp"}`)),
			`[update_element{"id":"r1","text":"Antwerp"}]`, ""},
		{"args and func nested in tool_calls", "rename r1 to Antwerp",
			textTurn("", ollamafake.Call("update_element", `{"args":{"id":"r1","text":"Antwerp"},"func":"update_element"}`)),
			`[update_element{"id":"r1","text":"Antwerp"}]`, ""},
		{"list argument as a Python list literal", "delete r2",
			textTurn("", ollamafake.Call("delete_elements", `{"ids":"['r2']"}`)),
			`[delete_elements{"ids":["r2"]}]`, ""},
		{"the same call twice in tool_calls", "rename r1 to Antwerp",
			textTurn("", ollamafake.Call("update_element", `{"id":"r1","text":"Antwerp"}`), ollamafake.Call("update_element", `{"text":"Antwerp","id":"r1"}`)),
			`[update_element{"id":"r1","text":"Antwerp"}]`, ""},
		{"the same call in the text and in tool_calls", "rename r1 to Antwerp",
			textTurn(`update_element(id: r1, text: Antwerp)`, ollamafake.Call("update_element", `{"id":"r1","text":"Antwerp"}`)),
			`[update_element{"id":"r1","text":"Antwerp"}]`, ""},
		{"colon syntax in a cut tag", "rename r1 to Antwerp",
			textTurn("<tool_call>\nupdate_element(id: 'r1', text: 'Antwerp')"),
			`[update_element{"id":"r1","text":"Antwerp"}]`, ""},
		{"invoke markup", "rename r1 to Antwerp",
			textTurn(`<function_calls><invoke name="update_element"><parameter name="id" string="true"> r1 </parameter><parameter name="text" string="true">Antwerp</parameter></invoke></function_calls>`),
			`[update_element{"id":"r1","text":"Antwerp"}]`, ""},
		{"a call in the text before the parsed one", "rename r1 and delete r2",
			textTurn("update_element(id: r1, text: Antwerp)\n", ollamafake.Call("delete_elements", `{"ids":["r2"]}`)),
			`[update_element{"id":"r1","text":"Antwerp"} delete_elements{"ids":["r2"]}]`, ""},
		{"a call in the text after the parsed one", "delete r2 and rename r1",
			ollamafake.Turn{Chunks: []api.ChatResponse{
				{Message: api.Message{Role: "assistant", ToolCalls: []api.ToolCall{ollamafake.Call("delete_elements", `{"ids":["r2"]}`)}}},
				{Message: api.Message{Role: "assistant", Content: "Then: update_element(id: r1, text: Antwerp)"}},
				ollamafake.DoneChunk()}},
			`[delete_elements{"ids":["r2"]} update_element{"id":"r1","text":"Antwerp"}]`, ""},
		{"a question answered with an example call", "what does update_element do?",
			textTurn("It renames a box, for example:\n\nupdate_element(id: r1, text: Antwerp)\n\nchanges the label of r1."),
			`[]`, ""},
		{"code after python_tag answering a question", "what does this show?",
			textTurn("<|python_tag|>import sys\nprint(sys.version)"),
			`[]`, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fake := ollamafake.New(t, ollamafake.Config{Responder: ollamafake.Script(tt.turn, ollamafake.Say(""), ollamafake.Say(""))})
			m, err := ollama.New(ollama.Config{Host: fake.URL(), Model: ollamafake.DefaultModel}, nil)
			if err != nil {
				t.Fatal(err)
			}
			box := editTools()
			res, err := New(m, Config{}, nil).Run(context.Background(), Request{Prompt: tt.prompt, Tools: box})
			if err != nil {
				t.Fatal(err)
			}
			if got := callsText(box.calls); got != tt.want {
				t.Errorf("ran %s, want %s", got, tt.want)
			}
			for _, s := range res.Steps {
				if s.Kind == StepNudge && s.Turn == 1 && s.Result != tt.nudge {
					t.Errorf("nudged %q, want %q", s.Result, tt.nudge)
				}
			}
		})
	}
}

// TestStreamErrorLineRetried: Ollama ending the stream with an error line about the model's call,
// under "error" or a key of its own, is a bad call: the turn is asked again with the hint.
func TestStreamErrorLineRetried(t *testing.T) {
	for _, key := range []string{"error", "error parsing tool call"} {
		t.Run(key, func(t *testing.T) {
			bad := ollamafake.Turn{Chunks: []api.ChatResponse{{Message: api.Message{Role: "assistant"}}}, Error: "EOF", ErrorKey: key}
			if key != "error" {
				bad.Error = "invalid character 'c' looking for beginning of value"
			}
			fake := ollamafake.New(t, ollamafake.Config{Responder: ollamafake.Script(bad,
				ollamafake.Calls(ollamafake.Call("update_element", `{"id":"r1","text":"Antwerp"}`)), ollamafake.Say("Renamed."))})
			m, err := ollama.New(ollama.Config{Host: fake.URL(), Model: ollamafake.DefaultModel}, nil)
			if err != nil {
				t.Fatal(err)
			}
			box := editTools()
			res, err := New(m, Config{}, nil).Run(context.Background(), Request{Prompt: "rename r1 to Antwerp", Tools: box})
			if err != nil {
				t.Fatal(err)
			}
			if len(res.Steps) == 0 || res.Steps[0].Kind != StepNudge || res.Steps[0].Result != badCallText {
				t.Fatalf("steps %+v, want the bad-call hint first", res.Steps)
			}
			if got, want := callsText(box.calls), `[update_element{"id":"r1","text":"Antwerp"}]`; got != want {
				t.Errorf("ran %s, want %s", got, want)
			}
		})
	}
}

// TestCallInTextAndFieldKeepsOllamasID: a call Ollama parsed that the model also wrote into the
// text runs once, as the parsed call with Ollama's id, wherever the text put it.
func TestCallInTextAndFieldKeepsOllamasID(t *testing.T) {
	parsed := ollamafake.Call("update_element", `{"id":"r1","text":"Antwerp"}`)
	parsed.ID = "call_ollama_1"
	fake := ollamafake.New(t, ollamafake.Config{Responder: ollamafake.Script(
		textTurn("update_element(id: r1, text: Antwerp)", parsed), ollamafake.Say("Renamed."))})
	m, err := ollama.New(ollama.Config{Host: fake.URL(), Model: ollamafake.DefaultModel}, nil)
	if err != nil {
		t.Fatal(err)
	}
	res, err := New(m, Config{}, nil).Run(context.Background(), Request{Prompt: "rename r1 to Antwerp", Tools: editTools()})
	if err != nil {
		t.Fatal(err)
	}
	var ran []Step
	for _, s := range res.Steps {
		if s.Kind == StepTool {
			ran = append(ran, s)
		}
	}
	if len(ran) != 1 || ran[0].FromText {
		t.Fatalf("tool steps %+v, want one, not from the text", ran)
	}
	reqs := fake.Requests()
	if got := reqs[1].Messages[len(reqs[1].Messages)-2].ToolCalls[0].ID; got != "call_ollama_1" {
		t.Errorf("the call went back as %q, want Ollama's id call_ollama_1", got)
	}
}
