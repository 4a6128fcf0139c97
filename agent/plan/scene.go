package plan

import (
	"strconv"
	"strings"
)

// Index is what a plan is checked against: the graph on the canvas as get_scene shows it
// (the same text the model read), so ids, labels and colour names compare as the model saw them.
type Index struct {
	nodes    map[string]*sceneNode
	order    []string          // node ids in scene order
	groups   map[string]string // group (frame or box) id → title
	edges    []sceneEdge
	sequence bool // a sequence diagram is drawn (its parts are in "seq-" groups)
	content  bool // anything at all is on the canvas
}

// Empty reports whether nothing at all is on the canvas.
func (ix *Index) Empty() bool { return !ix.content }

type sceneNode struct {
	id, typ, label, bg, group string
}

type sceneEdge struct {
	from, to, label, style, arrow string
}

// Prefixes of the groups the graph tools keep for themselves: a sequence's parts and group boxes.
const (
	seqPrefix = "seq-"
	boxPrefix = "grp-"
)

// IndexScene reads get_scene's text: element lines "id type x,y wxh "label" key=value…" and,
// after "connections:", arrow lines "from -> to "label" (id) key=value…".
func IndexScene(text string) *Index {
	ix := &Index{nodes: map[string]*sceneNode{}, groups: map[string]string{}}
	section := ""
	for _, line := range strings.Split(text, "\n") {
		switch {
		case strings.HasPrefix(line, "scene:"):
			continue
		case line == "connections:" || line == "warnings:":
			section = line
			continue
		case line == "" || strings.HasPrefix(line, "- ") || strings.HasPrefix(line, "truncated:") || strings.HasPrefix(line, "To see them"):
			continue
		}
		toks := tokens(line)
		if len(toks) < 3 {
			continue
		}
		switch section {
		case "":
			ix.content = true
			ix.element(toks)
		case "connections:":
			ix.connection(toks)
		}
	}
	return ix
}

func (ix *Index) element(toks []string) {
	id, typ := unquote(toks[0]), toks[1]
	label, attrs := "", map[string]string{}
	for _, t := range toks[2:] {
		switch {
		case strings.HasPrefix(t, `"`):
			if s, err := strconv.Unquote(t); err == nil {
				label = s
			}
		case strings.Contains(t, "="):
			k, v, _ := strings.Cut(t, "=")
			attrs[k] = v
		}
	}
	groups := strings.Split(attrs["group"], "+")
	box := ""
	for _, g := range groups {
		if strings.HasPrefix(g, seqPrefix) {
			ix.sequence = true
			return
		}
		if b, ok := strings.CutPrefix(g, boxPrefix); ok {
			switch {
			case b == id: // the box itself; its title is a text beside it
				if _, ok := ix.groups[id]; !ok {
					ix.groups[id] = ""
				}
				return
			case typ == "text" && g == groups[0]: // a box's title: the box is its first group
				ix.groups[b] = label
				return
			}
			box = b
		}
	}
	switch typ {
	case "frame":
		ix.groups[id] = label
		return
	case "rect":
		typ = "rectangle"
	case "ellipse", "diamond":
	default:
		return
	}
	group := attrs["in"]
	if box != "" {
		group = box
	}
	ix.nodes[id] = &sceneNode{id: id, typ: typ, label: label, bg: attrs["bg"], group: group}
	ix.order = append(ix.order, id)
}

func (ix *Index) connection(toks []string) {
	from, to := unquote(toks[0]), unquote(toks[2])
	e := sceneEdge{from: from, to: to, style: "solid", arrow: "end"}
	switch toks[1] { // get_scene's glyph for the heads
	case "<->":
		e.arrow = "both"
	case "--":
		e.arrow = "none"
	}
	for _, t := range toks[3:] {
		switch {
		case strings.HasPrefix(t, `"`):
			if s, err := strconv.Unquote(t); err == nil {
				e.label = s
			}
		case strings.HasPrefix(t, "style="):
			e.style = strings.TrimPrefix(t, "style=")
		}
	}
	if ix.nodes[from] != nil && ix.nodes[to] != nil {
		ix.edges = append(ix.edges, e)
	}
}

// edge finds the arrow between two nodes, either way round.
func (ix *Index) edge(a, b string) (sceneEdge, bool) {
	for _, e := range ix.edges {
		if e.from == a && e.to == b || e.from == b && e.to == a {
			return e, true
		}
	}
	return sceneEdge{}, false
}

// byLabel returns the node whose label is s (ignoring case and spacing) when exactly one has it.
func (ix *Index) byLabel(s string) string {
	want, found := norm(s), ""
	if want == "" {
		return ""
	}
	for _, id := range ix.order {
		if norm(ix.nodes[id].label) == want {
			if found != "" {
				return ""
			}
			found = id
		}
	}
	return found
}

// group finds a group by id or title.
func (ix *Index) group(s string) string {
	if _, ok := ix.groups[s]; ok {
		return s
	}
	for id, t := range ix.groups {
		if t != "" && norm(t) == norm(s) {
			return id
		}
	}
	return ""
}

// unquote reads an id get_scene quoted because it holds odd characters.
func unquote(t string) string {
	if strings.HasPrefix(t, `"`) {
		if s, err := strconv.Unquote(t); err == nil {
			return s
		}
	}
	return t
}

func norm(s string) string { return strings.Join(strings.Fields(strings.ToLower(s)), " ") }

// tokens splits a get_scene line on spaces, keeping Go-quoted strings (labels, odd ids, the
// value of key="…") whole and quoted.
func tokens(line string) []string {
	var out []string
	for i := 0; i < len(line); {
		if line[i] == ' ' {
			i++
			continue
		}
		j := i
		for j < len(line) && line[j] != ' ' {
			if line[j] == '"' {
				q, err := strconv.QuotedPrefix(line[j:])
				if err != nil {
					j = len(line)
					break
				}
				j += len(q)
				continue
			}
			j++
		}
		out = append(out, line[i:j])
		i = j
	}
	return out
}
