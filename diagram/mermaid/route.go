package mermaid

import (
	"encoding/json"
	"fmt"
	"math"
	"sort"

	"github.com/excalibot/excalibot/scene"
	"github.com/excalibot/excalibot/scene/fontmetrics"
)

// Route is the path Mermaid drew for one edge, as the converter read it from Mermaid's SVG.
type Route struct {
	// Paths are the pieces of the edge in drawing order (Mermaid draws a self-loop as three),
	// each as SVG path data with the matrix that maps it onto the diagram's coordinates.
	Paths []RoutePath `json:"paths"`
	// Label is the centre of the edge's label where Mermaid placed it, if it has one.
	Label *[2]float64 `json:"label,omitempty"`
}

// RoutePath is one piece of a route: SVG path data and its matrix [a b c d e f].
type RoutePath struct {
	D string     `json:"d"`
	M [6]float64 `json:"m"`
}

// routeTol is how far (px) the arrow's points may let its curve stray from Mermaid's path.
const routeTol = 1.0

// offBorder is how far (px) beyond its binding gap an arrow end may be from the shape it is
// bound to before it counts as not touching it.
const offBorder = 3.0

// Finish makes converted elements what Excalidraw would draw from Mermaid's layout:
//   - an arrow with a route follows it: its points trace the path Mermaid drew (within routeTol),
//     its ends sit on the borders of the shapes it is bound to (Excalidraw's gap outside them), and
//     its label, at the point of the path nearest to where Mermaid put it, is the arrow's middle
//     point, where Excalidraw draws an arrow's label;
//   - an arrow without one keeps its course, its bound ends moved onto the borders and its label
//     at its middle; in a sequence diagram an end bound to a shape it does not touch (a message
//     bound to an actor's box far above it) is unbound instead;
//   - every arrow label is centred where Excalidraw draws it, and links other than http(s) go.
//
// elems are the converter's elements, typ Mermaid's name of the diagram type.
func Finish(elems []json.RawMessage, routes map[string]Route, typ string) ([]json.RawMessage, error) {
	ms := make([]map[string]any, len(elems))
	for i, raw := range elems {
		if err := json.Unmarshal(raw, &ms[i]); err != nil || ms[i] == nil {
			return nil, fmt.Errorf("converted element %d is not an object", i)
		}
	}
	shapes, err := shapesOf(elems)
	if err != nil {
		return nil, err
	}
	byID := map[string]map[string]any{}
	labels := map[string]map[string]any{}
	for _, m := range ms {
		id, _ := m["id"].(string)
		byID[id] = m
		if c, _ := m["containerId"].(string); c != "" && m["type"] == "text" {
			labels[c] = m
		}
	}
	sequence := typ == "sequence"
	var ids []string
	for _, m := range ms {
		if m["type"] == "arrow" {
			id, _ := m["id"].(string)
			ids = append(ids, id)
		}
	}
	sort.Strings(ids) // a deterministic order: labels are placed clear of those placed before
	free := newRoom(shapes)
	for _, id := range ids {
		a := byID[id]
		pts, ok := absPoints(a)
		if !ok {
			continue
		}
		st, en := boundShape(a, "startBinding", shapes), boundShape(a, "endBinding", shapes)
		label := labels[id]
		if sequence {
			unbindFar(a, "startBinding", st, pts[0], byID)
			unbindFar(a, "endBinding", en, pts[len(pts)-1], byID)
			if label != nil {
				pts = widenSelfMessage(pts, num(label, "width"))
				if len(pts)%2 == 0 && len(pts) > 2 {
					pts = oddPoints(pts)
				}
				setPoints(a, pts)
			}
		} else {
			if r, ok := routes[id]; ok {
				var at *scene.Point
				if path, err := r.polyline(); err == nil && len(path) >= 2 {
					pts = path
					if r.Label != nil {
						at = &scene.Point{X: r.Label[0], Y: r.Label[1]}
					}
				}
				pts = onBorders(pts, st, en)
				mid := -1.0
				if label != nil {
					mid = free.place(pts, at, num(label, "width"), num(label, "height"))
				}
				pts = arrowPoints(pts, mid)
			} else {
				// Class and ER relations keep the converter's points, their label moved to the
				// middle (the converter may leave it next to an arrowhead).
				if st != nil || en != nil {
					pts = onBorders(pts, st, en)
				}
				if label != nil {
					pts = arrowPoints(pts, free.place(pts, nil, num(label, "width"), num(label, "height")))
				}
			}
			setPoints(a, pts)
			bind(a, "startBinding", st, pts[1], pts[0])
			bind(a, "endBinding", en, pts[len(pts)-2], pts[len(pts)-1])
		}
		if label != nil {
			wrapLabel(label, a)
			centreLabel(label, pts)
		}
	}
	for _, m := range ms {
		if l, _ := m["link"].(string); l != "" && scene.SafeLink(l) == "" {
			m["link"] = nil
		}
	}
	out := make([]json.RawMessage, len(ms))
	for i, m := range ms {
		b, err := json.Marshal(m)
		if err != nil {
			return nil, fmt.Errorf("encode element %d: %w", i, err)
		}
		out[i] = b
	}
	return out, nil
}

// shapesOf reads the rectangles, ellipses and diamonds the arrows may be bound to, as the scene
// package sees them (its geometry is Excalidraw's).
func shapesOf(elems []json.RawMessage) (map[string]*scene.Element, error) {
	doc, err := json.Marshal(map[string]any{"type": "excalidraw", "version": 2, "elements": elems})
	if err != nil {
		return nil, fmt.Errorf("encode the converted elements: %w", err)
	}
	sc, err := scene.Decode(doc)
	if err != nil {
		return nil, fmt.Errorf("read the converted elements: %w", err)
	}
	out := map[string]*scene.Element{}
	sc.Each(func(e *scene.Element) bool {
		if e.Type.IsShape() {
			c := *e
			out[e.ID] = &c
		}
		return true
	})
	return out, nil
}

// polyline is the route flattened, in the diagram's coordinates, its pieces joined.
func (r Route) polyline() ([]scene.Point, error) {
	var out []scene.Point
	for _, p := range r.Paths {
		subs, err := parsePath(p.D)
		if err != nil {
			return nil, err
		}
		for _, s := range subs {
			for _, q := range s {
				out = append(out, transform(p.M, q))
			}
		}
	}
	return dedupe(out, 0.05), nil
}

func num(m map[string]any, k string) float64 {
	v, _ := m[k].(float64)
	return v
}

// absPoints returns an arrow's points in scene coordinates (at least two).
func absPoints(a map[string]any) ([]scene.Point, bool) {
	raw, _ := a["points"].([]any)
	x, y := num(a, "x"), num(a, "y")
	var out []scene.Point
	for _, r := range raw {
		p, _ := r.([]any)
		if len(p) < 2 {
			return nil, false
		}
		px, ok1 := p[0].(float64)
		py, ok2 := p[1].(float64)
		if !ok1 || !ok2 {
			return nil, false
		}
		out = append(out, scene.Point{X: x + px, Y: y + py})
	}
	return out, len(out) >= 2
}

// setPoints stores absolute points into an arrow: x, y at the first, points relative to it, the
// size their extent (as Excalidraw's restore computes it).
func setPoints(a map[string]any, pts []scene.Point) {
	x0, y0 := pts[0].X, pts[0].Y
	rel := make([]any, len(pts))
	minX, minY, maxX, maxY := math.Inf(1), math.Inf(1), math.Inf(-1), math.Inf(-1)
	for i, p := range pts {
		q := []any{round(p.X - x0), round(p.Y - y0)}
		rel[i] = q
		minX, maxX = math.Min(minX, q[0].(float64)), math.Max(maxX, q[0].(float64))
		minY, maxY = math.Min(minY, q[1].(float64)), math.Max(maxY, q[1].(float64))
	}
	a["x"], a["y"], a["points"] = round(x0), round(y0), rel
	a["width"], a["height"] = maxX-minX, maxY-minY
}

// round keeps 1/1000 px: enough for any screen, and files that do not grow digits for nothing.
func round(v float64) float64 { return math.Round(v*1000) / 1000 }

func boundShape(a map[string]any, key string, shapes map[string]*scene.Element) *scene.Element {
	b, _ := a[key].(map[string]any)
	id, _ := b["elementId"].(string)
	return shapes[id]
}

// bind writes the binding of one end to t: the focus of the line from adj to end, and the gap
// between end and t's border.
func bind(a map[string]any, key string, t *scene.Element, adj, end scene.Point) {
	b, _ := a[key].(map[string]any)
	if b == nil || t == nil {
		return
	}
	b["focus"] = round(scene.FocusOf(*t, adj, end))
	b["gap"] = round(math.Max(0.5, scene.DistanceToBorder(*t, end)))
}

// unbindFar drops the binding of an end that does not touch its shape, on both sides.
func unbindFar(a map[string]any, key string, t *scene.Element, end scene.Point, byID map[string]map[string]any) {
	if t == nil || scene.DistanceToBorder(*t, end) <= scene.DefaultGap+offBorder {
		return
	}
	a[key] = nil
	other := "endBinding"
	if key == "endBinding" {
		other = "startBinding"
	}
	if b, _ := a[other].(map[string]any); b != nil && b["elementId"] == t.ID {
		return // still bound to it at the other end
	}
	if m := byID[t.ID]; m != nil {
		bound, _ := m["boundElements"].([]any)
		var keep []any
		for _, r := range bound {
			if ref, _ := r.(map[string]any); ref == nil || ref["id"] != a["id"] {
				keep = append(keep, r)
			}
		}
		m["boundElements"] = keep
	}
}

// onBorders cuts (or extends) the polyline so that it starts on st's border and ends on en's,
// each scene.DefaultGap outside, as Excalidraw leaves a bound arrow's ends.
func onBorders(pts []scene.Point, st, en *scene.Element) []scene.Point {
	if st != nil {
		pts = fromBorder(pts, st)
	}
	if en != nil {
		pts = reversed(fromBorder(reversed(pts), en))
	}
	return pts
}

// fromBorder makes the polyline start where it leaves e, DefaultGap along it. A polyline that
// starts outside e is extended back along its first segment to e's border (Mermaid ends its
// paths on its own outline of a shape, which Excalidraw may draw smaller).
func fromBorder(pts []scene.Point, e *scene.Element) []scene.Point {
	s := arcLengths(pts)
	total := s[len(s)-1]
	if total == 0 {
		return pts
	}
	if at, ok := exitAt(pts, s, e); ok {
		return sub(pts, s, math.Min(at+scene.DefaultGap, at+(total-at)/3), total)
	}
	k := 1
	for k < len(pts)-1 && dist(pts[k], pts[0]) < 1 {
		k++
	}
	d := dist(pts[0], pts[k])
	if d == 0 {
		return pts
	}
	ux, uy := (pts[0].X-pts[k].X)/d, (pts[0].Y-pts[k].Y)/d
	if b, ok := reach(e, pts[0], ux, uy, 4*scene.DefaultGap+dist(pts[0], e.Center())); ok {
		back := dist(b, pts[0])
		if back >= scene.DefaultGap {
			start := scene.Point{X: b.X - ux*scene.DefaultGap, Y: b.Y - uy*scene.DefaultGap}
			return dedupe(append([]scene.Point{start}, pts...), 1e-9)
		}
		return sub(pts, s, math.Min(scene.DefaultGap-back, total/3), total)
	}
	// Aimed past e: start from e's border towards the polyline's first point.
	start := scene.EdgePoint(*e, pts[0], scene.DefaultGap)
	return dedupe(append([]scene.Point{start}, pts...), 1e-9)
}

// arrowPoints picks the arrow's points from a route: few enough to edit, close enough
// (routeTol) to draw Mermaid's path. With mid >= 0, the point at that arc length is the middle
// one of an odd number, where Excalidraw puts the label.
func arrowPoints(pts []scene.Point, mid float64) []scene.Point {
	s := arcLengths(pts)
	total := s[len(s)-1]
	if mid < 0 || total == 0 {
		idx := simplify(pts, routeTol)
		out := make([]scene.Point, len(idx))
		for i, j := range idx {
			out[i] = pts[j]
		}
		return out
	}
	mid = math.Max(0, math.Min(total, mid))
	left, right := sub(pts, s, 0, mid), sub(pts, s, mid, total)
	if len(left) < 2 || len(right) < 2 {
		return arrowPoints(pts, total/2)
	}
	l, r := pick(left), pick(right)
	for len(l) < len(r) {
		l = grow(left, l)
	}
	for len(r) < len(l) {
		r = grow(right, r)
	}
	out := make([]scene.Point, 0, len(l)+len(r)-1)
	la, ra := arcLengths(left), arcLengths(right)
	for _, v := range l {
		out = append(out, pointAt(left, la, v))
	}
	for _, v := range r[1:] {
		out = append(out, pointAt(right, ra, v))
	}
	return out
}

// pick returns the arc lengths of the points simplify keeps.
func pick(pts []scene.Point) []float64 {
	s := arcLengths(pts)
	var out []float64
	for _, i := range simplify(pts, routeTol) {
		out = append(out, s[i])
	}
	return out
}

// grow adds the point halfway (by arc length) along the longest stretch between kept points.
func grow(pts []scene.Point, kept []float64) []float64 {
	best := 0
	for i := 1; i < len(kept); i++ {
		if kept[i]-kept[i-1] > kept[best+1]-kept[best] {
			best = i - 1
		}
	}
	v := (kept[best] + kept[best+1]) / 2
	out := append([]float64{}, kept[:best+1]...)
	out = append(out, v)
	return append(out, kept[best+1:]...)
}

// oddPoints adds the midpoint of the middle segment, so that an even number of points becomes
// odd and the label's place is a point of the arrow (Excalidraw measures an even one along the
// curve, which the straight midpoint is not).
func oddPoints(pts []scene.Point) []scene.Point {
	i := len(pts)/2 - 1
	m := scene.Point{X: (pts[i].X + pts[i+1].X) / 2, Y: (pts[i].Y + pts[i+1].Y) / 2}
	out := append([]scene.Point{}, pts[:i+1]...)
	out = append(out, m)
	return append(out, pts[i+1:]...)
}

// wrapLabel wraps an arrow's label the way Excalidraw's editor does when it loads it: to 70% of
// the arrow's width, never narrower than 11 × its font size (getMaxContainerWidth). Mermaid may
// leave a message less room than that.
func wrapLabel(t, a map[string]any) {
	size := num(t, "fontSize")
	maxW := math.Max(0.7*num(a, "width"), 11*size)
	if size <= 0 || num(t, "width") <= maxW {
		return
	}
	text, _ := t["originalText"].(string)
	if text == "" {
		text, _ = t["text"].(string)
	}
	family := int(num(t, "fontFamily"))
	wrapped := fontmetrics.Wrap(family, size, text, maxW)
	w, h := fontmetrics.Measure(family, size, wrapped)
	t["text"], t["width"], t["height"] = wrapped, round(w), round(h)
}

// centreLabel puts a label's centre on the arrow's middle point (odd count) or the middle of its
// middle segment, as Excalidraw's editor draws it.
func centreLabel(t map[string]any, pts []scene.Point) {
	n := len(pts)
	m := pts[n/2]
	if n%2 == 0 {
		a, b := pts[n/2-1], pts[n/2]
		m = scene.Point{X: (a.X + b.X) / 2, Y: (a.Y + b.Y) / 2}
	}
	t["x"] = round(m.X - num(t, "width")/2)
	t["y"] = round(m.Y - num(t, "height")/2)
}
