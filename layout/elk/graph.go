package elk

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"strconv"

	"github.com/excalibot/excalibot/layout"
)

// groupMargin is the room between a group's border and its nodes, as plain dot's cluster
// margin; the title strip comes on top of it.
const groupMargin = 20.0

// node is a node of ELK's JSON graph: a box to place, or (with children) a group, or the root.
type node struct {
	ID            string            `json:"id"`
	X             float64           `json:"x,omitempty"`
	Y             float64           `json:"y,omitempty"`
	Width         float64           `json:"width,omitempty"`
	Height        float64           `json:"height,omitempty"`
	LayoutOptions map[string]string `json:"layoutOptions,omitempty"`
	Children      []*node           `json:"children,omitempty"`
	Edges         []*edge           `json:"edges,omitempty"`
}

type edge struct {
	ID       string    `json:"id"`
	Sources  []string  `json:"sources"`
	Targets  []string  `json:"targets"`
	Labels   []*label  `json:"labels,omitempty"`
	Sections []section `json:"sections,omitempty"`
	// Container is the node whose coordinates the sections and labels are relative to; ELK
	// says it in its answer.
	Container string `json:"container,omitempty"`
}

type label struct {
	ID            string            `json:"id"`
	Text          string            `json:"text"`
	X             float64           `json:"x,omitempty"`
	Y             float64           `json:"y,omitempty"`
	Width         float64           `json:"width"`
	Height        float64           `json:"height"`
	LayoutOptions map[string]string `json:"layoutOptions,omitempty"`
}

type section struct {
	StartPoint point   `json:"startPoint"`
	EndPoint   point   `json:"endPoint"`
	BendPoints []point `json:"bendPoints,omitempty"`
}

type point struct {
	X float64 `json:"x"`
	Y float64 `json:"y"`
}

// Options returns the layout options ELK is given for g, at the root (they are inherited by
// the groups). Spacing is what the other engines keep; the rest is ELK's layered algorithm with
// its defaults. (Keeping the graph's order, considerModelOrder NODES_AND_EDGES, made it three to
// five times slower on the grouped benchmark graph; docs/diagram-quality.md has its figures.)
func Options(g layout.Graph) map[string]string {
	nodeSep, rankSep := g.NodeSep, g.RankSep
	if nodeSep <= 0 {
		nodeSep = layout.DefaultNodeSep
	}
	if rankSep <= 0 {
		rankSep = layout.DefaultRankSep
	}
	dir := "DOWN"
	if g.Direction == layout.LeftRight {
		dir = "RIGHT"
	}
	return map[string]string{
		"elk.algorithm":                             "layered",
		"elk.direction":                             dir,
		"elk.hierarchyHandling":                     "INCLUDE_CHILDREN",
		"elk.edgeRouting":                           "ORTHOGONAL",
		"elk.spacing.nodeNode":                      num(nodeSep),
		"elk.layered.spacing.nodeNodeBetweenLayers": num(rankSep),
		"elk.spacing.componentComponent":            num(nodeSep),
	}
}

// source writes g as ELK's JSON graph: nodes n<i>, groups c<i> nested as g nests them, edges
// e<k> all at the root (ELK finds the group each one belongs to).
func source(g layout.Graph) ([]byte, error) {
	root := &node{ID: "root", LayoutOptions: Options(g)}
	groups := make(map[string]*node, len(g.Clusters))
	for i, c := range g.Clusters {
		groups[c.ID] = &node{ID: "c" + strconv.Itoa(i), LayoutOptions: map[string]string{
			"elk.padding": fmt.Sprintf("[top=%s,left=%s,bottom=%s,right=%s]", num(groupMargin+c.TitleHeight), num(groupMargin), num(groupMargin), num(groupMargin)),
		}}
	}
	parentOf := func(cluster string) *node {
		if p := groups[cluster]; p != nil {
			return p
		}
		return root
	}
	for _, c := range g.Clusters {
		p := parentOf(c.Parent)
		p.Children = append(p.Children, groups[c.ID])
	}
	index := make(map[string]int, len(g.Nodes))
	for i, n := range g.Nodes {
		index[n.ID] = i
		p := parentOf(n.Cluster)
		p.Children = append(p.Children, &node{ID: "n" + strconv.Itoa(i), Width: n.Width, Height: n.Height})
	}
	for k, e := range g.Edges {
		ed := &edge{ID: "e" + strconv.Itoa(k), Sources: []string{"n" + strconv.Itoa(index[e.From])}, Targets: []string{"n" + strconv.Itoa(index[e.To])}}
		if e.LabelWidth > 0 && e.LabelHeight > 0 {
			// Inline: the label sits on its edge, centred, as Excalidraw draws an arrow's label.
			ed.Labels = []*label{{ID: "l" + strconv.Itoa(k), Text: " ", Width: e.LabelWidth, Height: e.LabelHeight,
				LayoutOptions: map[string]string{"elk.edgeLabels.inline": "true"}}}
		}
		root.Edges = append(root.Edges, ed)
	}
	return json.Marshal(root)
}

// Layout places g's nodes and groups and routes its edges with ELK's layered algorithm. A
// route is orthogonal: Result.Ends says where it leaves its tail's border and meets its head's,
// Result.Routes holds its bends between (a labelled route with the label's place on the route as
// its middle point, where Excalidraw centres an arrow's label) and every edge is Sharp. A mind
// map has no layered counterpart and is laid out as the own layout lays out a mind map. It is
// safe for concurrent use (calls are serialised).
func Layout(ctx context.Context, g layout.Graph) (layout.Result, error) {
	if err := layout.Validate(g); err != nil {
		return layout.Result{}, err
	}
	if g.Direction == layout.MindMap {
		return layout.Layout(ctx, layout.Graph{Direction: g.Direction, Nodes: g.Nodes, Edges: g.Edges, NodeSep: g.NodeSep, RankSep: g.RankSep})
	}
	src, err := source(g)
	if err != nil {
		return layout.Result{}, fmt.Errorf("write elk graph: %w", err)
	}
	out, err := layoutJSON(ctx, src)
	if err != nil {
		return layout.Result{}, fmt.Errorf("run elk: %w", err)
	}
	res, err := read(g, out)
	if err != nil {
		return layout.Result{}, fmt.Errorf("read elk output: %w", err)
	}
	return res, nil
}

// read turns ELK's answer into a Result in g's terms, shifted so that every coordinate is ≥ 0.
func read(g layout.Graph, data []byte) (layout.Result, error) {
	var root node
	if err := json.Unmarshal(data, &root); err != nil {
		return layout.Result{}, err
	}
	// Every position ELK gives is relative to its parent (a section or label: to its edge's
	// container); origin holds each ELK node's top-left corner in the root's coordinates.
	origin := map[string]layout.Point{root.ID: {}}
	boxes := map[string]layout.Rect{}
	var walk func(n *node, at layout.Point)
	walk = func(n *node, at layout.Point) {
		for _, c := range n.Children {
			p := layout.Point{X: at.X + c.X, Y: at.Y + c.Y}
			origin[c.ID] = p
			boxes[c.ID] = layout.Rect{X: p.X, Y: p.Y, Width: c.Width, Height: c.Height}
			walk(c, p)
		}
	}
	walk(&root, layout.Point{})
	res := layout.Result{Nodes: make(map[string]layout.Rect, len(g.Nodes)), Clusters: make(map[string]layout.Rect, len(g.Clusters)),
		Routes: make([][]layout.Point, len(g.Edges)), Labels: make([]layout.Point, len(g.Edges)), Sharp: make([]bool, len(g.Edges)),
		Ends: make([][2]layout.Point, len(g.Edges)), Direction: g.Direction}
	for i, n := range g.Nodes {
		b, ok := boxes["n"+strconv.Itoa(i)]
		if !ok {
			return layout.Result{}, fmt.Errorf("elk did not place node %q", n.ID)
		}
		res.Nodes[n.ID] = layout.Rect{X: b.X, Y: b.Y, Width: n.Width, Height: n.Height}
	}
	for i, c := range g.Clusters {
		b, ok := boxes["c"+strconv.Itoa(i)]
		if !ok {
			return layout.Result{}, fmt.Errorf("elk did not place group %q", c.ID)
		}
		res.Clusters[c.ID] = b
	}
	lines := make([][]layout.Point, len(g.Edges))
	for _, e := range root.Edges {
		k, err := strconv.Atoi(e.ID[1:])
		if err != nil || k < 0 || k >= len(g.Edges) || len(e.Sections) == 0 || g.Edges[k].From == g.Edges[k].To {
			continue
		}
		at, ok := origin[e.Container]
		if !ok && e.Container != "" {
			return layout.Result{}, fmt.Errorf("edge %s in unknown container %q", e.ID, e.Container)
		}
		abs := func(p point) layout.Point { return layout.Point{X: at.X + p.X, Y: at.Y + p.Y} }
		var line []layout.Point
		for _, s := range e.Sections {
			line = appendPoint(line, abs(s.StartPoint))
			for _, b := range s.BendPoints {
				line = appendPoint(line, abs(b))
			}
			line = appendPoint(line, abs(s.EndPoint))
		}
		if len(line) < 2 {
			continue
		}
		lines[k] = line
		if len(e.Labels) > 0 && e.Labels[0].Width > 0 {
			l := e.Labels[0]
			res.Labels[k] = layout.Point{X: at.X + l.X + l.Width/2, Y: at.Y + l.Y + l.Height/2}
		}
	}
	for k, line := range lines {
		// A self-loop needs no route: the caller draws it beside its node.
		if line == nil && g.Edges[k].From != g.Edges[k].To {
			return layout.Result{}, fmt.Errorf("elk did not route edge %d", k)
		}
	}
	shiftToOrigin(&res, lines)
	for k, line := range lines {
		if line == nil {
			continue
		}
		res.Sharp[k] = true
		res.Ends[k] = [2]layout.Point{line[0], line[len(line)-1]}
		if g.Edges[k].LabelWidth > 0 && g.Edges[k].LabelHeight > 0 {
			res.Routes[k] = throughLabel(line, res.Labels[k])
		} else {
			res.Routes[k] = line[1 : len(line)-1]
		}
	}
	res.Crossings = crossings(g, lines)
	return res, nil
}

// appendPoint appends p unless it repeats the last point (ELK's sections meet at a shared point).
func appendPoint(line []layout.Point, p layout.Point) []layout.Point {
	if n := len(line); n > 0 && math.Abs(line[n-1].X-p.X) < 1e-6 && math.Abs(line[n-1].Y-p.Y) < 1e-6 {
		return line
	}
	return append(line, p)
}

// shiftToOrigin moves everything so that the smallest coordinate of any node, group, route or
// label is 0: ELK pads the root, which the caller places on its own.
func shiftToOrigin(res *layout.Result, lines [][]layout.Point) {
	minX, minY := math.Inf(1), math.Inf(1)
	see := func(x, y float64) { minX, minY = math.Min(minX, x), math.Min(minY, y) }
	for _, r := range res.Nodes {
		see(r.X, r.Y)
	}
	for _, r := range res.Clusters {
		see(r.X, r.Y)
	}
	for _, l := range lines {
		for _, p := range l {
			see(p.X, p.Y)
		}
	}
	if math.IsInf(minX, 1) {
		return
	}
	for id, r := range res.Nodes {
		res.Nodes[id] = layout.Rect{X: r.X - minX, Y: r.Y - minY, Width: r.Width, Height: r.Height}
	}
	for id, r := range res.Clusters {
		res.Clusters[id] = layout.Rect{X: r.X - minX, Y: r.Y - minY, Width: r.Width, Height: r.Height}
	}
	for _, l := range lines {
		for i := range l {
			l[i] = layout.Point{X: l[i].X - minX, Y: l[i].Y - minY}
		}
	}
	for k, p := range res.Labels {
		if p != (layout.Point{}) {
			res.Labels[k] = layout.Point{X: p.X - minX, Y: p.Y - minY}
		}
	}
}

// throughLabel returns the points of line between its ends with the point of line nearest the
// label's centre as the middle one: the line is cut there, and the shorter side's longest
// segments are halved until both sides have as many points, which leaves its drawn path as it
// was.
func throughLabel(line []layout.Point, c layout.Point) []layout.Point {
	seg, at, best := 0, line[0], math.Inf(1)
	for i := 0; i+1 < len(line); i++ {
		if q := nearest(line[i], line[i+1], c); dist(q, c) < best {
			seg, at, best = i, q, dist(q, c)
		}
	}
	a := append(append([]layout.Point(nil), line[:seg+1]...), at)
	b := append([]layout.Point{at}, line[seg+1:]...)
	for len(a) < len(b) {
		a = splitLongest(a)
	}
	for len(b) < len(a) {
		b = splitLongest(b)
	}
	out := append([]layout.Point(nil), a[1:len(a)-1]...)
	out = append(out, at)
	return append(out, b[1:len(b)-1]...)
}

// splitLongest halves the longest segment of a polyline.
func splitLongest(pts []layout.Point) []layout.Point {
	k, longest := 0, -1.0
	for i := 0; i+1 < len(pts); i++ {
		if d := dist(pts[i], pts[i+1]); d > longest {
			k, longest = i, d
		}
	}
	mid := layout.Point{X: (pts[k].X + pts[k+1].X) / 2, Y: (pts[k].Y + pts[k+1].Y) / 2}
	out := append(append([]layout.Point(nil), pts[:k+1]...), mid)
	return append(out, pts[k+1:]...)
}

// nearest is the point of segment a–b nearest p.
func nearest(a, b, p layout.Point) layout.Point {
	dx, dy := b.X-a.X, b.Y-a.Y
	l := dx*dx + dy*dy
	if l == 0 {
		return a
	}
	t := math.Max(0, math.Min(1, ((p.X-a.X)*dx+(p.Y-a.Y)*dy)/l))
	return layout.Point{X: a.X + t*dx, Y: a.Y + t*dy}
}

func dist(a, b layout.Point) float64 { return math.Hypot(a.X-b.X, a.Y-b.Y) }

// crossings counts the pairs of routes that cross, ends included; routes that share an end node
// are not compared, as layout counts them.
func crossings(g layout.Graph, lines [][]layout.Point) int {
	n := 0
	for i := range lines {
		for j := i + 1; j < len(lines); j++ {
			a, b := g.Edges[i], g.Edges[j]
			if lines[i] == nil || lines[j] == nil || a.From == b.From || a.From == b.To || a.To == b.From || a.To == b.To {
				continue
			}
			if cross(lines[i], lines[j]) {
				n++
			}
		}
	}
	return n
}

func cross(p, q []layout.Point) bool {
	for i := 0; i+1 < len(p); i++ {
		for j := 0; j+1 < len(q); j++ {
			if segmentsCross(p[i], p[i+1], q[j], q[j+1]) {
				return true
			}
		}
	}
	return false
}

// segmentsCross reports whether a–b and c–d cross at a point inside both (touching is not
// crossing: orthogonal routes often run along a shared line).
func segmentsCross(a, b, c, d layout.Point) bool {
	orient := func(p, q, r layout.Point) float64 { return (q.X-p.X)*(r.Y-p.Y) - (q.Y-p.Y)*(r.X-p.X) }
	d1, d2 := orient(c, d, a), orient(c, d, b)
	d3, d4 := orient(a, b, c), orient(a, b, d)
	return (d1 > 0 && d2 < 0 || d1 < 0 && d2 > 0) && (d3 > 0 && d4 < 0 || d3 < 0 && d4 > 0)
}

// num writes a number as ELK's options take it.
func num(v float64) string { return strconv.FormatFloat(v, 'f', -1, 64) }
