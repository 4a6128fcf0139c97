package scene

import (
	"math"
)

// Geometry of elements as Excalidraw draws them: rounded rectangle corners (getCornerRadius),
// diamonds with rounded tips (the Bézier path of the diamond shape generator), exact ellipses,
// and rotation about the element's centre.

const (
	// defaultAdaptiveRadius and defaultProportionalRadius are Excalidraw's DEFAULT_ADAPTIVE_RADIUS
	// and DEFAULT_PROPORTIONAL_RADIUS (packages/common/src/constants.ts).
	defaultAdaptiveRadius     = 32
	defaultProportionalRadius = 0.25
	// curveSegments is how finely outline() approximates curves (corner arcs, tips, ellipses).
	curveSegments = 16
)

func finite(vs ...float64) bool {
	for _, v := range vs {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return false
		}
	}
	return true
}

// rotate turns p about c by angle radians (clockwise on screen, since y grows downwards).
func rotate(p, c Point, angle float64) Point {
	if angle == 0 {
		return p
	}
	sin, cos := math.Sincos(angle)
	dx, dy := p.X-c.X, p.Y-c.Y
	return Point{c.X + dx*cos - dy*sin, c.Y + dx*sin + dy*cos}
}

// CornerRadius returns the radius Excalidraw rounds a corner with, for a side of length x
// (the shorter side of a rectangle; the half-diagonal extents for a diamond), per getCornerRadius
// in packages/element/src/utils.ts: proportional and legacy roundness use 25% of x; adaptive uses
// 25% of x up to x = 128 and then a fixed 32 px (or roundness.value).
func CornerRadius(x float64, r *Roundness) float64 {
	if r == nil {
		return 0
	}
	switch r.Type {
	case RoundnessProportional, RoundnessLegacy:
		return x * defaultProportionalRadius
	case RoundnessAdaptive:
		fixed := float64(defaultAdaptiveRadius)
		if r.Value != nil {
			fixed = *r.Value
		}
		if x <= fixed/defaultProportionalRadius {
			return x * defaultProportionalRadius
		}
		return fixed
	}
	return 0
}

// outline returns a closed polygon (first point not repeated) approximating the element's border
// in scene coordinates, rotation applied. Arrows and lines give their polyline instead
// (open; callers treat them separately).
func outline(e *Element) []Point {
	var local []Point // relative to the unrotated box's origin
	w, h := e.Width, e.Height
	switch e.Type {
	case Ellipse:
		n := curveSegments * 4
		local = make([]Point, n)
		for i := range n {
			t := 2 * math.Pi * float64(i) / float64(n)
			local[i] = Point{w/2 + w/2*math.Cos(t), h/2 + h/2*math.Sin(t)}
		}
	case Diamond:
		local = diamondOutline(w, h, e.Roundness)
	case Arrow, Line:
		return e.AbsPoints()
	default:
		r := 0.0
		if e.Type == Rectangle || e.Type == Image || e.Type == Frame {
			r = CornerRadius(min(w, h), e.Roundness)
		}
		local = roundedRectOutline(w, h, r)
	}
	c := Point{e.X + w/2, e.Y + h/2}
	out := make([]Point, len(local))
	for i, p := range local {
		out[i] = rotate(Point{e.X + p.X, e.Y + p.Y}, c, e.Angle)
	}
	return out
}

func roundedRectOutline(w, h, r float64) []Point {
	if r <= 0 {
		return []Point{{0, 0}, {w, 0}, {w, h}, {0, h}}
	}
	// Corner centres in drawing order top-right, bottom-right, bottom-left, top-left, each arc
	// swept through a quarter turn.
	centres := []Point{{w - r, r}, {w - r, h - r}, {r, h - r}, {r, r}}
	start := []float64{-math.Pi / 2, 0, math.Pi / 2, math.Pi}
	out := make([]Point, 0, 4*(curveSegments+1))
	for k, c := range centres {
		for i := 0; i <= curveSegments; i++ {
			t := start[k] + math.Pi/2*float64(i)/curveSegments
			out = append(out, Point{c.X + r*math.Cos(t), c.Y + r*math.Sin(t)})
		}
	}
	return out
}

// diamondTips returns the diamond's tip radii as Excalidraw's shape generator computes them:
// vertical offset vr = getCornerRadius(|topX-leftX|) and horizontal hr = getCornerRadius(|rightY-topY|).
func diamondTips(w, h float64, r *Roundness) (vr, hr float64) {
	if r == nil {
		return 0, 0
	}
	return CornerRadius(w/2, r), CornerRadius(h/2, r)
}

// diamondOutline follows Excalidraw's rounded diamond path: each edge runs from one tip's cut to the
// next, and each tip is a cubic Bézier whose two control points are the sharp tip itself.
func diamondOutline(w, h float64, r *Roundness) []Point {
	top, right, bottom, left := Point{w / 2, 0}, Point{w, h / 2}, Point{w / 2, h}, Point{0, h / 2}
	vr, hr := diamondTips(w, h, r)
	if vr == 0 && hr == 0 {
		return []Point{top, right, bottom, left}
	}
	// Per tip: the point where the curve starts (coming from the previous tip) and where it ends.
	type tip struct{ in, at, out Point }
	tips := []tip{
		{Point{top.X - vr, top.Y + hr}, top, Point{top.X + vr, top.Y + hr}},
		{Point{right.X - vr, right.Y - hr}, right, Point{right.X - vr, right.Y + hr}},
		{Point{bottom.X + vr, bottom.Y - hr}, bottom, Point{bottom.X - vr, bottom.Y - hr}},
		{Point{left.X + vr, left.Y + hr}, left, Point{left.X + vr, left.Y - hr}},
	}
	out := make([]Point, 0, 4*(curveSegments+1))
	for _, t := range tips {
		for i := 0; i <= curveSegments; i++ {
			out = append(out, bezier(t.in, t.at, t.at, t.out, float64(i)/curveSegments))
		}
	}
	return out
}

func bezier(p0, p1, p2, p3 Point, t float64) Point {
	u := 1 - t
	a, b, c, d := u*u*u, 3*u*u*t, 3*u*t*t, t*t*t
	return Point{a*p0.X + b*p1.X + c*p2.X + d*p3.X, a*p0.Y + b*p1.Y + c*p2.Y + d*p3.Y}
}

// BoundingBox returns the axis-aligned box around the element as drawn, rotation included.
func BoundingBox(e Element) Rect {
	if e.Type.IsLinear() {
		if len(e.Points) == 0 {
			return Rect{e.X, e.Y, 0, 0}
		}
		return polyBox(e.AbsPoints())
	}
	if e.Angle == 0 {
		return Rect{e.X, e.Y, e.Width, e.Height}
	}
	if e.Type == Ellipse {
		// Exact extent of a rotated ellipse.
		a, b := e.Width/2, e.Height/2
		s, c := math.Sincos(e.Angle)
		hx := math.Sqrt(a*a*c*c + b*b*s*s)
		hy := math.Sqrt(a*a*s*s + b*b*c*c)
		cx, cy := e.X+a, e.Y+b
		return Rect{cx - hx, cy - hy, 2 * hx, 2 * hy}
	}
	return polyBox(outline(&e))
}

func polyBox(ps []Point) Rect {
	minX, minY, maxX, maxY := pointsBox(ps)
	return Rect{minX, minY, maxX - minX, maxY - minY}
}

// EdgePoint returns where the ray from the element's centre towards p leaves the element's border
// as Excalidraw draws it (rounded corners and rounded diamond tips included, rotation applied),
// moved gap px further along the ray. If p is the centre itself, the centre is returned.
func EdgePoint(e Element, p Point, gap float64) Point {
	c := e.Center()
	// Work in the element's unrotated frame.
	lp := rotate(p, c, -e.Angle)
	dx, dy := lp.X-c.X, lp.Y-c.Y
	l := math.Hypot(dx, dy)
	if l == 0 {
		return c
	}
	ux, uy := dx/l, dy/l
	t := rayExit(&e, ux, uy)
	q := Point{c.X + (t+gap)*ux, c.Y + (t+gap)*uy}
	return rotate(q, c, e.Angle)
}

// rayExit returns the distance from the centre to the border along the unit direction (ux, uy)
// in the element's unrotated frame.
func rayExit(e *Element, ux, uy float64) float64 {
	hw, hh := e.Width/2, e.Height/2
	switch e.Type {
	case Ellipse:
		if hw == 0 || hh == 0 {
			return 0
		}
		return 1 / math.Sqrt((ux/hw)*(ux/hw)+(uy/hh)*(uy/hh))
	case Diamond:
		return diamondExit(e.Width, e.Height, e.Roundness, ux, uy)
	default:
		r := 0.0
		if e.Type == Rectangle || e.Type == Image || e.Type == Frame {
			r = CornerRadius(min(e.Width, e.Height), e.Roundness)
		}
		return roundedRectExit(hw, hh, r, ux, uy)
	}
}

// roundedRectExit intersects a ray from the centre of a box of half-size (hw, hh) whose corners are
// rounded with radius r.
func roundedRectExit(hw, hh, r, ux, uy float64) float64 {
	t := math.Inf(1)
	if ux != 0 {
		t = hw / math.Abs(ux)
	}
	if uy != 0 {
		t = min(t, hh/math.Abs(uy))
	}
	if r <= 0 {
		return t
	}
	px, py := math.Abs(ux*t), math.Abs(uy*t)
	cx, cy := hw-r, hh-r
	if px <= cx || py <= cy {
		return t // the hit is on a straight part of the border
	}
	// Solve |t·u − c| = r for the far root, with c the corner circle's centre (first quadrant).
	ax, ay := math.Abs(ux), math.Abs(uy)
	b := ax*cx + ay*cy
	disc := b*b - (cx*cx + cy*cy - r*r)
	if disc < 0 {
		return t
	}
	return b + math.Sqrt(disc)
}

// diamondExit intersects a ray from the centre with Excalidraw's (possibly rounded) diamond.
func diamondExit(w, h float64, r *Roundness, ux, uy float64) float64 {
	hw, hh := w/2, h/2
	if hw == 0 || hh == 0 {
		return 0
	}
	ax, ay := math.Abs(ux), math.Abs(uy)
	t := 1 / (ax/hw + ay/hh) // exact for sharp tips
	vr, hr := diamondTips(w, h, r)
	if vr == 0 && hr == 0 {
		return t
	}
	// By symmetry work in the quadrant towards the right tip (+x) and the bottom tip (+y), with the
	// centre at the origin. The right tip is cut between (hw-vr, -hr) and (hw-vr, +hr): the ray hits
	// the curve when its hit on the straight edge lies beyond the cut.
	px, py := ax*t, ay*t
	if px > hw-vr {
		return bezierExit(Point{hw - vr, -hr}, Point{hw, 0}, Point{hw - vr, hr}, ax, ay, t)
	}
	if py > hh-hr {
		return bezierExit(Point{-vr, hh - hr}, Point{0, hh}, Point{vr, hh - hr}, ax, ay, t)
	}
	return t
}

// bezierExit finds where the ray s·(ux, uy) from the origin crosses the tip curve
// B(p0, tip, tip, p3), by bisection on the sign of the cross product (the curve is convex and the
// ray crosses it once). fallback is returned if it does not.
func bezierExit(p0, tip, p3 Point, ux, uy, fallback float64) float64 {
	side := func(u float64) (float64, Point) {
		b := bezier(p0, tip, tip, p3, u)
		return ux*b.Y - uy*b.X, b
	}
	lo, hi := 0.0, 1.0
	slo, _ := side(lo)
	shi, _ := side(hi)
	if slo == 0 {
		_, b := side(lo)
		return math.Hypot(b.X, b.Y)
	}
	if slo*shi > 0 {
		return fallback
	}
	for range 60 {
		mid := (lo + hi) / 2
		sm, _ := side(mid)
		if (sm < 0) == (slo < 0) {
			lo = mid
		} else {
			hi = mid
		}
	}
	_, b := side((lo + hi) / 2)
	return math.Hypot(b.X, b.Y)
}

// ContainsPoint reports whether p lies inside the element's outline (for arrows and lines: within
// tol px of the polyline).
func ContainsPoint(e Element, p Point, tol float64) bool {
	if e.Type.IsLinear() {
		return distToPolyline(e.AbsPoints(), p, false) <= tol
	}
	return pointInPolygon(outline(&e), p) || DistanceToBorder(e, p) <= tol
}

// DistanceToBorder returns the distance from p to the element's drawn border.
func DistanceToBorder(e Element, p Point) float64 {
	return distToPolyline(outline(&e), p, !e.Type.IsLinear())
}

// OnBorder reports whether p is within tol px of the element's drawn border.
func OnBorder(e Element, p Point, tol float64) bool { return DistanceToBorder(e, p) <= tol }

// SegmentIntersects reports whether the segment a-b passes through the inside of the element
// (crossing or touching its border, or lying inside it). Arrows and lines: whether it crosses
// their polyline.
func SegmentIntersects(e Element, a, b Point) bool {
	poly := outline(&e)
	closed := !e.Type.IsLinear()
	if closed && (pointInPolygon(poly, a) || pointInPolygon(poly, b)) {
		return true
	}
	n := len(poly)
	for i := 0; i < n; i++ {
		j := i + 1
		if j == n {
			if !closed {
				break
			}
			j = 0
		}
		if segmentsIntersect(a, b, poly[i], poly[j]) {
			return true
		}
	}
	return false
}

// Overlap reports whether the outlines of two closed elements (shapes, text, frames, images)
// intersect or one contains the other.
func Overlap(a, b Element) bool {
	if !BoundingBox(a).intersects(BoundingBox(b)) {
		return false
	}
	pa, pb := outline(&a), outline(&b)
	if pointInPolygon(pa, pb[0]) || pointInPolygon(pb, pa[0]) {
		return true
	}
	for i := range pa {
		a0, a1 := pa[i], pa[(i+1)%len(pa)]
		for j := range pb {
			if segmentsIntersect(a0, a1, pb[j], pb[(j+1)%len(pb)]) {
				return true
			}
		}
	}
	return false
}

func (r Rect) intersects(o Rect) bool {
	return r.X <= o.X+o.Width && o.X <= r.X+r.Width && r.Y <= o.Y+o.Height && o.Y <= r.Y+r.Height
}

// Contains reports whether p lies in r (borders included).
func (r Rect) Contains(p Point) bool {
	return p.X >= r.X && p.X <= r.X+r.Width && p.Y >= r.Y && p.Y <= r.Y+r.Height
}

// Intersects reports whether r and o share any point.
func (r Rect) Intersects(o Rect) bool { return r.intersects(o) }

func pointInPolygon(poly []Point, p Point) bool {
	in := false
	for i, j := 0, len(poly)-1; i < len(poly); j, i = i, i+1 {
		a, b := poly[i], poly[j]
		if (a.Y > p.Y) != (b.Y > p.Y) && p.X < (b.X-a.X)*(p.Y-a.Y)/(b.Y-a.Y)+a.X {
			in = !in
		}
	}
	return in
}

func cross(o, a, b Point) float64 { return (a.X-o.X)*(b.Y-o.Y) - (a.Y-o.Y)*(b.X-o.X) }

func segmentsIntersect(p1, p2, p3, p4 Point) bool {
	d1, d2 := cross(p3, p4, p1), cross(p3, p4, p2)
	d3, d4 := cross(p1, p2, p3), cross(p1, p2, p4)
	if ((d1 > 0 && d2 < 0) || (d1 < 0 && d2 > 0)) && ((d3 > 0 && d4 < 0) || (d3 < 0 && d4 > 0)) {
		return true
	}
	on := func(a, b, p Point) bool {
		return min(a.X, b.X) <= p.X && p.X <= max(a.X, b.X) && min(a.Y, b.Y) <= p.Y && p.Y <= max(a.Y, b.Y)
	}
	return (d1 == 0 && on(p3, p4, p1)) || (d2 == 0 && on(p3, p4, p2)) ||
		(d3 == 0 && on(p1, p2, p3)) || (d4 == 0 && on(p1, p2, p4))
}

func distToSegment(a, b, p Point) float64 {
	dx, dy := b.X-a.X, b.Y-a.Y
	l2 := dx*dx + dy*dy
	if l2 == 0 {
		return math.Hypot(p.X-a.X, p.Y-a.Y)
	}
	t := max(0, min(1, ((p.X-a.X)*dx+(p.Y-a.Y)*dy)/l2))
	return math.Hypot(p.X-(a.X+t*dx), p.Y-(a.Y+t*dy))
}

func distToPolyline(poly []Point, p Point, closed bool) float64 {
	if len(poly) == 0 {
		return math.Inf(1)
	}
	if len(poly) == 1 {
		return math.Hypot(p.X-poly[0].X, p.Y-poly[0].Y)
	}
	d := math.Inf(1)
	for i := 0; i+1 < len(poly); i++ {
		d = min(d, distToSegment(poly[i], poly[i+1], p))
	}
	if closed {
		d = min(d, distToSegment(poly[len(poly)-1], poly[0], p))
	}
	return d
}
