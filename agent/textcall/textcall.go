// Package textcall reads the tool calls a model wrote into its reply text instead of the
// tool-call field, and what is left of the reply for a person to read. Its functions are pure and
// fuzzed: model text is untrusted input.
//
// Small models often write their calls in whatever wrapper their chat template or fine-tune
// taught them: Hermes/Qwen <tool_call> tags, Llama's <|python_tag|> and bare {"name",
// "parameters"} objects, Mistral's [TOOL_CALLS], Phi's and Firefunction's functools[…], Granite's
// <|tool_call|>, Functionary's and Qwen3-Coder's <function=NAME>, DeepSeek's and Kimi's tool
// tokens, GLM's <arg_key> pairs, <invoke name=…><parameter name=…> markup (MiniMax-M2, Step 3,
// DeepSeek-V3.2's DSML), Llama 3.2's and LFM2's Python calls [name(k="v")] (also name(k: v) and
// name({k: "v"})), JSON-RPC objects, {"tool_calls": […]} envelopes, code fences of every language,
// with prose around them.
// Parse recovers every call in the text, in order, and returns what is left for a person to read.
//
// It does not guess: a JSON value counts as a call only when it names a tool and carries
// arguments (or names a tool of the toolbox, or sits inside a call wrapper), and a Python-style
// call only for a tool of the toolbox. Text that merely sits in call tags stays text.
package textcall

import (
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"sort"
	"strings"
)

// Call is one tool call read from text.
type Call struct {
	Name string
	// Args is the JSON object of arguments. When what the model wrote is not one, Args is nil
	// and ArgsErr says what was wrong, for the model to read.
	Args    json.RawMessage
	ArgsErr string
	// At is where the call starts in the content given to Parse (a byte offset), for ordering it
	// against calls that arrived in the tool-call field.
	At int
}

// span is a byte range of the content taken by a recovered call.
type span struct{ start, end int }

// foundCall is a call and where it was written.
type foundCall struct {
	call Call
	at   span
}

type callReader struct {
	s     string
	known Types
	taken []span
	found []foundCall
	// wrapped: the text carries a call wrapper, so a JSON object that only names a tool is a call.
	wrapped bool
}

// Parse returns the tool calls written in content (known: the toolbox's tools) and the
// content without them, without call wrappers and without control tokens.
func Parse(content string, known Types) (calls []Call, rest string) {
	stripped := StripThinking(content)
	shift := 0 // thinking usually opens the reply: offsets after it still count from the start
	if i := strings.LastIndex(content, stripped); i >= 0 && stripped != "" {
		shift = i // StripThinking also trims, so the rest need not end the content
	}
	content = stripped
	r := &callReader{s: content, known: known, wrapped: callWrapper.MatchString(content)}
	r.deepSeek()
	r.kimi()
	r.functionEq()
	r.mistral()
	r.glm()
	r.nameJSON()
	r.invoke()
	r.functionGemma()
	r.xmlTool()
	r.python()
	r.brokenTagged()
	r.json()
	sort.SliceStable(r.found, func(i, j int) bool { return r.found[i].at.start < r.found[j].at.start })
	for _, f := range r.found {
		f.call.At = f.at.start + shift
		calls = append(calls, f.call)
	}
	return calls, Visible(r.rest())
}

// callWrapper matches the tags and markers that announce a call.
var callWrapper = regexp.MustCompile(`(?i)<tool_?calls?>|invoke\s+name\s*=|<[a-z]+:tool_call>|<tools?>|<function_calls?>|<function=|<response>|\[TOOL_CALLS\]|<\|python_tag\|>|functools\[|<\|tool_calls?\|>|<\|tool_call_start\|>|tool▁call|<start_function_call>|` + "```(?:tool_calls?|tool_code|function_call)")

func (r *callReader) isTaken(i int) bool {
	for _, t := range r.taken {
		if i >= t.start && i < t.end {
			return true
		}
	}
	return false
}

func (r *callReader) overlaps(a span) bool {
	for _, t := range r.taken {
		if a.start < t.end && t.start < a.end {
			return true
		}
	}
	return false
}

func (r *callReader) take(at span, calls ...Call) {
	r.taken = append(r.taken, at)
	for _, c := range calls {
		r.found = append(r.found, foundCall{call: c, at: at})
	}
}

// rest is the content without the taken spans.
func (r *callReader) rest() string {
	if len(r.taken) == 0 {
		return r.s
	}
	sort.Slice(r.taken, func(i, j int) bool { return r.taken[i].start < r.taken[j].start })
	var b strings.Builder
	at := 0
	for _, t := range r.taken {
		if t.start > at {
			b.WriteString(r.s[at:t.start])
		}
		at = max(at, t.end)
	}
	b.WriteString(r.s[at:])
	return b.String()
}

// json takes every JSON (or Python-literal) value in the text that is a call or a list of calls.
// A value that is not a call is skipped whole, so data inside it is never read as a call.
func (r *callReader) json() {
	repaired := false
	for i := 0; i < len(r.s); i++ {
		if c := r.s[i]; (c != '{' && c != '[') || r.isTaken(i) {
			continue
		}
		v, n, err := readLiteral(r.s[i:])
		if err != nil {
			// A value cut short at the end of the reply (the model stopped a brace early) is
			// closed and read again, once per reply: the reply can end only one value.
			var le *literalError
			if repaired || !errors.As(err, &le) || !le.AtEnd {
				continue
			}
			repaired = true
			if v, n, err = readLiteral(r.s[i:] + closers(r.s[i:])); err != nil || n < len(r.s)-i {
				continue
			}
			n = len(r.s) - i
		}
		at := span{i, i + n}
		// Phi-4's and Firefunction's marker is part of the call: functools[…].
		if before := strings.TrimRight(r.s[:i], " "); strings.HasSuffix(before, "functools") {
			at.start = len(before) - len("functools")
		}
		if calls, ok := r.callsFrom(v); ok && !r.overlaps(at) {
			r.take(at, calls...)
		}
		i += n - 1
	}
}

// brokenTagged answers a <tool_call> block whose JSON cannot be read but that names a tool: the
// model meant a call, so it is told what was wrong instead of being ignored.
func (r *callReader) brokenTagged() {
	for _, m := range taggedBlock.FindAllStringSubmatchIndex(r.s, -1) {
		at := span{m[0], m[1]}
		inner := strings.TrimSpace(r.s[m[2]:m[3]])
		if r.overlaps(at) || inner == "" || (inner[0] != '{' && inner[0] != '[') {
			continue
		}
		_, _, err := readLiteral(inner)
		if err == nil {
			continue // readable: the JSON pass decides
		}
		name := nameField.FindStringSubmatch(inner)
		if name == nil {
			continue
		}
		r.take(at, Call{Name: name[1], ArgsErr: "the tool call is not valid JSON: " + err.Error()})
	}
}

var (
	taggedBlock = regexp.MustCompile(`(?s)<tool_?call>(.*?)(?:</tool_?call>|$)`)
	nameField   = regexp.MustCompile(`["']name["']\s*:\s*["']([A-Za-z0-9_.\-]{1,64})["']`)
)

// Keys under which models put a call's name and its arguments.
var (
	nameKeys = []string{"name", "function", "tool", "tool_name", "function_name", "toolName", "recipient_name"}
	argKeys  = []string{"arguments", "parameters", "args", "params", "input", "tool_input", "kwargs", "action_input"}
	envKeys  = []string{"tool_calls", "function_calls", "calls", "tool_uses"}
)

// callsFrom reads a decoded value as one call or a list of calls.
func (r *callReader) callsFrom(v any) ([]Call, bool) {
	switch t := v.(type) {
	case []any:
		if len(t) == 0 {
			return nil, false
		}
		var out []Call
		for _, it := range t {
			cs, ok := r.callsFrom(it)
			if !ok {
				return nil, false // not every item is a call: the list is data
			}
			out = append(out, cs...)
		}
		return out, true
	case map[string]any:
		return r.callFromObject(t)
	}
	return nil, false
}

func (r *callReader) callFromObject(obj map[string]any) ([]Call, bool) {
	for _, k := range envKeys {
		if inner, ok := obj[k]; ok {
			if cs, ok := r.callsFrom(inner); ok {
				return cs, true
			}
		}
	}
	if fn, ok := obj["function"].(map[string]any); ok { // OpenAI: {"type":"function","function":{…}}
		if _, has := fn["name"]; has {
			obj = fn
		}
	}
	if m, ok := obj["method"].(string); ok { // JSON-RPC
		if p, has := obj["params"]; has || obj["jsonrpc"] != nil {
			return []Call{r.callWithArgs(m, p)}, true
		}
	}
	name, nameKey := "", ""
	for _, k := range nameKeys {
		if s, ok := obj[k].(string); ok && s != "" {
			name, nameKey = toolName(s), k
			break
		}
	}
	if nameKey == "" {
		// {"create_graph": {…}}: a known tool as the only key.
		if len(obj) == 1 {
			for k, v := range obj {
				if _, isObj := v.(map[string]any); isObj && r.known.has(toolName(k)) {
					return []Call{r.callWithArgs(toolName(k), v)}, true
				}
			}
		}
		return nil, false
	}
	for _, k := range argKeys {
		if a, ok := obj[k]; ok {
			return []Call{r.callWithArgs(name, a)}, true
		}
	}
	if !r.known.has(name) && !r.wrapped {
		return nil, false // {"name": "Alice"} in prose is data, not a call
	}
	// No arguments key: the other fields are the arguments ({"name":"get_scene"} or a flattened call).
	// id, type and index are a call's metadata, unless the tool declares them ({"name":
	// "update_element", "id": "r1", "text": "…"} edits r1).
	args := map[string]any{}
	for k, v := range obj {
		_, declared := r.known[name][k]
		switch k {
		case nameKey:
		case "type", "id", "call_id", "index":
			if declared {
				args[k] = v
			}
		default:
			args[k] = v
		}
	}
	return []Call{r.callWithArgs(name, args)}, true
}

func (r *callReader) callWithArgs(name string, args any) Call {
	c := Call{Name: name}
	c.Args, c.ArgsErr = argsJSON(args)
	return c
}

// Name is a tool's name as the model meant it: without the namespace some templates put before it
// ("functions.get_scene") and without a control token glued after it (gpt-oss's harmony format
// leaks "create_event<|channel|>analysis" into Ollama's tool_calls).
func Name(s string) string { return toolName(s) }

func toolName(s string) string {
	if i := strings.Index(s, "<|"); i > 0 {
		s = s[:i]
	}
	if i := strings.Index(s, "<｜"); i > 0 {
		s = s[:i]
	}
	s = strings.TrimSpace(s)
	if i := strings.LastIndexByte(s, '.'); i >= 0 && strings.HasPrefix(s, "functions.") {
		s = s[i+1:]
	}
	return s
}

// argsJSON turns decoded arguments back into a JSON object. Arguments written as a string holding
// an object are accepted, since models do that often.
func argsJSON(v any) (json.RawMessage, string) {
	if s, ok := v.(string); ok {
		s = strings.TrimSpace(s)
		if s == "" {
			return json.RawMessage("{}"), ""
		}
		inner, n, err := readLiteral(s)
		if err != nil {
			return nil, "arguments are not valid JSON: " + err.Error()
		}
		if strings.TrimSpace(s[n:]) != "" {
			return nil, "arguments are not valid JSON: text after the object"
		}
		v = inner
	}
	if v == nil {
		return json.RawMessage("{}"), ""
	}
	if _, ok := v.(map[string]any); !ok {
		return nil, fmt.Sprintf("arguments must be a JSON object, not %s", jsonKind(v))
	}
	b, err := json.Marshal(v)
	if err != nil {
		return nil, "arguments could not be encoded: " + err.Error()
	}
	return b, ""
}

func jsonKind(v any) string {
	switch v.(type) {
	case []any:
		return "an array"
	case string:
		return "a string"
	case bool:
		return "a boolean"
	case json.Number, float64:
		return "a number"
	}
	return "null"
}

// closers returns the brackets that would close every object and array still open at the end of
// s, or "" when s ends inside a string or its brackets do not nest.
func closers(s string) string {
	var stack []byte
	inStr, esc := byte(0), false
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case inStr != 0:
			if esc {
				esc = false
			} else if c == '\\' {
				esc = true
			} else if c == inStr {
				inStr = 0
			}
		case c == '"' || c == '\'':
			inStr = c
		case c == '{':
			stack = append(stack, '}')
		case c == '[':
			stack = append(stack, ']')
		case c == '}' || c == ']':
			if len(stack) == 0 || stack[len(stack)-1] != c {
				return ""
			}
			stack = stack[:len(stack)-1]
		}
	}
	if inStr != 0 || len(stack) == 0 || len(stack) > 3 {
		return ""
	}
	out := make([]byte, len(stack))
	for i := range stack {
		out[i] = stack[len(stack)-1-i]
	}
	return string(out)
}
