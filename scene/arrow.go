package scene

import (
	"fmt"
	"math"
	"slices"
)

// canBind reports whether an arrow may be bound to e: rectangles, ellipses, diamonds and free text
// (Excalidraw also binds to text; a label is not a target, its container is).
func canBind(e *Element) bool {
	return e.Type.IsShape() || (e.Type == Text && e.ContainerID == "")
}

// addBound lists ref in e's boundElements once.
func addBound(e *Element, ref BoundElement) {
	for _, b := range e.BoundElements {
		if b.ID == ref.ID {
			return
		}
	}
	e.BoundElements = append(e.BoundElements, ref)
}

// dropBound removes id from e's boundElements.
func dropBound(e *Element, id string) bool {
	n := len(e.BoundElements)
	e.BoundElements = slices.DeleteFunc(e.BoundElements, func(b BoundElement) bool { return b.ID == id })
	return len(e.BoundElements) != n
}

// listArrow makes target list arrowID in its boundElements (a change to the target).
func (s *Scene) listArrow(targetID, arrowID string) {
	t := s.get(targetID)
	if t == nil {
		return
	}
	for _, b := range t.BoundElements {
		if b.ID == arrowID {
			return
		}
	}
	c := s.edit(t)
	addBound(c, BoundElement{ID: arrowID, Type: Arrow})
	s.touch(c)
	s.put(c)
}

// unlistArrow removes arrowID from target's boundElements unless the arrow is still bound to it at
// its other end.
func (s *Scene) unlistArrow(targetID, arrowID string) {
	t := s.get(targetID)
	if t == nil {
		return
	}
	if a := s.get(arrowID); a != nil {
		if (a.StartBinding != nil && a.StartBinding.ElementID == targetID) ||
			(a.EndBinding != nil && a.EndBinding.ElementID == targetID) {
			return
		}
	}
	if !containsID(t.BoundElements, arrowID) {
		return
	}
	c := s.edit(t)
	if dropBound(c, arrowID) {
		s.touch(c)
		s.put(c)
	}
}

// checkBinding validates a binding's target for arrow a.
func (s *Scene) checkBinding(a *Element, b *Binding, end string) error {
	if b == nil {
		return nil
	}
	if a.Type != Arrow {
		return fmt.Errorf("element %q: %w: %s: only arrows bind to shapes (this is a %s)", a.ID, ErrInvalid, end, a.Type)
	}
	t := s.get(b.ElementID)
	if t == nil {
		return fmt.Errorf("arrow %q: %s: element %q: %w", a.ID, end, b.ElementID, ErrNotFound)
	}
	if !canBind(t) {
		return fmt.Errorf("arrow %q: %w: %s element %q is a %s; arrows bind to rectangles, ellipses, diamonds and free text",
			a.ID, ErrInvalid, end, t.ID, describeType(t))
	}
	return nil
}

func describeType(e *Element) string {
	if e.Type == Text && e.ContainerID != "" {
		return "label of " + e.ContainerID
	}
	return string(e.Type)
}

// RerouteArrows re-routes every arrow bound to the element with the given id, and the label of
// each. Every operation that moves or resizes an element calls it; it is exported for callers that
// edit geometry in ways this package does not see.
func (s *Scene) RerouteArrows(id string) {
	e := s.get(id)
	if e == nil {
		return
	}
	for _, b := range e.BoundElements {
		if b.Type == Arrow {
			s.routeArrow(b.ID)
		}
	}
}

// routeArrow puts a bound arrow's ends on its targets' borders, gap px outside, aimed along the
// arrow: with two points, from centre to centre; with more, towards the neighbouring point, which
// stays where it is. Unbound ends stay where they are. The arrow is rewritten unrotated.
func (s *Scene) routeArrow(id string) {
	a := s.get(id)
	if a == nil || !a.Type.IsLinear() || len(a.Points) < 2 {
		return
	}
	if a.StartBinding == nil && a.EndBinding == nil {
		return
	}
	pts := a.AbsPoints()
	n := len(pts)
	recompute := false // set when the ends lost their focus and it must be measured again
	var st, en *Element
	if a.StartBinding != nil {
		st = s.get(a.StartBinding.ElementID)
	}
	if a.EndBinding != nil {
		en = s.get(a.EndBinding.ElementID)
	}
	// Elbow arrows with fixed points keep their route; their ends go to the fixed points on the
	// targets' boxes. Without fixed points they are routed like straight arrows.
	elbow := a.Elbowed && (st == nil || a.StartBinding.FixedPoint != nil) && (en == nil || a.EndBinding.FixedPoint != nil)
	if elbow {
		if st != nil && a.StartBinding.FixedPoint != nil {
			pts[0] = fixedPointOf(st, *a.StartBinding.FixedPoint)
		}
		if en != nil && a.EndBinding.FixedPoint != nil {
			pts[n-1] = fixedPointOf(en, *a.EndBinding.FixedPoint)
		}
	} else if n == 2 && aimsAtCentre(a.StartBinding) && aimsAtCentre(a.EndBinding) {
		centreRoute(pts, st, en, a)
	} else {
		// Otherwise each end keeps its aim as seen from its neighbour point: its focus (v1), its
		// fixed point (v2), or the centre. For a two-point arrow the neighbour is the other end,
		// which moves too, so the two are placed in turn until they settle (a few rounds).
		rounds := 1
		if n == 2 && st != nil && en != nil {
			rounds = 32
		}
		settled := false
		for range rounds {
			p0, p1 := pts[0], pts[n-1]
			if st != nil {
				pts[0] = placeEnd(st, a.StartBinding, pts[1])
			}
			if en != nil {
				pts[n-1] = placeEnd(en, a.EndBinding, pts[n-2])
			}
			if math.Hypot(pts[0].X-p0.X, pts[0].Y-p0.Y)+math.Hypot(pts[n-1].X-p1.X, pts[n-1].Y-p1.Y) < 1e-7 {
				settled = true
				break
			}
		}
		if !settled && rounds > 1 {
			// The two aims pull against each other (shapes very close or overlapping): fall back
			// to the centre line, which always has both ends on their borders.
			centreRoute(pts, st, en, a)
			recompute = true
		}
	}
	// Compute on a shallow copy (new points slice, bindings untouched), so the result can be
	// compared with a before anything is copied.
	v := *a
	c := &v
	c.Angle = 0
	setAbsPoints(c, pts)
	// A re-routed arrow is written in the v1 form; a v1 focus is kept as it was (recomputing it
	// would only add rounding), a v2 binding gets the focus of its new line.
	rebind := func(b *Binding, t *Element, from, to Point) (*Binding, bool) {
		if b == nil || t == nil || elbow {
			return b, false
		}
		f, g := b.Focus, bindingGap(b)
		if !b.hasFocus || b.FixedPoint != nil || recompute {
			f = focusOf(t, from, to)
		}
		if b.Focus == f && b.Gap == g && b.hasFocus && b.hasGap && b.FixedPoint == nil && b.Mode == "" {
			return b, false
		}
		nb := b.clone()
		nb.Focus, nb.Gap, nb.hasFocus, nb.hasGap = f, g, true, true
		nb.FixedPoint, nb.Mode = nil, ""
		delete(nb.extra, "fixedPoint")
		delete(nb.extra, "mode")
		return nb, true
	}
	sb, sChanged := rebind(a.StartBinding, st, pts[1], pts[0])
	eb, eChanged := rebind(a.EndBinding, en, pts[n-2], pts[n-1])
	if samePoints(a, c) && !sChanged && !eChanged {
		return
	}
	e := s.edit(a)
	e.X, e.Y, e.Width, e.Height, e.Angle, e.Points = c.X, c.Y, c.Width, c.Height, c.Angle, c.Points
	e.StartBinding, e.EndBinding = sb, eb
	s.touch(e)
	s.put(e)
	s.layoutLabel(e.ID)
}

// centreRoute puts a two-point arrow on the line between its targets' centres (or towards its free
// end), each end on its target's border plus the gap.
func centreRoute(pts []Point, st, en, a *Element) {
	startAim, endAim := pts[1], pts[0]
	if en != nil {
		startAim = en.Center()
	}
	if st != nil {
		endAim = st.Center()
	}
	if st != nil {
		pts[0] = EdgePoint(*st, startAim, bindingGap(a.StartBinding))
	}
	if en != nil {
		pts[1] = EdgePoint(*en, endAim, bindingGap(a.EndBinding))
	}
}

// aimsAtCentre reports whether an arrow end bound with b is aimed at its target's centre (focus 0,
// no v2 fixed point). Unbound ends count as aimed, so that half-bound arrows keep the straight route.
func aimsAtCentre(b *Binding) bool {
	return b == nil || (b.FixedPoint == nil && (b.Focus == 0 || !b.hasFocus))
}

// placeEnd puts one bound end on t's border as seen from the neighbour point adj.
func placeEnd(t *Element, b *Binding, adj Point) Point {
	gap := bindingGap(b)
	switch {
	case b.FixedPoint != nil:
		return endTowards(t, adj, fixedPointOf(t, *b.FixedPoint), gap)
	case b.hasFocus && b.Focus != 0:
		return boundEnd(t, adj, b.Focus, gap)
	}
	return EdgePoint(*t, adj, gap)
}

func samePoints(a, b *Element) bool {
	return a.X == b.X && a.Y == b.Y && a.Width == b.Width && a.Height == b.Height &&
		a.Angle == b.Angle && slices.Equal(a.Points, b.Points)
}

func bindingGap(b *Binding) float64 {
	if b == nil || !b.hasGap || b.Gap <= 0 || !finite(b.Gap) {
		return DefaultGap
	}
	return b.Gap
}

// fixedPointOf is a fixedPoint ratio pair mapped onto the target's (rotated) box.
func fixedPointOf(t *Element, fp [2]float64) Point {
	p := Point{t.X + fp[0]*t.Width, t.Y + fp[1]*t.Height}
	return rotate(p, t.Center(), t.Angle)
}

// focusOf computes Excalidraw's focus for an arrow end, as determineFocusDistance in
// packages/element/src/binding.ts does: take the line from the neighbour point a to the end b in the
// target's unrotated frame centred on its centre, normalised as n·x + m·y + c = 0 with (n, m) =
// (−dy, dx)/|d| (the orientation of GALine.vector), and divide its offset c by the target's
// extent along the line's normal. 0 means the arrow is aimed at the centre.
func focusOf(t *Element, a, b Point) float64 {
	c := t.Center()
	ar, br := rotate(a, c, -t.Angle), rotate(b, c, -t.Angle)
	ar, br = Point{ar.X - c.X, ar.Y - c.Y}, Point{br.X - c.X, br.Y - c.Y}
	dx, dy := br.X-ar.X, br.Y-ar.Y
	l := math.Hypot(dx, dy)
	hw, hh := t.Width/2, t.Height/2
	if l == 0 || hw == 0 || hh == 0 {
		return 0
	}
	n, m := -dy/l, dx/l
	off := -(n*ar.X + m*ar.Y)
	q := t.Height / t.Width
	nabs, mabs := math.Abs(n), math.Abs(m)
	var f float64
	switch t.Type {
	case Diamond:
		if mabs < nabs {
			f = off / (nabs * hw)
		} else {
			f = off / (mabs * hh)
		}
	case Ellipse:
		f = off / (hw * math.Sqrt(n*n+q*q*m*m))
	default:
		f = off / (hw * (nabs + q*mabs))
	}
	if math.Abs(f) < 1e-9 || !finite(f) {
		return 0
	}
	return max(-1, min(1, f))
}

// setAbsPoints stores absolute points into a linear element: X, Y become the first point, Points
// are relative to it, and Width/Height are the points' extent.
func setAbsPoints(e *Element, pts []Point) {
	e.X, e.Y = pts[0].X, pts[0].Y
	e.Points = make([]Point, len(pts))
	for i, p := range pts {
		e.Points[i] = Point{p.X - e.X, p.Y - e.Y}
	}
	minX, minY, maxX, maxY := pointsBox(e.Points)
	e.Width, e.Height = maxX-minX, maxY-minY
}

// normalizePoints makes the first point (0, 0), moving X, Y to compensate, and recomputes the size,
// as Excalidraw's restore does.
func normalizePoints(e *Element) {
	if len(e.Points) == 0 {
		return
	}
	p0 := e.Points[0]
	if p0.X != 0 || p0.Y != 0 {
		e.X += p0.X
		e.Y += p0.Y
		for i := range e.Points {
			e.Points[i].X -= p0.X
			e.Points[i].Y -= p0.Y
		}
	}
	minX, minY, maxX, maxY := pointsBox(e.Points)
	e.Width, e.Height = maxX-minX, maxY-minY
}

// arrowsOf returns the ids of arrows bound to e.
func arrowsOf(e *Element) []string {
	var out []string
	for _, b := range e.BoundElements {
		if b.Type == Arrow {
			out = append(out, b.ID)
		}
	}
	return out
}
