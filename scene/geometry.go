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
	// curveSegments is the least number of chords outline() approximates a curve with (corner
	// curves and diamond tips get about one per px of length).
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

// piece is one part of an element's border: a straight segment (p0-p3) or a cubic Bézier
// (p0, c1, c2, p3), in the element's unrotated frame relative to its x/y.
type piece struct {
	p0, c1, c2, p3 Point
	curve          bool
}

func seg(a, b Point) piece { return piece{p0: a, p3: b} }

// quad is a quadratic Bézier written as the equivalent cubic.
func quad(a, ctl, b Point) piece {
	return piece{p0: a, c1: Point{a.X + 2.0/3*(ctl.X-a.X), a.Y + 2.0/3*(ctl.Y-a.Y)},
		c2: Point{b.X + 2.0/3*(ctl.X-b.X), b.Y + 2.0/3*(ctl.Y-b.Y)}, p3: b, curve: true}
}

func (p piece) at(t float64) Point {
	if !p.curve {
		return Point{p.p0.X + t*(p.p3.X-p.p0.X), p.p0.Y + t*(p.p3.Y-p.p0.Y)}
	}
	return bezier(p.p0, p.c1, p.c2, p.p3, t)
}

// borderPieces returns the border of a closed element as Excalidraw's shape generator draws it
// (packages/element/src/shape.ts): rounded rectangles are lines joined by quadratic curves whose
// control point is the sharp corner ("Q w 0, w r"); diamonds have their tips at getDiamondPoints
// (floor(w/2)+1, floor(h/2)+1) and, when rounded, cubic tips whose two control points are the
// sharp tip. Ellipses are handled analytically and return nil.
func borderPieces(e *Element) []piece {
	w, h := e.Width, e.Height
	switch e.Type {
	case Ellipse:
		return nil
	case Diamond:
		topX, rightY := math.Floor(w/2)+1, math.Floor(h/2)+1
		top, right, bottom, left := Point{topX, 0}, Point{w, rightY}, Point{topX, h}, Point{0, rightY}
		if e.Roundness == nil {
			return []piece{seg(top, right), seg(right, bottom), seg(bottom, left), seg(left, top)}
		}
		vr := CornerRadius(math.Abs(topX-0), e.Roundness)
		hr := CornerRadius(math.Abs(rightY-0), e.Roundness)
		tip := func(a, t, b Point) piece { return piece{p0: a, c1: t, c2: t, p3: b, curve: true} }
		return []piece{
			seg(Point{top.X + vr, top.Y + hr}, Point{right.X - vr, right.Y - hr}),
			tip(Point{right.X - vr, right.Y - hr}, right, Point{right.X - vr, right.Y + hr}),
			seg(Point{right.X - vr, right.Y + hr}, Point{bottom.X + vr, bottom.Y - hr}),
			tip(Point{bottom.X + vr, bottom.Y - hr}, bottom, Point{bottom.X - vr, bottom.Y - hr}),
			seg(Point{bottom.X - vr, bottom.Y - hr}, Point{left.X + vr, left.Y + hr}),
			tip(Point{left.X + vr, left.Y + hr}, left, Point{left.X + vr, left.Y - hr}),
			seg(Point{left.X + vr, left.Y - hr}, Point{top.X - vr, top.Y + hr}),
			tip(Point{top.X - vr, top.Y + hr}, top, Point{top.X + vr, top.Y + hr}),
		}
	}
	r := 0.0
	if e.Type == Rectangle || e.Type == Image || e.Type == Frame {
		r = CornerRadius(min(w, h), e.Roundness)
	}
	if r <= 0 {
		return []piece{seg(Point{0, 0}, Point{w, 0}), seg(Point{w, 0}, Point{w, h}),
			seg(Point{w, h}, Point{0, h}), seg(Point{0, h}, Point{0, 0})}
	}
	return []piece{
		seg(Point{r, 0}, Point{w - r, 0}), quad(Point{w - r, 0}, Point{w, 0}, Point{w, r}),
		seg(Point{w, r}, Point{w, h - r}), quad(Point{w, h - r}, Point{w, h}, Point{w - r, h}),
		seg(Point{w - r, h}, Point{r, h}), quad(Point{r, h}, Point{0, h}, Point{0, h - r}),
		seg(Point{0, h - r}, Point{0, r}), quad(Point{0, r}, Point{0, 0}, Point{r, 0}),
	}
}

// outline returns a closed polygon (first point not repeated) approximating the element's border
// in scene coordinates, rotation applied. Arrows and lines give their polyline instead
// (open; callers treat them separately).
func outline(e *Element) []Point {
	var local []Point // relative to the unrotated box's origin
	w, h := e.Width, e.Height
	switch e.Type {
	case Ellipse:
		// About one vertex per 2 px of perimeter keeps the polygon within ~0.5/r px of the curve.
		perim := math.Pi * (3*(w+h)/2 - math.Sqrt((3*w/2+h/2)*(w/2+3*h/2)))
		n := max(64, min(4096, int(perim/2)))
		local = make([]Point, n)
		for i := range n {
			t := 2 * math.Pi * float64(i) / float64(n)
			local[i] = Point{w/2 + w/2*math.Cos(t), h/2 + h/2*math.Sin(t)}
		}
	case Arrow, Line:
		return e.AbsPoints()
	default:
		for _, p := range borderPieces(e) {
			if !p.curve {
				local = append(local, p.p0)
				continue
			}
			l := math.Hypot(p.c1.X-p.p0.X, p.c1.Y-p.p0.Y) + math.Hypot(p.c2.X-p.c1.X, p.c2.Y-p.c1.Y) +
				math.Hypot(p.p3.X-p.c2.X, p.p3.Y-p.c2.Y)
			n := max(curveSegments, min(1024, int(l)))
			for i := range n {
				local = append(local, p.at(float64(i)/float64(n)))
			}
		}
	}
	c := Point{e.X + w/2, e.Y + h/2}
	out := make([]Point, len(local))
	for i, p := range local {
		out[i] = rotate(Point{e.X + p.X, e.Y + p.Y}, c, e.Angle)
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

// rayExit returns the distance from the element's centre to its border along the unit direction
// (ux, uy), in the element's unrotated frame: exact for ellipses; for the other shapes the exact
// intersection with their straight pieces and (by bisection to machine precision) their curves.
func rayExit(e *Element, ux, uy float64) float64 {
	hw, hh := e.Width/2, e.Height/2
	if e.Type == Ellipse {
		if hw == 0 || hh == 0 {
			return 0
		}
		return 1 / math.Sqrt((ux/hw)*(ux/hw)+(uy/hh)*(uy/hh))
	}
	c := Point{hw, hh}
	best := 0.0
	for _, p := range borderPieces(e) {
		if t, ok := rayPiece(c, ux, uy, p); ok && t > best {
			best = t
		}
	}
	return best
}

// rayPiece intersects the ray c + t·u (t >= 0) with one border piece, returning the farthest
// crossing (the exit, for a ray from inside).
func rayPiece(c Point, ux, uy float64, p piece) (float64, bool) {
	best, found := 0.0, false
	for _, t := range rayPieceAll(c, ux, uy, p) {
		if t >= 0 && (!found || t > best) {
			best, found = t, true
		}
	}
	return best, found
}

// rayPieceAll returns the distances along the line c + t·u (any sign of t) at which it crosses one
// border piece: exactly for segments; for curves by bracketing sign changes on a fine grid and
// bisecting to machine precision.
func rayPieceAll(c Point, ux, uy float64, p piece) []float64 {
	side := func(q Point) float64 { return ux*(q.Y-c.Y) - uy*(q.X-c.X) }
	along := func(q Point) float64 { return ux*(q.X-c.X) + uy*(q.Y-c.Y) }
	if !p.curve {
		s0, s1 := side(p.p0), side(p.p3)
		if (s0 > 0 && s1 > 0) || (s0 < 0 && s1 < 0) || s0 == s1 {
			return nil
		}
		return []float64{along(p.at(s0 / (s0 - s1)))}
	}
	const n = 16
	var out []float64
	prevU, prevS := 0.0, side(p.at(0))
	for i := 1; i <= n; i++ {
		u := float64(i) / n
		su := side(p.at(u))
		if prevS == 0 || (prevS < 0) != (su < 0) {
			lo, hi, slo := prevU, u, prevS
			for range 60 {
				mid := (lo + hi) / 2
				sm := side(p.at(mid))
				if (sm < 0) == (slo < 0) && sm != 0 {
					lo, slo = mid, sm
				} else {
					hi = mid
				}
			}
			out = append(out, along(p.at((lo+hi)/2)))
		}
		prevU, prevS = u, su
	}
	return out
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
	// The outline is costly to build; a segment clear of the element's box is clear of it.
	if box := BoundingBox(e); math.Max(a.X, b.X) < box.X-1 || math.Min(a.X, b.X) > box.X+box.Width+1 ||
		math.Max(a.Y, b.Y) < box.Y-1 || math.Min(a.Y, b.Y) > box.Y+box.Height+1 {
		return false
	}
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

// SegmentsCross reports whether segments p1–p2 and p3–p4 cross properly: each passes from one
// side of the other to the other side (touching or running along it is not crossing).
func SegmentsCross(p1, p2, p3, p4 Point) bool {
	d1, d2 := cross(p3, p4, p1), cross(p3, p4, p2)
	d3, d4 := cross(p1, p2, p3), cross(p1, p2, p4)
	return ((d1 > 0 && d2 < 0) || (d1 < 0 && d2 > 0)) && ((d3 > 0 && d4 < 0) || (d3 < 0 && d4 > 0))
}

// segmentsIntersect reports whether the segments cross or touch.
func segmentsIntersect(p1, p2, p3, p4 Point) bool {
	if SegmentsCross(p1, p2, p3, p4) {
		return true
	}
	d1, d2 := cross(p3, p4, p1), cross(p3, p4, p2)
	d3, d4 := cross(p1, p2, p3), cross(p1, p2, p4)
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

// ClipSegment clips the segment a–b to the box r (Liang–Barsky): the part of it within r runs
// from a+t0·(b−a) to a+t1·(b−a); ok is false when the segment misses r.
func ClipSegment(a, b Point, r Rect) (t0, t1 float64, ok bool) {
	t0, t1 = 0, 1
	dx, dy := b.X-a.X, b.Y-a.Y
	for _, c := range [4][2]float64{{-dx, a.X - r.X}, {dx, r.X + r.Width - a.X}, {-dy, a.Y - r.Y}, {dy, r.Y + r.Height - a.Y}} {
		p, q := c[0], c[1]
		if p == 0 {
			if q < 0 {
				return 0, 0, false
			}
			continue
		}
		t := q / p
		if p < 0 {
			t0 = math.Max(t0, t)
		} else {
			t1 = math.Min(t1, t)
		}
		if t0 > t1 {
			return 0, 0, false
		}
	}
	return t0, t1, true
}
