// Package plan is the second way a model can draw: instead of calling tools turn by turn, it
// answers one request with a diagram plan, a JSON object constrained by Ollama's structured
// outputs to Schema, and the host checks it and turns it into graph tool calls. It needs no tool
// calling, so models without it can draw, and a new diagram takes one model request.
//
// The package reads an answer (Read), checks it against the canvas as get_scene shows it (Index)
// and the tools' limits, and expands it into tool calls (Expand); the agent asks the model and
// makes the calls. Everything here is pure: no model, no scene.
package plan

import (
	_ "embed"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"

	"github.com/excalibot/excalibot/internal/clip"
)

// Plan is a diagram as the model describes it: structure only, the tools do the geometry. On a
// follow-up, nodes with an id already on the canvas change only the fields given, new ids are
// added, and Remove lists node ids (or edges as "from->to") to delete.
type Plan struct {
	Kind      string    `json:"kind"`
	Direction string    `json:"direction,omitempty"`
	Title     string    `json:"title,omitempty"`
	Nodes     []Node    `json:"nodes"`
	Edges     []Edge    `json:"edges"`
	Groups    []Group   `json:"groups,omitempty"`
	Messages  []Message `json:"messages,omitempty"`
	Remove    []string  `json:"remove,omitempty"`
	Summary   string    `json:"summary"`
}

// Node is one box of a plan. Empty fields mean "as it is" for a node already drawn.
type Node struct {
	ID    string `json:"id"`
	Label string `json:"label,omitempty"`
	Shape string `json:"shape,omitempty"`
	Color string `json:"color,omitempty"`
	Group string `json:"group,omitempty"`
}

// Edge is one arrow; From and To are node ids (or labels).
type Edge struct {
	From  string `json:"from"`
	To    string `json:"to"`
	Label string `json:"label,omitempty"`
	Style string `json:"style,omitempty"`
}

// Group is a titled frame around the nodes that name it.
type Group struct {
	ID    string `json:"id"`
	Title string `json:"title,omitempty"`
}

// Message is one message of a sequence diagram, in order; Reply draws it dashed.
type Message struct {
	From  string `json:"from"`
	To    string `json:"to"`
	Label string `json:"label"`
	Reply bool   `json:"reply,omitempty"`
}

// Plan kinds, shapes, colours and styles: the enums of Schema.
var (
	kinds  = []string{"flowchart", "architecture", "orgchart", "mindmap", "sequence"}
	shapes = []string{"rectangle", "ellipse", "diamond"}
	colors = []string{"red", "pink", "grape", "violet", "blue", "cyan", "teal", "green", "yellow", "orange",
		"bronze", "gray", "white", "black"}
	styles = []string{"solid", "dashed", "dotted"}
)

// schema is flat on purpose: small models follow short schemas with enums best, and every
// byte is part of the prompt Ollama builds from it.
var schema = func() json.RawMessage {
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
		`"kind":`+enum(kinds),
		`"direction":`+enum([]string{"TB", "LR"}),
		`"title":`+str,
		`"nodes":`+arr(obj(`"id","label"`, `"id":`+str, `"label":`+str, `"shape":`+enum(shapes),
			`"color":`+enum(colors), `"group":`+str)),
		`"edges":`+arr(obj(`"from","to"`, `"from":`+str, `"to":`+str, `"label":`+str, `"style":`+enum(styles))),
		`"groups":`+arr(obj(`"id","title"`, `"id":`+str, `"title":`+str)),
		`"messages":`+arr(obj(`"from","to","label"`, `"from":`+str, `"to":`+str, `"label":`+str, `"reply":{"type":"boolean"}`)),
		`"remove":`+arr(str),
		`"summary":`+str)
	return json.RawMessage(s)
}()

// Schema is the JSON schema sent as the request's format in the plan protocol.
func Schema() json.RawMessage { return append(json.RawMessage(nil), schema...) }

var (
	//go:embed prompts/plan.txt
	promptText string
	//go:embed prompts/fallback.txt
	fallbackText string
)

// Prompt is the system message of a plan run.
func Prompt() string { return strings.TrimSpace(promptText) }

// Retry and fallback texts. The retry names every problem; the fallback drops the schema, for
// models (and server versions) that ignore format, and accepts Mermaid when the tools can import
// it.
const (
	retryText        = "Your answer was not a valid diagram plan:\n%s\nAnswer again with the whole corrected plan as one JSON object, nothing else."
	fallbackJSONText = "Your answers could not be drawn. Answer once more with the plan as one JSON object in a ```json fence, and nothing else."
)

// Retry is the message that asks for the plan again after an answer with problems.
func Retry(probs Problems) string { return fmt.Sprintf(retryText, bullets(probs)) }

// Fallback is the last message, sent without the schema: a plan in a fence, or Mermaid too when
// withMermaid (the toolbox has create_from_mermaid).
func Fallback(probs Problems, withMermaid bool) string {
	ask := fallbackJSONText
	if withMermaid {
		ask = strings.TrimSpace(fallbackText)
	}
	return ask + "\n\nWhat was wrong before:\n" + bullets(probs)
}

func bullets(p Problems) string {
	if len(p) > 12 {
		p = append(p[:12:12], fmt.Sprintf("and %d more", len(p)-12))
	}
	return "- " + strings.Join(p, "\n- ")
}

// Problems collects what is wrong with a plan, each with the path of the value, for the
// message that asks the model to try again.
type Problems []string

// Add records one problem of the value at path ("" for the whole answer).
func (p *Problems) Add(path, format string, a ...any) {
	msg := fmt.Sprintf(format, a...)
	if path != "" {
		msg = path + ": " + msg
	}
	*p = append(*p, msg)
}

func (p Problems) Error() string { return strings.Join(p, "; ") }

// decode reads the plan's JSON by hand rather than with json.Unmarshal, so a value of the
// wrong type is named by its path and the names small models use instead of ours (text for
// label, source for from…) are accepted.
func decode(src string, probs *Problems) Plan {
	var root any
	dec := json.NewDecoder(strings.NewReader(src))
	dec.UseNumber()
	if err := dec.Decode(&root); err != nil {
		probs.Add("", "the answer is not valid JSON (%v)", err)
		return Plan{}
	}
	o, ok := root.(map[string]any)
	if !ok {
		probs.Add("", "the answer must be one JSON object, not %s", valueKind(root))
		return Plan{}
	}
	r := reader{probs: probs}
	p := Plan{
		Kind:      r.str(o, "", "kind", "type", "diagram"),
		Direction: r.str(o, "", "direction", "layout", "orientation"),
		Title:     r.str(o, "", "title", "name"),
		Summary:   r.str(o, "", "summary", "description"),
	}
	for i, n := range r.list(o, "", "nodes", "boxes", "actors", "participants") {
		path := fmt.Sprintf("nodes[%d]", i)
		if s, ok := n.(string); ok { // a bare name: the node of that label
			p.Nodes = append(p.Nodes, Node{Label: s})
			continue
		}
		m := r.obj(n, path)
		if m == nil {
			continue
		}
		p.Nodes = append(p.Nodes, Node{ID: r.str(m, path, "id", "key"), Label: r.str(m, path, "label", "text", "name", "title"),
			Shape: r.str(m, path, "shape", "type"), Color: r.str(m, path, "color", "colour", "fill", "bg"),
			Group: r.str(m, path, "group", "frame", "parent", "cluster")})
	}
	for i, e := range r.list(o, "", "edges", "links", "connections", "arrows") {
		path := fmt.Sprintf("edges[%d]", i)
		if m := r.obj(e, path); m != nil {
			p.Edges = append(p.Edges, Edge{From: r.str(m, path, "from", "source", "start"), To: r.str(m, path, "to", "target", "end"),
				Label: r.str(m, path, "label", "text"), Style: r.str(m, path, "style", "line")})
		}
	}
	for i, g := range r.list(o, "", "groups", "frames", "clusters") {
		path := fmt.Sprintf("groups[%d]", i)
		if m := r.obj(g, path); m != nil {
			p.Groups = append(p.Groups, Group{ID: r.str(m, path, "id"), Title: r.str(m, path, "title", "label", "name")})
		}
	}
	for i, m := range r.list(o, "", "messages", "steps") {
		path := fmt.Sprintf("messages[%d]", i)
		if mm := r.obj(m, path); mm != nil {
			p.Messages = append(p.Messages, Message{From: r.str(mm, path, "from", "source"), To: r.str(mm, path, "to", "target"),
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
				probs.Add(path, "an edge to remove needs from and to, or write it as \"from->to\"")
				continue
			}
			p.Remove = append(p.Remove, from+"->"+to)
		default:
			probs.Add(path, "want a node id or \"from->to\", got %s", valueKind(x))
		}
	}
	return p
}

// reader reads typed fields of decoded JSON, reporting wrong types by path.
type reader struct{ probs *Problems }

// value finds a field by its name or one of the names models use for it.
func (r reader) value(o map[string]any, names ...string) (string, any, bool) {
	for _, n := range names {
		if v, ok := o[n]; ok && v != nil {
			return n, v, true
		}
	}
	return "", nil, false
}

func (r reader) str(o map[string]any, path string, names ...string) string {
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
	r.probs.Add(fieldPath(path, name), "want a string, got %s", valueKind(v))
	return ""
}

func (r reader) boolean(o map[string]any, path string, names ...string) bool {
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
	r.probs.Add(fieldPath(path, name), "want true or false, got %s", valueKind(v))
	return false
}

func (r reader) list(o map[string]any, path string, names ...string) []any {
	name, v, ok := r.value(o, names...)
	if !ok {
		return nil
	}
	l, ok := v.([]any)
	if !ok {
		r.probs.Add(fieldPath(path, name), "want a list [...], got %s", valueKind(v))
		return nil
	}
	return l
}

func (r reader) obj(v any, path string) map[string]any {
	m, ok := v.(map[string]any)
	if !ok {
		r.probs.Add(path, "want an object {...}, got %s", valueKind(v))
		return nil
	}
	return m
}

func fieldPath(path, name string) string {
	if path == "" {
		return name
	}
	return path + "." + name
}

// valueKind names a decoded JSON value's type for a message, with a short sample.
func valueKind(v any) string {
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
