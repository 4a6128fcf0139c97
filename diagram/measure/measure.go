// Package measure reads the quality of a drawn diagram off its scene: what overlaps, where edge
// labels sit along their arrows, markup left in text, arrows that pass through shapes, crossings,
// the picture's aspect and how large its text is once the picture is shown at a given width.
//
// Every function is pure: it reads a *scene.Scene and changes nothing. The numbers are meant for
// reports and regression tests (internal/corpus runs them over real diagrams), so each one counts
// something a person looking at the picture would call a defect.
package measure

import (
	"math"
	"regexp"
	"slices"
	"strings"

	"github.com/excalibot/excalibot/scene"
)

// Report is what Measure finds in one scene.
type Report struct {
	// Nodes counts shapes that are not containers (a container holds another shape, like a
	// Mermaid subgraph or a graph group); Containers counts the others.
	Nodes, Containers int
	// Arrows counts arrows; Lines counts lines (sequence lifelines, dividers).
	Arrows, Lines int
	// Texts counts text elements, bound or free.
	Texts int

	// ShapeOverlaps counts pairs of shapes whose outlines overlap while neither holds the other:
	// two nodes on top of each other, or a node sticking out of its subgraph.
	ShapeOverlaps int
	// TextOverlaps counts pairs of texts whose boxes overlap.
	TextOverlaps int
	// LabelsOnNodes counts arrow labels whose box covers part of a node.
	LabelsOnNodes int
	// Labels lists where each arrow label sits along its arrow (see LabelPlace).
	Labels []LabelPlace
	// Markup counts texts that still hold HTML markup or entities (`<br>`, `<a href>`, `&lt;`).
	Markup int
	// MarkupSamples holds the first few such texts, shortened.
	MarkupSamples []string
	// ArrowsThroughNodes counts arrows whose drawn path (the curve Excalidraw draws, see
	// drawnPath) passes through a node other than the ones they join.
	ArrowsThroughNodes int
	// Crossings counts pairs of arrows whose drawn paths cross each other; arrows that share an
	// end node are not compared (they meet there, and a fan-out is no crossing).
	Crossings int

	// Groups counts frames and group boxes (scene.IsGroupBox).
	Groups int
	// FrameOverlaps counts pairs of groups whose boxes overlap where neither holds the other.
	FrameOverlaps int
	// Intruders counts nodes lying inside the box of a group they do not belong to.
	Intruders int
	// BorderCrossings counts the times drawn paths cross a group's border;
	// NeedlessBorderCrossings those beyond what membership requires (an edge must cross once
	// each group that holds one of its ends and not the other, and no other).
	BorderCrossings, NeedlessBorderCrossings int
	// OverTitles counts the times an arrow's drawn path or an arrow's label crosses the title of a
	// group box (the free text in the box's own group): the title reads struck through. A
	// frame's name, which Excalidraw draws above the frame, is not counted.
	OverTitles int
	// LabelsOnBorders counts arrow labels whose box straddles a group's border: partly inside
	// the group's box and partly out, the border line running through the words.
	LabelsOnBorders int
	// EdgeLengthRatio is the total drawn length of the arrows over the drawing's diagonal.
	EdgeLengthRatio float64
	// NodeArea is the share of the drawing's bounding box that nodes (not groups) cover.
	NodeArea float64
	// LabelPx1600 and LabelPxPhone are the median font size in px of the labels of nodes and
	// arrows when the whole picture, padding included, is fitted into 1600×1200 and into a
	// phone's 390×844 (scaled by the smaller of the width and height ratios).
	LabelPx1600, LabelPxPhone float64

	// Width and Height are the drawing's extent in scene pixels.
	Width, Height float64
	// MinTextPx and MedianTextPx are the font sizes of the smallest and the median text, in
	// pixels of the picture shown at Options.DisplayWidth.
	MinTextPx, MedianTextPx float64
}

// Aspect is the drawing's width over its height (0 for an empty drawing).
func (r Report) Aspect() float64 {
	if r.Height <= 0 {
		return 0
	}
	return r.Width / r.Height
}

// Elongation is the aspect turned to be at least 1: 3 means three times as long one way as the
// other, whichever way.
func (r Report) Elongation() float64 {
	a := r.Aspect()
	if a <= 0 {
		return 0
	}
	return max(a, 1/a)
}

// LabelPlace is where one arrow's label sits.
type LabelPlace struct {
	Arrow string
	// Along is the position of the label's centre projected onto the arrow's polyline, as a
	// fraction of the polyline's length: 0 at the tail, 0.5 in the middle, 1 at the head.
	Along float64
	// Off is the distance in px from the label's centre to the polyline.
	Off float64
}

// Middle reports whether the label sits on the middle part of its arrow: between 30 % and 70 %
// of its length and not farther from the line than the label is large.
func (p LabelPlace) Middle() bool { return p.Along >= 0.3 && p.Along <= 0.7 }

// AtEnd reports whether the label sits on the first or last 15 % of its arrow, where it reads as
// belonging to the node there.
func (p LabelPlace) AtEnd() bool { return p.Along < 0.15 || p.Along > 0.85 }

// Options say how the picture is shown.
type Options struct {
	// DisplayWidth is the width in pixels the whole picture is shown at (padding included);
	// 0 means 1600.
	DisplayWidth float64
	// Padding is the margin in scene pixels the picture adds around the drawing on each side.
	Padding float64
}

// Measure reads sc.
func Measure(sc *scene.Scene, opt Options) Report {
	if opt.DisplayWidth <= 0 {
		opt.DisplayWidth = 1600
	}
	var r Report
	els := sc.Elements()
	byID := make(map[string]*scene.Element, len(els))
	var shapes, arrows, texts []*scene.Element
	badges := numberBadges(els)
	for i := range els {
		e := &els[i]
		byID[e.ID] = e
		switch {
		case badges[e.ID]: // part of its message, on the lifeline by design
		case closed(e.Type):
			shapes = append(shapes, e)
		case e.Type == scene.Arrow:
			arrows = append(arrows, e)
			r.Arrows++
		case e.Type == scene.Line:
			r.Lines++
		case e.Type == scene.Text:
			texts = append(texts, e)
		}
	}
	r.Texts = len(texts)
	containers := containersOf(shapes)
	var nodes []*scene.Element
	for _, s := range shapes {
		if containers[s.ID] {
			r.Containers++
		} else {
			nodes = append(nodes, s)
		}
	}
	r.Nodes = len(nodes)

	r.ShapeOverlaps = shapeOverlaps(shapes)
	r.TextOverlaps = textOverlaps(texts)
	for _, t := range texts {
		c := byID[t.ContainerID]
		if c == nil || c.Type != scene.Arrow {
			continue
		}
		box := inset(t.Bounds(), 1)
		if slices.ContainsFunc(nodes, func(n *scene.Element) bool { return box.Intersects(inset(n.Bounds(), 1)) }) {
			r.LabelsOnNodes++
		}
		along, off := project(c.AbsPoints(), t.Bounds().Center())
		r.Labels = append(r.Labels, LabelPlace{Arrow: c.ID, Along: round3(along), Off: math.Round(off)})
	}
	for _, t := range texts {
		if markup.MatchString(t.Text) || markup.MatchString(t.OriginalText) {
			r.Markup++
			if len(r.MarkupSamples) < 3 {
				r.MarkupSamples = append(r.MarkupSamples, shorten(firstNonEmpty(t.OriginalText, t.Text), 40))
			}
		}
	}
	paths := drawnPaths(arrows, nodes, byID)
	length := 0.0
	for _, p := range paths {
		if throughNode(p, nodes) {
			r.ArrowsThroughNodes++
		}
		length += pathLength(p.pts)
	}
	r.Crossings = crossings(paths)

	gs := readGroups(shapesOf(els), byID)
	var plain []*scene.Element // nodes that are not an (empty) group's own box
	for _, n := range nodes {
		if !scene.IsGroupBox(n) {
			plain = append(plain, n)
		}
	}
	r.Groups = len(gs)
	r.FrameOverlaps = frameOverlaps(gs)
	r.Intruders = intruders(gs, plain)
	r.BorderCrossings, r.NeedlessBorderCrossings = borderCrossings(gs, paths)
	r.OverTitles = overTitles(boxTitles(texts), paths, texts, byID)
	r.LabelsOnBorders = labelsOnBorders(gs, texts, byID)

	if b, ok := sc.Bounds(); ok {
		r.Width, r.Height = math.Round(b.Width), math.Round(b.Height)
		scale := opt.DisplayWidth / (b.Width + 2*opt.Padding)
		r.MinTextPx, r.MedianTextPx = textSizes(texts, scale)
		labels := labelTexts(texts, byID, plain)
		fitted := func(w, h float64) float64 {
			return min(w/(b.Width+2*opt.Padding), h/(b.Height+2*opt.Padding))
		}
		_, r.LabelPx1600 = textSizes(labels, fitted(1600, 1200))
		_, r.LabelPxPhone = textSizes(labels, fitted(390, 844))
		if d := math.Hypot(b.Width, b.Height); d > 0 {
			r.EdgeLengthRatio = round3(length / d)
		}
		if a := area(b); a > 0 {
			covered := 0.0
			for _, n := range plain {
				covered += area(n.Bounds())
			}
			r.NodeArea = round3(covered / a)
		}
	}
	return r
}

// labelTexts are the texts bound to a node or an arrow.
func labelTexts(texts []*scene.Element, byID map[string]*scene.Element, nodes []*scene.Element) []*scene.Element {
	var out []*scene.Element
	for _, t := range texts {
		c := byID[t.ContainerID]
		if c != nil && (c.Type == scene.Arrow || slices.Contains(nodes, c)) {
			out = append(out, t)
		}
	}
	return out
}

func shapesOf(els []scene.Element) []*scene.Element {
	var out []*scene.Element
	for i := range els {
		if closed(els[i].Type) {
			out = append(out, &els[i])
		}
	}
	return out
}

// drawn is an arrow's drawn path and the nodes at its ends (nil for an end on no node).
type drawn struct {
	el       *scene.Element
	pts      []scene.Point
	from, to *scene.Element
}

// drawnPaths returns each arrow's drawn path with its end nodes: the bound ones, else a node the
// loose end lies in (a sequence message leaving an activation bar belongs to it).
func drawnPaths(arrows, nodes []*scene.Element, byID map[string]*scene.Element) []drawn {
	out := make([]drawn, 0, len(arrows))
	for _, a := range arrows {
		d := drawn{el: a, pts: drawnPath(a)}
		end := func(b *scene.Binding, at scene.Point) *scene.Element {
			if b != nil {
				return byID[b.ElementID]
			}
			for _, n := range nodes {
				if scene.ContainsPoint(*n, at, 0) {
					return n
				}
			}
			return nil
		}
		if len(d.pts) > 0 {
			d.from, d.to = end(a.StartBinding, d.pts[0]), end(a.EndBinding, d.pts[len(d.pts)-1])
		}
		out = append(out, d)
	}
	return out
}

func closed(t scene.Type) bool {
	return t.IsShape() || t == scene.Frame || t == scene.Image
}

// containersOf returns the shapes that hold another shape inside their box: frames, subgraphs,
// group boxes. A node drawn inside another node's box makes that one a container too, which is
// how such a drawing reads.
func containersOf(shapes []*scene.Element) map[string]bool {
	out := map[string]bool{}
	for _, a := range shapes {
		if a.Type == scene.Frame {
			out[a.ID] = true
			continue
		}
		for _, b := range shapes {
			if a != b && contains(a.Bounds(), b.Bounds()) && area(a.Bounds()) > area(b.Bounds()) {
				out[a.ID] = true
				break
			}
		}
	}
	return out
}

func shapeOverlaps(shapes []*scene.Element) int {
	n := 0
	for i, a := range shapes {
		for _, b := range shapes[i+1:] {
			ra, rb := a.Bounds(), b.Bounds()
			if contains(ra, rb) || contains(rb, ra) {
				continue
			}
			if overlapArea(ra, rb) > 1 && scene.Overlap(*a, *b) {
				n++
			}
		}
	}
	return n
}

func textOverlaps(texts []*scene.Element) int {
	n := 0
	for i, a := range texts {
		for _, b := range texts[i+1:] {
			if ix, iy := intersection(a.Bounds(), b.Bounds()); ix > 1 && iy > 1 {
				n++
			}
		}
	}
	return n
}

// markup matches HTML tags that Mermaid labels use and character entities: once on the canvas,
// any of them is text a person reads literally.
var markup = regexp.MustCompile(`(?i)</?(br|a|b|i|u|s|em|strong|small|big|sub|sup|span|div|p|img|font|code|pre|ul|li|hr|center)\b[^>]*>|&(lt|gt|amp|quot|apos|nbsp|#\d+|#x[0-9a-f]+);`)

// throughNode reports whether a drawn path passes through the inside of a node that is not one
// of its ends. The nodes are shrunk by a few pixels first, so an arrow ending on or gliding along
// a border is no hit.
func throughNode(p drawn, nodes []*scene.Element) bool {
	const m = 4
	for _, n := range nodes {
		if n == p.from || n == p.to || n.Width <= 2*m || n.Height <= 2*m {
			continue
		}
		s := *n
		s.X, s.Y, s.Width, s.Height = n.X+m, n.Y+m, n.Width-2*m, n.Height-2*m
		for i := 0; i+1 < len(p.pts); i++ {
			if scene.SegmentIntersects(s, p.pts[i], p.pts[i+1]) {
				return true
			}
		}
	}
	return false
}

// crossings counts pairs of drawn paths that cross properly (touching is no crossing). Arrows
// sharing an end node are not compared: they meet at that node by design.
func crossings(paths []drawn) int {
	n := 0
	for i, a := range paths {
		for _, b := range paths[i+1:] {
			if shareEnd(a, b) {
				continue
			}
			if polylinesCross(a.pts, b.pts) {
				n++
			}
		}
	}
	return n
}

func shareEnd(a, b drawn) bool {
	return a.from != nil && (a.from == b.from || a.from == b.to) || a.to != nil && (a.to == b.from || a.to == b.to)
}

func textSizes(texts []*scene.Element, scale float64) (minPx, medianPx float64) {
	var sizes []float64
	for _, t := range texts {
		if strings.TrimSpace(t.Text) != "" && t.FontSize > 0 {
			sizes = append(sizes, t.FontSize*scale)
		}
	}
	if len(sizes) == 0 {
		return 0, 0
	}
	slices.Sort(sizes)
	return round1(sizes[0]), round1(sizes[len(sizes)/2])
}

func firstNonEmpty(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

func shorten(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
	if r := []rune(s); len(r) > n {
		return string(r[:n-1]) + "…"
	}
	return s
}

func round1(v float64) float64 { return math.Round(v*10) / 10 }
func round3(v float64) float64 { return math.Round(v*1000) / 1000 }

// Moved counts the nodes of before that after still has (by id) at a place more than tol px
// away: what a follow-up edit disturbed in a picture the user had already seen.
func Moved(before, after *scene.Scene, tol float64) int {
	n := 0
	before.Each(func(e *scene.Element) bool {
		if !e.Type.IsShape() {
			return true
		}
		if a, ok := after.Get(e.ID); ok && math.Hypot(a.X-e.X, a.Y-e.Y) > tol {
			n++
		}
		return true
	})
	return n
}

// numberBadges finds the number badges of sequence messages (Mermaid's autonumber): a small circle
// in a group with one arrow and nothing else but texts. They sit on a lifeline or an activation bar
// at the message's start, as Mermaid draws them, so they are neither nodes nor overlaps.
func numberBadges(els []scene.Element) map[string]bool {
	type group struct {
		arrows, other int
		circles       []string
	}
	groups := map[string]*group{}
	for _, e := range els {
		if len(e.GroupIDs) == 0 || e.ContainerID != "" {
			continue
		}
		g := groups[e.GroupIDs[0]]
		if g == nil {
			g = &group{}
			groups[e.GroupIDs[0]] = g
		}
		switch {
		case e.Type == scene.Arrow:
			g.arrows++
		case e.Type == scene.Ellipse && e.Width <= 40 && e.Height <= 40:
			g.circles = append(g.circles, e.ID)
		case e.Type != scene.Text:
			g.other++
		}
	}
	out := map[string]bool{}
	for _, g := range groups {
		if g.arrows == 1 && g.other == 0 {
			for _, id := range g.circles {
				out[id] = true
			}
		}
	}
	return out
}
