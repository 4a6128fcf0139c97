package plan

import (
	"encoding/json"
	"strings"

	"github.com/excalibot/excalibot/tools"
)

// Call is one tool call a plan is drawn with.
type Call struct {
	Name string
	Args json.RawMessage
}

func callOf(name string, args any) Call {
	b, err := json.Marshal(args)
	if err != nil { // maps of strings and slices always marshal
		panic("plan: marshal " + name + ": " + err.Error())
	}
	return Call{Name: name, Args: b}
}

// Expand turns a checked plan into graph tool calls. A plan that touches nothing on the
// canvas is a new diagram: create_graph (or create_sequence), which places it beside whatever is
// there. Otherwise it is a follow-up: remove_from_graph, update_graph and add_to_graph, each only
// for what the plan changes, so a node a person moved stays where they put it and nothing the
// request did not touch is redrawn.
func Expand(p Checked, ix *Index) []Call {
	if p.kind == "sequence" {
		var calls []Call
		if ix.sequence && len(ix.order) == 0 {
			// A sequence is one ordered picture: the plan gives all its messages, drawn afresh.
			// clear_canvas keeps a snapshot of what it removed.
			calls = append(calls, Call{Name: tools.ClearCanvas, Args: json.RawMessage("{}")})
		}
		return append(calls, sequenceCall(p))
	}
	followUp := len(p.removeNodes)+len(p.removeEdges) > 0
	for _, n := range p.nodes {
		followUp = followUp || n.existing
	}
	for _, e := range p.edges {
		followUp = followUp || ix.nodes[e.from] != nil || ix.nodes[e.to] != nil
	}
	if !followUp {
		return []Call{createCall(p)}
	}
	return editCalls(p, ix)
}

func graphDirection(p Checked) string {
	switch {
	case p.kind == "mindmap":
		return "mindmap"
	case p.direction != "":
		return p.direction
	case p.kind == "architecture":
		return "LR"
	}
	return "TB"
}

// groupRef is the name a node's group is given by: a declared group's id, else as written.
func groupRef(p Checked, g string) string {
	if pg, ok := declaredGroup(p, g); ok {
		return pg.ID
	}
	return g
}

// declaredGroup is the plan's group that g names, by id or title.
func declaredGroup(p Checked, g string) (Group, bool) {
	for _, pg := range p.groups {
		if pg.ID == g || norm(pg.Title) == norm(g) {
			return pg, true
		}
	}
	return Group{}, false
}

func nodeArgs(n checkedNode, group string) map[string]any {
	m := map[string]any{"id": n.id, "label": n.label}
	if n.shape != "" {
		m["shape"] = n.shape
	}
	if n.color != "" {
		m["color"] = n.color
	}
	if group != "" {
		m["group"] = group
	}
	return m
}

func edgeArgs(e checkedEdge) map[string]any {
	m := map[string]any{"from": e.from, "to": e.to}
	if e.label != "" {
		m["label"] = e.label
	}
	if e.style != "" {
		m["style"] = e.style
	}
	if e.arrow != "" {
		m["arrow"] = e.arrow
	}
	return m
}

func createCall(p Checked) Call {
	nodes := make([]map[string]any, 0, len(p.nodes))
	used := map[string]bool{}
	for _, n := range p.nodes {
		g := ""
		if n.group != "" {
			g = groupRef(p, n.group)
			used[g] = true
		}
		nodes = append(nodes, nodeArgs(n, g))
	}
	edges := make([]map[string]any, 0, len(p.edges))
	for _, e := range p.edges {
		edges = append(edges, edgeArgs(e))
	}
	args := map[string]any{"direction": graphDirection(p), "nodes": nodes, "edges": edges}
	// A group no node is in, directly or through the groups inside it, would not be drawn.
	for changed := true; changed; {
		changed = false
		for _, g := range p.groups {
			if pr := groupRef(p, g.Parent); used[g.ID] && g.Parent != "" && !used[pr] {
				used[pr], changed = true, true
			}
		}
	}
	var groups []map[string]any
	for _, g := range p.groups {
		if !used[g.ID] {
			continue
		}
		m := map[string]any{"id": g.ID, "title": g.Title}
		if g.Parent != "" {
			m["parent"] = groupRef(p, g.Parent)
		}
		groups = append(groups, m)
	}
	if len(groups) > 0 {
		args["groups"] = groups
	}
	return callOf(tools.CreateGraph, args)
}

func sequenceCall(p Checked) Call {
	args := map[string]any{}
	if len(p.nodes) > 0 {
		actors := make([]map[string]any, 0, len(p.nodes))
		for _, n := range p.nodes {
			actors = append(actors, map[string]any{"id": n.id, "label": n.label})
		}
		args["actors"] = actors
	}
	msgs := make([]map[string]any, 0, len(p.messages))
	for _, m := range p.messages {
		mm := map[string]any{"from": m.From, "to": m.To, "label": m.Label}
		if m.Reply {
			mm["return"] = true
		}
		msgs = append(msgs, mm)
	}
	args["messages"] = msgs
	return callOf(tools.CreateSequence, args)
}

// editCalls are the calls of a follow-up, in the order that keeps references valid: removals
// first, then changes to what is there, then additions (which may connect to changed nodes).
func editCalls(p Checked, ix *Index) []Call {
	var calls []Call
	if len(p.removeNodes)+len(p.removeEdges) > 0 {
		args := map[string]any{}
		if len(p.removeNodes) > 0 {
			args["nodes"] = p.removeNodes
		}
		if len(p.removeEdges) > 0 {
			var es []map[string]string
			for _, e := range p.removeEdges {
				es = append(es, map[string]string{"from": e[0], "to": e[1]})
			}
			args["edges"] = es
		}
		calls = append(calls, callOf(tools.RemoveFromGraph, args))
	}
	var upNodes, upEdges, addNodes, addEdges []map[string]any
	for _, n := range p.nodes {
		if !n.existing {
			addNodes = append(addNodes, nodeArgs(n, followUpGroup(p, ix, n.group)))
			continue
		}
		if u := nodeUpdate(p, ix, n); len(u) > 1 {
			upNodes = append(upNodes, u)
		}
	}
	for _, e := range p.edges {
		old, ok := ix.edge(e.from, e.to)
		if !ok {
			addEdges = append(addEdges, edgeArgs(e))
			continue
		}
		u := map[string]any{"from": old.from, "to": old.to}
		if e.label != "" && e.label != old.label {
			u["label"] = e.label
		}
		if e.style != "" && e.style != old.style {
			u["style"] = e.style
		}
		if e.arrow != "" && e.arrow != old.arrow {
			u["arrow"] = e.arrow
		}
		if len(u) > 2 {
			upEdges = append(upEdges, u)
		}
	}
	if len(upNodes)+len(upEdges) > 0 {
		args := map[string]any{}
		if len(upNodes) > 0 {
			args["nodes"] = upNodes
		}
		if len(upEdges) > 0 {
			args["edges"] = upEdges
		}
		calls = append(calls, callOf(tools.UpdateGraph, args))
	}
	if len(addNodes)+len(addEdges) > 0 {
		args := map[string]any{}
		if len(addNodes) > 0 {
			args["nodes"] = addNodes
		}
		if len(addEdges) > 0 {
			args["edges"] = addEdges
		}
		calls = append(calls, callOf(tools.AddToGraph, args))
	}
	return calls
}

// nodeUpdate is the update_graph item for the fields of n that differ from the canvas.
func nodeUpdate(p Checked, ix *Index, n checkedNode) map[string]any {
	old := ix.nodes[n.id]
	u := map[string]any{"node": n.id}
	if n.label != "" && n.label != old.label {
		u["label"] = n.label
	}
	if n.shape != "" && n.shape != old.typ {
		u["shape"] = n.shape
	}
	if n.color != "" && !sameColor(n.color, old.bg) {
		u["color"] = n.color
	}
	if n.group != "" {
		g := followUpGroup(p, ix, n.group)
		if on := ix.group(g); on == "" || on != old.group { // a new group, or another one
			u["group"] = g
		}
	}
	return u
}

// followUpGroup names a group for add_to_graph or update_graph: a group on the canvas by its id,
// else the plan group's title, which the tools use as the title of the frame they create.
func followUpGroup(p Checked, ix *Index, g string) string {
	if g == "" {
		return ""
	}
	if id := ix.group(g); id != "" {
		return id
	}
	if pg, ok := declaredGroup(p, g); ok {
		if id := ix.group(pg.Title); id != "" {
			return id
		}
		return pg.Title
	}
	return g
}

// sameColor compares a plan colour with get_scene's name for a fill ("blue" is the light fill
// the tools give a bare hue; "transparent" is no fill, which get_scene leaves out).
func sameColor(plan, scene string) bool {
	if scene == "" {
		scene = "transparent"
	}
	if strings.HasSuffix(plan, "-light") {
		plan = strings.TrimSuffix(plan, "-light")
	}
	return plan == scene
}
