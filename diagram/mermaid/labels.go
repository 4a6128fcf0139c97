package mermaid

import (
	"math"

	"github.com/excalibot/excalibot/scene"
)

// Where an arrow's label goes along its route: the middle, unless the label would cover a node
// or a label already placed; then where Mermaid put it (its layout kept that spot free), then
// further from the middle step by step.

// room knows the boxes labels must stay off: the shapes that are not frames (a frame holds
// other shapes: a subgraph, a group box) and the labels placed so far.
type room struct {
	taken []scene.Rect
}

func newRoom(shapes map[string]*scene.Element) *room {
	r := &room{}
	for _, a := range shapes {
		frame := false
		for _, b := range shapes {
			if a != b && contains(a.Bounds(), b.Bounds()) && a.Width*a.Height > b.Width*b.Height {
				frame = true
				break
			}
		}
		if !frame {
			r.taken = append(r.taken, a.Bounds())
		}
	}
	return r
}

func contains(a, b scene.Rect) bool {
	return a.X <= b.X && a.Y <= b.Y && a.X+a.Width >= b.X+b.Width && a.Y+a.Height >= b.Y+b.Height
}

// overlaps reports whether a and b share more than a 1 px border.
func overlaps(a, b scene.Rect) bool {
	const inset = 1
	return a.X+inset < b.X+b.Width-inset && b.X+inset < a.X+a.Width-inset &&
		a.Y+inset < b.Y+b.Height-inset && b.Y+inset < a.Y+a.Height-inset
}

func (r *room) free(box scene.Rect) bool {
	for _, t := range r.taken {
		if overlaps(box, t) {
			return false
		}
	}
	return true
}

// labelSteps are the places tried after the middle and Mermaid's, as fractions of the route.
var labelSteps = []float64{0.45, 0.55, 0.4, 0.6, 0.35, 0.65, 0.3, 0.7, 0.25, 0.75, 0.2, 0.8}

// place returns the arc length along pts where a w×h label goes, and takes its box.
func (r *room) place(pts []scene.Point, mermaidAt *scene.Point, w, h float64) float64 {
	s := arcLengths(pts)
	total := s[len(s)-1]
	tries := []float64{total / 2}
	if mermaidAt != nil {
		tries = append(tries, nearest(pts, s, *mermaidAt))
	}
	for _, f := range labelSteps {
		tries = append(tries, f*total)
	}
	boxAt := func(at float64) scene.Rect {
		c := pointAt(pts, s, at)
		return scene.Rect{X: c.X - w/2, Y: c.Y - h/2, Width: w, Height: h}
	}
	best := tries[0]
	if len(tries) > 1 && mermaidAt != nil {
		best = tries[1] // nothing is free: Mermaid's own spot is the least bad
	}
	for _, at := range tries {
		if r.free(boxAt(at)) {
			best = at
			break
		}
	}
	r.taken = append(r.taken, boxAt(best))
	return best
}

// widenSelfMessage moves the far side of a sequence diagram's message to its own lifeline
// (a loop out and back to the same x) far enough right that its label, centred there, clears
// the lifeline and the activation box on it, as Mermaid's text above the loop does.
func widenSelfMessage(pts []scene.Point, labelW float64) []scene.Point {
	n := len(pts)
	if n < 3 || math.Abs(pts[0].X-pts[n-1].X) > 1 {
		return pts
	}
	x0 := math.Max(pts[0].X, pts[n-1].X)
	far := x0
	for _, p := range pts {
		far = math.Max(far, p.X)
	}
	need := x0 + labelW/2 + 8
	if far >= need || far == x0 {
		return pts
	}
	out := append([]scene.Point{}, pts...)
	for i := 1; i < n-1; i++ {
		out[i].X = x0 + (out[i].X-x0)*(need-x0)/(far-x0)
	}
	return out
}
