package textcall

import (
	"strings"
	"testing"
)

func TestParse(t *testing.T) {
	tests := []struct {
		name, in string
		want     []string // "name args" or "name !err-substring"
		rest     string
	}{
		{"prose", "I drew the diagram.", nil, "I drew the diagram."},
		{"json that is not a call", `{"answer": 42}`, nil, `{"answer": 42}`},
		{"bare call", `{"name":"done","arguments":{}}`, []string{"done {}"}, ""},
		{"parameters key", `{"name":"get_scene","parameters":{"x":1}}`, []string{`get_scene {"x":1}`}, ""},
		{"openai shape", `{"type":"function","function":{"name":"done","arguments":"{\"summary\":\"ok\"}"}}`, []string{`done {"summary":"ok"}`}, ""},
		{"array of calls", `[{"name":"a","arguments":{}},{"name":"b","arguments":{"k":"v"}}]`, []string{"a {}", `b {"k":"v"}`}, ""},
		{"array with prose item", `[{"name":"a","arguments":{}}, 3]`, nil, `[{"name":"a","arguments":{}}, 3]`},
		{"fenced", "```json\n{\"name\":\"done\",\"arguments\":{}}\n```", []string{"done {}"}, ""},
		{"llama python tag", `<|python_tag|>{"type":"function","name":"done","parameters":{"summary":"ok"}}`, []string{`done {"summary":"ok"}`}, ""},
		{"mistral marker", `[TOOL_CALLS][{"name":"get_scene","arguments":{}}]`, []string{"get_scene {}"}, ""},
		{"tags with text", "Sure.\n<tool_call>\n{\"name\":\"done\",\"arguments\":{}}\n</tool_call>", []string{"done {}"}, "Sure."},
		{"two tags", "<tool_call>{\"name\":\"a\",\"arguments\":{}}</tool_call><tool_call>{\"name\":\"b\"}</tool_call>", []string{"a {}", "b {}"}, ""},
		{"unclosed tag", "<tool_call>{\"name\":\"done\",\"arguments\":{}}", []string{"done {}"}, ""},
		{"broken json in tag", `<tool_call>{"name": "update_element", "arguments": {"id": </tool_call>`, []string{"update_element !not valid JSON"}, ""},
		{"args as bad string", `{"name":"done","arguments":"{oops"}`, []string{"done !not valid JSON"}, ""},
		{"args as array", `{"name":"done","arguments":[1]}`, []string{"done !must be a JSON object, not an array"}, ""},
		{"tag without name", `<tool_call>{"arguments":{}}</tool_call>`, nil, `{"arguments":{}}`},
		// Every wrapper real models use, with the keys they use.
		{"tool_calls tag", `<tool_calls>[{"name":"done","arguments":{}}]</tool_calls>`, []string{"done {}"}, ""},
		{"tools tag", `<tools>{"tool":"done","args":{}}</tools>`, []string{"done {}"}, ""},
		{"tool tag", `<tool>{"tool_name":"done","parameters":{}}</tool>`, []string{"done {}"}, ""},
		{"function_call tag", `<function_call>{"function":"done","arguments":{}}</function_call>`, []string{"done {}"}, ""},
		{"response tag", `<response>{"name":"done","arguments":{}}</response>`, []string{"done {}"}, ""},
		{"xml fence", "```xml\n<tool_call>{\"name\":\"done\",\"arguments\":{}}</tool_call>\n```", []string{"done {}"}, ""},
		{"tool_call fence", "```tool_call\n{\"name\":\"done\",\"arguments\":{}}\n```", []string{"done {}"}, ""},
		{"function equals", `<function=get_scene>{}</function>`, []string{"get_scene {}"}, ""},
		{"mistral name args", `[TOOL_CALLS]get_scene[ARGS]{}[TOOL_CALLS]done[ARGS]{"summary":"ok"}`, []string{"get_scene {}", `done {"summary":"ok"}`}, ""},
		{"deepseek tokens", "<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>function<｜tool▁sep｜>done\n```json\n{\"summary\":\"ok\"}\n```<｜tool▁call▁end｜><｜tool▁calls▁end｜>", []string{`done {"summary":"ok"}`}, ""},
		{"functools", `functools[{"name":"done","arguments":{}}]`, []string{"done {}"}, ""},
		{"semicolons between", `{"name":"a","arguments":{}}; {"name":"b","arguments":{}}`, []string{"a {}", "b {}"}, ""},
		{"commas between", `{"name":"a","arguments":{}}, {"name":"b","arguments":{}}`, []string{"a {}", "b {}"}, ""},
		{"missing opening tag", `{"name":"a","arguments":{}}</tool_call>` + "\n" + `<tool_call>{"name":"b","arguments":{}}</tool_call>`, []string{"a {}", "b {}"}, ""},
		{"json-rpc", `{"jsonrpc":"2.0","method":"done","params":{"summary":"ok"}}`, []string{`done {"summary":"ok"}`}, ""},
		{"envelope", `{"tool_calls":[{"function":{"name":"done","arguments":{}}}]}`, []string{"done {}"}, ""},
		{"python dict", `<tool_call>{'name': 'done', 'arguments': {'summary': 'ok', 'n': 1, 'x': None, 'y': True,}}</tool_call>`, []string{`done {"n":1,"summary":"ok","x":null,"y":true}`}, ""},
		{"prose inside tags", "<tool_call>I think the diagram is fine as it is.</tool_call>", nil, "I think the diagram is fine as it is."},
		{"control tokens", "All set.<|im_end|><|eot_id|>", nil, "All set."},
		{"granite no call", "<no_tool_call>Hello!", nil, "Hello!"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			calls, rest := Parse(tt.in, nil)
			var got []string
			for _, c := range calls {
				if c.ArgsErr != "" {
					got = append(got, c.Name+" !"+c.ArgsErr)
				} else {
					got = append(got, c.Name+" "+string(c.Args))
				}
			}
			if len(got) != len(tt.want) {
				t.Fatalf("got %q, want %q", got, tt.want)
			}
			for i := range got {
				w := tt.want[i]
				if name, sub, isErr := strings.Cut(w, " !"); isErr {
					if !strings.HasPrefix(got[i], name+" !") || !strings.Contains(got[i], sub) {
						t.Errorf("call %d: got %q, want %q", i, got[i], w)
					}
				} else if got[i] != w {
					t.Errorf("call %d: got %q, want %q", i, got[i], w)
				}
			}
			if rest != tt.rest {
				t.Errorf("rest %q, want %q", rest, tt.rest)
			}
		})
	}
}

func TestStripThinking(t *testing.T) {
	tests := []struct{ in, want string }{
		{"Done.", "Done."},
		{"<think>plan the boxes</think>\nDone.", "Done."},
		{"<think>never closed", ""},
		{`<think>x</think>{"name":"done","arguments":{}}`, `{"name":"done","arguments":{}}`},
	}
	for _, tt := range tests {
		if got := StripThinking(tt.in); got != tt.want {
			t.Errorf("StripThinking(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}
