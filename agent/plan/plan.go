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
	"github.com/excalibot/excalibot/tools"
)

// Plan is a diagram as the model describes it: structure only, the tools do the geometry. On a
// follow-up, nodes already on the canvas (by id or label) change only the fields given, new ones
// are added, and Remove lists nodes (or edges as "from -> to") to delete.
//
// A model writes it in the short form Schema teaches: a node as its label, a group with the
// nodes it holds, an edge or a message as one string ("API -> DB: reads"); the long form of
// objects ({"from": …, "to": …}) is read too. Summary is no longer asked for (the reply says
// what changed from the scene) but is kept when a model writes one.
type Plan struct {
	Kind      string    `json:"kind"`
	Direction string    `json:"direction,omitempty"`
	Title     string    `json:"title,omitempty"`
	Groups    []Group   `json:"groups,omitempty"`
	Nodes     []Node    `json:"nodes"`
	Edges     []Edge    `json:"edges"`
	Messages  []Message `json:"messages,omitempty"`
	Remove    []string  `json:"remove,omitempty"`
	Summary   string    `json:"summary,omitempty"`
}

// Node is one box of a plan. Empty fields mean "as it is" for a node already drawn; an empty
// ID is made from the label.
type Node struct {
	ID    string `json:"id,omitempty"`
	Label string `json:"label,omitempty"`
	Shape string `json:"shape,omitempty"`
	Color string `json:"color,omitempty"`
	Group string `json:"group,omitempty"` // the id or title of its group
}

// Edge is one arrow; From and To are node ids or labels. Style is solid, dashed or dotted,
// Arrow end (the default), both or none.
type Edge struct {
	From  string `json:"from"`
	To    string `json:"to"`
	Label string `json:"label,omitempty"`
	Style string `json:"style,omitempty"`
	Arrow string `json:"arrow,omitempty"`
}

// Group is a titled frame around the nodes that name it, inside the group Parent names (an id
// or title) when that is set.
type Group struct {
	ID     string `json:"id,omitempty"`
	Title  string `json:"title,omitempty"`
	Parent string `json:"parent,omitempty"`

	derived bool // the checks made ID from the title
}

// Message is one message of a sequence diagram, in order; Reply draws it dashed.
type Message struct {
	From  string `json:"from"`
	To    string `json:"to"`
	Label string `json:"label"`
	Reply bool   `json:"reply,omitempty"`
}

// Plan kinds, shapes, colours, styles and arrows: the enums of Schema and of the checks.
var (
	kinds  = []string{"flowchart", "architecture", "orgchart", "mindmap", "sequence"}
	shapes = []string{"rectangle", "ellipse", "diamond"}
	colors = []string{"red", "pink", "grape", "violet", "blue", "cyan", "teal", "green", "yellow", "orange",
		"bronze", "gray", "white", "black"}
	styles = []string{"solid", "dashed", "dotted"}
	arrows = []string{"end", "both", "none"}
)

// order is the order of the plan's properties in Schema, the order Ollama's grammar makes a
// model write them in: what kind of diagram and which way it runs first, then its frames, then
// the boxes and the arrows between them. The first six are required (Ollama's grammar converter
// puts optional properties after the required ones); messages and remove follow when needed.
var order = []string{"kind", "direction", "title", "groups", "nodes", "edges", "messages", "remove"}

// required is how many of order every plan writes.
const required = 6

// schema is flat and short on purpose: small models follow short schemas with enums best, the
// grammar Ollama makes of it is smaller, and what it makes a model write is close to Mermaid in
// length (docs/agent.md has the figures). It uses only what llama.cpp's json-schema-to-grammar,
// which Ollama runs on it, converts (TestSchemaGrammarSubset).
var schema = func() json.RawMessage {
	q := func(v any) string {
		b, _ := json.Marshal(v)
		return string(b)
	}
	enum := func(vs []string) string { return `{"type":"string","enum":` + q(vs) + `}` }
	str := `{"type":"string"}`
	obj := func(required []string, props ...string) string {
		return `{"type":"object","properties":{` + strings.Join(props, ",") + `},"required":` + q(required) + `}`
	}
	arr := func(item string) string { return `{"type":"array","items":` + item + `}` }
	node := `{"anyOf":[` + str + `,` + obj([]string{"label"}, `"label":`+str, `"id":`+str, `"shape":`+enum(shapes), `"color":`+enum(colors)) + `]}`
	props := map[string]string{
		"kind":      enum(kinds),
		"direction": enum([]string{"TB", "LR"}),
		"title":     str,
		"groups":    arr(obj([]string{"title", "nodes"}, `"title":`+str, `"nodes":`+arr(node), `"parent":`+str, `"id":`+str)),
		"nodes":     arr(node),
		"edges":     arr(`{"type":"string","pattern":` + q(tools.EdgePattern) + `}`),
		"messages":  arr(`{"type":"string","pattern":` + q(tools.MessagePattern) + `}`),
		"remove":    arr(str),
	}
	var ps []string
	for _, k := range order {
		ps = append(ps, q(k)+":"+props[k])
	}
	return json.RawMessage(obj(order[:required], ps...))
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
// wrong type is named by its path, both forms are read (a node as its label or an object, an
// edge as a string or an object, a group with its nodes or nodes naming their group), and the
// names small models use instead of ours (text for label, source for from…) are accepted. ix is
// the canvas, whose nodes an edge's string may name.
func decode(src string, ix *Index, probs *Problems) Plan {
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
	for i, g := range r.list(o, "", "groups", "frames", "clusters", "subgraphs") {
		path := fmt.Sprintf("groups[%d]", i)
		m := r.obj(g, path)
		if m == nil {
			continue
		}
		pg := Group{ID: r.str(m, path, "id"), Title: r.str(m, path, "title", "label", "name"), Parent: r.str(m, path, "parent", "in", "within")}
		p.Groups = append(p.Groups, pg)
		ref := pg.ID
		if ref == "" {
			ref = pg.Title
		}
		for j, n := range r.list(m, path, "nodes", "members", "children") {
			if nd, ok := r.node(n, fmt.Sprintf("%s.nodes[%d]", path, j)); ok {
				if nd.Group == "" {
					nd.Group = ref
				}
				p.Nodes = append(p.Nodes, nd)
			}
		}
	}
	for i, n := range r.list(o, "", "nodes", "boxes", "actors", "participants") {
		if nd, ok := r.node(n, fmt.Sprintf("nodes[%d]", i)); ok {
			p.Nodes = mergeNode(p.Nodes, nd)
		}
	}
	isNode := planNames(p.Nodes, ix)
	for i, e := range r.list(o, "", "edges", "links", "connections", "arrows") {
		path := fmt.Sprintf("edges[%d]", i)
		if s, ok := e.(string); ok {
			t, err := tools.ParseEdge(s, isNode)
			if err != nil {
				probs.Add(path, "%q: %v", clip.Runes(s, 60), err)
				continue
			}
			e := Edge{From: t.From, To: t.To, Label: t.Label}
			// "A -> B" says nothing of the line: an arrow already drawn keeps its style and heads.
			if t.Style != "solid" {
				e.Style = t.Style
			}
			if t.Arrow != "end" {
				e.Arrow = t.Arrow
			}
			p.Edges = append(p.Edges, e)
			continue
		}
		if m := r.obj(e, path); m != nil {
			p.Edges = append(p.Edges, Edge{From: r.str(m, path, "from", "source", "start"), To: r.str(m, path, "to", "target", "end"),
				Label: r.str(m, path, "label", "text"), Style: r.str(m, path, "style", "line"), Arrow: r.str(m, path, "arrow", "arrows", "head")})
		}
	}
	for i, m := range r.list(o, "", "messages", "steps") {
		path := fmt.Sprintf("messages[%d]", i)
		if s, ok := m.(string); ok {
			t, err := tools.ParseEdge(s, isNode)
			if err != nil {
				probs.Add(path, "%q: write a message as \"A -> B: label\", a reply as \"B --> A: label\"", clip.Runes(s, 60))
				continue
			}
			p.Messages = append(p.Messages, Message{From: t.From, To: t.To, Label: t.Label, Reply: t.Reply})
			continue
		}
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
				probs.Add(path, "an edge to remove needs from and to, or write it as \"from -> to\"")
				continue
			}
			p.Remove = append(p.Remove, from+"->"+to)
		default:
			probs.Add(path, "want a node's label or id, or \"from -> to\", got %s", valueKind(x))
		}
	}
	return p
}

// node reads one node: its label alone, or an object.
func (r reader) node(n any, path string) (Node, bool) {
	if s, ok := n.(string); ok {
		return Node{Label: s}, true
	}
	if num, ok := n.(json.Number); ok { // a label like 2024
		return Node{Label: num.String()}, true
	}
	m := r.obj(n, path)
	if m == nil {
		return Node{}, false
	}
	return Node{ID: r.str(m, path, "id", "key"), Label: r.str(m, path, "label", "text", "name", "title"),
		Shape: r.str(m, path, "shape", "type"), Color: r.str(m, path, "color", "colour", "fill", "bg"),
		Group: r.str(m, path, "group", "frame", "parent", "cluster")}, true
}

// mergeNode adds n to nodes, unless a group already lists the same node (by id, or by label
// when neither has an id) and n is in no group: then what n adds (a shape, a colour) goes to it.
func mergeNode(nodes []Node, n Node) []Node {
	if n.Group == "" {
		for i, m := range nodes {
			if m.Group == "" || !sameNode(m, n) {
				continue
			}
			if m.ID == "" {
				nodes[i].ID = n.ID
			}
			for _, f := range [][2]*string{{&nodes[i].Label, &n.Label}, {&nodes[i].Shape, &n.Shape}, {&nodes[i].Color, &n.Color}} {
				if *f[0] == "" {
					*f[0] = *f[1]
				}
			}
			return nodes
		}
	}
	return append(nodes, n)
}

func sameNode(a, b Node) bool {
	if a.ID != "" && b.ID != "" {
		return a.ID == b.ID
	}
	la, lb := norm(a.Label), norm(b.Label)
	return la != "" && la == lb || a.ID != "" && norm(a.ID) == lb || b.ID != "" && norm(b.ID) == la
}

// planNames tells whether a name is a node of the plan or of the canvas, by id or label, for
// reading edges written as strings.
func planNames(nodes []Node, ix *Index) func(string) bool {
	names := map[string]bool{}
	for _, n := range nodes {
		names[norm(n.ID)], names[norm(n.Label)] = true, true
	}
	delete(names, "")
	return func(s string) bool {
		s = strings.TrimSpace(s)
		return names[norm(s)] || ix != nil && (ix.nodes[s] != nil || ix.byLabel(s) != "")
	}
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
