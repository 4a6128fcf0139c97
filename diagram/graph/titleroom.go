package graph

import (
	"fmt"
	"math"

	"github.com/excalibot/excalibot/scene"
)

// titleStep is how far apart the places clearTitles tries for a title are (px).
const titleStep = 8.0

// clearTitles slides the title of each box of boxes along the box's top strip to where no arrow
// is drawn across it and no arrow label covers it: dot routes an arrow into a group wherever its
// members are, the title's corner included, and a struck-through title reads badly. The place
// nearest the box's left corner that crosses the fewest wins; a title crossed nowhere stays.
// Frames are left alone: Excalidraw draws a frame's name above its left corner.
func clearTitles(w *scene.Scene, boxes []string) error {
	var paths [][]scene.Point
	var labels []scene.Rect
	w.Each(func(e *scene.Element) bool {
		if e.Type == scene.Arrow {
			paths = append(paths, e.DrawnPath())
			if l, ok := w.Get(e.Label()); ok && e.Label() != "" {
				labels = append(labels, l.Bounds())
			}
		}
		return true
	})
	for _, id := range boxes {
		b, ok := w.Get(id)
		if !ok || b.Type == scene.Frame {
			continue
		}
		t, ok := w.Get(TitleOf(w, id))
		if !ok {
			continue
		}
		// What crosses the title's strip, as spans along it: per arrow, the spans its drawn path
		// takes inside the strip; per label, its width.
		y0, y1 := t.Y-1, t.Y+t.Height+1
		var spans [][][2]float64
		for _, p := range paths {
			var s [][2]float64
			for i := 0; i+1 < len(p); i++ {
				if lo, hi, ok := spanInBand(p[i], p[i+1], y0, y1); ok {
					s = append(s, [2]float64{lo, hi})
				}
			}
			if len(s) > 0 {
				spans = append(spans, s)
			}
		}
		for _, l := range labels {
			if l.Y < y1 && l.Y+l.Height > y0 {
				spans = append(spans, [][2]float64{{l.X, l.X + l.Width}})
			}
		}
		hits := func(x float64) int {
			n := 0
			for _, s := range spans {
				for _, iv := range s {
					if iv[0] < x+t.Width+1 && iv[1] > x-1 {
						n++
						break
					}
				}
			}
			return n
		}
		least, bestX := hits(t.X), t.X
		inset := t.X - b.X // the title keeps as far from the right side as from the left
		for x := t.X + titleStep; least > 0 && x+t.Width <= b.X+b.Width-inset; x += titleStep {
			if n := hits(x); n < least {
				least, bestX = n, x
			}
		}
		if bestX != t.X {
			if err := w.MoveBy([]string{t.ID}, bestX-t.X, 0); err != nil {
				return fmt.Errorf("move the title of %q off the arrows: %w", id, err)
			}
		}
	}
	return nil
}

// spanInBand is the span along x that the segment a-b takes between y0 and y1, if any.
func spanInBand(a, b scene.Point, y0, y1 float64) (lo, hi float64, ok bool) {
	if math.Max(a.Y, b.Y) < y0 || math.Min(a.Y, b.Y) > y1 {
		return 0, 0, false
	}
	at := func(y float64) float64 { // x where the segment's line meets y, clamped to the segment
		if a.Y == b.Y {
			return a.X
		}
		f := math.Max(0, math.Min(1, (y-a.Y)/(b.Y-a.Y)))
		return a.X + f*(b.X-a.X)
	}
	xa, xb := a.X, b.X
	if a.Y < y0 || a.Y > y1 {
		xa = at(math.Max(y0, math.Min(y1, a.Y)))
	}
	if b.Y < y0 || b.Y > y1 {
		xb = at(math.Max(y0, math.Min(y1, b.Y)))
	}
	return math.Min(xa, xb), math.Max(xa, xb), true
}
