package tools

import (
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"

	"github.com/excalibot/excalibot/internal/clip"
	"github.com/excalibot/excalibot/internal/plural"
	"github.com/excalibot/excalibot/scene"
)

// The get_scene text. One line per thing the model can act on, defaults omitted:
//
//	scene: 7 elements (limit 500), bbox 0,0 400x380
//	r1 rect 0,0 160x80 "API" bg=blue
//	d1 diamond 0,150 180x110 "Valid?"
//	connections:
//	r1 -> d1 "check" (a1)
//	warnings:
//	- r1 overlaps r2: move one of them
//
// Labels are not separate lines (a shape's label is on the shape's line), and bound arrows are
// only connections, which is what keeps the text near 20 bytes per element of the file. Every
// label is a Go-quoted string, so a label cannot contain a line break or a quote that would end
// it: text inside a label can never pass for scene structure.

// maxLabelShown caps a label in get_scene; get_element shows the whole text.
const maxLabelShown = 80

// view indexes one scene's live elements for describing and linting it. It must not modify them.
type view struct {
	elems []scene.Element
	byID  map[string]*scene.Element
}

func newView(sc *scene.Scene) *view {
	// Shallow copies: the view only reads, so the elements' slices may stay shared with the scene
	// (Each hands out the scene's own elements without the deep copies Elements makes).
	v := &view{elems: make([]scene.Element, 0, sc.Len())}
	sc.Each(func(e *scene.Element) bool {
		v.elems = append(v.elems, *e)
		return true
	})
	v.byID = make(map[string]*scene.Element, len(v.elems))
	for i := range v.elems {
		v.byID[v.elems[i].ID] = &v.elems[i]
	}
	return v
}

// labelOf returns the element's label text as the model wrote it (before wrapping).
func (v *view) labelOf(e *scene.Element) (string, bool) {
	id := e.Label()
	if id == "" {
		return "", false
	}
	t, ok := v.byID[id]
	if !ok {
		return "", false
	}
	return textOf(t), true
}

// unwrapped is a label's lines as one: a line broken after a hyphen (as the wrapping breaks
// "kube-apiserver") or a slash (as a long path is broken) joins the next without a space.
func unwrapped(s string) string {
	var b strings.Builder
	for i, line := range strings.Split(s, "\n") {
		line = strings.Join(strings.Fields(line), " ")
		if line == "" {
			continue
		}
		if i > 0 && b.Len() > 0 && !strings.HasSuffix(b.String(), "-") && !strings.HasSuffix(b.String(), "/") {
			b.WriteByte(' ')
		}
		b.WriteString(line)
	}
	return b.String()
}

func textOf(t *scene.Element) string {
	if t.OriginalText != "" {
		return t.OriginalText
	}
	return t.Text
}

// isLabel reports whether e is the bound text of a live container (shown on the container's line).
func (v *view) isLabel(e *scene.Element) bool {
	if e.Type != scene.Text || e.ContainerID == "" {
		return false
	}
	_, ok := v.byID[e.ContainerID]
	return ok
}

// isConnection reports whether e is an arrow shown in the connections section.
func (v *view) isConnection(e *scene.Element) bool {
	return e.Type == scene.Arrow && (e.StartBinding != nil || e.EndBinding != nil)
}

var typeShort = map[scene.Type]string{scene.Rectangle: "rect"}

func shortType(t scene.Type) string {
	if s, ok := typeShort[t]; ok {
		return s
	}
	return string(t)
}

// showID prints an id as is when it is made of the characters our ids use, else Go-quoted: ids
// from files made elsewhere can hold spaces, quotes or line breaks, which must not pass for
// get_scene's structure any more than a label may.
func showID(id string) string {
	for _, r := range id {
		if !(r == '-' || r == '_' || r == '.' || r == ':' || (r >= '0' && r <= '9') || (r >= 'a' && r <= 'z') || (r >= 'A' && r <= 'Z')) {
			return strconv.Quote(id)
		}
	}
	if id == "" {
		return `""`
	}
	return id
}

// num prints a coordinate rounded to whole px (sub-pixel detail only costs the model tokens).
func num(f float64) string {
	r := math.Round(f)
	if r == 0 {
		return "0"
	}
	return strconv.FormatFloat(r, 'f', -1, 64)
}

func quoteLabel(s string) string { return strconv.Quote(clip.Runes(s, maxLabelShown)) }

// elementLine describes one element that is not a label and not a connection.
func (v *view) elementLine(e *scene.Element) string {
	var b strings.Builder
	b.Grow(48)
	b.WriteString(showID(e.ID))
	b.WriteByte(' ')
	b.WriteString(shortType(e.Type))
	b.WriteByte(' ')
	if e.Type.IsLinear() {
		pts := e.AbsPoints()
		for i, p := range pts {
			if i == 4 && len(pts) > 5 {
				fmt.Fprintf(&b, " -> …(%d more)", len(pts)-5)
				p = pts[len(pts)-1]
			} else if i > 4 && i < len(pts)-1 {
				continue
			}
			if i > 0 {
				b.WriteString(" -> ")
			}
			b.WriteString(num(p.X) + "," + num(p.Y))
		}
	} else {
		b.WriteString(num(e.X) + "," + num(e.Y) + " " + num(e.Width) + "x" + num(e.Height))
	}
	switch {
	case e.Type == scene.Text:
		b.WriteString(" " + quoteLabel(textOf(e)))
	case e.Type == scene.Frame && e.Name != "":
		b.WriteString(" " + quoteLabel(e.Name))
	default:
		if l, ok := v.labelOf(e); ok {
			b.WriteString(" " + quoteLabel(l))
		}
	}
	v.writeStyle(&b, e)
	return b.String()
}

// connectionLine describes a bound arrow: "r1 -> r2 "label" (a1)". A free end is shown as its
// point, "@400,300".
func (v *view) connectionLine(e *scene.Element) string {
	var b strings.Builder
	b.Grow(32)
	pts := e.AbsPoints()
	end := func(bd *scene.Binding, p scene.Point) string {
		if bd != nil {
			return showID(bd.ElementID)
		}
		return "@" + num(p.X) + "," + num(p.Y)
	}
	var first, last scene.Point
	if len(pts) > 0 {
		first, last = pts[0], pts[len(pts)-1]
	}
	b.WriteString(end(e.StartBinding, first))
	b.WriteString(" " + arrowGlyph(e) + " ")
	b.WriteString(end(e.EndBinding, last))
	if l, ok := v.labelOf(e); ok {
		// An arrow label's line breaks are the drawing's (the graph layout writes them in to
		// keep a label in the room it made for it), not the words the model wrote.
		b.WriteString(" " + quoteLabel(unwrapped(l)))
	}
	b.WriteString(" (" + showID(e.ID) + ")")
	v.writeStyle(&b, e)
	return b.String()
}

// arrowGlyph shows the arrowheads: -> (default), <-, <->, -- (none).
func arrowGlyph(e *scene.Element) string {
	s, t := e.StartArrowhead != "", e.EndArrowhead != ""
	switch {
	case s && t:
		return "<->"
	case s:
		return "<-"
	case t:
		return "->"
	}
	return "--"
}

// writeStyle appends the style fields that differ from a new element of the same type, as
// key=value pairs using the same names and values the tools accept.
func (v *view) writeStyle(b *strings.Builder, e *scene.Element) {
	def := scene.NewElement(e.Type)
	kv := func(k, val string) { b.WriteString(" " + k + "=" + val) }
	if e.BackgroundColor != def.BackgroundColor {
		kv("bg", colorName(e.BackgroundColor, roleFill))
	}
	if e.StrokeColor != def.StrokeColor {
		kv("stroke", colorName(e.StrokeColor, roleStroke))
	}
	if e.FillStyle != def.FillStyle && e.BackgroundColor != colorTransparent {
		kv("fill", e.FillStyle)
	}
	if e.StrokeStyle != def.StrokeStyle {
		kv("style", e.StrokeStyle)
	}
	if e.StrokeWidth != def.StrokeWidth {
		kv("width", num(e.StrokeWidth))
	}
	if e.Roughness != def.Roughness {
		kv("rough", num(e.Roughness))
	}
	if e.Opacity != def.Opacity {
		kv("opacity", num(e.Opacity))
	}
	if e.Type.IsLinear() {
		if h := e.StartArrowhead; h != "" && h != "arrow" {
			kv("start", h)
		}
		if h := e.EndArrowhead; h != "" && h != "arrow" {
			kv("end", h)
		}
	}
	// Font of a text, or of a container's label.
	ft := e
	if e.Type != scene.Text {
		if id := e.Label(); id != "" {
			ft = v.byID[id]
		} else {
			ft = nil
		}
	}
	if ft != nil {
		if ft.FontSize != scene.DefaultFontSize && ft.FontSize != 0 {
			kv("size", num(ft.FontSize))
		}
		if ft.FontFamily != scene.DefaultFontFamily && ft.FontFamily != 0 {
			kv("font", fontName(ft.FontFamily))
		}
		if ft != e && ft.StrokeColor != scene.DefaultStrokeColor && ft.StrokeColor != e.StrokeColor {
			kv("textColor", colorName(ft.StrokeColor, roleStroke))
		}
	}
	if e.Angle != 0 {
		kv("rot", num(e.Angle*180/math.Pi))
	}
	if e.FrameID != "" {
		kv("in", showID(e.FrameID))
	}
	if len(e.GroupIDs) > 0 {
		gs := make([]string, len(e.GroupIDs))
		for i, g := range e.GroupIDs {
			gs[i] = showID(g)
		}
		kv("group", strings.Join(gs, "+"))
	}
	if e.Locked {
		b.WriteString(" locked")
	}
	if e.Link != "" {
		kv("link", strconv.Quote(e.Link))
	}
}

func fontName(f int) string {
	for _, n := range fontNames {
		if fontFamilies[n] == f {
			return n
		}
	}
	return strconv.Itoa(f)
}

// entry is one line of the element or connection section, with where it sits for budgeting.
type entry struct {
	line   string
	center scene.Point
	box    scene.Rect
	id     string
	typ    scene.Type
	conn   bool
	ends   [2]string // connection end ids ("" when free)
}

func (v *view) entries() []entry {
	out := make([]entry, 0, len(v.elems))
	for i := range v.elems {
		e := &v.elems[i]
		if v.isLabel(e) {
			continue
		}
		box := scene.BoundingBox(*e)
		en := entry{center: box.Center(), box: box, id: e.ID, typ: e.Type}
		if v.isConnection(e) {
			en.conn = true
			en.line = v.connectionLine(e)
			if e.StartBinding != nil {
				en.ends[0] = e.StartBinding.ElementID
			}
			if e.EndBinding != nil {
				en.ends[1] = e.EndBinding.ElementID
			}
		} else {
			en.line = v.elementLine(e)
		}
		out = append(out, en)
	}
	return out
}

// describeScene renders the get_scene text within budget bytes.
func describeScene(sc *scene.Scene, lim Limits) string {
	v := newView(sc)
	if len(v.elems) == 0 {
		return "scene: empty (limit " + strconv.Itoa(lim.MaxElements) + " elements). Start with read_diagram_guide, then batch_create_elements.\n"
	}
	var head strings.Builder
	fmt.Fprintf(&head, "scene: %s (limit %d)", plural.Count(len(v.elems), "element", ""), lim.MaxElements)
	if bb, ok := sc.Bounds(); ok {
		fmt.Fprintf(&head, ", bbox %s,%s %sx%s", num(bb.X), num(bb.Y), num(bb.Width), num(bb.Height))
	}
	if vp, ok := sc.Viewport(); ok {
		fmt.Fprintf(&head, ", viewport %s,%s %sx%s", num(vp.X), num(vp.Y), num(vp.Width), num(vp.Height))
	}
	head.WriteByte('\n')
	warn := formatWarnings(lint(v), 12)
	ents := v.entries()

	total := head.Len() + len(warn) + len("connections:\n")
	for _, en := range ents {
		total += len(en.line) + 1
	}
	shown := make([]bool, len(ents))
	summary := ""
	if total <= lim.SceneBudget {
		for i := range shown {
			shown[i] = true
		}
	} else {
		summary = v.chooseShown(sc, ents, shown, lim.SceneBudget-head.Len()-len(warn)-400, lim.SceneBudget)
	}

	var b strings.Builder
	b.Grow(min(total, lim.SceneBudget) + 64)
	b.WriteString(head.String())
	for i, en := range ents {
		if shown[i] && !en.conn {
			b.WriteString(en.line)
			b.WriteByte('\n')
		}
	}
	wroteConn := false
	for i, en := range ents {
		if shown[i] && en.conn {
			if !wroteConn {
				b.WriteString("connections:\n")
				wroteConn = true
			}
			b.WriteString(en.line)
			b.WriteByte('\n')
		}
	}
	b.WriteString(summary)
	b.WriteString(warn)
	return b.String()
}

// chooseShown marks the entries nearest the centre of attention (the viewport, else the median
// of element centres) until room bytes are used, and returns a note summarising the rest by type
// and area with the query that shows them.
func (v *view) chooseShown(sc *scene.Scene, ents []entry, shown []bool, room, budget int) string {
	ref := medianCenter(ents)
	if vp, ok := sc.Viewport(); ok {
		ref = vp.Center()
	}
	order := make([]int, len(ents))
	for i := range order {
		order[i] = i
	}
	dist := func(i int) float64 { return math.Hypot(ents[i].center.X-ref.X, ents[i].center.Y-ref.Y) }
	sort.SliceStable(order, func(a, b int) bool { return dist(order[a]) < dist(order[b]) })

	// Shapes first, nearest first; then connections whose ends are both shown.
	visible := map[string]bool{}
	used := 0
	for _, i := range order {
		en := ents[i]
		if en.conn || used+len(en.line)+1 > room {
			continue
		}
		shown[i] = true
		visible[en.id] = true
		used += len(en.line) + 1
	}
	for _, i := range order {
		en := ents[i]
		if !en.conn || used+len(en.line)+1 > room {
			continue
		}
		if (en.ends[0] != "" && !visible[en.ends[0]]) || (en.ends[1] != "" && !visible[en.ends[1]]) {
			continue
		}
		shown[i] = true
		used += len(en.line) + 1
	}

	counts := map[string]int{}
	hidden, hiddenConn := 0, 0
	var box scene.Rect
	var ids []string
	for i, en := range ents {
		if shown[i] {
			continue
		}
		if en.conn {
			hiddenConn++
		} else {
			counts[shortType(en.typ)]++
			if hidden == 0 {
				box = en.box
			} else {
				box = box.Union(en.box)
			}
			hidden++
			if len(ids) < 8 {
				ids = append(ids, strconv.Quote(en.id))
			}
		}
	}
	types := make([]string, 0, len(counts))
	for t, n := range counts {
		types = append(types, plural.Count(n, t, ""))
	}
	sort.Strings(types)
	var b strings.Builder
	fmt.Fprintf(&b, "truncated: the scene is larger than the %d-byte view; not shown: %s far from the centre", budget, plural.Count(hidden, "element", ""))
	if hidden > 0 {
		fmt.Fprintf(&b, " (%s) within %s,%s %sx%s", strings.Join(types, ", "), num(box.X), num(box.Y), num(box.Width), num(box.Height))
	}
	fmt.Fprintf(&b, ", and %s.\n", plural.Count(hiddenConn, "connection", ""))
	if hidden > 0 {
		fmt.Fprintf(&b, "To see them call query_elements with {\"area\":{\"x\":%s,\"y\":%s,\"width\":%s,\"height\":%s}} or {\"ids\":[%s]}.\n",
			num(box.X), num(box.Y), num(box.Width), num(box.Height), strings.Join(ids, ","))
	}
	return b.String()
}

func medianCenter(ents []entry) scene.Point {
	xs := make([]float64, 0, len(ents))
	ys := make([]float64, 0, len(ents))
	for _, en := range ents {
		if !en.conn {
			xs = append(xs, en.center.X)
			ys = append(ys, en.center.Y)
		}
	}
	if len(xs) == 0 {
		return scene.Point{}
	}
	sort.Float64s(xs)
	sort.Float64s(ys)
	return scene.Point{X: xs[len(xs)/2], Y: ys[len(ys)/2]}
}
