package mermaid

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/excalibot/excalibot/scene"
)

// Geometry of Mermaid's edges: SVG path data flattened to polylines, and the polyline operations
// the arrows are built with (arc length, simplification, cutting at a shape's border).

// flattenTol is how far (px) a flattened curve may stray from the curve Mermaid drew.
const flattenTol = 0.25

// parsePath flattens SVG path data (M L H V C S Q T A Z, absolute and relative) into one polyline
// per subpath. Arcs become straight lines to their end: Mermaid's edges have none, only its
// shapes do.
func parsePath(d string) ([][]scene.Point, error) {
	toks, err := pathTokens(d)
	if err != nil {
		return nil, err
	}
	var out [][]scene.Point
	var cur []scene.Point
	var pos, start, ctl scene.Point // ctl: last control point, for S and T
	var prev byte
	i := 0
	num := func() (float64, error) {
		if i >= len(toks) || toks[i].cmd != 0 {
			return 0, fmt.Errorf("path data %q: a command is missing numbers", clipText(d))
		}
		i++
		return toks[i-1].num, nil
	}
	pt := func(rel bool) (scene.Point, error) {
		x, err := num()
		if err != nil {
			return scene.Point{}, err
		}
		y, err := num()
		if err != nil {
			return scene.Point{}, err
		}
		if rel {
			return scene.Point{X: pos.X + x, Y: pos.Y + y}, nil
		}
		return scene.Point{X: x, Y: y}, nil
	}
	flush := func() {
		if len(cur) > 1 {
			out = append(out, cur)
		}
		cur = nil
	}
	if len(toks) > 0 && toks[0].cmd != 'M' && toks[0].cmd != 'm' {
		return nil, fmt.Errorf("path data %q does not start with a move (M)", clipText(d))
	}
	var cmd byte
	for i < len(toks) {
		if toks[i].cmd != 0 {
			cmd = toks[i].cmd
			i++
		} else if cmd == 0 {
			return nil, fmt.Errorf("path data %q does not start with a command", clipText(d))
		}
		rel := cmd >= 'a'
		switch c := cmd | 0x20; c { // lower case
		case 'm':
			p, err := pt(rel)
			if err != nil {
				return nil, err
			}
			flush()
			pos, start, ctl = p, p, p
			cur = []scene.Point{p}
			cmd = 'L' | (cmd & 0x20) // further pairs are lines
		case 'l', 'h', 'v':
			var p scene.Point
			var err error
			switch c {
			case 'l':
				p, err = pt(rel)
			case 'h':
				var x float64
				x, err = num()
				p = scene.Point{X: x, Y: pos.Y}
				if rel {
					p.X += pos.X
				}
			default:
				var y float64
				y, err = num()
				p = scene.Point{X: pos.X, Y: y}
				if rel {
					p.Y += pos.Y
				}
			}
			if err != nil {
				return nil, err
			}
			cur = append(cur, p)
			pos, ctl = p, p
		case 'c', 's':
			var c1 scene.Point
			if c == 's' {
				c1 = pos
				if p := prev | 0x20; p == 'c' || p == 's' {
					c1 = scene.Point{X: 2*pos.X - ctl.X, Y: 2*pos.Y - ctl.Y}
				}
			} else {
				var err error
				if c1, err = pt(rel); err != nil {
					return nil, err
				}
			}
			c2, err := pt(rel)
			if err != nil {
				return nil, err
			}
			p, err := pt(rel)
			if err != nil {
				return nil, err
			}
			cur = appendCubic(cur, pos, c1, c2, p)
			pos, ctl = p, c2
		case 'q', 't':
			var c1 scene.Point
			if c == 't' {
				c1 = pos
				if p := prev | 0x20; p == 'q' || p == 't' {
					c1 = scene.Point{X: 2*pos.X - ctl.X, Y: 2*pos.Y - ctl.Y}
				}
			} else {
				var err error
				if c1, err = pt(rel); err != nil {
					return nil, err
				}
			}
			p, err := pt(rel)
			if err != nil {
				return nil, err
			}
			// A quadratic is the cubic with controls 2/3 of the way to its control point.
			cur = appendCubic(cur, pos,
				scene.Point{X: pos.X + 2.0/3*(c1.X-pos.X), Y: pos.Y + 2.0/3*(c1.Y-pos.Y)},
				scene.Point{X: p.X + 2.0/3*(c1.X-p.X), Y: p.Y + 2.0/3*(c1.Y-p.Y)}, p)
			pos, ctl = p, c1
		case 'a':
			for range 5 { // rx ry rotation large-arc sweep
				if _, err := num(); err != nil {
					return nil, err
				}
			}
			p, err := pt(rel)
			if err != nil {
				return nil, err
			}
			cur = append(cur, p)
			pos, ctl = p, p
		case 'z':
			cur = append(cur, start)
			pos, ctl = start, start
			flush()
			cur = []scene.Point{start}
		default:
			return nil, fmt.Errorf("path data %q: unknown command %q", clipText(d), cmd)
		}
		prev = cmd
	}
	flush()
	return out, nil
}

type pathToken struct {
	cmd byte // 0 for a number
	num float64
}

// pathTokens splits path data into commands and numbers ("M1.5-2e3.5" is M, 1.5, -2e3, .5).
func pathTokens(d string) ([]pathToken, error) {
	var out []pathToken
	for i := 0; i < len(d); {
		c := d[i]
		switch {
		case c == ' ' || c == ',' || c == '\t' || c == '\n' || c == '\r':
			i++
		case strings.IndexByte("MmLlHhVvCcSsQqTtAaZz", c) >= 0:
			out = append(out, pathToken{cmd: c})
			i++
		default:
			j := i
			if j < len(d) && (d[j] == '-' || d[j] == '+') {
				j++
			}
			dot := false
			for j < len(d) && (d[j] >= '0' && d[j] <= '9' || d[j] == '.' && !dot) {
				dot = dot || d[j] == '.'
				j++
			}
			if j < len(d) && (d[j] == 'e' || d[j] == 'E') {
				k := j + 1
				if k < len(d) && (d[k] == '-' || d[k] == '+') {
					k++
				}
				if k < len(d) && d[k] >= '0' && d[k] <= '9' {
					for j = k; j < len(d) && d[j] >= '0' && d[j] <= '9'; j++ {
					}
				}
			}
			v, err := strconv.ParseFloat(d[i:j], 64)
			if err != nil || j == i {
				return nil, fmt.Errorf("path data %q: unexpected %q", clipText(d), d[i:min(len(d), i+8)])
			}
			if math.IsInf(v, 0) || math.IsNaN(v) {
				return nil, fmt.Errorf("path data %q: number out of range", clipText(d))
			}
			out = append(out, pathToken{num: v})
			i = j
		}
	}
	return out, nil
}

// appendCubic adds the cubic Bézier p0 c1 c2 p3 (p0 already in pts) as line segments, enough of
// them that none strays more than flattenTol from the curve.
func appendCubic(pts []scene.Point, p0, c1, c2, p3 scene.Point) []scene.Point {
	// A chord of a curve whose second derivative is at most D, over 1/n of the parameter, strays
	// at most D/(8n²); for a cubic D ≤ 6·max|p0−2c1+c2|, |c1−2c2+p3|.
	d1 := math.Hypot(p0.X-2*c1.X+c2.X, p0.Y-2*c1.Y+c2.Y)
	d2 := math.Hypot(c1.X-2*c2.X+p3.X, c1.Y-2*c2.Y+p3.Y)
	n := int(math.Ceil(math.Sqrt(6 * math.Max(d1, d2) / (8 * flattenTol))))
	n = max(1, min(n, 64))
	for k := 1; k <= n; k++ {
		t := float64(k) / float64(n)
		u := 1 - t
		pts = append(pts, scene.Point{
			X: u*u*u*p0.X + 3*u*u*t*c1.X + 3*u*t*t*c2.X + t*t*t*p3.X,
			Y: u*u*u*p0.Y + 3*u*u*t*c1.Y + 3*u*t*t*c2.Y + t*t*t*p3.Y,
		})
	}
	return pts
}

// transform applies an SVG matrix [a b c d e f].
func transform(m [6]float64, p scene.Point) scene.Point {
	return scene.Point{X: m[0]*p.X + m[2]*p.Y + m[4], Y: m[1]*p.X + m[3]*p.Y + m[5]}
}

func dist(a, b scene.Point) float64 { return math.Hypot(a.X-b.X, a.Y-b.Y) }

// distToLine is the distance from p to the line through a and b (to a when they coincide).
func distToLine(p, a, b scene.Point) float64 {
	l := dist(a, b)
	if l == 0 {
		return dist(p, a)
	}
	return math.Abs((b.X-a.X)*(a.Y-p.Y)-(a.X-p.X)*(b.Y-a.Y)) / l
}

// dedupe drops points closer than eps to the one before.
func dedupe(pts []scene.Point, eps float64) []scene.Point {
	out := make([]scene.Point, 0, len(pts))
	for _, p := range pts {
		if len(out) == 0 || dist(out[len(out)-1], p) > eps {
			out = append(out, p)
		}
	}
	return out
}

// arcLengths returns the cumulative length of the polyline at each point.
func arcLengths(pts []scene.Point) []float64 {
	s := make([]float64, len(pts))
	for i := 1; i < len(pts); i++ {
		s[i] = s[i-1] + dist(pts[i-1], pts[i])
	}
	return s
}

// pointAt is the point at arc length at along the polyline (its ends beyond it).
func pointAt(pts []scene.Point, s []float64, at float64) scene.Point {
	if at <= 0 || len(pts) == 1 {
		return pts[0]
	}
	for i := 1; i < len(pts); i++ {
		if s[i] >= at {
			seg := s[i] - s[i-1]
			if seg == 0 {
				return pts[i]
			}
			t := (at - s[i-1]) / seg
			return scene.Point{X: pts[i-1].X + t*(pts[i].X-pts[i-1].X), Y: pts[i-1].Y + t*(pts[i].Y-pts[i-1].Y)}
		}
	}
	return pts[len(pts)-1]
}

// sub returns the part of the polyline between arc lengths from and to.
func sub(pts []scene.Point, s []float64, from, to float64) []scene.Point {
	out := []scene.Point{pointAt(pts, s, from)}
	for i, p := range pts {
		if s[i] > from && s[i] < to {
			out = append(out, p)
		}
	}
	return dedupe(append(out, pointAt(pts, s, to)), 1e-9)
}

// nearest returns the arc length of the polyline's point closest to p.
func nearest(pts []scene.Point, s []float64, p scene.Point) float64 {
	best, at := math.Inf(1), 0.0
	for i := 1; i < len(pts); i++ {
		a, b := pts[i-1], pts[i]
		dx, dy := b.X-a.X, b.Y-a.Y
		l2 := dx*dx + dy*dy
		t := 0.0
		if l2 > 0 {
			t = math.Max(0, math.Min(1, ((p.X-a.X)*dx+(p.Y-a.Y)*dy)/l2))
		}
		q := scene.Point{X: a.X + t*dx, Y: a.Y + t*dy}
		if d := dist(p, q); d < best {
			best, at = d, s[i-1]+t*(s[i]-s[i-1])
		}
	}
	return at
}

// simplify keeps the points of the polyline (by index) that Ramer–Douglas–Peucker needs to stay
// within eps of it: the ends always.
func simplify(pts []scene.Point, eps float64) []int {
	if len(pts) <= 2 {
		idx := make([]int, len(pts))
		for i := range idx {
			idx[i] = i
		}
		return idx
	}
	keep := make([]bool, len(pts))
	keep[0], keep[len(pts)-1] = true, true
	var rec func(a, b int)
	rec = func(a, b int) {
		far, at := 0.0, -1
		for i := a + 1; i < b; i++ {
			if d := distToSegment(pts[i], pts[a], pts[b]); d > far {
				far, at = d, i
			}
		}
		if at >= 0 && far > eps {
			keep[at] = true
			rec(a, at)
			rec(at, b)
		}
	}
	rec(0, len(pts)-1)
	var idx []int
	for i, k := range keep {
		if k {
			idx = append(idx, i)
		}
	}
	return idx
}

func distToSegment(p, a, b scene.Point) float64 {
	dx, dy := b.X-a.X, b.Y-a.Y
	l2 := dx*dx + dy*dy
	if l2 == 0 {
		return dist(p, a)
	}
	t := math.Max(0, math.Min(1, ((p.X-a.X)*dx+(p.Y-a.Y)*dy)/l2))
	return dist(p, scene.Point{X: a.X + t*dx, Y: a.Y + t*dy})
}

// inside reports whether p lies inside e's drawn outline.
func inside(e *scene.Element, p scene.Point) bool { return scene.ContainsPoint(*e, p, 0) }

// exitAt returns the arc length at which the polyline, walked from its start, leaves e for good
// after starting inside it (the first crossing of the border from inside to outside); ok is false
// when the polyline does not start inside e.
func exitAt(pts []scene.Point, s []float64, e *scene.Element) (float64, bool) {
	if !inside(e, pts[0]) {
		return 0, false
	}
	for i := 1; i < len(pts); i++ {
		if inside(e, pts[i]) {
			continue
		}
		lo, hi := s[i-1], s[i] // inside at lo, outside at hi
		for range 50 {
			mid := (lo + hi) / 2
			if inside(e, pointAt(pts, s, mid)) {
				lo = mid
			} else {
				hi = mid
			}
		}
		return hi, true
	}
	return 0, false
}

// reach returns where the ray from p in direction (ux, uy) first meets e's border, within limit
// px; ok is false when it does not.
func reach(e *scene.Element, p scene.Point, ux, uy, limit float64) (scene.Point, bool) {
	const step = 1.0
	prev := 0.0
	for t := step; t <= limit; t += step {
		q := scene.Point{X: p.X + t*ux, Y: p.Y + t*uy}
		if !inside(e, q) {
			prev = t
			continue
		}
		lo, hi := prev, t
		for range 50 {
			mid := (lo + hi) / 2
			if inside(e, scene.Point{X: p.X + mid*ux, Y: p.Y + mid*uy}) {
				hi = mid
			} else {
				lo = mid
			}
		}
		return scene.Point{X: p.X + lo*ux, Y: p.Y + lo*uy}, true
	}
	return scene.Point{}, false
}

func reversed(pts []scene.Point) []scene.Point {
	out := make([]scene.Point, len(pts))
	for i, p := range pts {
		out[len(pts)-1-i] = p
	}
	return out
}

func clipText(s string) string {
	if len(s) > 40 {
		return s[:40] + "…"
	}
	return s
}
