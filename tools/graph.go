package tools

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/excalibot/excalibot/diagram"
	"github.com/excalibot/excalibot/diagram/graph"
	"github.com/excalibot/excalibot/internal/plural"
	"github.com/excalibot/excalibot/scene"
)

// Graph tools: the model gives nodes, edges and groups; they are decoded here and drawn by
// diagram/graph, where Graphviz dot places them.

var (
	graphShapes    = []string{"rectangle", "ellipse", "diamond"}
	graphDirs      = []string{"TB", "LR", "mindmap"}
	graphDirAlias  = map[string]string{"tb": "TB", "td": "TB", "top-down": "TB", "down": "TB", "vertical": "TB", "lr": "LR", "left-right": "LR", "right": "LR", "horizontal": "LR", "mind-map": "mindmap", "mind map": "mindmap", "radial": "mindmap"}
	graphArrows    = []string{"end", "both", "none"}
	groupStyles    = []string{"frame", "box"}
	nodeFields     = []string{"id", "label", "shape", "color", "group"}
	edgeFields     = []string{"from", "to", "label", "style", "arrow"}
	groupFields    = []string{"id", "title", "style", "parent", "nodes"}
	nodeUpdFields  = []string{"node", "label", "shape", "color", "group"}
	graphFieldHint = map[string]string{"text": "label", "type": "shape", "colour": "color", "backgroundColor": "color",
		"source": "from", "target": "to", "start": "from", "end": "to", "frame": "group", "name": "title"}
)

// nodeArgs is one node as the model gave it.
type nodeArgs struct {
	path, id, label, shape, group string
	fill                          *string
	derived                       bool // id made from the label; made unique when added
}

type edgeArgs struct {
	path, from, to, label, style, arrow string
	hasLabel, hasStyle                  bool
}

type groupArgs struct {
	path, id, title, style, parent string
	derived                        bool // no id given: one is made from the title (groupIDs)
}

// groupIDs gives the groups named by their titles alone ids made from the titles, clear of the
// call's nodes (a group "Prometheus" holding a node "Prometheus"), the other groups and the canvas.
func groupIDs(groups []groupArgs, nodes []nodeArgs, w *scene.Scene, maxLen int) {
	taken := map[string]bool{}
	for _, n := range nodes {
		taken[n.id] = true
	}
	for _, g := range groups {
		if !g.derived {
			taken[g.id] = true
		}
	}
	isTaken := func(id string) bool { return taken[id] || w.Has(id) }
	for i, g := range groups {
		if !g.derived {
			continue
		}
		id := diagram.Slug(g.title, maxLen)
		switch {
		case id == "":
			id = diagram.FreshID("", "group", maxLen, isTaken)
		case isTaken(id):
			id = diagram.FreshID(id+"-group", "group", maxLen, isTaken)
		}
		groups[i].id, taken[id] = id, true
	}
}

// finishGraph handles unknown fields (unknown.go), pointing at the graph tools' names for the
// usual slips.
func finishGraph(o *object, known []string, hints ...map[string]string) {
	o.finishWith(known, append(hints, graphFieldHint)...)
}

func decodeNode(o *object, lim Limits) nodeArgs {
	a := nodeArgs{path: o.path, shape: "rectangle"}
	a.label, _ = lim.label(o, "label")
	if o.has("id") {
		a.id, _ = lim.id(o, "id")
	} else if a.label != "" {
		a.id, a.derived = diagram.Slug(a.label, lim.MaxIDLength), true
	} else {
		o.p.add(o.path, "give an id and a label, e.g. {\"id\":\"api\",\"label\":\"API\"}")
	}
	if a.label == "" && !o.has("label") {
		a.label = a.id
	}
	if s, ok := o.enum("shape", graphShapes, typeAliases); ok {
		a.shape = s
	}
	a.fill = optColor(o, "color", roleFill)
	a.group, _ = o.str("group")
	finishGraph(o, nodeFields)
	return a
}

func decodeEdge(o *object, lim Limits) edgeArgs {
	a := edgeArgs{path: o.path, arrow: "end", style: "solid"}
	a.from, _ = o.str("from")
	a.to, _ = o.str("to")
	if a.from == "" || a.to == "" {
		o.p.add(o.path, "give from and to (node ids or labels), e.g. {\"from\":\"api\",\"to\":\"db\"}")
	}
	a.label, a.hasLabel = lim.label(o, "label")
	if s, ok := o.enum("style", strokeStyles, map[string]string{"dash": "dashed", "dot": "dotted"}); ok {
		a.style, a.hasStyle = s, true
	}
	if s, ok := o.enum("arrow", graphArrows, map[string]string{"forward": "end", "two-way": "both", "bidirectional": "both", "no": "none"}); ok {
		a.arrow = s
	}
	finishGraph(o, edgeFields)
	return a
}

// createGraph draws a whole diagram from structure and lays it out.
func (s *Set) createGraph(ctx context.Context, w *scene.Scene, o *object) (string, error) {
	var dir graph.Direction // none given: graph.Draw picks the one that fits
	if d, ok := o.enum("direction", graphDirs, graphDirAlias); ok {
		dir = graph.Direction(d)
	}
	groupObjs, _ := o.objList("groups")
	nodeObjs := graphNodeObjs(o, groupObjs)
	if !o.has("nodes") && len(nodeObjs) == 0 {
		o.p.add("nodes", "missing; give a list like [{\"id\":\"api\",\"label\":\"API\"},{\"id\":\"db\",\"label\":\"Database\",\"shape\":\"ellipse\"}]")
	}
	finishGraph(o, []string{"direction", "nodes", "edges", "groups"})
	var groups []groupArgs
	for _, g := range groupObjs {
		ga := groupArgs{path: g.path}
		ga.id, _ = s.lim.id(g, "id")
		ga.title, _ = s.lim.label(g, "title")
		if ga.title == "" {
			ga.title = ga.id
		}
		ga.derived = ga.id == "" && !g.has("id") // named by its title alone, as its nodes name it
		ga.style = "frame"
		if st, ok := g.enum("style", groupStyles, map[string]string{"background": "box", "rectangle": "box", "container": "box"}); ok {
			ga.style = st
		}
		ga.parent, _ = g.str("parent")
		finishGraph(g, groupFields, map[string]string{"in": "parent", "members": "nodes", "children": "nodes"})
		groups = append(groups, ga)
	}
	nodes, edges := s.decodeGraphItems(o, w, nodeObjs)
	if !o.p.ok() {
		return "", o.p
	}
	if len(nodes) == 0 {
		return "", refuse("nodes: the list is empty; give at least one node")
	}
	groupIDs(groups, nodes, w, s.lim.MaxIDLength)
	gr := graph.Graph{Nodes: graphNodes(nodes), Edges: graphEdges(edges), Direction: dir}
	for _, g := range groups {
		gr.Groups = append(gr.Groups, graph.Group{ID: g.id, Title: g.title, Style: g.style, Parent: g.parent, Ref: g.path})
	}
	res, err := graph.Draw(ctx, w, gr, s.graphOptions())
	if err != nil {
		return "", graphRefusal(err)
	}
	note := ""
	if len(res.Dropped) > 0 {
		note = fmt.Sprintf("groups without nodes were not drawn: %s.\n", strings.Join(res.Dropped, ", "))
	}
	var top []string
	for _, g := range groups {
		if g.parent == "" && g.title != "" {
			top = append(top, g.title)
		}
	}
	note += legibilityNote(res.Legibility, top)
	return fmt.Sprintf("graph laid out %s%s: %s, %s.\n", res.Direction, arrangementText(res.Arrangement), graphCounts(res.Nodes, res.Edges, res.Groups), plural.Count(res.Crossings, "edge crossing", "")) +
		note + createdText(w, res.IDs, s.lim), nil
}

// legibilityNote tells the model, when a laid-out diagram will not read well in a chat (longer
// than graph.MaxAspect, or labels under graph.MinPreviewPx in the preview), what it will look like
// and how to split it; "" when it reads well. groups are the top groups' titles, to name the parts.
func legibilityNote(l graph.Legibility, groups []string) string {
	if l.Readable() {
		return ""
	}
	var what string
	switch {
	case l.Aspect > graph.MaxAspect+0.05 && l.PreviewPx < graph.MinPreviewPx:
		what = fmt.Sprintf("it is %.1f:1 and its labels come out about %.0f px high in a chat preview", l.Aspect, l.PreviewPx)
	case l.Aspect > graph.MaxAspect+0.05:
		what = fmt.Sprintf("it is %.1f:1, one long strip", l.Aspect)
	default:
		what = fmt.Sprintf("its labels come out about %.0f px high in a chat preview", l.PreviewPx)
	}
	split := "draw the main flow first and the details as a second diagram"
	if len(groups) >= 2 {
		if len(groups) > 4 {
			groups = append(groups[:4:4], "…")
		}
		split = "draw one diagram per group (" + strings.Join(groups, ", ") + ") and an overview of how they connect"
	}
	return fmt.Sprintf("note: this picture will be hard to read in a chat: %s (%.0f px reads well). If the user did not ask for everything in one picture, split it: %s; shorter labels help too.\n", what, graph.MinPreviewPx, split)
}

// arrangementText is how a layout was fitted to the screen, for a result's first line.
func arrangementText(a string) string {
	if a == "" {
		return ""
	}
	return " (" + a + ", to fit the screen)"
}

// graphCounts is "3 nodes, 1 edge, 0 groups".
func graphCounts(nodes, edges, groups int) string {
	return plural.Count(nodes, "node", "") + ", " + plural.Count(edges, "edge", "") + ", " + plural.Count(groups, "group", "")
}

func (s *Set) graphOptions() graph.Options {
	return graph.Options{MaxIDLength: s.lim.MaxIDLength, MaxElements: s.lim.MaxElements}
}

func graphNodes(in []nodeArgs) []graph.Node {
	out := make([]graph.Node, len(in))
	for i, n := range in {
		out[i] = graph.Node{ID: n.id, Label: n.label, Shape: scene.Type(n.shape), Group: n.group, Derived: n.derived, Ref: n.path}
		if n.fill != nil {
			out[i].Fill = *n.fill
		}
	}
	return out
}

func graphEdges(in []edgeArgs) []graph.Edge {
	out := make([]graph.Edge, len(in))
	for i, e := range in {
		out[i] = graph.Edge{From: e.from, To: e.to, Label: e.label, Style: e.style, Arrow: e.arrow, Ref: e.path}
	}
	return out
}

// graphRefusal turns an error of diagram/graph into the refusal the model reads: a list of
// problems stays a list, each with its field path.
func graphRefusal(err error) error {
	var ps graph.Problems
	if errors.As(err, &ps) {
		p := &problems{}
		for _, q := range ps {
			p.add(q.Where, "%s", graphErrText(q.Err))
		}
		return p
	}
	return refuse("%s", graphErrText(err))
}

// graphErrText says what went wrong and what to call instead.
func graphErrText(err error) string {
	var taken *graph.TakenError
	var many *graph.TooManyError
	var locked *graph.LockedError
	switch {
	case errors.As(err, &taken):
		return fmt.Sprintf("%q is already on the canvas (%s); pick another id, or use %s to change it", taken.ID, withArticle(taken.Type), UpdateGraph)
	case errors.As(err, &many):
		return fmt.Sprintf("the canvas would hold %d elements (labels count); the limit is %d. Delete elements or draw fewer (now %d)", many.Total, many.Limit, many.Now)
	case errors.Is(err, graph.ErrNoNodes):
		return "the canvas has no nodes to lay out; draw with " + CreateGraph + " first"
	case errors.As(err, &locked):
		return fmt.Sprintf("nodes %s are locked; call %s first", strings.Join(locked.IDs, ", "), UnlockElements)
	}
	return sceneErrText(err)
}

// decodeGraphItems decodes the nodes nodeObjs and the call's edges (objects or short strings,
// whose names are looked up among the nodes and on w) and checks the limits on their count.
func (s *Set) decodeGraphItems(o *object, w *scene.Scene, nodeObjs []*object) ([]nodeArgs, []edgeArgs) {
	if n := len(nodeObjs) + listLen(o, "edges"); n > s.lim.MaxBatch {
		o.p.add("", "%d nodes and edges in one call; the limit is %d, split them over several calls", n, s.lim.MaxBatch)
		return nil, nil
	}
	nodes := make([]nodeArgs, 0, len(nodeObjs))
	for _, n := range nodeObjs {
		nodes = append(nodes, decodeNode(n, s.lim))
	}
	edgeObjs := graphEdgeObjs(o, w, nodes)
	edges := make([]edgeArgs, 0, len(edgeObjs))
	for _, e := range edgeObjs {
		edges = append(edges, decodeEdge(e, s.lim))
	}
	return nodes, edges
}
