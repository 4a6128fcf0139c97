package plan

import (
	"fmt"
	"slices"
	"strings"

	"github.com/excalibot/excalibot/diagram"
	"github.com/excalibot/excalibot/tools"
)

// Checked is a plan that passed every check, with names mapped to ours and every reference
// resolved to a node id: what the expansion turns into tool calls.
type Checked struct {
	kind, direction, title, summary string
	nodes                           []checkedNode
	edges                           []checkedEdge
	groups                          []Group
	messages                        []Message
	removeNodes                     []string
	removeEdges                     [][2]string
}

// Summary is the plan's one-line summary of what it draws, as the model wrote it ("" for none).
func (c Checked) Summary() string { return c.summary }

type checkedNode struct {
	id, label, shape, color, group string
	existing                       bool // already on the canvas: only the fields given change
}

type checkedEdge struct{ from, to, label, style, arrow string }

// Synonyms small models use for our enum values.
var (
	kindAliases = map[string]string{
		"flow": "flowchart", "flow chart": "flowchart", "process": "flowchart", "workflow": "flowchart", "decision": "flowchart",
		"graph": "flowchart", "state": "flowchart", "diagram": "flowchart",
		"system": "architecture", "infrastructure": "architecture", "network": "architecture", "deployment": "architecture",
		"components": "architecture", "component": "architecture", "service": "architecture", "services": "architecture",
		"org": "orgchart", "org chart": "orgchart", "organization": "orgchart", "organisation": "orgchart", "organigram": "orgchart",
		"hierarchy": "orgchart", "tree": "orgchart", "team": "orgchart",
		"mind map": "mindmap", "mind": "mindmap", "brainstorm": "mindmap", "radial": "mindmap",
		"sequence diagram": "sequence", "sequencediagram": "sequence", "interaction": "sequence", "messages": "sequence",
	}
	dirAliases = map[string]string{"tb": "TB", "td": "TB", "bt": "TB", "top-down": "TB", "top to bottom": "TB",
		"vertical": "TB", "down": "TB", "lr": "LR", "rl": "LR", "left-right": "LR", "left to right": "LR",
		"horizontal": "LR", "right": "LR"}
	shapeAliases = map[string]string{
		"rect": "rectangle", "box": "rectangle", "square": "rectangle", "process": "rectangle", "step": "rectangle",
		"task": "rectangle", "node": "rectangle", "rounded": "rectangle", "round-rectangle": "rectangle",
		"circle": "ellipse", "oval": "ellipse", "round": "ellipse", "start": "ellipse", "end": "ellipse",
		"terminal": "ellipse", "stadium": "ellipse", "database": "ellipse", "db": "ellipse", "cylinder": "ellipse",
		"rhombus": "diamond", "decision": "diamond", "condition": "diamond", "question": "diamond", "choice": "diamond",
	}
	styleAliases = map[string]string{"dash": "dashed", "dashes": "dashed", "broken": "dashed", "dot": "dotted",
		"dots": "dotted", "line": "solid", "normal": "solid"}
	arrowAliases = map[string]string{"forward": "end", "one": "end", "single": "end", "two-way": "both", "bidirectional": "both",
		"double": "both", "no": "none", "false": "none", "line": "none"}
)

// enumValue maps s to one of values, directly, case-insensitively or through aliases.
func enumValue(s string, values []string, aliases map[string]string) (string, bool) {
	k := strings.ToLower(strings.Join(strings.Fields(strings.ReplaceAll(s, "_", " ")), " "))
	for _, v := range values {
		if strings.ToLower(v) == k {
			return v, true
		}
	}
	if v, ok := aliases[k]; ok {
		return v, true
	}
	if v, ok := aliases[strings.ReplaceAll(k, " ", "-")]; ok {
		return v, true
	}
	return "", false
}

// Check checks a plan against the canvas ix and the tools' limits, the way the tools check a
// model's arguments: every problem is named with its path and what to do instead. The plan can
// be drawn when Problems is empty.
func Check(p Plan, ix *Index, lim tools.Limits) (Checked, Problems) {
	var probs Problems
	c := check(p, ix, lim, &probs)
	return c, probs
}

func check(p Plan, ix *Index, lim tools.Limits, probs *Problems) Checked {
	lim = lim.WithDefaults()
	out := Checked{title: strings.TrimSpace(p.Title), summary: strings.TrimSpace(p.Summary)}
	out.kind = kindOf(p, probs)
	if d := strings.TrimSpace(p.Direction); d != "" {
		if strings.EqualFold(strings.ReplaceAll(d, " ", ""), "mindmap") {
			out.kind = "mindmap"
		} else if v, ok := enumValue(d, []string{"TB", "LR"}, dirAliases); ok {
			out.direction = v
		} else {
			probs.Add("direction", "%q is not a direction; use TB (top to bottom) or LR (left to right)", d)
		}
	}
	if n := len(p.Nodes) + len(p.Edges) + len(p.Messages); n > lim.MaxBatch {
		probs.Add("", "the plan has %d nodes, edges and messages; the limit is %d, draw fewer", n, lim.MaxBatch)
		return out
	}
	c := checker{ix: ix, lim: lim, probs: probs, ids: map[string]int{}, refs: map[string]string{}}
	if out.kind == "sequence" {
		out.nodes = c.actors(p.Nodes)
		out.messages = c.messages(p.Messages)
		if len(p.Messages) == 0 {
			probs.Add("messages", "a sequence diagram needs messages, e.g. [\"Client -> API: GET /\", \"API --> Client: 200 OK\"]")
		}
		return out
	}
	out.groups = c.groups(p.Groups)
	out.nodes = c.nodes(p.Nodes)
	c.groupIDs(out.groups)
	out.edges = c.edges(p.Edges)
	out.removeNodes, out.removeEdges = c.removals(p.Remove, out.nodes)
	if len(p.Nodes)+len(p.Edges)+len(p.Remove) == 0 {
		probs.Add("nodes", "the plan is empty; list the diagram's nodes and edges (or what to remove)")
	}
	return out
}

func kindOf(p Plan, probs *Problems) string {
	k := strings.TrimSpace(p.Kind)
	if k == "" {
		if len(p.Messages) > 0 && len(p.Edges) == 0 {
			return "sequence"
		}
		return "flowchart"
	}
	if v, ok := enumValue(strings.TrimSuffix(strings.ToLower(k), " diagram"), kinds, kindAliases); ok {
		return v
	}
	if v, ok := enumValue(k, kinds, kindAliases); ok {
		return v
	}
	probs.Add("kind", "%q is not a kind; use one of %s", k, strings.Join(kinds, ", "))
	return "flowchart"
}

// checker holds what the checks of one plan share: the ids taken so far and every name a
// node can be referred to by (its id as written, its final id, its label).
type checker struct {
	ix    *Index
	lim   tools.Limits
	probs *Problems
	ids   map[string]int    // final node id → index in nodes
	refs  map[string]string // id as written or label (normalised) → final id
	multi map[string]int    // labels more than one plan node has, with their count
}

func (c *checker) label(path, s string) (string, bool) {
	s = strings.TrimSpace(s)
	if n := len([]rune(s)); n > c.lim.MaxLabel {
		c.probs.Add(path, "the text is %d characters long; the limit is %d, shorten it", n, c.lim.MaxLabel)
		return "", false
	}
	return s, true
}

// idFor makes an id the tools accept from what the model wrote ("Load Balancer" →
// "load-balancer"), so a model that uses names as ids still draws.
func (c *checker) idFor(s string) string {
	s = strings.TrimSpace(s)
	if c.lim.CheckID(s) == nil {
		return s
	}
	return diagram.Slug(s, c.lim.MaxIDLength)
}

func (c *checker) nodes(in []Node) []checkedNode {
	var out []checkedNode
	labels := map[string]int{}
	for _, n := range in {
		labels[norm(n.Label)]++
	}
	c.multi = map[string]int{}
	for l, k := range labels {
		if k > 1 && l != "" {
			c.multi[l] = k
		}
	}
	claimed := map[string]bool{} // canvas nodes some plan node names by id
	for _, n := range in {
		if c.ix.nodes[strings.TrimSpace(n.ID)] != nil {
			claimed[strings.TrimSpace(n.ID)] = true
		}
	}
	for i, n := range in {
		path := fmt.Sprintf("nodes[%d]", i)
		raw := strings.TrimSpace(n.ID)
		label, okLabel := c.label(path+".label", n.Label)
		var id string
		existing := false
		switch {
		case c.ix.nodes[raw] != nil:
			id, existing = raw, true
		case raw == "" && label == "":
			c.probs.Add(path, "give the node a label, e.g. \"API\" or {\"label\":\"API\",\"shape\":\"ellipse\"}")
			continue
		default:
			// A node the model re-listed under another id, or named by its label: the one on the canvas.
			for _, ref := range []string{label, raw} {
				if s := c.ix.byLabel(ref); s != "" && !claimed[s] && c.multi[norm(ref)] == 0 {
					id, existing, claimed[s] = s, true, true
					break
				}
			}
			if !existing {
				if id = c.idFor(raw); id == "" {
					id = c.freeID(c.idFor(label), i)
				}
			}
		}
		if j, dup := c.ids[id]; dup {
			c.probs.Add(path+".id", "%q is used twice (also nodes[%d]); give each node its own id", id, j)
			continue
		}
		if !existing && label == "" && okLabel {
			c.probs.Add(path+".label", "node %q is new and has no label; give the text to show", id)
		}
		shape := ""
		if s := strings.TrimSpace(n.Shape); s != "" {
			var ok bool
			if shape, ok = enumValue(s, shapes, shapeAliases); !ok {
				c.probs.Add(path+".shape", "%q is not a shape; use rectangle, ellipse or diamond", s)
			}
		}
		color := ""
		if s := strings.TrimSpace(n.Color); s != "" {
			var err error
			if color, err = tools.NormalizeColor(s); err != nil {
				c.probs.Add(path+".color", "%q is not a colour; use one of %s (or a hex code like #1971c2)", s, strings.Join(colors, ", "))
			}
		}
		c.ids[id] = i
		for _, ref := range []string{raw, id} {
			if ref != "" {
				c.refs[ref] = id
			}
		}
		if l := norm(label); l != "" && c.multi[l] == 0 {
			c.refs["\x00"+l] = id
		}
		out = append(out, checkedNode{id: id, label: label, shape: shape, color: color, group: strings.TrimSpace(n.Group), existing: existing})
	}
	return out
}

// ref resolves a node reference of an edge: a plan node (by id or label), else a node on the
// canvas (by id or label). It returns "" with a problem added when there is none.
func (c *checker) ref(path, s string) string {
	s = strings.TrimSpace(s)
	if s == "" {
		c.probs.Add(path, "missing; give the id of a node")
		return ""
	}
	if id, ok := c.refs[s]; ok {
		return id
	}
	if c.ix.nodes[s] != nil {
		return s
	}
	if id, ok := c.refs["\x00"+norm(s)]; ok {
		return id
	}
	if c.multi[norm(s)] > 0 {
		c.probs.Add(path, "%d nodes are labelled %q; give them ids ({\"label\":%q,\"id\":\"…\"}) and name each by its id", c.multi[norm(s)], s, s)
		return ""
	}
	if id := c.ix.byLabel(s); id != "" {
		return id
	}
	if id, ok := c.refs[c.idFor(s)]; ok {
		return id
	}
	c.probs.Add(path, "%q is not the id of a node; the nodes are %s", s, c.known())
	return ""
}

// known lists the node ids a plan may refer to, for a message.
func (c *checker) known() string {
	seen := map[string]bool{}
	var all []string
	for id := range c.ids {
		seen[id] = true
		all = append(all, id)
	}
	slices.Sort(all)
	for _, id := range c.ix.order {
		if !seen[id] {
			all = append(all, id)
		}
	}
	if len(all) == 0 {
		return "none (list the nodes in nodes)"
	}
	return strings.Join(firstN(all, 15), ", ")
}

func (c *checker) edges(in []Edge) []checkedEdge {
	var out []checkedEdge
	seen := map[[3]string]bool{}
	for i, e := range in {
		path := fmt.Sprintf("edges[%d]", i)
		from, to := c.ref(path+".from", e.From), c.ref(path+".to", e.To)
		label, ok := c.label(path+".label", e.Label)
		style, arrow := "", ""
		if s := strings.TrimSpace(e.Style); s != "" {
			var okStyle bool
			if style, okStyle = enumValue(s, styles, styleAliases); !okStyle {
				c.probs.Add(path+".style", "%q is not a line style; use solid, dashed or dotted", s)
			}
		}
		if s := strings.TrimSpace(e.Arrow); s != "" {
			var okArrow bool
			if arrow, okArrow = enumValue(s, arrows, arrowAliases); !okArrow {
				c.probs.Add(path+".arrow", "%q is not an arrow; use end, both or none", s)
			}
		}
		if from == "" || to == "" || !ok {
			continue
		}
		if from == to {
			c.probs.Add(path, "goes from %q to itself; connect two different nodes", from)
			continue
		}
		if seen[[3]string{from, to, label}] {
			continue // the same arrow twice: draw it once
		}
		seen[[3]string{from, to, label}] = true
		out = append(out, checkedEdge{from: from, to: to, label: label, style: style, arrow: arrow})
	}
	return out
}

func (c *checker) groups(in []Group) []Group {
	var out []Group
	seen := map[string]int{}
	for i, g := range in {
		path := fmt.Sprintf("groups[%d]", i)
		title, ok := c.label(path+".title", g.Title)
		if !ok {
			continue
		}
		id := c.idFor(g.ID)
		derived := id == ""
		switch {
		case derived && title == "":
			c.probs.Add(path, "give the group a title, e.g. {\"title\":\"Backend\",\"nodes\":[\"API\"]}")
			continue
		case derived: // named by its title; one without ASCII letters or digits gets a number
			id = diagram.FreshID(c.idFor(title), "group", c.lim.MaxIDLength, func(s string) bool { _, ok := seen[s]; return ok })
		}
		if j, dup := seen[id]; dup {
			c.probs.Add(path+".id", "%q is used twice (also groups[%d]); give each group its own id", id, j)
			continue
		}
		seen[id] = i
		if title == "" {
			title = strings.TrimSpace(g.ID)
		}
		out = append(out, Group{ID: id, Title: title, Parent: strings.TrimSpace(g.Parent), derived: derived})
	}
	for i, g := range out { // a parent is a group of the plan or of the canvas, and not the group itself
		if g.Parent == "" {
			continue
		}
		pg, ok := declaredGroup(Checked{groups: out}, g.Parent)
		switch {
		case ok && pg.ID == g.ID:
			c.probs.Add(fmt.Sprintf("groups[%d].parent", i), "a group cannot sit in itself")
		case !ok && c.ix.group(g.Parent) == "":
			c.probs.Add(fmt.Sprintf("groups[%d].parent", i), "%q is not a group; give the title of one of the groups", g.Parent)
		}
	}
	return out
}

// groupIDs moves the ids made from groups' titles clear of the nodes' ids and of the canvas (a
// group "Prometheus" holding a node "Prometheus"): the tools refuse an id used twice.
func (c *checker) groupIDs(groups []Group) {
	taken := func(id string) bool {
		_, node := c.ids[id]
		_, group := c.ix.groups[id]
		if node || group || c.ix.nodes[id] != nil {
			return true
		}
		for _, g := range groups {
			if g.ID == id {
				return true
			}
		}
		return false
	}
	for i, g := range groups {
		if !g.derived {
			continue
		}
		id := g.ID
		groups[i].ID = "" // its own id does not count as taken
		if taken(id) {
			id = diagram.FreshID(id+"-group", "group", c.lim.MaxIDLength, taken)
		}
		groups[i].ID = id
	}
}

// removals splits Remove into nodes and edges ("a->b"), each of which must be on the canvas.
func (c *checker) removals(in []string, nodes []checkedNode) ([]string, [][2]string) {
	var ns []string
	var es [][2]string
	onCanvas := func(path, s string) string {
		s = strings.TrimSpace(s)
		if c.ix.nodes[s] != nil {
			return s
		}
		if id := c.ix.byLabel(s); id != "" {
			return id
		}
		if len(c.ix.order) == 0 {
			c.probs.Add(path, "%q is not on the canvas, which has no nodes; leave remove empty", s)
			return ""
		}
		c.probs.Add(path, "%q is not a node on the canvas; the nodes are %s", s, strings.Join(firstN(c.ix.order, 15), ", "))
		return ""
	}
	for i, r := range in {
		path := fmt.Sprintf("remove[%d]", i)
		t := strings.TrimSpace(r)
		named := c.ix.nodes[t] != nil || c.ix.byLabel(t) != "" // a node's label may hold an arrow ("Q1 → Q2")
		if a, b, ok := cutArrow(r); ok && !named {
			from, to := onCanvas(path, a), onCanvas(path, b)
			if from == "" || to == "" {
				continue
			}
			if _, ok := c.ix.edge(from, to); !ok {
				c.probs.Add(path, "there is no arrow between %q and %q on the canvas", from, to)
				continue
			}
			es = append(es, [2]string{from, to})
			continue
		}
		id := onCanvas(path, r)
		if id == "" {
			continue
		}
		for _, n := range nodes {
			if n.id == id {
				c.probs.Add(path, "%q is also listed in nodes; either keep it or remove it", id)
				id = ""
				break
			}
		}
		if id != "" && !slices.Contains(ns, id) {
			ns = append(ns, id)
		}
	}
	return ns, es
}

// cutArrow splits an edge written as "a -> b" (any arrow of the short form, with or without
// spaces, a label after it ignored).
func cutArrow(s string) (string, string, bool) {
	e, err := tools.ParseEdge(s, nil)
	if err != nil {
		return "", "", false
	}
	return e.From, e.To, true
}

// freeID is id, or id with a number after it when a plan node has it already: two nodes of one
// label written without ids are two nodes (edges must name them by id, which the check says).
func (c *checker) freeID(id string, i int) string {
	if id == "" {
		return fmt.Sprintf("n%d", i+1) // a label without ASCII letters or digits
	}
	if _, taken := c.ids[id]; !taken && c.ix.nodes[id] == nil {
		return id
	}
	for k := 2; ; k++ {
		cand := fmt.Sprintf("%s-%d", id, k)
		if _, taken := c.ids[cand]; !taken && c.ix.nodes[cand] == nil {
			return cand
		}
	}
}

func firstN(s []string, n int) []string {
	if len(s) > n {
		return append(append([]string(nil), s[:n]...), "…")
	}
	return s
}

// actors are the participants of a sequence, in the order the plan lists them.
func (c *checker) actors(in []Node) []checkedNode {
	var out []checkedNode
	for i, n := range in {
		path := fmt.Sprintf("nodes[%d]", i)
		label, ok := c.label(path+".label", n.Label)
		if !ok {
			continue
		}
		id := c.idFor(n.ID)
		switch {
		case id == "" && label == "":
			c.probs.Add(path, "give the participant a label, e.g. \"API\"")
			continue
		case id == "": // named by its label; one without ASCII letters or digits gets a number
			id = c.freeID(c.idFor(label), i)
		}
		if j, dup := c.ids[id]; dup {
			c.probs.Add(path+".id", "%q is used twice (also nodes[%d]); give each participant its own id", id, j)
			continue
		}
		c.ids[id] = i
		c.refs[strings.TrimSpace(n.ID)], c.refs[id] = id, id
		if label == "" {
			label = strings.TrimSpace(n.ID)
		}
		if l := norm(label); l != "" {
			c.refs["\x00"+l] = id
		}
		out = append(out, checkedNode{id: id, label: label})
	}
	return out
}

// messages checks a sequence's messages; an actor they name that is not among the nodes is
// added (create_sequence takes actors from the steps).
func (c *checker) messages(in []Message) []Message {
	var out []Message
	end := func(path, s string) string {
		s = strings.TrimSpace(s)
		if s == "" {
			c.probs.Add(path, "missing; give the participant's id")
			return ""
		}
		if id, ok := c.refs[s]; ok {
			return id
		}
		if id, ok := c.refs["\x00"+norm(s)]; ok {
			return id
		}
		return s
	}
	for i, m := range in {
		path := fmt.Sprintf("messages[%d]", i)
		from, to := end(path+".from", m.From), end(path+".to", m.To)
		label, ok := c.label(path+".label", m.Label)
		if from == "" || to == "" || !ok {
			continue
		}
		if label == "" {
			c.probs.Add(path+".label", "empty; say what the message is, e.g. \"GET /orders\"")
			continue
		}
		out = append(out, Message{From: from, To: to, Label: label, Reply: m.Reply})
	}
	return out
}
