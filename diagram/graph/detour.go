package graph

import (
	"math"

	"github.com/excalibot/excalibot/scene"
)

// Detours: dot routes around the nodes it places, but not always — in crowded groups a spline
// can cut through a box, and the straight arrows of short edges are not routed at all. An arrow
// through a box reads as a connection it is not, so such a stretch is taken around the box
// instead, along the box's margin on the shorter side.

// detourMargins are how far from a box a detour keeps: as far as the first, else as far as there
// is room for.
var detourMargins = []float64{14, 8}

// detour returns line, drawn margin px clear of boxes, with each stretch through one of boxes (other than the first and last
// point's own) replaced by a walk around that box; ok is false when a box could not be walked
// around in a few tries.
func detour(line []scene.Point, boxes []scene.Rect, margin float64) ([]scene.Point, bool) {
	for range 2 * len(boxes) {
		hit := -1
		var in, out int // the first segment entering the box, the last leaving it
		for b, r := range boxes {
			g := grow(r, margin-2)
			first, last := -1, -1
			for k := 1; k < len(line); k++ {
				if segmentThrough(line[k-1], line[k], g) {
					if first < 0 {
						first = k - 1
					}
					last = k
				}
			}
			if first >= 0 {
				hit, in, out = b, first, last
				break
			}
		}
		if hit < 0 {
			return line, true
		}
		g := grow(boxes[hit], margin)
		// The walk starts and ends on the margin's border: points within the margin are left out.
		inside := func(p scene.Point) bool {
			return p.X > g.X && p.X < g.X+g.Width && p.Y > g.Y && p.Y < g.Y+g.Height
		}
		for in > 0 && inside(line[in]) {
			in--
		}
		for out < len(line)-1 && inside(line[out]) {
			out++
		}
		if inside(line[in]) || inside(line[out]) {
			return line, false // an end of the line is at the box
		}
		a, ok1 := clipPoint(line[in], line[in+1], g, true)
		z, ok2 := clipPoint(line[out-1], line[out], g, false)
		if !ok1 || !ok2 {
			return line, false
		}
		around := walkAround(a, z, g)
		next := append([]scene.Point(nil), line[:in+1]...)
		next = append(next, a)
		next = append(next, around...)
		next = append(next, z)
		line = append(next, line[out:]...)
	}
	return line, false
}

// grow is r with m more on every side.
func grow(r scene.Rect, m float64) scene.Rect {
	return scene.Rect{X: r.X - m, Y: r.Y - m, Width: r.Width + 2*m, Height: r.Height + 2*m}
}

// segmentThrough reports whether a–b has a part strictly inside r.
func segmentThrough(a, b scene.Point, r scene.Rect) bool {
	t0, t1, ok := scene.ClipSegment(a, b, r)
	return ok && t1-t0 > 1e-6
}

// clipPoint is where a–b enters r (first) or leaves it.
func clipPoint(a, b scene.Point, r scene.Rect, first bool) (scene.Point, bool) {
	t0, t1, ok := scene.ClipSegment(a, b, r)
	if !ok {
		return scene.Point{}, false
	}
	t := t1
	if first {
		t = t0
	}
	return scene.Point{X: a.X + t*(b.X-a.X), Y: a.Y + t*(b.Y-a.Y)}, true
}

// walkAround is the corners of r passed going from a to z (both on its border) the shorter way
// round.
func walkAround(a, z scene.Point, r scene.Rect) []scene.Point {
	corners := []scene.Point{{X: r.X, Y: r.Y}, {X: r.X + r.Width, Y: r.Y}, {X: r.X + r.Width, Y: r.Y + r.Height}, {X: r.X, Y: r.Y + r.Height}}
	per := 2 * (r.Width + r.Height)
	// pos is a border point's distance clockwise from the top-left corner.
	pos := func(p scene.Point) float64 {
		switch {
		case math.Abs(p.Y-r.Y) < 1e-6:
			return p.X - r.X
		case math.Abs(p.X-(r.X+r.Width)) < 1e-6:
			return r.Width + p.Y - r.Y
		case math.Abs(p.Y-(r.Y+r.Height)) < 1e-6:
			return r.Width + r.Height + (r.X + r.Width - p.X)
		default:
			return 2*r.Width + r.Height + (r.Y + r.Height - p.Y)
		}
	}
	cornerPos := []float64{0, r.Width, r.Width + r.Height, 2*r.Width + r.Height}
	pa, pz := pos(a), pos(z)
	cw := math.Mod(pz-pa+per, per)
	var out []scene.Point
	if cw <= per/2 {
		for _, k := range cornerOrder(pa, cornerPos, per, true) {
			if math.Mod(cornerPos[k]-pa+per, per) < cw {
				out = append(out, corners[k])
			}
		}
		return out
	}
	ccw := per - cw
	for _, k := range cornerOrder(pa, cornerPos, per, false) {
		if math.Mod(pa-cornerPos[k]+per, per) < ccw {
			out = append(out, corners[k])
		}
	}
	return out
}

// cornerOrder is the corners (at border positions cornerPos on a border of length per) in the
// order met going from border position p clockwise, or counter-clockwise.
func cornerOrder(p float64, cornerPos []float64, per float64, clockwise bool) []int {
	idx := []int{0, 1, 2, 3}
	dist := func(k int) float64 {
		if clockwise {
			return math.Mod(cornerPos[k]-p+per, per)
		}
		return math.Mod(p-cornerPos[k]+per, per)
	}
	for i := 1; i < 4; i++ {
		for j := i; j > 0 && dist(idx[j]) < dist(idx[j-1]); j-- {
			idx[j], idx[j-1] = idx[j-1], idx[j]
		}
	}
	return idx
}
