package agent

import (
	"bytes"
	"encoding/json"
	"fmt"
	"regexp"
	"strings"
)

// Small models sometimes write a tool call into the reply text instead of the tool-call field:
// Qwen-style <tool_call>{…}</tool_call> tags, or a bare JSON object (or array of them), sometimes in
// a ```json fence. parseTextCalls recovers those calls so they run like any other.

var (
	toolCallTag = regexp.MustCompile(`(?s)<tool_call>\s*(.*?)\s*(?:</tool_call>|$)`)
	nameField   = regexp.MustCompile(`"name"\s*:\s*"([^"]{1,64})"`)
	jsonFence   = regexp.MustCompile("(?s)^```(?:json)?\\s*(.*?)\\s*```$")
)

// parseTextCalls returns the tool calls written in content and the content without them. It
// returns no calls when the text holds none; plain prose is never mistaken for a call because a
// call needs a "name" and an arguments object (or, inside tags, at least a name).
func parseTextCalls(content string) (calls []ToolCall, rest string) {
	if strings.Contains(content, "<tool_call>") {
		for _, m := range toolCallTag.FindAllStringSubmatch(content, -1) {
			calls = append(calls, parseTaggedCall(m[1]))
		}
		return calls, strings.TrimSpace(toolCallTag.ReplaceAllString(content, ""))
	}
	s := strings.TrimSpace(content)
	// Llama's and Mistral's own markers in front of a call written as text.
	for _, p := range []string{"<|python_tag|>", "[TOOL_CALLS]"} {
		s = strings.TrimSpace(strings.TrimPrefix(s, p))
	}
	if m := jsonFence.FindStringSubmatch(s); m != nil {
		s = m[1]
	}
	if s == "" || (s[0] != '{' && s[0] != '[') {
		return nil, content
	}
	var raw any
	if err := json.Unmarshal([]byte(s), &raw); err != nil {
		return nil, content
	}
	items, ok := raw.([]any)
	if !ok {
		items = []any{raw}
	}
	for _, it := range items {
		obj, ok := it.(map[string]any)
		if !ok {
			return nil, content
		}
		c, ok := callFromObject(obj, true)
		if !ok {
			return nil, content // not every item is a call: treat the whole text as prose
		}
		calls = append(calls, c)
	}
	return calls, ""
}

// parseTaggedCall reads the inside of <tool_call> tags. Broken JSON still yields a call (with
// ArgsErr) when a name can be found, so the model gets told what was wrong.
func parseTaggedCall(s string) ToolCall {
	var obj map[string]any
	dec := json.NewDecoder(strings.NewReader(s))
	dec.UseNumber()
	if err := dec.Decode(&obj); err != nil {
		c := ToolCall{ArgsErr: "the tool call is not valid JSON: " + err.Error()}
		if m := nameField.FindStringSubmatch(s); m != nil {
			c.Name = m[1]
		}
		return c
	}
	c, ok := callFromObject(obj, false)
	if !ok {
		return ToolCall{ArgsErr: `a tool call needs {"name": "...", "arguments": {...}}`}
	}
	return c
}

// callFromObject reads {"name", "arguments"|"parameters"} and the OpenAI-style
// {"function": {"name", "arguments"}}. strict requires an arguments key (bare JSON in prose).
func callFromObject(obj map[string]any, strict bool) (ToolCall, bool) {
	if fn, ok := obj["function"].(map[string]any); ok {
		obj = fn
	}
	name, ok := obj["name"].(string)
	if !ok || name == "" {
		return ToolCall{}, false
	}
	args, has := obj["arguments"]
	if !has {
		args, has = obj["parameters"]
	}
	if !has {
		if strict {
			return ToolCall{}, false
		}
		return ToolCall{Name: name, Args: json.RawMessage("{}")}, true
	}
	c := ToolCall{Name: name}
	c.Args, c.ArgsErr = argsJSON(args)
	return c, true
}

// argsJSON turns decoded arguments back into a JSON object. Arguments written as a JSON string
// holding an object are accepted, since models do that often.
func argsJSON(v any) (json.RawMessage, string) {
	if s, ok := v.(string); ok {
		var inner any
		if err := json.Unmarshal([]byte(s), &inner); err != nil {
			return nil, "arguments are not valid JSON: " + err.Error()
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

// unwrapArgs undoes one level of extra nesting ({"arguments": {…}}) that some models add, unless
// the tool really has a parameter of that name.
func unwrapArgs(args json.RawMessage, schema json.RawMessage) json.RawMessage {
	if len(args) == 0 || !bytes.Contains(args, []byte(`"arguments"`)) && !bytes.Contains(args, []byte(`"parameters"`)) {
		return args
	}
	var obj map[string]json.RawMessage
	if json.Unmarshal(args, &obj) != nil || len(obj) != 1 {
		return args
	}
	for k, inner := range obj {
		if k != "arguments" && k != "parameters" {
			return args
		}
		var s struct {
			Properties map[string]json.RawMessage `json:"properties"`
		}
		if json.Unmarshal(schema, &s) == nil {
			if _, real := s.Properties[k]; real {
				return args
			}
		}
		if t := bytes.TrimSpace(inner); len(t) > 0 && t[0] == '{' {
			return t
		}
	}
	return args
}
