package ollamafake_test

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/excalibot/excalibot/agent/ollamafake"
	"github.com/ollama/ollama/api"
)

// validate checks v against the subset of JSON Schema FromSchema claims to honour; it returns
// the first violation.
func validate(root, s map[string]any, v any, path string) error {
	if ref, ok := s["$ref"].(string); ok {
		cur := any(root)
		for _, p := range strings.Split(strings.TrimPrefix(ref, "#/"), "/") {
			cur = cur.(map[string]any)[p]
		}
		return validate(root, cur.(map[string]any), v, path)
	}
	for _, k := range []string{"anyOf", "oneOf"} {
		if brs, ok := s[k].([]any); ok {
			for _, br := range brs {
				if validate(root, br.(map[string]any), v, path) == nil {
					return nil
				}
			}
			return fmt.Errorf("%s: matches no branch of %s", path, k)
		}
	}
	if all, ok := s["allOf"].([]any); ok {
		for _, br := range all {
			if err := validate(root, br.(map[string]any), v, path); err != nil {
				return err
			}
		}
	}
	if c, ok := s["const"]; ok && fmt.Sprint(c) != fmt.Sprint(v) {
		return fmt.Errorf("%s: %v is not the const %v", path, v, c)
	}
	if e, ok := s["enum"].([]any); ok && !slices.ContainsFunc(e, func(x any) bool { return fmt.Sprint(x) == fmt.Sprint(v) }) {
		return fmt.Errorf("%s: %v is not in the enum %v", path, v, e)
	}
	types := []string{}
	switch t := s["type"].(type) {
	case string:
		types = append(types, t)
	case []any:
		for _, x := range t {
			types = append(types, x.(string))
		}
	}
	if len(types) > 0 && !slices.ContainsFunc(types, func(t string) bool { return isType(v, t) }) {
		return fmt.Errorf("%s: %#v is not of type %v", path, v, types)
	}
	switch x := v.(type) {
	case map[string]any:
		props, _ := s["properties"].(map[string]any)
		for _, r := range anyList(s["required"]) {
			if _, ok := x[r.(string)]; !ok {
				return fmt.Errorf("%s: required %q missing", path, r)
			}
		}
		for k, pv := range x {
			ps, ok := props[k].(map[string]any)
			if !ok {
				if s["additionalProperties"] == false {
					return fmt.Errorf("%s: property %q not allowed", path, k)
				}
				continue
			}
			if err := validate(root, ps, pv, path+"."+k); err != nil {
				return err
			}
		}
	case []any:
		if m, ok := s["minItems"].(float64); ok && float64(len(x)) < m {
			return fmt.Errorf("%s: %d items, fewer than %v", path, len(x), m)
		}
		if m, ok := s["maxItems"].(float64); ok && float64(len(x)) > m {
			return fmt.Errorf("%s: %d items, more than %v", path, len(x), m)
		}
		if items, ok := s["items"].(map[string]any); ok {
			for i, it := range x {
				if err := validate(root, items, it, fmt.Sprintf("%s[%d]", path, i)); err != nil {
					return err
				}
			}
		}
	case string:
		if m, ok := s["minLength"].(float64); ok && float64(len(x)) < m {
			return fmt.Errorf("%s: %q shorter than %v", path, x, m)
		}
	case float64:
		if m, ok := s["minimum"].(float64); ok && x < m {
			return fmt.Errorf("%s: %v below the minimum %v", path, x, m)
		}
		if m, ok := s["maximum"].(float64); ok && x > m {
			return fmt.Errorf("%s: %v above the maximum %v", path, x, m)
		}
	}
	return nil
}

func anyList(v any) []any { l, _ := v.([]any); return l }

func isType(v any, t string) bool {
	switch t {
	case "object":
		_, ok := v.(map[string]any)
		return ok
	case "array":
		_, ok := v.([]any)
		return ok
	case "string":
		_, ok := v.(string)
		return ok
	case "number":
		_, ok := v.(float64)
		return ok
	case "integer":
		f, ok := v.(float64)
		return ok && f == math.Trunc(f)
	case "boolean":
		_, ok := v.(bool)
		return ok
	case "null":
		return v == nil
	}
	return false
}

// A plan-like schema: nested objects, arrays, enums, refs, optional properties, bounds.
const planSchema = `{
  "type": "object",
  "required": ["kind", "nodes", "edges", "title"],
  "additionalProperties": false,
  "$defs": {"node": {"type": "object", "required": ["id", "label", "shape"],
    "properties": {"id": {"type": "string", "minLength": 3}, "label": {"type": "string"},
      "shape": {"enum": ["rectangle", "ellipse", "diamond"]}, "note": {"type": "string"}}}},
  "properties": {
    "kind": {"const": "flowchart"},
    "title": {"type": ["string", "null"]},
    "direction": {"type": "string", "enum": ["LR", "TB"]},
    "nodes": {"type": "array", "minItems": 3, "items": {"$ref": "#/$defs/node"}},
    "edges": {"type": "array", "maxItems": 1, "items": {"type": "object", "required": ["from", "to", "weight"],
      "properties": {"from": {"type": "string"}, "to": {"type": "string"},
        "weight": {"type": "integer", "minimum": 2}, "dashed": {"type": "boolean"}}}},
    "scale": {"anyOf": [{"type": "null"}, {"type": "number", "minimum": 0.5}]},
    "meta": {"allOf": [{"type": "object", "required": ["a"], "properties": {"a": {"type": "boolean"}}},
      {"required": ["b"], "properties": {"b": {"type": "number"}}}]}
  }
}`

func TestFromSchema(t *testing.T) {
	var root map[string]any
	if err := json.Unmarshal([]byte(planSchema), &root); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name  string
		fill  ollamafake.Fill
		check func(t *testing.T, v map[string]any)
	}{
		{"schema decides", nil, func(t *testing.T, v map[string]any) {
			if len(v) != 4 || len(v["nodes"].([]any)) != 3 || len(v["edges"].([]any)) != 1 {
				t.Errorf("got %v, want the 4 required properties, 3 nodes (minItems), 1 edge (maxItems)", v)
			}
			n := v["nodes"].([]any)[0].(map[string]any)
			if n["label"] != "label" || n["shape"] != "rectangle" || n["id"] != "idx" {
				t.Errorf("node = %v, want label from its name, the enum's first shape, id padded to minLength", n)
			}
		}},
		{"fill chooses", func(path string) any {
			switch path {
			case "nodes":
				return 4
			case "nodes[1].label":
				return "cache"
			case "direction", "meta", "scale", "nodes[0].note":
				return ollamafake.Gen
			case "edges[0].dashed":
				return false
			}
			return nil
		}, func(t *testing.T, v map[string]any) {
			nodes := v["nodes"].([]any)
			if len(nodes) != 4 || nodes[1].(map[string]any)["label"] != "cache" || nodes[0].(map[string]any)["note"] != "note" {
				t.Errorf("nodes = %v, want 4, the second labelled cache, the first with a note", nodes)
			}
			if v["direction"] != "LR" || v["scale"] != 0.5 || v["edges"].([]any)[0].(map[string]any)["dashed"] != false {
				t.Errorf("got %v, want direction LR, scale 0.5, the edge not dashed", v)
			}
			if m := v["meta"].(map[string]any); m["a"] != true || m["b"] != 1.0 {
				t.Errorf("meta = %v, want both allOf branches' required properties", m)
			}
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b, err := ollamafake.FromSchema(json.RawMessage(planSchema), tt.fill)
			if err != nil {
				t.Fatal(err)
			}
			var v map[string]any
			if err := json.Unmarshal(b, &v); err != nil {
				t.Fatalf("%s is not JSON: %v", b, err)
			}
			if err := validate(root, root, v, "$"); err != nil {
				t.Errorf("%s does not validate: %v", b, err)
			}
			tt.check(t, v)
		})
	}
}

// A Fill is asked once per value, so one that hands out values in turn gives each optional
// property the next one: asking again to build what it had already said to include would skip
// values and put the second answer where the first belongs.
func TestFromSchemaAsksFillOnce(t *testing.T) {
	asked := map[string]int{}
	notes := []string{"first", "second", "third"}
	fill := func(path string) any {
		asked[path]++
		if strings.HasSuffix(path, ".note") && len(notes) > 0 {
			n := notes[0]
			notes = notes[1:]
			return n
		}
		return nil
	}
	b, err := ollamafake.FromSchema(json.RawMessage(planSchema), fill)
	if err != nil {
		t.Fatal(err)
	}
	var v struct{ Nodes []struct{ Note string } }
	if err := json.Unmarshal(b, &v); err != nil {
		t.Fatalf("%s is not JSON: %v", b, err)
	}
	var got []string
	for _, n := range v.Nodes {
		got = append(got, n.Note)
	}
	if want := []string{"first", "second", "third"}; !slices.Equal(got, want) {
		t.Errorf("notes %q, want %q", got, want)
	}
	for path, n := range asked {
		if n != 1 {
			t.Errorf("Fill asked %d times for %q, want once", n, path)
		}
	}
	if asked["direction"] != 1 || asked["nodes[2].note"] != 1 {
		t.Errorf("asked %v, want the optional properties asked too", asked)
	}
}

func TestFromSchemaErrors(t *testing.T) {
	tests := []struct{ schema, want string }{
		{`[1]`, "schema is not a JSON object"},
		{`{"type":"object","required":["x"],"properties":{}}`, `required property "x" has no schema`},
		{`{"$ref":"#/$defs/none"}`, `$ref "#/$defs/none" points at nothing`},
		{`{"$ref":"http://example.com/s.json"}`, "is not local"},
		{`{"enum":[]}`, "enum has no values"},
		{`{"type":"object","required":["self"],"properties":{"self":{"$ref":"#"}}}`, "nests deeper than"},
		{`{"type":"tuple"}`, `type "tuple" is not one FromSchema can build`},
	}
	for _, tt := range tests {
		_, err := ollamafake.FromSchema(json.RawMessage(tt.schema), nil)
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("FromSchema(%s): err = %v, want %q", tt.schema, err, tt.want)
		}
	}
}

// Structured answers through the agent's client: a schema's instance, {} for "json", and a
// loud 500 for a request it cannot answer.
func TestStructured(t *testing.T) {
	f := ollamafake.New(t, ollamafake.Config{Models: []string{ollamafake.ToolLessModel},
		Responder: ollamafake.Structured(func(p string) any {
			if p == "title" {
				return "Login flow"
			}
			return nil
		})})
	c := apiClient(t, f)
	chat := func(format string) (string, error) {
		var out strings.Builder
		err := c.Chat(context.Background(), &api.ChatRequest{Model: ollamafake.ToolLessModel,
			Messages: []api.Message{{Role: "user", Content: "plan it"}}, Format: json.RawMessage(format)},
			func(r api.ChatResponse) error { out.WriteString(r.Message.Content); return nil })
		return out.String(), err
	}
	got, err := chat(planSchema)
	if err != nil {
		t.Fatal(err)
	}
	var root, v map[string]any
	_ = json.Unmarshal([]byte(planSchema), &root)
	if err := json.Unmarshal([]byte(got), &v); err != nil {
		t.Fatalf("answer %q is not JSON: %v", got, err)
	}
	if err := validate(root, root, v, "$"); err != nil || v["title"] != "Login flow" {
		t.Errorf("answer %s: %v; want a valid instance titled Login flow", got, err)
	}
	if got, err := chat(`"json"`); err != nil || got != "{}" {
		t.Errorf(`format "json": got %q, err %v; want {}`, got, err)
	}
	if _, err := chat(``); err == nil || !strings.Contains(err.Error(), "without a format") {
		t.Errorf("no format: err = %v, want it named", err)
	}
	if _, err := chat(`{"enum":[]}`); err == nil || !strings.Contains(err.Error(), "enum has no values") {
		t.Errorf("unbuildable schema: err = %v, want it named", err)
	}
}
