package textcall

import (
	"encoding/json"
	"strings"
	"testing"
)

// toolbox is a few of the drawing tools, with their parameters' types.
var toolbox = Types{
	"update_element":  {"id": "string", "text": "string", "x": "number"},
	"delete_elements": {"ids": "array"},
	"get_scene":       {},
}

// TestParseShapes covers the shapes of calls that real models write and that a toolbox is needed
// to read: each names its tool, and its values leave no doubt.
func TestParseShapes(t *testing.T) {
	const want = `update_element {"id":"r1","text":"Antwerp"}`
	tests := []struct {
		name, in string
		want     []string
		rest     string
	}{
		{"colon syntax", `update_element(id: r1, text: Antwerp)`, []string{want}, ""},
		{"colon syntax, single quotes", `update_element(id: 'r1', text: 'Antwerp')`, []string{want}, ""},
		{"colon syntax in a fence", "```\nupdate_element(id: r1, text: Antwerp)\n```", []string{want}, ""},
		{"colon syntax in a cut tag", "<tool_call>\nupdate_element(id: r1, text: Antwerp)", []string{want}, ""},
		{"colon syntax, a number", `update_element(id: r1, x: 120)`, []string{`update_element {"id":"r1","x":120}`}, ""},
		{"colon value that is not plain", `update_element(id: r1, text: a(b))`, nil, `update_element(id: r1, text: a(b))`},
		{"JavaScript object as the only argument", `update_element({id: "r1", text: "Antwerp"})`, []string{want}, ""},
		{"two positional arguments", `update_element("r1", "Antwerp")`, []string{"update_element !must be named"}, ""},
		{"flattened call keeps the tool's own id", `{"name": "update_element", "id": "r1", "text": "Antwerp"}`, []string{want}, ""},
		{"flattened call drops a call id", `<tool_call>{"name": "get_scene", "id": "call_7"}</tool_call>`, []string{"get_scene {}"}, ""},
		{"parameter values trimmed", "<function=update_element>\n<parameter=id> r1</parameter>\n<parameter=text>Antwerp \n</parameter>\n</function>", []string{want}, ""},
		{"parameter number with spaces", "<function=update_element>\n<parameter=id>r1</parameter>\n<parameter=x> 120 </parameter>\n</function>", []string{`update_element {"id":"r1","x":120}`}, ""},
		{"function_calls invoke", `<function_calls><invoke name="update_element"><parameter name="id" string="true">r1</parameter><parameter name="text" string="true">Antwerp</parameter></invoke></function_calls>`, []string{want}, ""},
		{"DSML invoke", "Sure.\n<｜DSML｜function_calls>\n<｜DSML｜invoke name=\"update_element\">\n<｜DSML｜parameter name=\"id\" string=\"true\">r1</｜DSML｜parameter>\n<｜DSML｜parameter name=\"text\" string=\"true\">Antwerp</｜DSML｜parameter>\n</｜DSML｜invoke>\n</｜DSML｜function_calls>", []string{want}, "Sure."},
		{"invoke cut short", `<invoke name="update_element"><parameter name="id">r1</parameter><parameter name="text">Antwerp</parameter>`, []string{want}, ""},
		{"param dialect", `<function name="update_element"><param name="id">r1</param><param name="text">Antwerp</param></function>`, []string{want}, ""},
		{"name then JSON, twice", "<tool_call>update_element\n{\"id\":\"r1\",\"text\":\"Antwerp\"}\n<tool_call>update_element\n{\"id\":\"r1\",\"text\":\"Antwerp\"}</tool_call>", []string{want, want}, ""},
		{"code after python_tag", "<|python_tag|>import sys\nprint(sys.version)", nil, "import sys\nprint(sys.version)"},
		{"thinking quotes a call", "<seed:think>I will call update_element(id: r9, text: X)</seed:think>" + `update_element(id: r1, text: Antwerp)`, []string{want}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			calls, rest := Parse(tt.in, toolbox)
			checkCalls(t, calls, tt.want)
			if rest != tt.rest {
				t.Errorf("rest %q, want %q", rest, tt.rest)
			}
		})
	}
}

func checkCalls(t *testing.T, calls []Call, want []string) {
	t.Helper()
	var got []string
	for _, c := range calls {
		if c.ArgsErr != "" {
			got = append(got, c.Name+" !"+c.ArgsErr)
		} else {
			got = append(got, c.Name+" "+string(c.Args))
		}
	}
	if len(got) != len(want) {
		t.Fatalf("got %q, want %q", got, want)
	}
	for i := range got {
		w := want[i]
		if name, sub, isErr := strings.Cut(w, " !"); isErr {
			if !strings.HasPrefix(got[i], name+" !") || !strings.Contains(got[i], sub) {
				t.Errorf("call %d: got %q, want %q", i, got[i], w)
			}
		} else if got[i] != w {
			t.Errorf("call %d: got %q, want %q", i, got[i], w)
		}
	}
}

func TestName(t *testing.T) {
	tests := []struct{ in, want string }{
		{"create_graph", "create_graph"},
		{"create_event<|channel|>analysis", "create_event"},
		{"create_graph<|channel|>commentary json", "create_graph"},
		{"functions.get_scene", "get_scene"},
		{"done<｜tool▁sep｜>", "done"},
		{"<|channel|>", "<|channel|>"}, // nothing before the token: left for the unknown-tool answer
	}
	for _, tt := range tests {
		if got := Name(tt.in); got != tt.want {
			t.Errorf("Name(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestCoerce(t *testing.T) {
	tests := []struct{ tool, in, want string }{
		{"delete_elements", `{"ids":"['r2']"}`, `{"ids":["r2"]}`},
		{"delete_elements", `{"ids":"[\"r2\", \"r3\"]"}`, `{"ids":["r2","r3"]}`},
		{"delete_elements", `{"ids":["r2"]}`, `{"ids":["r2"]}`},
		{"delete_elements", `{"ids":"r2"}`, `{"ids":"r2"}`}, // not a list: the tool says what is wrong
		{"update_element", `{"id":"['r2']"}`, `{"id":"['r2']"}`},
		{"unknown", `{"ids":"['r2']"}`, `{"ids":"['r2']"}`},
	}
	for _, tt := range tests {
		got := toolbox.Coerce(tt.tool, json.RawMessage(tt.in))
		if string(got) != tt.want {
			t.Errorf("Coerce(%s, %s) = %s, want %s", tt.tool, tt.in, got, tt.want)
		}
	}
}

func TestLooksLikeCall(t *testing.T) {
	tests := []struct {
		in   string
		want bool
	}{
		{`<|python_tag|>{"name": "done"`, true},
		{`<|python_tag|>update_element(id=`, true},
		{"<|python_tag|>import sys\nprint(sys.version)", false},
		{`<invoke name="update_element"><parameter name="id">`, true},
		{"The diagram shows three boxes.", false},
	}
	for _, tt := range tests {
		if got := LooksLikeCall(tt.in, toolbox); got != tt.want {
			t.Errorf("LooksLikeCall(%q) = %v, want %v", tt.in, got, tt.want)
		}
	}
}

// TestParseOffsetAfterThinking: a call's offset counts from the start of the reply as the model
// wrote it, thinking included, whatever whitespace ends the reply (calls in the text and calls
// Ollama parsed run in the order written).
func TestParseOffsetAfterThinking(t *testing.T) {
	const call = `<tool_call>{"name": "get_scene", "arguments": {}}</tool_call>`
	for _, tail := range []string{"", "\n", "  \n\n"} {
		in := "<think>hmm hmm hmm</think>\n" + call + tail
		calls, _ := Parse(in, toolbox)
		if want := strings.Index(in, `{"name"`); len(calls) != 1 || calls[0].At != want {
			t.Errorf("tail %q: got %+v, want one call at %d", tail, calls, want)
		}
	}
}
