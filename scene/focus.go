package scene

import "math"

// Focus-preserving re-routing, after Excalidraw's updateBoundPoint / determineFocusPoint
// (packages/element/src/binding.ts): an arrow end bound with focus f is aimed from its neighbour
// point at the "focus point", the point where the arrow's line touches the element's outline scaled
// by |f| (a corner of the scaled box or diamond, or a tangent point of the scaled ellipse), on the
// side given by the sign of f. Lines follow Excalidraw's 2-D PGA convention (GALine.through(a, b) =
// normalised join(b, a)): normal (−dy, dx)/|d| and offset c = (ax·by − bx·ay)/|d|, so that
// determineFocusDistance (focusOf) of the resulting line gives f back.

// lineOffset is GALine.through(a, b)[1]: the signed distance of the line a→b from the origin.
func lineOffset(a, b Point) float64 {
	dx, dy := b.X-a.X, b.Y-a.Y
	l := math.Hypot(dx, dy)
	if l == 0 {
		return 0
	}
	return (a.X*b.Y - b.X*a.Y) / l
}

// focusPoint returns the focus point for focus f seen from p, both relative to the element's centre
// in its unrotated frame (determineFocusPoint).
func focusPoint(e *Element, f float64, p Point) (Point, bool) {
	if f == 0 {
		return Point{}, true
	}
	af, orient := math.Abs(f), math.Copysign(1, f)
	hx, hy := af*e.Width/2, af*e.Height/2
	if e.Type == Ellipse {
		// Tangent points T = (hx cos t, hy sin t) of the scaled ellipse from p satisfy
		// (px/hx) cos t + (py/hy) sin t = 1.
		if hx == 0 || hy == 0 {
			return Point{}, false
		}
		u, v := p.X/hx, p.Y/hy
		r := math.Hypot(u, v)
		if r < 1 {
			return Point{}, false // p inside the focus image: no tangent
		}
		phi, d := math.Atan2(v, u), math.Acos(1/r)
		best, found := Point{}, false
		for _, t := range []float64{phi + d, phi - d} {
			q := Point{hx * math.Cos(t), hy * math.Sin(t)}
			if orient*lineOffset(p, q) > 0 && (!found || orient*lineOffset(p, q) > orient*lineOffset(p, best)) {
				best, found = q, true
			}
		}
		return best, found
	}
	corners := []Point{{hx, hy}, {hx, -hy}, {-hx, -hy}, {-hx, hy}}
	if e.Type == Diamond {
		corners = []Point{{0, hy}, {hx, 0}, {0, -hy}, {-hx, 0}}
	}
	maxD, best, found := 0.0, Point{}, false
	for _, c := range corners {
		if d := orient * lineOffset(p, c); d > maxD {
			maxD, best, found = d, c, true
		}
	}
	return best, found
}

// boundEnd places an arrow end bound to e, seen from its neighbour point adj: aimed along the line
// through the focus point, at the first crossing of the drawn border from adj, backed off gap px
// towards adj. Focus 0 (or no usable focus point) aims at the centre, as EdgePoint does.
func boundEnd(e *Element, adj Point, focus, gap float64) Point {
	if focus == 0 || !finite(focus) {
		return EdgePoint(*e, adj, gap)
	}
	c := e.Center()
	lp := rotate(adj, c, -e.Angle)
	rel := Point{lp.X - c.X, lp.Y - c.Y}
	fp, ok := focusPoint(e, max(-1, min(1, focus)), rel)
	if !ok {
		return EdgePoint(*e, adj, gap)
	}
	return endTowards(e, adj, rotate(Point{c.X + fp.X, c.Y + fp.Y}, c, e.Angle), gap)
}

// endTowards places an arrow end on the line from adj through the anchor (scene coordinates, inside
// the element): the first crossing of the drawn border from adj, backed off gap px towards adj.
// Without a crossing (adj inside the element) it falls back to the centre-aimed EdgePoint.
func endTowards(e *Element, adj, anchor Point, gap float64) Point {
	c := e.Center()
	lp, la := rotate(adj, c, -e.Angle), rotate(anchor, c, -e.Angle)
	dx, dy := la.X-lp.X, la.Y-lp.Y
	l := math.Hypot(dx, dy)
	if l == 0 {
		return EdgePoint(*e, adj, gap)
	}
	ux, uy := dx/l, dy/l
	t, ok := rayEntry(e, Point{lp.X - e.X, lp.Y - e.Y}, ux, uy)
	if !ok {
		return EdgePoint(*e, adj, gap)
	}
	q := Point{lp.X + (t-gap)*ux, lp.Y + (t-gap)*uy}
	return rotate(q, c, e.Angle)
}

// rayEntry returns the distance along the unit direction u from o (relative to the element's x/y,
// unrotated frame) to the first crossing of the border, if any.
func rayEntry(e *Element, o Point, ux, uy float64) (float64, bool) {
	if e.Type == Ellipse {
		a, b := e.Width/2, e.Height/2
		if a == 0 || b == 0 {
			return 0, false
		}
		px, py := (o.X-a)/a, (o.Y-b)/b
		dx, dy := ux/a, uy/b
		A, B, C := dx*dx+dy*dy, 2*(px*dx+py*dy), px*px+py*py-1
		disc := B*B - 4*A*C
		if disc < 0 {
			return 0, false
		}
		t := (-B - math.Sqrt(disc)) / (2 * A)
		return t, t >= 0
	}
	best, found := 0.0, false
	for _, p := range borderPieces(e) {
		for _, t := range rayPieceAll(o, ux, uy, p) {
			if t >= 0 && (!found || t < best) {
				best, found = t, true
			}
		}
	}
	return best, found
}
