package tools

import (
	"fmt"
	"math"
	"sort"
	"strings"

	"github.com/excalibot/excalibot/diagram/graph"
	"github.com/excalibot/excalibot/scene"
)

// lint finds what makes a diagram look broken, using the scene package's geometry, and says how
// to fix each problem with the tools. It runs on every get_scene, so a model that never asks for
// warnings still sees them. Checks: overlapping shapes, labels overflowing their shape, arrows
// not attached or not ending on a border, arrows through a third shape, elements far away.
func lint(v *view) []string { return lintScoped(v, lintScope{border: true}) }

// lintScope narrows a lint to what one call touched: warnings that involve a focus id. border
// asks for the arrow-end check, which only finds something in scenes loaded from files: the scene
// package puts the ends of arrows it routes on the border, so create and update skip it.
type lintScope struct {
	focus  map[string]bool // nil: everything
	border bool
}

func (sc lintScope) in(ids ...string) bool {
	if sc.focus == nil {
		return true
	}
	for _, id := range ids {
		if sc.focus[id] {
			return true
		}
	}
	return false
}

func lintScoped(v *view, scope lintScope) []string {
	var out []string
	var solids []*scene.Element // shapes and free texts: things that should not overlap
	for i := range v.elems {
		e := &v.elems[i]
		if e.Type.IsShape() || (e.Type == scene.Text && !v.isLabel(e)) || e.Type == scene.Image {
			solids = append(solids, e)
		}
	}
	out = append(out, lintOverlaps(solids, scope)...)
	out = append(out, lintOverflow(v, scope)...)
	out = append(out, lintArrows(v, solids, scope)...)
	out = append(out, lintFar(v, scope)...)
	return out
}

func lintOverlaps(solids []*scene.Element, scope lintScope) []string {
	var out []string
	boxes := make([]scene.Rect, len(solids))
	for i, e := range solids {
		boxes[i] = scene.BoundingBox(*e)
	}
	// Sweep along x so that a 500-element scene does not test every pair's outlines.
	order := make([]int, len(solids))
	for i := range order {
		order[i] = i
	}
	sort.Slice(order, func(a, b int) bool { return boxes[order[a]].X < boxes[order[b]].X })
	type pair struct{ i, j int }
	var found []pair
	for oi, i := range order {
		for _, j := range order[oi+1:] {
			if boxes[j].X > boxes[i].X+boxes[i].Width {
				break
			}
			if !boxes[i].Intersects(boxes[j]) || shareGroup(solids[i], solids[j]) || !scope.in(solids[i].ID, solids[j].ID) {
				continue
			}
			// A shape entirely inside a bigger one is a deliberate zone or lane, unless the inner
			// one is a loose text, which should have been the shape's label.
			inI, inJ := within(boxes[j], boxes[i]), within(boxes[i], boxes[j])
			if (inI && solids[j].Type != scene.Text) || (inJ && solids[i].Type != scene.Text) {
				continue
			}
			if !scene.Overlap(*solids[i], *solids[j]) {
				continue
			}
			a, b := i, j
			if solids[a].ID > solids[b].ID || (solids[b].Type != scene.Text && solids[a].Type == scene.Text) {
				a, b = b, a
			}
			found = append(found, pair{a, b})
		}
	}
	sort.Slice(found, func(x, y int) bool {
		if solids[found[x].i].ID != solids[found[y].i].ID {
			return solids[found[x].i].ID < solids[found[y].i].ID
		}
		return solids[found[x].j].ID < solids[found[y].j].ID
	})
	for _, p := range found {
		a, b := solids[p.i], solids[p.j]
		if b.Type == scene.Text && a.Type.IsShape() && within(boxes[p.j], boxes[p.i]) {
			out = append(out, fmt.Sprintf("text %s lies on %s: delete %s and give %s the text instead", showID(b.ID), showID(a.ID), showID(b.ID), showID(a.ID)))
			continue
		}
		out = append(out, fmt.Sprintf("%s overlaps %s: %s", showID(a.ID), showID(b.ID), moveHint(showID(b.ID), boxes[p.i], boxes[p.j])))
	}
	return out
}

// moveHint proposes the smallest move of b (right/left or down/up) that clears a with a 40 px gap.
func moveHint(id string, a, b scene.Rect) string {
	const gap = 40
	right := a.X + a.Width + gap - b.X
	left := b.X + b.Width + gap - a.X
	down := a.Y + a.Height + gap - b.Y
	up := b.Y + b.Height + gap - a.Y
	best := min(right, left, down, up)
	switch best {
	case right:
		return fmt.Sprintf("move %s to x=%s", id, num(b.X+right))
	case left:
		return fmt.Sprintf("move %s to x=%s", id, num(b.X-left))
	case down:
		return fmt.Sprintf("move %s to y=%s", id, num(b.Y+down))
	}
	return fmt.Sprintf("move %s to y=%s", id, num(b.Y-up))
}

func within(inner, outer scene.Rect) bool {
	return inner.X >= outer.X && inner.Y >= outer.Y &&
		inner.X+inner.Width <= outer.X+outer.Width && inner.Y+inner.Height <= outer.Y+outer.Height
}

func shareGroup(a, b *scene.Element) bool {
	for _, g := range a.GroupIDs {
		if b.InGroup(g) {
			return true
		}
	}
	return false
}

// lintOverflow checks that each shape's label fits the box Excalidraw lets a label use (the
// container's inner text area). The scene grows containers to fit, so this catches what growing
// cannot fix: a word wider than the shape, or a shape sized by hand after a load.
func lintOverflow(v *view, scope lintScope) []string {
	var out []string
	for i := range v.elems {
		e := &v.elems[i]
		if !e.Type.IsShape() || !scope.in(e.ID) {
			continue
		}
		t, ok := v.byID[e.Label()]
		if !ok {
			continue
		}
		area := scene.TextArea(*e)
		const tol = 1
		tb := scene.Rect{X: t.X, Y: t.Y, Width: t.Width, Height: t.Height}
		if tb.Width > area.Width+tol || tb.Height > area.Height+tol ||
			!within(tb, scene.Rect{X: area.X - tol, Y: area.Y - tol, Width: area.Width + 2*tol, Height: area.Height + 2*tol}) {
			out = append(out, fmt.Sprintf("text of %s overflows it (%sx%s text, room for %sx%s): make %s wider or the text shorter",
				showID(e.ID), num(tb.Width), num(tb.Height), num(area.Width), num(area.Height), showID(e.ID)))
		} else if w := brokenWord(t); w != "" {
			out = append(out, fmt.Sprintf("text of %s breaks the word %s across lines: make %s wider (about %s px)",
				showID(e.ID), quoteLabel(w), showID(e.ID), num(e.Width+e.Width-area.Width+fontWidthGuess(t, w))))
		}
	}
	return out
}

// brokenWord returns a word of the label that wrapping split over lines (Excalidraw breaks words
// wider than the shape), or "".
func brokenWord(t *scene.Element) string {
	if t.Text == t.OriginalText {
		return ""
	}
	words := map[string]bool{}
	for _, w := range strings.Fields(t.OriginalText) {
		words[w] = true
	}
	for _, w := range strings.Fields(t.Text) {
		if !words[w] {
			for _, o := range strings.Fields(t.OriginalText) {
				if strings.Contains(o, w) {
					return o
				}
			}
			return w
		}
	}
	return ""
}

// fontWidthGuess is a rough width of word in t's font, only for suggesting a size: 0.6 em per
// character errs on the generous side for Excalidraw's fonts.
func fontWidthGuess(t *scene.Element, word string) float64 {
	return 0.6 * t.FontSize * float64(len([]rune(word)))
}

// lintArrows checks every arrow: both ends attached, ends on the border, no third shape crossed.
func lintArrows(v *view, solids []*scene.Element, scope lintScope) []string {
	var out []string
	// Boxes once per lint, not once per arrow and shape: BoundingBox copies the whole element.
	all := make([]solidBox, 0, len(solids))
	var focus []solidBox
	for _, s := range solids {
		if !s.Type.IsShape() {
			continue
		}
		sb := solidBox{s, scene.BoundingBox(*s)}
		all = append(all, sb)
		if scope.in(s.ID) {
			focus = append(focus, sb)
		}
	}
	for i := range v.elems {
		a := &v.elems[i]
		if a.Type != scene.Arrow || len(a.Points) < 2 {
			continue
		}
		ends := []string{a.ID}
		if a.StartBinding != nil {
			ends = append(ends, a.StartBinding.ElementID)
		}
		if a.EndBinding != nil {
			ends = append(ends, a.EndBinding.ElementID)
		}
		pts := a.AbsPoints()
		if !scope.in(ends...) {
			// Only a new or moved shape can have come into this arrow's way.
			out = append(out, lintCrossing(a, pts, focus)...)
			continue
		}
		var free []string
		for k, end := range []struct {
			name string
			b    *scene.Binding
			p    scene.Point
		}{{"start", a.StartBinding, pts[0]}, {"end", a.EndBinding, pts[len(pts)-1]}} {
			if end.b == nil {
				free = append(free, end.name)
				continue
			}
			t, ok := v.byID[end.b.ElementID]
			if !ok || !scope.border {
				continue // the scene never keeps a dangling binding; nothing the model can fix
			}
			tol := math.Max(end.b.Gap, 0) + 3
			// Fast accept: the ray from the centre through the end leaves the shape within tol of
			// the end. The exact distance (which builds the outline) is computed only otherwise.
			// (At the exact centre the ray has no direction and EdgePoint returns the centre.)
			c := t.Center()
			if ex := scene.EdgePoint(*t, end.p, 0); (c.X != end.p.X || c.Y != end.p.Y) && math.Hypot(ex.X-end.p.X, ex.Y-end.p.Y) <= tol {
				continue
			}
			if d := scene.DistanceToBorder(*t, end.p); d > tol {
				field := [2]string{"startElementId", "endElementId"}[k]
				out = append(out, fmt.Sprintf("arrow %s %s is %s px from %s's border: set its %s again to re-attach it",
					showID(a.ID), end.name, num(d), showID(t.ID), field))
			}
		}
		free = dropRestingOnLines(v, free, pts)
		if len(free) == 2 {
			out = append(out, fmt.Sprintf("arrow %s is not attached to any shape: give it startElementId and endElementId", showID(a.ID)))
		} else if len(free) == 1 {
			field := map[string]string{"start": "startElementId", "end": "endElementId"}[free[0]]
			out = append(out, fmt.Sprintf("arrow %s %s is not attached: give it %s", showID(a.ID), free[0], field))
		}
		out = append(out, lintCrossing(a, pts, all)...)
		if w := lintArrowLabel(v, a, pts); w != "" {
			out = append(out, w)
		}
	}
	return out
}

// dropRestingOnLines keeps the free ends that do not rest on a line: a message of a sequence
// diagram ends on a lifeline, which Excalidraw cannot bind to, and that end is meant.
func dropRestingOnLines(v *view, free []string, pts []scene.Point) []string {
	if len(free) == 0 {
		return free
	}
	var out []string
	for _, name := range free {
		p := pts[0]
		if name == "end" {
			p = pts[len(pts)-1]
		}
		resting := false
		for i := range v.elems {
			if l := &v.elems[i]; l.Type == scene.Line && scene.ContainsPoint(*l, p, 2) {
				resting = true
				break
			}
		}
		if !resting {
			out = append(out, name)
		}
	}
	return out
}

// lintArrowLabel warns when an arrow is too short for its label: the label then covers the
// arrowhead or spills onto the shapes it connects.
func lintArrowLabel(v *view, a *scene.Element, pts []scene.Point) string {
	t, ok := v.byID[a.Label()]
	if !ok {
		return ""
	}
	var length float64
	for k := 1; k < len(pts); k++ {
		length += math.Hypot(pts[k].X-pts[k-1].X, pts[k].Y-pts[k-1].Y)
	}
	first, last := pts[0], pts[len(pts)-1]
	d := math.Hypot(last.X-first.X, last.Y-first.Y)
	if d == 0 {
		return ""
	}
	// The label's extent along the arrow, plus room for the arrowhead and the tail.
	extent := math.Abs(last.X-first.X)/d*t.Width + math.Abs(last.Y-first.Y)/d*t.Height
	const room = 60
	if length >= extent+room {
		return ""
	}
	ends := "its shapes"
	if a.StartBinding != nil && a.EndBinding != nil {
		ends = showID(a.StartBinding.ElementID) + " and " + showID(a.EndBinding.ElementID)
	}
	return fmt.Sprintf("arrow %s is %s px long, too short for its label %s: move %s about %s px further apart",
		showID(a.ID), num(length), quoteLabel(textOf(t)), ends, num(extent+room-length+20))
}

// lintCrossing reports shapes an arrow passes through, other than its own ends and shapes that
// contain one of its ends (zones, lanes).
func lintCrossing(a *scene.Element, pts []scene.Point, shapes []solidBox) []string {
	ab := scene.BoundingBox(*a)
	var hit []string
	for _, sh := range shapes {
		s, sb := sh.e, sh.box
		if graph.IsBox(s) {
			continue // a graph group's box is an area that arrows between groups may cross
		}
		if !ab.Intersects(sb) || (a.StartBinding != nil && a.StartBinding.ElementID == s.ID) ||
			(a.EndBinding != nil && a.EndBinding.ElementID == s.ID) {
			continue
		}
		// Cheap box tests first: the exact outline tests below build the shape's polygon.
		near := false
		for k := 1; k < len(pts) && !near; k++ {
			near = segmentHitsBox(pts[k-1], pts[k], sb)
		}
		if !near {
			continue
		}
		if (sb.Contains(pts[0]) && scene.ContainsPoint(*s, pts[0], 0)) ||
			(sb.Contains(pts[len(pts)-1]) && scene.ContainsPoint(*s, pts[len(pts)-1], 0)) {
			continue
		}
		inner := innerBoxes(s)
		for k := 1; k < len(pts); k++ {
			if !segmentHitsBox(pts[k-1], pts[k], sb) {
				continue
			}
			sure := false
			for _, ib := range inner {
				sure = sure || segmentHitsBox(pts[k-1], pts[k], ib)
			}
			if sure || scene.SegmentIntersects(*s, pts[k-1], pts[k]) {
				hit = append(hit, showID(s.ID))
				break
			}
		}
	}
	if len(hit) == 0 {
		return nil
	}
	return []string{fmt.Sprintf("arrow %s passes through %s: move %s out of the way or re-route the arrow",
		showID(a.ID), strings.Join(hit, ", "), strings.Join(hit, ", "))}
}

// solidBox is a shape with its bounding box, computed once per lint.
type solidBox struct {
	e   *scene.Element
	box scene.Rect
}

// innerBoxes returns boxes that lie wholly inside an unrotated shape (the two bars of a rounded
// rectangle, the inscribed boxes of an ellipse and a diamond): a segment meeting one of them
// certainly crosses the shape, which spares building its outline for the exact test.
func innerBoxes(s *scene.Element) []scene.Rect {
	if s.Angle != 0 {
		return nil
	}
	x, y, w, h := s.X, s.Y, s.Width, s.Height
	switch s.Type {
	case scene.Rectangle:
		r := 0.0
		if s.Roundness != nil {
			r = scene.CornerRadius(math.Min(w, h), s.Roundness)
		}
		return []scene.Rect{{X: x + r, Y: y, Width: w - 2*r, Height: h}, {X: x, Y: y + r, Width: w, Height: h - 2*r}}
	case scene.Ellipse: // half sizes 0.6·a, 0.6·b: 0.36+0.36 < 1, strictly inside
		return []scene.Rect{{X: x + 0.2*w, Y: y + 0.2*h, Width: 0.6 * w, Height: 0.6 * h}}
	case scene.Diamond: // half sizes w/6, h/6: 1/3+1/3 < 1, clear of the rounded tips
		return []scene.Rect{{X: x + w/3, Y: y + h/3, Width: w / 3, Height: h / 3}}
	}
	return nil
}

// segmentHitsBox reports whether segment a-b meets box r (Liang–Barsky clipping): a necessary
// condition for crossing the shape inside the box, used to skip the exact test.
func segmentHitsBox(a, b scene.Point, r scene.Rect) bool {
	_, _, ok := scene.ClipSegment(a, b, r)
	return ok
}

// lintFar flags elements much further from their nearest neighbour than elements usually are:
// they end up as a speck at the edge of the picture.
func lintFar(v *view, scope lintScope) []string {
	var items []*scene.Element
	for i := range v.elems {
		e := &v.elems[i]
		if v.isLabel(e) || v.isConnection(e) {
			continue
		}
		items = append(items, e)
	}
	if len(items) < 3 {
		return nil
	}
	boxes := make([]scene.Rect, len(items))
	for i, e := range items {
		boxes[i] = scene.BoundingBox(*e)
	}
	gaps := nearestGaps(boxes)
	sorted := append([]float64(nil), gaps...)
	sort.Float64s(sorted)
	limit := math.Max(1000, 5*sorted[len(sorted)/2])
	var out []string
	for i, e := range items {
		if gaps[i] > limit && scope.in(e.ID) {
			out = append(out, fmt.Sprintf("%s is far from everything else (%s px away): move it next to the rest or delete it", showID(e.ID), num(gaps[i])))
		}
	}
	return out
}

// nearestGaps returns, for each box, the gap to its nearest other box. Boxes are swept in x order
// and the scan stops once the x distance alone exceeds the best gap, so a grid-like diagram costs
// far less than comparing every pair.
func nearestGaps(boxes []scene.Rect) []float64 {
	order := make([]int, len(boxes))
	for i := range order {
		order[i] = i
	}
	sort.Slice(order, func(a, b int) bool { return boxes[order[a]].X < boxes[order[b]].X })
	// maxW bounds how far left a box can reach into another's x range.
	maxW := 0.0
	for _, b := range boxes {
		maxW = math.Max(maxW, b.Width)
	}
	gaps := make([]float64, len(boxes))
	for oi, i := range order {
		best := math.Inf(1)
		bi := boxes[i]
		for _, j := range order[oi+1:] {
			if boxes[j].X-(bi.X+bi.Width) > best {
				break
			}
			best = math.Min(best, rectGap(bi, boxes[j]))
		}
		for k := oi - 1; k >= 0; k-- {
			j := order[k]
			if bi.X-(boxes[j].X+maxW) > best {
				break
			}
			best = math.Min(best, rectGap(bi, boxes[j]))
		}
		gaps[i] = best
	}
	return gaps
}

// rectGap is the distance between two boxes (0 when they touch or overlap).
func rectGap(a, b scene.Rect) float64 {
	dx := math.Max(0, math.Max(a.X-(b.X+b.Width), b.X-(a.X+a.Width)))
	dy := math.Max(0, math.Max(a.Y-(b.Y+b.Height), b.Y-(a.Y+a.Height)))
	return math.Hypot(dx, dy)
}

// formatWarnings renders up to max warnings as the get_scene warnings section.
func formatWarnings(ws []string, max int) string {
	if len(ws) == 0 {
		return ""
	}
	var b strings.Builder
	b.WriteString("warnings:\n")
	for i, w := range ws {
		if i == max {
			fmt.Fprintf(&b, "- … and %d more warnings; fix these first\n", len(ws)-max)
			break
		}
		b.WriteString("- " + w + "\n")
	}
	return b.String()
}
