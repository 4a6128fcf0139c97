package plan

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/excalibot/excalibot/tools"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata")

// ordered is a JSON value decoded with the order of its objects' keys kept, which the schema's
// meaning depends on (Ollama's grammar makes a model write properties in the schema's order).
type ordered struct {
	keys []string
	obj  map[string]*ordered
	arr  []*ordered
	val  any // a string, json.Number, bool or nil
	kind byte
}

func decodeOrdered(t *testing.T, b []byte) *ordered {
	t.Helper()
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	v, err := readOrdered(dec)
	if err != nil {
		t.Fatalf("decode %s: %v", b, err)
	}
	return v
}

func readOrdered(dec *json.Decoder) (*ordered, error) {
	tok, err := dec.Token()
	if err != nil {
		return nil, err
	}
	switch tok {
	case json.Delim('{'):
		o := &ordered{kind: 'o', obj: map[string]*ordered{}}
		for dec.More() {
			k, err := dec.Token()
			if err != nil {
				return nil, err
			}
			v, err := readOrdered(dec)
			if err != nil {
				return nil, err
			}
			o.keys = append(o.keys, k.(string))
			o.obj[k.(string)] = v
		}
		_, err := dec.Token()
		return o, err
	case json.Delim('['):
		a := &ordered{kind: 'a'}
		for dec.More() {
			v, err := readOrdered(dec)
			if err != nil {
				return nil, err
			}
			a.arr = append(a.arr, v)
		}
		_, err := dec.Token()
		return a, err
	}
	switch tok.(type) {
	case string:
		return &ordered{kind: 's', val: tok}, nil
	case json.Number:
		return &ordered{kind: 'n', val: tok}, nil
	case bool:
		return &ordered{kind: 'b', val: tok}, nil
	}
	return &ordered{kind: '0'}, nil
}

func (o *ordered) strs() []string {
	var out []string
	for _, v := range o.arr {
		s, _ := v.val.(string)
		out = append(out, s)
	}
	return out
}

// TestSchemaOrder: the plan's properties come in the order a model should think in, and the
// required ones first, since Ollama's grammar converter writes required properties in the
// schema's order and every optional one after them.
func TestSchemaOrder(t *testing.T) {
	s := decodeOrdered(t, Schema())
	want := []string{"kind", "direction", "title", "groups", "nodes", "edges", "messages", "remove"}
	if got := s.obj["properties"].keys; !reflect.DeepEqual(got, want) {
		t.Errorf("properties in the order %v, want %v", got, want)
	}
	if got, want := s.obj["required"].strs(), want[:6]; !reflect.DeepEqual(got, want) {
		t.Errorf("required %v, want %v (kind, direction, title and groups before nodes and edges)", got, want)
	}
	if _, ok := s.obj["properties"].obj["summary"]; ok {
		t.Error("the schema asks for a summary; the reply says what changed from the scene")
	}
	group := s.obj["properties"].obj["groups"].obj["items"]
	if got, want := group.obj["properties"].keys, []string{"title", "nodes", "parent", "id"}; !reflect.DeepEqual(got, want) {
		t.Errorf("a group's properties %v, want %v", got, want)
	}
	node := s.obj["properties"].obj["nodes"].obj["items"].obj["anyOf"].arr[1]
	if got, want := node.obj["properties"].keys, []string{"label", "id", "shape", "color"}; !reflect.DeepEqual(got, want) {
		t.Errorf("a node's properties %v, want %v (the label first: it is the node's name)", got, want)
	}
}

// grammarKeywords are the JSON Schema keywords llama.cpp's json-schema-to-grammar (the converter
// Ollama runs on a request's format) turns into grammar; others are ignored or refused by it.
var grammarKeywords = map[string]bool{"type": true, "properties": true, "required": true, "items": true, "enum": true,
	"const": true, "anyOf": true, "oneOf": true, "minItems": true, "maxItems": true, "pattern": true, "description": true,
	"additionalProperties": true}

// TestSchemaGrammarSubset: the plan schema uses only what the grammar converter supports, in
// the way it supports it: no $ref, no format, patterns anchored with ^ and $ and free of the
// syntax it warns about, no "." (which in the grammar would match a quote and end the JSON
// string), and no additional properties.
func TestSchemaGrammarSubset(t *testing.T) {
	var root any
	if err := json.Unmarshal(Schema(), &root); err != nil {
		t.Fatal(err)
	}
	var walk func(path string, v any)
	walk = func(path string, v any) {
		s, ok := v.(map[string]any)
		if !ok {
			t.Errorf("%s: a schema must be an object, got %T", path, v)
			return
		}
		for k := range s {
			if !grammarKeywords[k] {
				t.Errorf("%s: keyword %q is not one the grammar converter supports", path, k)
			}
		}
		if ap, ok := s["additionalProperties"]; ok && ap != false {
			t.Errorf("%s: additionalProperties %v lets a model write any key", path, ap)
		}
		switch typ, _ := s["type"].(string); {
		case s["anyOf"] != nil || s["oneOf"] != nil:
			alts, _ := s["anyOf"].([]any)
			for i, a := range alts {
				walk(fmt.Sprintf("%s.anyOf[%d]", path, i), a)
			}
		case typ == "object":
			props, _ := s["properties"].(map[string]any)
			if len(props) == 0 {
				t.Errorf("%s: an object without properties lets a model write anything", path)
			}
			req, _ := s["required"].([]any)
			for _, r := range req {
				if props[r.(string)] == nil {
					t.Errorf("%s: required %q is not a property", path, r)
				}
			}
			for k, p := range props {
				walk(path+"."+k, p)
			}
		case typ == "array":
			walk(path+"[]", s["items"])
		case typ == "string":
			if p, ok := s["pattern"].(string); ok {
				checkPattern(t, path, p)
			}
		case typ == "boolean" || typ == "number" || typ == "integer":
		default:
			t.Errorf("%s: type %q", path, typ)
		}
	}
	walk("schema", root)
}

func checkPattern(t *testing.T, path, p string) {
	t.Helper()
	if !strings.HasPrefix(p, "^") || !strings.HasSuffix(p, "$") {
		t.Errorf("%s: pattern %q must start with ^ and end with $", path, p)
	}
	if strings.Contains(p, "(?") || regexp.MustCompile(`\\[1-9dDwWsSbB]`).MatchString(p) {
		t.Errorf("%s: pattern %q uses syntax the converter does not support", path, p)
	}
	inClass, esc := false, false
	for _, c := range p {
		switch {
		case esc:
			esc = false
		case c == '\\':
			esc = true
		case c == '[':
			inClass = true
		case c == ']':
			inClass = false
		case c == '.' && !inClass:
			t.Errorf("%s: pattern %q has a bare '.', which matches a quote in the grammar", path, p)
		}
	}
	if _, err := regexp.Compile(p); err != nil {
		t.Errorf("%s: pattern %q: %v", path, p, err)
	}
}

// validate checks v against the schema s as Ollama's grammar constrains a model: types, enums,
// patterns, no keys besides the properties, the required ones all there and every key in the
// order the grammar allows (required ones in the schema's order, then optional ones in theirs).
func validate(s map[string]any, v *ordered, path string) []string {
	if alts, ok := s["anyOf"].([]any); ok {
		var why []string
		for _, a := range alts {
			errs := validate(a.(map[string]any), v, path)
			if len(errs) == 0 {
				return nil
			}
			why = append(why, errs...)
		}
		return []string{fmt.Sprintf("%s: no branch of anyOf fits (%s)", path, strings.Join(why, "; "))}
	}
	var errs []string
	bad := func(format string, a ...any) { errs = append(errs, path+": "+fmt.Sprintf(format, a...)) }
	switch s["type"] {
	case "object":
		if v.kind != 'o' {
			bad("want an object")
			return errs
		}
		props := s["properties"].(map[string]any)
		var req []string
		for _, r := range s["required"].([]any) {
			req = append(req, r.(string))
		}
		keyOrder := schemaOrder(s)
		for _, r := range req {
			if v.obj[r] == nil {
				bad("required %q missing", r)
			}
		}
		last := -1
		for i, k := range v.keys {
			p, ok := props[k]
			if !ok {
				bad("%q is not a property", k)
				continue
			}
			at := slices.Index(keyOrder, k)
			if at < last {
				bad("%q comes after %q; the grammar writes them the other way round", k, v.keys[i-1])
			}
			last = at
			errs = append(errs, validate(p.(map[string]any), v.obj[k], path+"."+k)...)
		}
	case "array":
		if v.kind != 'a' {
			bad("want a list")
			return errs
		}
		for i, item := range v.arr {
			errs = append(errs, validate(s["items"].(map[string]any), item, fmt.Sprintf("%s[%d]", path, i))...)
		}
	case "string":
		str, ok := v.val.(string)
		if v.kind != 's' || !ok {
			bad("want a string")
			return errs
		}
		if e, ok := s["enum"].([]any); ok && !slices.Contains(e, any(str)) {
			bad("%q is not one of %v", str, e)
		}
		if p, ok := s["pattern"].(string); ok && !regexp.MustCompile(p).MatchString(jsonText(str)) {
			bad("%q does not match %s", str, p)
		}
	case "boolean":
		if v.kind != 'b' {
			bad("want true or false")
		}
	}
	return errs
}

// jsonText is s as a JSON string's text writes it, without the quotes: what the grammar
// converter applies a pattern to (it builds the pattern's grammar over the raw characters).
func jsonText(s string) string {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(s); err != nil {
		panic(err)
	}
	t := strings.TrimSpace(b.String())
	return t[1 : len(t)-1]
}

// schemaOrder is the order the grammar converter writes an object's properties in: the required
// ones in the schema's order, then the optional ones in theirs.
func schemaOrder(s map[string]any) []string {
	var req, opt []string
	isReq := map[string]bool{}
	for _, r := range s["required"].([]any) {
		isReq[r.(string)] = true
		req = append(req, r.(string))
	}
	for _, k := range propertyOrder[fmt.Sprint(keysOf(s["properties"].(map[string]any)))] {
		if !isReq[k] {
			opt = append(opt, k)
		}
	}
	return append(req, opt...)
}

func keysOf(m map[string]any) []string {
	var ks []string
	for k := range m {
		ks = append(ks, k)
	}
	slices.Sort(ks)
	return ks
}

// propertyOrder maps each object schema of Schema (by its sorted property names) to its
// properties in the schema's order, which a map loses.
var propertyOrder = map[string][]string{}

func init() {
	var walk func(o *ordered)
	walk = func(o *ordered) {
		if o == nil {
			return
		}
		if p := o.obj["properties"]; p != nil {
			ks := slices.Clone(p.keys)
			slices.Sort(ks)
			propertyOrder[fmt.Sprint(ks)] = p.keys
		}
		for _, v := range o.obj {
			walk(v)
		}
		for _, v := range o.arr {
			walk(v)
		}
	}
	dec := json.NewDecoder(bytes.NewReader(Schema()))
	dec.UseNumber()
	o, err := readOrdered(dec)
	if err != nil {
		panic(err)
	}
	walk(o)
}

// validPlan reports what in a plan's JSON the schema would not let a model write.
func validPlan(t *testing.T, src string) []string {
	t.Helper()
	var s map[string]any
	if err := json.Unmarshal(Schema(), &s); err != nil {
		t.Fatal(err)
	}
	return validate(s, decodeOrdered(t, []byte(src)), "plan")
}

// TestSchemaValidator: the validator the examples are checked with refuses what the grammar
// would not let a model write.
func TestSchemaValidator(t *testing.T) {
	for _, tt := range []struct {
		name, plan string
		ok         bool
	}{
		{"short form", `{"kind":"flowchart","direction":"TB","title":"","groups":[],"nodes":["A"],"edges":["A -> B: x"]}`, true},
		{"summary", `{"kind":"flowchart","direction":"TB","title":"","groups":[],"nodes":[],"edges":[],"summary":"s"}`, false},
		{"nodes before groups", `{"kind":"flowchart","direction":"TB","title":"","nodes":[],"groups":[],"edges":[]}`, false},
		{"no direction", `{"kind":"flowchart","title":"","groups":[],"nodes":[],"edges":[]}`, false},
		{"edge without arrow", `{"kind":"flowchart","direction":"TB","title":"","groups":[],"nodes":[],"edges":["A to B"]}`, false},
		{"edge as object", `{"kind":"flowchart","direction":"TB","title":"","groups":[],"nodes":[],"edges":[{"from":"A","to":"B"}]}`, false},
		{"node id before label", `{"kind":"flowchart","direction":"TB","title":"","groups":[],"nodes":[{"id":"a","label":"A"}],"edges":[]}`, false},
		{"unknown colour", `{"kind":"flowchart","direction":"TB","title":"","groups":[],"nodes":[{"label":"A","color":"mauve"}],"edges":[]}`, false},
		{"message without label", `{"kind":"sequence","direction":"LR","title":"","groups":[],"nodes":[],"edges":[],"messages":["A -> B"]}`, false},
		{"quotes in a label", `{"kind":"sequence","direction":"LR","title":"","groups":[],"nodes":[],"edges":["A -> B: \"x\""],"messages":["A -> B: pull(\"img:tag\")"]}`, true},
		{"a quote in a name", `{"kind":"flowchart","direction":"TB","title":"","groups":[],"nodes":[],"edges":["\"A\" -> B"]}`, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			errs := validPlan(t, tt.plan)
			if got := len(errs) == 0; got != tt.ok {
				t.Errorf("valid %v, want %v: %v", got, tt.ok, errs)
			}
		})
	}
}

// TestPromptExampleValidates: the example the plan prompt shows is a plan the schema allows and
// the checks accept.
func TestPromptExampleValidates(t *testing.T) {
	_, ex, ok := strings.Cut(Prompt(), "Example: ")
	if !ok {
		t.Fatal("the plan prompt shows no example")
	}
	ex, _, _ = strings.Cut(ex, "\n")
	if errs := validPlan(t, ex); len(errs) > 0 {
		t.Errorf("the prompt's example does not fit the schema: %v", errs)
	}
	if _, probs := Read(ex, IndexScene("scene: empty"), tools.Limits{}); len(probs) > 0 {
		t.Errorf("the prompt's example is refused: %v", probs)
	}
}

// TestSchemaGolden keeps the schema as sent in testdata/schema.golden.json, the file
// scripts/plan-grammar.sh converts with Ollama's own converter.
func TestSchemaGolden(t *testing.T) {
	var b bytes.Buffer
	if err := json.Indent(&b, Schema(), "", "  "); err != nil {
		t.Fatal(err)
	}
	b.WriteByte('\n')
	golden(t, "testdata/schema.golden.json", b.Bytes())
}

func golden(t *testing.T, path string, got []byte) {
	t.Helper()
	if *update {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (go test ./agent/plan -update writes it)", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s is out of date; go test ./agent/plan -update rewrites it. Got:\n%s", path, got)
	}
}

// TestExamplePlansValidate: every example plan the tests draw with (testdata/examples, read by
// the agent's tests too) is one Ollama's grammar lets a model write.
func TestExamplePlansValidate(t *testing.T) {
	files, err := filepath.Glob("testdata/examples/*.json")
	if err != nil || len(files) == 0 {
		t.Fatalf("no example plans: %v", err)
	}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		if errs := validPlan(t, string(b)); len(errs) > 0 {
			t.Errorf("%s does not fit the schema: %v", f, errs)
		}
	}
}
