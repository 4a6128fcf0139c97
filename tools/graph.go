package tools

import (
	"context"
	"fmt"
	"strings"

	"github.com/excalibot/excalibot/diagram"
	"github.com/excalibot/excalibot/layout"
	"github.com/excalibot/excalibot/scene"
)

// Graph tools: the model gives nodes, edges and groups; Graphviz dot places them (graphmodel.go).

var (
	graphShapes    = []string{"rectangle", "ellipse", "diamond"}
	graphDirs      = []string{"TB", "LR", "mindmap"}
	graphDirAlias  = map[string]string{"tb": "TB", "td": "TB", "top-down": "TB", "down": "TB", "vertical": "TB", "lr": "LR", "left-right": "LR", "right": "LR", "horizontal": "LR", "mind-map": "mindmap", "mind map": "mindmap", "radial": "mindmap"}
	graphArrows    = []string{"end", "both", "none"}
	nodeFields     = []string{"id", "label", "shape", "color", "group"}
	edgeFields     = []string{"from", "to", "label", "style", "arrow"}
	groupFields    = []string{"id", "title", "style", "parent"}
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

type groupArgs struct{ path, id, title, style, parent string }

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
		a.id, a.derived = slug(a.label, lim.MaxIDLength), true
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

// slug makes an id from a label, "Load Balancer" → "load-balancer", keeping ASCII letters and
// digits only (ids are plain ASCII, see Limits.checkID); it may be "" (a label in another script).
func slug(label string, max int) string {
	var b strings.Builder
	dash := false
	for _, r := range strings.ToLower(label) {
		if r >= 'a' && r <= 'z' || r >= '0' && r <= '9' {
			if dash && b.Len() > 0 {
				b.WriteByte('-')
			}
			dash = false
			b.WriteRune(r)
		} else {
			dash = true
		}
		if b.Len() >= max {
			break
		}
	}
	return b.String()
}

// freshID returns base (or fallback when base is ""), with "-2", "-3"… added until taken says no.
func freshID(base, fallback string, max int, taken func(string) bool) string {
	if base == "" {
		base = fallback
	}
	if len(base) > max-4 {
		base = strings.TrimRight(base[:max-4], "-")
	}
	id := base
	for i := 2; taken(id); i++ {
		id = fmt.Sprintf("%s-%d", base, i)
	}
	return id
}

// createGraph draws a whole diagram from structure and lays it out.
func (s *Set) createGraph(w *scene.Scene, o *object) (string, error) {
	dir := layout.TopDown
	if d, ok := o.enum("direction", graphDirs, graphDirAlias); ok {
		dir = layout.Direction(d)
	}
	nodeObjs, _ := o.objList("nodes")
	edgeObjs, _ := o.objList("edges")
	groupObjs, _ := o.objList("groups")
	if !o.has("nodes") {
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
		ga.style = "frame"
		if st, ok := g.enum("style", groupStyles, map[string]string{"background": "box", "rectangle": "box", "container": "box"}); ok {
			ga.style = st
		}
		ga.parent, _ = g.str("parent")
		finishGraph(g, groupFields)
		groups = append(groups, ga)
	}
	nodes, edges := s.decodeGraphItems(o, nodeObjs, edgeObjs)
	if !o.p.ok() {
		return "", o.p
	}
	if len(nodes) == 0 {
		return "", refuse("nodes: the list is empty; give at least one node")
	}
	at := diagram.Beside(w) // beside what is already there, never on top of it
	ids, err := s.addGraphItems(w, nodes, edges, groups)
	if err != nil {
		return "", err
	}
	only := map[string]bool{}
	for _, n := range nodes {
		only[n.id] = true
	}
	g := readGraph(w, only)
	lg, r, err := layoutOf(graphContext(o), w, g, dir)
	if err != nil {
		return "", err
	}
	ox, oy := at.X, at.Y
	if err := applyLayout(w, lg, r, ox, oy); err != nil {
		return "", err
	}
	if err := routeEdges(w, edgeIDs(g), r, ox, oy); err != nil {
		return "", err
	}
	ids, note, err := dropEmptyGroups(w, ids, g)
	if err != nil {
		return "", err
	}
	return fmt.Sprintf("graph laid out %s: %d nodes, %d edges, %d groups, %d edge crossings.\n", dir, len(nodes), len(edges), len(g.frames), r.Crossings) +
		note + createdText(w, ids, s.lim), nil
}

// dropEmptyGroups deletes the groups of this call that hold no node, directly or through a group
// inside them: they were never placed, and a 1×1 box with its title at the origin helps nobody.
func dropEmptyGroups(w *scene.Scene, ids []string, g sceneGraph) ([]string, string, error) {
	laid := map[string]bool{}
	for _, f := range g.frames {
		laid[f] = true
	}
	var keep, gone []string
	for _, id := range ids {
		e, ok := w.Get(id)
		if !ok || laid[id] || !(e.Type == scene.Frame || isBox(&e)) || !emptyGroup(e) {
			keep = append(keep, id)
			continue
		}
		gone = append(gone, id)
	}
	if len(gone) == 0 {
		return ids, "", nil
	}
	var del []string
	for _, id := range gone {
		del = append(del, id)
		if t := titleOf(w, id); t != "" {
			del = append(del, t)
		}
	}
	if _, err := w.Delete(del...); err != nil {
		return nil, "", fmt.Errorf("drop empty groups: %w", err)
	}
	return keep, fmt.Sprintf("groups without nodes were not drawn: %s.\n", strings.Join(gone, ", ")), nil
}

func edgeIDs(g sceneGraph) []string {
	out := make([]string, len(g.edges))
	for i, e := range g.edges {
		out[i] = e.id
	}
	return out
}

// decodeGraphItems decodes node and edge lists and checks the limits on their count.
func (s *Set) decodeGraphItems(o *object, nodeObjs, edgeObjs []*object) ([]nodeArgs, []edgeArgs) {
	if n := len(nodeObjs) + len(edgeObjs); n > s.lim.MaxBatch {
		o.p.add("", "%d nodes and edges in one call; the limit is %d, split them over several calls", n, s.lim.MaxBatch)
		return nil, nil
	}
	nodes := make([]nodeArgs, 0, len(nodeObjs))
	for _, n := range nodeObjs {
		nodes = append(nodes, decodeNode(n, s.lim))
	}
	edges := make([]edgeArgs, 0, len(edgeObjs))
	for _, e := range edgeObjs {
		edges = append(edges, decodeEdge(e, s.lim))
	}
	return nodes, edges
}

// addGraphItems adds nodes (at the origin, sized by their labels), the groups' frames and the
// edges to w, checking ids, references and the element limit. Placement is the caller's. A group
// a node names that is neither declared nor on the canvas (by frame id or title) gets a new frame
// titled by the name.
func (s *Set) addGraphItems(w *scene.Scene, nodes []nodeArgs, edges []edgeArgs, groups []groupArgs) ([]string, error) {
	p := &problems{}
	// Ids: new, and unique in the call. Ids made from labels give way to the ids the model chose.
	seen := map[string]string{}
	for _, n := range nodes {
		if !n.derived {
			seen[n.id] = n.path
		}
	}
	for i, n := range nodes {
		if n.derived {
			nodes[i].id = freshID(n.id, "node", s.lim.MaxIDLength, func(c string) bool { return seen[c] != "" || w.Has(c) })
			seen[nodes[i].id] = n.path
		}
	}
	seen = map[string]string{}
	for _, n := range nodes {
		if prev, dup := seen[n.id]; dup {
			p.add(n.path+".id", "%q is already used by %s; give each node its own id", n.id, prev)
			continue
		}
		seen[n.id] = n.path
		if e, ok := w.Get(n.id); ok {
			p.add(n.path+".id", "%q is already on the canvas (%s); pick another id, or use update_graph to change it", n.id, withArticle(e.Type))
		}
	}
	// Groups: declared ones, plus any a node names; an existing group is found by id or title.
	frameOf := map[string]string{} // group name as given → group id
	var newGroups []groupArgs
	for _, g := range groups {
		if _, ok := w.Get(g.id); ok {
			p.add(g.path+".id", "%q is already on the canvas; pick another group id", g.id)
			continue
		}
		frameOf[g.id] = g.id
		frameOf[g.title] = g.id
		newGroups = append(newGroups, g)
	}
	for _, n := range nodes {
		if n.group == "" || frameOf[n.group] != "" {
			continue
		}
		if f := findGroup(w, n.group); f != "" {
			frameOf[n.group] = f
			continue
		}
		id := freshID(slug(n.group, s.lim.MaxIDLength), "group", s.lim.MaxIDLength, func(c string) bool {
			return w.Has(c) || seen[c] != "" || frameIDTaken(newGroups, c)
		})
		frameOf[n.group] = id
		newGroups = append(newGroups, groupArgs{id: id, title: n.group, style: "frame"})
	}
	parents := s.groupParents(w, newGroups, frameOf, p)
	if !p.ok() {
		return nil, p
	}
	labels := 0
	for _, e := range edges {
		if e.label != "" {
			labels++
		}
	}
	if total := w.Len() + 2*len(nodes) + len(edges) + labels + 2*len(newGroups); total > s.lim.MaxElements {
		return nil, refuse("the canvas would hold %d elements (labels count); the limit is %d. Delete elements or draw fewer (now %d)",
			total, s.lim.MaxElements, w.Len())
	}
	ids, err := addGroups(w, newGroups, parents)
	if err != nil {
		return nil, err
	}
	want := map[string]string{} // node → its box
	for _, n := range nodes {
		e := scene.NewElement(scene.Type(n.shape))
		e.ID = n.id
		e.Width, e.Height, _ = diagram.DefaultSize(scene.Type(n.shape))
		if n.fill != nil {
			e.BackgroundColor = *n.fill
		}
		if _, err := w.Add(e); err != nil {
			return nil, refuse("%s: %s", n.path, sceneErrText(err))
		}
		if n.label != "" {
			if _, err := w.SetLabel(n.id, n.label); err != nil {
				return nil, refuse("%s.label: %s", n.path, sceneErrText(err))
			}
			if err := diagram.FitLabel(w, n.id); err != nil {
				return nil, err
			}
		}
		if n.group != "" {
			gid := frameOf[n.group]
			if f := frameIn(w, gid, parents); f != "" {
				if err := w.SetFrame(f, n.id); err != nil {
					return nil, refuse("%s.group: %s", n.path, sceneErrText(err))
				}
			}
			if e, _ := w.Get(gid); e.Type != scene.Frame {
				want[n.id] = gid
			}
		}
		ids = append(ids, n.id)
	}
	if len(want) > 0 {
		if err := assignBoxes(w, want, nil, nil); err != nil {
			return nil, err
		}
	}
	g := readGraph(w, nil)
	for _, e := range edges {
		id, err := addEdge(w, g, e, s.lim.MaxIDLength)
		if err != nil {
			p.add(e.path, "%s", err)
			continue
		}
		ids = append(ids, id)
	}
	if !p.ok() {
		return nil, p
	}
	return ids, nil
}

func frameIDTaken(frames []groupArgs, id string) bool {
	for _, f := range frames {
		if f.id == id {
			return true
		}
	}
	return false
}

// addEdge adds one edge as an arrow bound at both ends, with its label.
func addEdge(w *scene.Scene, g sceneGraph, a edgeArgs, maxID int) (string, error) {
	from, msg := resolveNode(w, g, a.from)
	if msg != "" {
		return "", fmt.Errorf("from: %s", msg)
	}
	to, msg := resolveNode(w, g, a.to)
	if msg != "" {
		return "", fmt.Errorf("to: %s", msg)
	}
	if from == to {
		return "", fmt.Errorf("from and to are both %q; an edge joins two different nodes", from)
	}
	id := "e-" + from + "-" + to
	if w.Has(id) || len(id) > maxID {
		id = freshID(id, "e", maxID, w.Has)
	}
	e := scene.NewElement(scene.Arrow)
	e.ID = id
	e.StrokeStyle = a.style
	e.StartBinding = &scene.Binding{ElementID: from, Gap: scene.DefaultGap}
	e.EndBinding = &scene.Binding{ElementID: to, Gap: scene.DefaultGap}
	e.EndArrowhead = "arrow"
	switch a.arrow {
	case "both":
		e.StartArrowhead = "arrow"
	case "none":
		e.EndArrowhead = ""
	}
	if _, err := w.Add(e); err != nil {
		return "", fmt.Errorf("%s", sceneErrText(err))
	}
	if a.label != "" {
		if _, err := w.SetLabel(id, a.label); err != nil {
			return "", fmt.Errorf("label: %s", sceneErrText(err))
		}
	}
	return id, nil
}

// findFrame finds a frame by id or by its name (case ignored).
func findFrame(w *scene.Scene, ref string) string {
	if e, ok := w.Get(ref); ok && e.Type == scene.Frame {
		return ref
	}
	found := ""
	w.Each(func(e *scene.Element) bool {
		if e.Type == scene.Frame && strings.EqualFold(strings.TrimSpace(e.Name), strings.TrimSpace(ref)) {
			found = e.ID
			return false
		}
		return true
	})
	return found
}

// graphContext returns the call's context, or Background for calls made without one.
func graphContext(o *object) context.Context {
	if o.ctx != nil {
		return o.ctx
	}
	return context.Background()
}
