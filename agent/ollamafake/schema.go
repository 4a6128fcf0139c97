package ollamafake

import (
	"encoding/json"
	"fmt"
	"math"
	"net/http"
	"strconv"
	"strings"

	"github.com/ollama/ollama/api"
)

// Fill chooses values while FromSchema builds an instance of a schema. It is called once with
// the path of each value — "" for the root, then property names joined by dots and item indexes in
// brackets, e.g. "nodes[1].label" — and returns the value to put there (any JSON value, used as
// is), or nil to let the schema decide. For an array, an int is the number of items to build.
// An optional property is left out unless Fill returns a value for it; Gen builds it from the
// schema.
type Fill func(path string) any

// Gen, returned by a Fill, builds the value at its path from the schema; it is how a Fill asks
// for an optional property without giving its value.
var Gen any = gen{}

type gen struct{}

// FromSchema builds a JSON instance of a JSON Schema, as a model constrained by Ollama's format
// would write: an object has its required properties (and optional ones Fill gives), an array
// has Fill's count of items or its minItems or 2, an enum its first value, a const its value, a
// string Fill's text or its property's name, a number or integer its minimum or 1, a boolean
// true. anyOf and oneOf take their first branch, allOf merges its branches' properties, $ref
// follows "#/$defs/…" and "#/definitions/…". A nil fill lets the schema decide everything.
func FromSchema(schema json.RawMessage, fill Fill) ([]byte, error) {
	var root map[string]any
	if err := json.Unmarshal(schema, &root); err != nil {
		return nil, fmt.Errorf("schema is not a JSON object: %w", err)
	}
	if fill == nil {
		fill = func(string) any { return nil }
	}
	b := builder{root: root, fill: fill}
	v, err := b.value(root, "", "", 0)
	if err != nil {
		return nil, err
	}
	return json.Marshal(v)
}

type builder struct {
	root map[string]any
	fill Fill
}

// maxDepth stops a recursive schema whose required properties never end.
const maxDepth = 32

func (b builder) value(s map[string]any, path, name string, depth int) (any, error) {
	return b.build(s, path, name, b.fill(path), depth)
}

// build makes the value at path from the schema and v, what Fill returned there; it is split
// from value so an optional property's Fill answer, asked to decide whether it appears, is also
// the one used (a Fill that hands out values in turn is asked once per value).
func (b builder) build(s map[string]any, path, name string, v any, depth int) (any, error) {
	if depth > maxDepth {
		return nil, fmt.Errorf("schema at %q nests deeper than %d levels", path, maxDepth)
	}
	s, err := b.resolve(s, path)
	if err != nil {
		return nil, err
	}
	if _, ok := v.(gen); ok {
		v = nil
	}
	typ := typeOf(s)
	if v != nil && (typ != "array" || !isInt(v)) {
		return v, nil
	}
	if c, ok := s["const"]; ok {
		return c, nil
	}
	if e, ok := s["enum"].([]any); ok {
		if len(e) == 0 {
			return nil, fmt.Errorf("schema at %q: enum has no values", path)
		}
		return e[0], nil
	}
	switch typ {
	case "object":
		return b.object(s, path, depth)
	case "array":
		return b.array(s, path, name, v, depth)
	case "string":
		text := name
		if text == "" {
			text = "text"
		}
		if n, ok := num(s["minLength"]); ok && len(text) < int(n) {
			text += strings.Repeat("x", int(n)-len(text))
		}
		return text, nil
	case "integer":
		n := 1.0
		if m, ok := lowest(s); ok {
			n = math.Ceil(m)
		}
		return int64(n), nil
	case "number":
		if m, ok := lowest(s); ok {
			return m, nil
		}
		return 1.0, nil
	case "boolean":
		return true, nil
	case "null":
		return nil, nil
	}
	return nil, fmt.Errorf("schema at %q: type %q is not one FromSchema can build", path, typ)
}

func (b builder) object(s map[string]any, path string, depth int) (any, error) {
	props, _ := s["properties"].(map[string]any)
	required := map[string]bool{}
	if rs, ok := s["required"].([]any); ok {
		for _, r := range rs {
			name, ok := r.(string)
			if !ok {
				return nil, fmt.Errorf("schema at %q: required holds %v, not a property name", path, r)
			}
			required[name] = true
		}
	}
	out := map[string]any{}
	for name, p := range props {
		ps, ok := p.(map[string]any)
		if !ok {
			return nil, fmt.Errorf("schema at %q: property %q is not a schema object", path, name)
		}
		sub := join(path, name)
		fv := b.fill(sub)
		if !required[name] && fv == nil {
			continue
		}
		v, err := b.build(ps, sub, name, fv, depth+1)
		if err != nil {
			return nil, err
		}
		out[name] = v
	}
	for name := range required {
		if _, ok := props[name]; !ok {
			return nil, fmt.Errorf("schema at %q: required property %q has no schema", path, name)
		}
	}
	return out, nil
}

func (b builder) array(s map[string]any, path, name string, count any, depth int) (any, error) {
	n := 2
	if m, ok := num(s["minItems"]); ok && int(m) > n {
		n = int(m)
	}
	if m, ok := num(s["maxItems"]); ok && int(m) < n {
		n = int(m)
	}
	if isInt(count) {
		n = toInt(count)
	}
	items, _ := s["items"].(map[string]any)
	if items == nil {
		items = map[string]any{"type": "string"}
	}
	out := make([]any, 0, n)
	for i := range n {
		v, err := b.value(items, path+"["+strconv.Itoa(i)+"]", name, depth+1)
		if err != nil {
			return nil, err
		}
		out = append(out, v)
	}
	return out, nil
}

// resolve follows $ref and folds anyOf, oneOf and allOf into one schema.
func (b builder) resolve(s map[string]any, path string) (map[string]any, error) {
	for range maxDepth {
		ref, ok := s["$ref"].(string)
		if !ok {
			break
		}
		target, err := b.lookup(ref)
		if err != nil {
			return nil, fmt.Errorf("schema at %q: %w", path, err)
		}
		s = target
	}
	for _, k := range []string{"anyOf", "oneOf"} {
		if branches, ok := s[k].([]any); ok && len(branches) > 0 {
			// The first branch that is not just null, as a model would pick.
			pick, _ := branches[0].(map[string]any)
			for _, br := range branches {
				if m, ok := br.(map[string]any); ok && m["type"] != "null" {
					pick = m
					break
				}
			}
			if pick == nil {
				return nil, fmt.Errorf("schema at %q: %s holds no schema object", path, k)
			}
			return b.resolve(pick, path)
		}
	}
	if all, ok := s["allOf"].([]any); ok {
		merged := map[string]any{}
		props := map[string]any{}
		var required []any
		for _, br := range all {
			m, ok := br.(map[string]any)
			if !ok {
				return nil, fmt.Errorf("schema at %q: allOf holds a value that is not a schema object", path)
			}
			m, err := b.resolve(m, path)
			if err != nil {
				return nil, err
			}
			for k, v := range m {
				merged[k] = v
			}
			if p, ok := m["properties"].(map[string]any); ok {
				for k, v := range p {
					props[k] = v
				}
			}
			if r, ok := m["required"].([]any); ok {
				required = append(required, r...)
			}
		}
		merged["properties"], merged["required"] = props, required
		s = merged
	}
	return s, nil
}

func (b builder) lookup(ref string) (map[string]any, error) {
	if ref == "#" {
		return b.root, nil
	}
	rest, ok := strings.CutPrefix(ref, "#/")
	if !ok {
		return nil, fmt.Errorf("$ref %q is not local to the schema", ref)
	}
	var cur any = b.root
	for _, part := range strings.Split(rest, "/") {
		m, ok := cur.(map[string]any)
		if !ok {
			return nil, fmt.Errorf("$ref %q points at nothing", ref)
		}
		part = strings.ReplaceAll(strings.ReplaceAll(part, "~1", "/"), "~0", "~")
		if cur, ok = m[part]; !ok {
			return nil, fmt.Errorf("$ref %q points at nothing", ref)
		}
	}
	m, ok := cur.(map[string]any)
	if !ok {
		return nil, fmt.Errorf("$ref %q points at a value that is not a schema object", ref)
	}
	return m, nil
}

// typeOf is the schema's type; of a list of types, the first that is not null; with no type,
// what its keywords imply.
func typeOf(s map[string]any) string {
	switch t := s["type"].(type) {
	case string:
		return t
	case []any:
		for _, x := range t {
			if str, ok := x.(string); ok && str != "null" {
				return str
			}
		}
		return "null"
	}
	switch {
	case s["properties"] != nil:
		return "object"
	case s["items"] != nil:
		return "array"
	}
	return "string"
}

// lowest is the smallest number a numeric schema allows, when it says.
func lowest(s map[string]any) (float64, bool) {
	if m, ok := num(s["minimum"]); ok {
		return m, true
	}
	if m, ok := num(s["exclusiveMinimum"]); ok {
		return m + 1, true
	}
	return 0, false
}

func num(v any) (float64, bool) {
	f, ok := v.(float64)
	return f, ok
}

func isInt(v any) bool {
	switch v.(type) {
	case int, int64:
		return true
	}
	return false
}

func toInt(v any) int {
	switch n := v.(type) {
	case int:
		return n
	case int64:
		return int(n)
	}
	return 0
}

func join(path, name string) string {
	if path == "" {
		return name
	}
	return path + "." + name
}

// Structured is an instant model that answers a request's format: for a JSON schema, an
// instance FromSchema builds with fill; for "json", {}. A request without a format, or with a
// schema FromSchema cannot build, gets a 500 naming the fact, so a test that expected structured
// output fails loudly.
func Structured(fill Fill) Responder {
	return func(req api.ChatRequest) Turn {
		switch f := strings.TrimSpace(string(req.Format)); {
		case f == "" || f == "null" || f == `""`:
			return Fail(http.StatusInternalServerError, "ollamafake: Structured got a request without a format")
		case f == `"json"`:
			return Say("{}")
		}
		b, err := FromSchema(req.Format, fill)
		if err != nil {
			return Fail(http.StatusInternalServerError, "ollamafake: "+err.Error())
		}
		return Say(string(b))
	}
}
