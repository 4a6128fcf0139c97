package agent

import (
	_ "embed"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"

	"github.com/excalibot/excalibot/internal/clip"
)

// A typed plan is the second way a model can draw: instead of calling tools turn by turn, it
// answers one request with a diagram plan, a JSON object constrained by Ollama's structured
// outputs to PlanSchema, and the host checks it and turns it into graph tool calls. It needs no
// tool calling, so models without it can draw, and a new diagram takes one model request.

// Plan is a diagram as the model describes it: structure only, the tools do the geometry. On a
// follow-up, nodes with an id already on the canvas change only the fields given, new ids are
// added, and Remove lists node ids (or edges as "from->to") to delete.
type Plan struct {
	Kind      string        `json:"kind"`
	Direction string        `json:"direction,omitempty"`
	Title     string        `json:"title,omitempty"`
	Nodes     []PlanNode    `json:"nodes"`
	Edges     []PlanEdge    `json:"edges"`
	Groups    []PlanGroup   `json:"groups,omitempty"`
	Messages  []PlanMessage `json:"messages,omitempty"`
	Remove    []string      `json:"remove,omitempty"`
	Summary   string        `json:"summary"`
}

// PlanNode is one box of a plan. Empty fields mean "as it is" for a node already drawn.
type PlanNode struct {
	ID    string `json:"id"`
	Label string `json:"label,omitempty"`
	Shape string `json:"shape,omitempty"`
	Color string `json:"color,omitempty"`
	Group string `json:"group,omitempty"`
}

// PlanEdge is one arrow; From and To are node ids (or labels).
type PlanEdge struct {
	From  string `json:"from"`
	To    string `json:"to"`
	Label string `json:"label,omitempty"`
	Style string `json:"style,omitempty"`
}

// PlanGroup is a titled frame around the nodes that name it.
type PlanGroup struct {
	ID    string `json:"id"`
	Title string `json:"title,omitempty"`
}

// PlanMessage is one message of a sequence diagram, in order; Reply draws it dashed.
type PlanMessage struct {
	From  string `json:"from"`
	To    string `json:"to"`
	Label string `json:"label"`
	Reply bool   `json:"reply,omitempty"`
}

// Plan kinds, shapes, colours and styles: the enums of PlanSchema.
var (
	planKinds  = []string{"flowchart", "architecture", "orgchart", "mindmap", "sequence"}
	planShapes = []string{"rectangle", "ellipse", "diamond"}
	planColors = []string{"red", "pink", "grape", "violet", "blue", "cyan", "teal", "green", "yellow", "orange",
		"bronze", "gray", "white", "black"}
	planStyles = []string{"solid", "dashed", "dotted"}
)

// planSchema is flat on purpose: small models follow short schemas with enums best, and every
// byte is part of the prompt Ollama builds from it.
var planSchema = func() json.RawMessage {
	enum := func(vs []string) string {
		b, _ := json.Marshal(vs)
		return `{"type":"string","enum":` + string(b) + `}`
	}
	str := `{"type":"string"}`
	obj := func(required string, props ...string) string {
		return `{"type":"object","properties":{` + strings.Join(props, ",") + `},"required":[` + required + `]}`
	}
	arr := func(item string) string { return `{"type":"array","items":` + item + `}` }
	s := obj(`"kind","nodes","edges","summary"`,
		`"kind":`+enum(planKinds),
		`"direction":`+enum([]string{"TB", "LR"}),
		`"title":`+str,
		`"nodes":`+arr(obj(`"id","label"`, `"id":`+str, `"label":`+str, `"shape":`+enum(planShapes),
			`"color":`+enum(planColors), `"group":`+str)),
		`"edges":`+arr(obj(`"from","to"`, `"from":`+str, `"to":`+str, `"label":`+str, `"style":`+enum(planStyles))),
		`"groups":`+arr(obj(`"id","title"`, `"id":`+str, `"title":`+str)),
		`"messages":`+arr(obj(`"from","to","label"`, `"from":`+str, `"to":`+str, `"label":`+str, `"reply":{"type":"boolean"}`)),
		`"remove":`+arr(str),
		`"summary":`+str)
	return json.RawMessage(s)
}()

// PlanSchema is the JSON schema sent as the request's format in the plan protocol.
func PlanSchema() json.RawMessage { return append(json.RawMessage(nil), planSchema...) }

var (
	//go:embed prompts/plan.txt
	planText string
	//go:embed prompts/plan_fallback.txt
	planFallbackText string
)

// PlanPrompt is the system message of a plan run.
func PlanPrompt() string { return strings.TrimSpace(planText) }

// planJSON takes the JSON object out of an answer: the whole answer, a ```json fence, or the
// first whole {…} in prose. Some models wrap the object in text even when asked for a format,
// and some thinking models ignore the format when thinking is off. When there is none, it says
// why in a phrase for the model. The answer comes with its thinking already stripped.
func planJSON(answer string) (string, string) {
	s := strings.TrimSpace(answer)
	if body, ok := planFenced(s, "json"); ok && strings.HasPrefix(strings.TrimSpace(body), "{") {
		s = strings.TrimSpace(body)
	}
	why := ""
	for i := strings.IndexByte(s, '{'); i >= 0; {
		end := planObjectEnd(s[i:])
		if end == 0 {
			if why == "" {
				why = "the JSON object is cut off: it has no closing }"
			}
			break
		}
		var v any
		err := json.Unmarshal([]byte(s[i:i+end]), &v)
		if err == nil {
			return s[i : i+end], ""
		}
		if why == "" {
			why = fmt.Sprintf("the answer is not valid JSON (%v)", err)
		}
		// Objects nested in this one are parts of it, not the plan: look after it.
		next := strings.IndexByte(s[i+end:], '{')
		if next < 0 {
			break
		}
		i += end + next
	}
	if why == "" {
		if s == "" {
			return "", "the answer was empty"
		}
		why = fmt.Sprintf("the answer holds no JSON object; it began %q", clip.Runes(oneLine(s), 80))
	}
	return "", why
}

// planFenced returns the body of the first ``` fence whose info string is lang (or any fence when
// lang is "" and the fence has none).
func planFenced(s, lang string) (string, bool) {
	rest := s
	for {
		i := strings.Index(rest, "```")
		if i < 0 {
			return "", false
		}
		rest = rest[i+3:]
		nl := strings.IndexByte(rest, '\n')
		if nl < 0 {
			return "", false
		}
		info := strings.ToLower(strings.TrimSpace(rest[:nl]))
		body := rest[nl+1:]
		end := strings.Index(body, "```")
		if end < 0 {
			end = len(body) // an answer cut short still has its start
		}
		if info == lang {
			return body[:end], true
		}
		if end == len(body) {
			return "", false
		}
		rest = body[end+3:]
	}
}

// planObjectEnd returns the length of the balanced JSON object s starts with, or 0.
func planObjectEnd(s string) int {
	depth, inStr, esc := 0, false, false
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case inStr && esc:
			esc = false
		case inStr && c == '\\':
			esc = true
		case inStr && c == '"':
			inStr = false
		case inStr:
		case c == '"':
			inStr = true
		case c == '{' || c == '[':
			depth++
		case c == '}' || c == ']':
			depth--
			if depth == 0 {
				return i + 1
			}
		}
	}
	return 0
}

// planProblems collects what is wrong with a plan, each with the path of the value, for the
// message that asks the model to try again.
type planProblems []string

func (p *planProblems) add(path, format string, a ...any) {
	msg := fmt.Sprintf(format, a...)
	if path != "" {
		msg = path + ": " + msg
	}
	*p = append(*p, msg)
}

func (p planProblems) Error() string { return strings.Join(p, "; ") }

// decodePlan reads the plan's JSON by hand rather than with json.Unmarshal, so a value of the
// wrong type is named by its path and the names small models use instead of ours (text for
// label, source for from…) are accepted.
func decodePlan(src string, probs *planProblems) Plan {
	var root any
	dec := json.NewDecoder(strings.NewReader(src))
	dec.UseNumber()
	if err := dec.Decode(&root); err != nil {
		probs.add("", "the answer is not valid JSON (%v)", err)
		return Plan{}
	}
	o, ok := root.(map[string]any)
	if !ok {
		probs.add("", "the answer must be one JSON object, not %s", planValueKind(root))
		return Plan{}
	}
	r := planReader{probs: probs}
	p := Plan{
		Kind:      r.str(o, "", "kind", "type", "diagram"),
		Direction: r.str(o, "", "direction", "layout", "orientation"),
		Title:     r.str(o, "", "title", "name"),
		Summary:   r.str(o, "", "summary", "description"),
	}
	for i, n := range r.list(o, "", "nodes", "boxes", "actors", "participants") {
		path := fmt.Sprintf("nodes[%d]", i)
		if s, ok := n.(string); ok { // a bare name: the node of that label
			p.Nodes = append(p.Nodes, PlanNode{Label: s})
			continue
		}
		m := r.obj(n, path)
		if m == nil {
			continue
		}
		p.Nodes = append(p.Nodes, PlanNode{ID: r.str(m, path, "id", "key"), Label: r.str(m, path, "label", "text", "name", "title"),
			Shape: r.str(m, path, "shape", "type"), Color: r.str(m, path, "color", "colour", "fill", "bg"),
			Group: r.str(m, path, "group", "frame", "parent", "cluster")})
	}
	for i, e := range r.list(o, "", "edges", "links", "connections", "arrows") {
		path := fmt.Sprintf("edges[%d]", i)
		if m := r.obj(e, path); m != nil {
			p.Edges = append(p.Edges, PlanEdge{From: r.str(m, path, "from", "source", "start"), To: r.str(m, path, "to", "target", "end"),
				Label: r.str(m, path, "label", "text"), Style: r.str(m, path, "style", "line")})
		}
	}
	for i, g := range r.list(o, "", "groups", "frames", "clusters") {
		path := fmt.Sprintf("groups[%d]", i)
		if m := r.obj(g, path); m != nil {
			p.Groups = append(p.Groups, PlanGroup{ID: r.str(m, path, "id"), Title: r.str(m, path, "title", "label", "name")})
		}
	}
	for i, m := range r.list(o, "", "messages", "steps") {
		path := fmt.Sprintf("messages[%d]", i)
		if mm := r.obj(m, path); mm != nil {
			p.Messages = append(p.Messages, PlanMessage{From: r.str(mm, path, "from", "source"), To: r.str(mm, path, "to", "target"),
				Label: r.str(mm, path, "label", "text", "message"), Reply: r.boolean(mm, path, "reply", "return", "response")})
		}
	}
	for i, x := range r.list(o, "", "remove", "delete", "removed") {
		path := fmt.Sprintf("remove[%d]", i)
		switch v := x.(type) {
		case string:
			p.Remove = append(p.Remove, v)
		case map[string]any: // an edge written as {from, to}
			from, to := r.str(v, path, "from", "source"), r.str(v, path, "to", "target")
			if from == "" || to == "" {
				probs.add(path, "an edge to remove needs from and to, or write it as \"from->to\"")
				continue
			}
			p.Remove = append(p.Remove, from+"->"+to)
		default:
			probs.add(path, "want a node id or \"from->to\", got %s", planValueKind(x))
		}
	}
	return p
}

// planReader reads typed fields of decoded JSON, reporting wrong types by path.
type planReader struct{ probs *planProblems }

// value finds a field by its name or one of the names models use for it.
func (r planReader) value(o map[string]any, names ...string) (string, any, bool) {
	for _, n := range names {
		if v, ok := o[n]; ok && v != nil {
			return n, v, true
		}
	}
	return "", nil, false
}

func (r planReader) str(o map[string]any, path string, names ...string) string {
	name, v, ok := r.value(o, names...)
	if !ok {
		return ""
	}
	switch v := v.(type) {
	case string:
		return v
	case json.Number: // a label like 2024: the model meant the text
		return v.String()
	case bool:
		return strconv.FormatBool(v)
	}
	r.probs.add(planPath(path, name), "want a string, got %s", planValueKind(v))
	return ""
}

func (r planReader) boolean(o map[string]any, path string, names ...string) bool {
	name, v, ok := r.value(o, names...)
	if !ok {
		return false
	}
	switch v := v.(type) {
	case bool:
		return v
	case string:
		b, err := strconv.ParseBool(v)
		if err == nil {
			return b
		}
	}
	r.probs.add(planPath(path, name), "want true or false, got %s", planValueKind(v))
	return false
}

func (r planReader) list(o map[string]any, path string, names ...string) []any {
	name, v, ok := r.value(o, names...)
	if !ok {
		return nil
	}
	l, ok := v.([]any)
	if !ok {
		r.probs.add(planPath(path, name), "want a list [...], got %s", planValueKind(v))
		return nil
	}
	return l
}

func (r planReader) obj(v any, path string) map[string]any {
	m, ok := v.(map[string]any)
	if !ok {
		r.probs.add(path, "want an object {...}, got %s", planValueKind(v))
		return nil
	}
	return m
}

func planPath(path, name string) string {
	if path == "" {
		return name
	}
	return path + "." + name
}

// planValueKind names a decoded JSON value's type for a message, with a short sample.
func planValueKind(v any) string {
	switch v := v.(type) {
	case nil:
		return "null"
	case string:
		return fmt.Sprintf("the string %q", clip.Runes(v, 40))
	case json.Number:
		return "the number " + v.String()
	case bool:
		return "the boolean " + strconv.FormatBool(v)
	case []any:
		return fmt.Sprintf("a list of %d items", len(v))
	case map[string]any:
		return "an object"
	}
	return fmt.Sprintf("%T", v)
}
