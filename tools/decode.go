package tools

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/excalibot/excalibot/internal/clip"
)

// maxProblems caps how many argument problems one refusal lists: enough to fix a whole batch in
// one turn, short enough for a small model's context.
const maxProblems = 8

// problems collects what is wrong with one call's arguments. Decoding goes on after a problem so
// that the model hears about every wrong field at once instead of one per turn.
type problems struct {
	list  []string
	extra int

	ignored      []ignoredField // unknown fields of a call that may still run (unknown.go)
	ignoredExtra int
}

func (p *problems) add(field, format string, args ...any) {
	if len(p.list) >= maxProblems {
		p.extra++
		return
	}
	msg := fmt.Sprintf(format, args...)
	if field != "" {
		msg = field + ": " + msg
	}
	p.list = append(p.list, msg)
}

func (p *problems) ok() bool { return len(p.list) == 0 }

func (p *problems) Error() string {
	var b strings.Builder
	for i, m := range p.list {
		if i > 0 {
			b.WriteString("\n")
		}
		b.WriteString("- ")
		b.WriteString(m)
	}
	if p.extra > 0 {
		fmt.Fprintf(&b, "\n- … and %d more problems", p.extra)
	}
	return b.String()
}

// object reads one JSON object field by field, recording problems with the field's full path
// (e.g. "elements[3].x") so an error points at exactly what to change.
type object struct {
	path   string
	fields map[string]json.RawMessage
	order  []string // field names in input order, for deterministic messages
	p      *problems
	// decoded is set on objects that came out of a JSON-encoded string, and on everything inside
	// them: a string there is never decoded again (see structured).
	decoded bool
}

// parseArgs reads a tool call's arguments. Empty arguments and null mean {} because models
// often send nothing for tools without parameters.
func parseArgs(raw json.RawMessage, p *problems) (*object, bool) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" {
		return &object{fields: map[string]json.RawMessage{}, p: p}, true
	}
	o := &object{p: p}
	if inner, ok := encodedJSON(raw); ok && inner[0] == '{' {
		// The whole arguments sent as a JSON-encoded string: decoded once, like a field.
		raw, o.decoded = inner, true
	}
	if raw[0] != '{' {
		if !json.Valid(raw) {
			return nil, invalidJSON(raw, p)
		}
		p.add("", "want a JSON object {…}, got %s", describeJSON(raw))
		return nil, false
	}
	if err := json.Unmarshal(raw, &o.fields); err != nil {
		return nil, invalidJSON(raw, p)
	}
	o.sortKeys()
	return o, true
}

func invalidJSON(raw json.RawMessage, p *problems) bool {
	var v any
	err := json.Unmarshal(raw, &v)
	p.add("", "the arguments are not valid JSON (%v); send one JSON object such as {\"id\": \"r1\"}", err)
	return false
}

// newObject reads one nested object. decoded says raw came out of a JSON-encoded string (or lies
// inside one); otherwise an object sent as a JSON-encoded string is decoded here, once.
func newObject(path string, raw json.RawMessage, p *problems, decoded bool) (*object, bool) {
	o := &object{path: path, p: p, decoded: decoded}
	if !decoded {
		if inner, ok := encodedJSON(raw); ok && inner[0] == '{' {
			raw, o.decoded = inner, true
		}
	}
	if t := bytes.TrimSpace(raw); len(t) == 0 || t[0] != '{' {
		p.add(path, "want a JSON object {…}, got %s", describeJSON(raw))
		return nil, false
	}
	// One Unmarshal into raw fields is several times faster than walking tokens, which matters
	// for a 400-element batch. (A key given twice keeps its last value, as in encoding/json.)
	if err := json.Unmarshal(raw, &o.fields); err != nil {
		p.add(path, "malformed object: %v", err)
		return nil, false
	}
	o.sortKeys()
	return o, true
}

// sortKeys records the field names in sorted order, for deterministic messages.
func (o *object) sortKeys() {
	o.order = make([]string, 0, len(o.fields))
	for k := range o.fields {
		o.order = append(o.order, k)
	}
	sort.Strings(o.order)
}

func (o *object) at(name string) string {
	if o.path == "" {
		return name
	}
	return o.path + "." + name
}

// raw returns a field's raw value, or nil when absent or null (null counts as "not given",
// which is what small models mean by it).
func (o *object) raw(name string) json.RawMessage {
	v, ok := o.fields[name]
	v = bytes.TrimSpace(v)
	if !ok || string(v) == "null" {
		return nil
	}
	return v
}

func (o *object) has(name string) bool { return o.raw(name) != nil }

// str reads a string field.
func (o *object) str(name string) (string, bool) {
	v := o.raw(name)
	if v == nil {
		return "", false
	}
	if s, ok := fastString(v); ok {
		return s, true
	}
	var s string
	if err := json.Unmarshal(v, &s); err != nil {
		// Numbers as ids ("id": 3) are a common slip; accept them as their text.
		if n, ok := jsonNumber(v); ok {
			return strconv.FormatFloat(n, 'f', -1, 64), true
		}
		o.p.add(o.at(name), "want a string, got %s", describeJSON(v))
		return "", false
	}
	return s, true
}

// num reads a finite number. Numeric strings ("120") are accepted because small models quote
// numbers; anything else ("120px", NaN) is refused.
func (o *object) num(name string) (float64, bool) {
	v := o.raw(name)
	if v == nil {
		return 0, false
	}
	n, ok := jsonNumber(v)
	if !ok {
		var s string
		if json.Unmarshal(v, &s) == nil {
			if f, ok := finiteNum(s); ok {
				return f, true
			}
		}
		o.p.add(o.at(name), "want a number like 120, got %s", describeJSON(v))
		return 0, false
	}
	return n, true
}

// fastString decodes a JSON string without escapes directly; the bytes were already validated
// by the decoder that produced v. Anything else takes the encoding/json path.
func fastString(v json.RawMessage) (string, bool) {
	if len(v) < 2 || v[0] != '"' || v[len(v)-1] != '"' || bytes.IndexByte(v, '\\') >= 0 || !utf8.Valid(v) {
		return "", false
	}
	for _, c := range v[1 : len(v)-1] {
		if c < 0x20 || c == '"' {
			return "", false
		}
	}
	return string(v[1 : len(v)-1]), true
}

func jsonNumber(v json.RawMessage) (float64, bool) {
	// JSON's number grammar is a subset of ParseFloat's, so a validated raw number parses as is;
	// an overflow gives ±Inf with an error and is refused.
	if len(v) > 0 && (v[0] == '-' || (v[0] >= '0' && v[0] <= '9')) {
		f, err := strconv.ParseFloat(string(v), 64)
		return f, err == nil && !math.IsNaN(f) && !math.IsInf(f, 0)
	}
	var n json.Number
	if err := json.Unmarshal(v, &n); err != nil {
		return 0, false
	}
	f, err := n.Float64()
	if err != nil || math.IsNaN(f) || math.IsInf(f, 0) {
		return 0, false
	}
	return f, true
}

func (o *object) boolean(name string) (bool, bool) {
	v := o.raw(name)
	if v == nil {
		return false, false
	}
	var b bool
	if err := json.Unmarshal(v, &b); err != nil {
		// "true" and "True" as strings are common slips; anything else ("yes", 1) is refused.
		var s string
		if json.Unmarshal(v, &s) == nil {
			switch strings.ToLower(strings.TrimSpace(s)) {
			case "true":
				return true, true
			case "false":
				return false, true
			}
		}
		o.p.add(o.at(name), "want true or false, got %s", describeJSON(v))
		return false, false
	}
	return b, true
}

// structured returns a field's value for a reader that wants a list or an object. Small models
// often send one as a JSON-encoded string ("nodes": "[{\"id\":…}]"); such a string is decoded
// here, and only once: inside a value that came out of a string, strings stay strings, so an
// argument encoded over and over cannot make decoding repeat. What comes out is never longer than
// what went in, so the MaxArgs check on the raw call bounds it, and the readers' item caps apply
// to it as to any list. fromString tells the reader to mark the objects it makes as decoded.
func (o *object) structured(name string) (v json.RawMessage, fromString bool) {
	v = o.raw(name)
	if v == nil || o.decoded {
		return v, false
	}
	if inner, ok := encodedJSON(v); ok {
		return inner, true
	}
	return v, false
}

// encodedJSON returns the JSON list or object a JSON string holds ("[1,2]" → [1,2]), trimmed.
func encodedJSON(v json.RawMessage) (json.RawMessage, bool) {
	v = bytes.TrimSpace(v)
	if len(v) < 2 || v[0] != '"' {
		return nil, false
	}
	var s string
	if json.Unmarshal(v, &s) != nil {
		return nil, false
	}
	inner := bytes.TrimSpace([]byte(s))
	if len(inner) == 0 || (inner[0] != '[' && inner[0] != '{') || !json.Valid(inner) {
		return nil, false
	}
	return inner, true
}

// notJSONString explains a string sent where a list or object belongs: when it looks like JSON
// but does not parse, the parse error says what to fix.
func notJSONString(v json.RawMessage) string {
	var s string
	if json.Unmarshal(v, &s) != nil {
		return ""
	}
	t := strings.TrimSpace(s)
	if t == "" || (t[0] != '[' && t[0] != '{') {
		return ""
	}
	var x any
	if err := json.Unmarshal([]byte(t), &x); err != nil {
		return fmt.Sprintf(" (the string is not valid JSON: %v)", err)
	}
	return ""
}

// strList reads an array of strings. A lone string or number is taken as a list of one, and a
// list sent as a JSON-encoded string is decoded (structured).
func (o *object) strList(name string) ([]string, bool) {
	v, _ := o.structured(name)
	if v == nil {
		return nil, false
	}
	var one string
	if json.Unmarshal(v, &one) == nil {
		return []string{one}, true
	}
	if n, ok := jsonNumber(v); ok {
		return []string{strconv.FormatFloat(n, 'f', -1, 64)}, true
	}
	var list []json.RawMessage
	if err := json.Unmarshal(v, &list); err != nil {
		o.p.add(o.at(name), "want a list of ids like [\"r1\", \"r2\"], got %s", describeJSON(o.raw(name)))
		return nil, false
	}
	out := make([]string, 0, len(list))
	for i, item := range list {
		var s string
		if err := json.Unmarshal(item, &s); err != nil {
			if n, ok := jsonNumber(item); ok {
				s = strconv.FormatFloat(n, 'f', -1, 64)
			} else {
				o.p.add(fmt.Sprintf("%s[%d]", o.at(name), i), "want a string id, got %s", describeJSON(item))
				continue
			}
		}
		out = append(out, s)
	}
	return out, true
}

// objList reads an array of objects. A lone object is taken as a list of one (its problems are
// reported under the field's own name, as the model wrote it), and a list or object sent as a
// JSON-encoded string is decoded (structured). A string that is not JSON stays an error.
func (o *object) objList(name string) ([]*object, bool) {
	v, fromString := o.structured(name)
	if v == nil {
		return nil, false
	}
	decoded := o.decoded || fromString
	if v[0] == '{' {
		if sub, ok := newObject(o.at(name), v, o.p, decoded); ok {
			return []*object{sub}, true
		}
		return nil, false
	}
	// Fast path: a list of objects decodes in one pass.
	var maps []map[string]json.RawMessage
	if json.Unmarshal(v, &maps) == nil {
		out := make([]*object, 0, len(maps))
		for i, m := range maps {
			if m == nil { // null item
				o.p.add(fmt.Sprintf("%s[%d]", o.at(name), i), "want a JSON object {…}, got null")
				continue
			}
			sub := &object{path: fmt.Sprintf("%s[%d]", o.at(name), i), fields: m, p: o.p, decoded: decoded}
			sub.sortKeys()
			out = append(out, sub)
		}
		return out, true
	}
	var list []json.RawMessage
	if err := json.Unmarshal(v, &list); err != nil {
		o.p.add(o.at(name), "want a list of objects like [{\"id\": \"r1\", …}], got %s%s", describeJSON(o.raw(name)), notJSONString(o.raw(name)))
		return nil, false
	}
	out := make([]*object, 0, len(list))
	for i, item := range list {
		if sub, ok := newObject(fmt.Sprintf("%s[%d]", o.at(name), i), item, o.p, decoded); ok {
			out = append(out, sub)
		}
	}
	return out, true
}

// sub reads a nested object; one sent as a JSON-encoded string is decoded (structured).
func (o *object) sub(name string) (*object, bool) {
	v, fromString := o.structured(name)
	if v == nil {
		return nil, false
	}
	return newObject(o.at(name), v, o.p, o.decoded || fromString)
}

// enum reads a string that must be one of allowed (after lower-casing and applying aliases).
func (o *object) enum(name string, allowed []string, aliases map[string]string) (string, bool) {
	s, ok := o.str(name)
	if !ok {
		return "", false
	}
	k := strings.ToLower(strings.TrimSpace(s))
	if a, ok := aliases[k]; ok {
		k = a
	}
	for _, a := range allowed {
		if a == k {
			return k, true
		}
	}
	o.p.add(o.at(name), "%q is not allowed; use one of %s%s", s, quoteList(allowed), didYouMean(k, allowed))
	return "", false
}

// jsonUnmarshalNumbers decodes v keeping numbers as json.Number, so that huge or malformed
// numbers are judged by finiteNum rather than silently turned into Inf.
func jsonUnmarshalNumbers(v json.RawMessage, out any) error {
	dec := json.NewDecoder(bytes.NewReader(v))
	dec.UseNumber()
	return dec.Decode(out)
}

// finiteNum accepts a json.Number (or float64, or a numeric string such as "120") that is a
// finite number.
func finiteNum(v any) (float64, bool) {
	var f float64
	switch n := v.(type) {
	case string:
		var err error
		if f, err = strconv.ParseFloat(strings.TrimSpace(n), 64); err != nil {
			return 0, false
		}
	case json.Number:
		var err error
		if f, err = n.Float64(); err != nil {
			return 0, false
		}
	case float64:
		f = n
	default:
		return 0, false
	}
	return f, !math.IsNaN(f) && !math.IsInf(f, 0)
}

// describeJSON shows a wrong value briefly, with its JSON kind, for error messages.
func describeJSON(v json.RawMessage) string {
	s := strings.TrimSpace(string(v))
	kind := "a value"
	switch {
	case s == "":
		return "nothing"
	case s[0] == '"':
		kind = "a string"
	case s[0] == '{':
		kind = "an object"
	case s[0] == '[':
		kind = "a list"
	case s == "true" || s == "false":
		kind = "a boolean"
	case s == "null":
		return "null"
	default:
		kind = "a number"
	}
	if utf8.RuneCountInString(s) > 40 {
		s = clip.Runes(s, 38) // 37 runes and "…", never half a rune
	}
	return kind + " " + s
}

func quoteList(items []string) string {
	q := make([]string, len(items))
	for i, s := range items {
		q[i] = strconv.Quote(s)
	}
	return strings.Join(q, ", ")
}

// didYouMean suggests the closest candidate when it is plausibly a typo.
func didYouMean(got string, candidates []string) string {
	best := closest(got, candidates, 1)
	if len(best) == 0 {
		return ""
	}
	return fmt.Sprintf(" (did you mean %q?)", best[0])
}

// closest returns up to n candidates nearest to s by edit distance (case-insensitive), keeping
// only those within about half of s's length so unrelated names are not offered.
func closest(s string, candidates []string, n int) []string {
	type scored struct {
		name string
		d    int
	}
	ls := strings.ToLower(s)
	limit := max(1, len([]rune(s))/2)
	var found []scored
	for _, c := range candidates {
		lc := strings.ToLower(c)
		d := editDistance(ls, lc)
		if strings.Contains(lc, ls) || strings.Contains(ls, lc) {
			d = min(d, 1)
		}
		if d <= limit {
			found = append(found, scored{c, d})
		}
	}
	sort.SliceStable(found, func(i, j int) bool {
		if found[i].d != found[j].d {
			return found[i].d < found[j].d
		}
		return found[i].name < found[j].name
	})
	out := make([]string, 0, n)
	for i := 0; i < len(found) && i < n; i++ {
		out = append(out, found[i].name)
	}
	return out
}

// editDistance is the Levenshtein distance over runes.
func editDistance(a, b string) int {
	ra, rb := []rune(a), []rune(b)
	prev := make([]int, len(rb)+1)
	cur := make([]int, len(rb)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(ra); i++ {
		cur[0] = i
		for j := 1; j <= len(rb); j++ {
			cost := 1
			if ra[i-1] == rb[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(rb)]
}
