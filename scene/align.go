package scene

import (
	"fmt"
	"math"
	"slices"
)

// Alignment is an edge or centre line to align elements on.
type Alignment string

// Alignments, as Excalidraw's align actions name them.
const (
	AlignLeft   Alignment = "left"
	AlignCenter Alignment = "center" // vertical centre line
	AlignRight  Alignment = "right"
	AlignTop    Alignment = "top"
	AlignMiddle Alignment = "middle" // horizontal centre line
	AlignBottom Alignment = "bottom"
)

// Direction is the axis to distribute elements along.
type Direction string

// Directions.
const (
	Horizontal Direction = "horizontal"
	Vertical   Direction = "vertical"
)

// unit is what align and distribute move as one piece: a group (every member of the outermost group
// an element belongs to, among those selected) or a single element, with its box.
type unit struct {
	ids []string
	box Rect
}

// units collects the selected elements into movable pieces: elements sharing their outermost group
// move together, like Excalidraw's getSelectedElementsByGroup. Labels are skipped (they follow).
func (s *Scene) units(ids []string) ([]unit, error) {
	var out []unit
	byGroup := map[string]int{}
	seen := map[string]bool{}
	for _, id := range ids {
		e, err := s.mustGetUnlocked(id)
		if err != nil {
			return nil, err
		}
		if e.ContainerID != "" || seen[id] {
			continue
		}
		seen[id] = true
		box := BoundingBox(*e)
		if n := len(e.GroupIDs); n > 0 {
			g := e.GroupIDs[n-1]
			if i, ok := byGroup[g]; ok {
				out[i].ids = append(out[i].ids, id)
				out[i].box = out[i].box.Union(box)
				continue
			}
			byGroup[g] = len(out)
		}
		out = append(out, unit{ids: []string{id}, box: box})
	}
	return out, nil
}

// moveUnit moves every element of u by (dx, dy) with labels, frame children and arrows.
func (s *Scene) moveUnit(u unit, dx, dy float64) {
	for _, id := range u.ids {
		s.shift(id, dx, dy)
		if e := s.get(id); e != nil && e.Type == Frame {
			for _, c := range s.frameChildren(id) {
				if !slices.Contains(u.ids, c) {
					s.shift(c, dx, dy)
				}
			}
		}
	}
}

// Align lines the elements up on the selection's left, centre, right, top, middle or bottom
// (rotated boxes as drawn). Grouped elements move as one; labels and bound arrows follow.
func (s *Scene) Align(ids []string, a Alignment) error {
	switch a {
	case AlignLeft, AlignCenter, AlignRight, AlignTop, AlignMiddle, AlignBottom:
	default:
		return fmt.Errorf("align %q: %w: want left, center, right, top, middle or bottom", a, ErrInvalid)
	}
	return s.atomically(func(w *Scene) error {
		us, err := w.units(ids)
		if err != nil {
			return err
		}
		if len(us) < 2 {
			return fmt.Errorf("align: %w: need at least 2 elements (or groups), got %d", ErrInvalid, len(us))
		}
		sel := us[0].box
		for _, u := range us[1:] {
			sel = sel.Union(u.box)
		}
		for _, u := range us {
			var dx, dy float64
			b := u.box
			switch a {
			case AlignLeft:
				dx = sel.X - b.X
			case AlignRight:
				dx = sel.X + sel.Width - (b.X + b.Width)
			case AlignCenter:
				dx = sel.X + sel.Width/2 - (b.X + b.Width/2)
			case AlignTop:
				dy = sel.Y - b.Y
			case AlignBottom:
				dy = sel.Y + sel.Height - (b.Y + b.Height)
			case AlignMiddle:
				dy = sel.Y + sel.Height/2 - (b.Y + b.Height/2)
			}
			w.moveUnit(u, dx, dy)
		}
		return nil
	})
}

// Distribute spaces the elements evenly along the direction within the selection's extent: the gaps
// between neighbouring boxes (ordered by their centres) become equal, as in Excalidraw's distribute
// action. Grouped
// elements move as one; labels and bound arrows follow.
func (s *Scene) Distribute(ids []string, d Direction) error {
	if d != Horizontal && d != Vertical {
		return fmt.Errorf("distribute %q: %w: want horizontal or vertical", d, ErrInvalid)
	}
	return s.atomically(func(w *Scene) error {
		us, err := w.units(ids)
		if err != nil {
			return err
		}
		if len(us) < 3 {
			return fmt.Errorf("distribute: %w: need at least 3 elements (or groups), got %d", ErrInvalid, len(us))
		}
		pos := func(r Rect) (start, size float64) {
			if d == Horizontal {
				return r.X, r.Width
			}
			return r.Y, r.Height
		}
		slices.SortStableFunc(us, func(a, b unit) int {
			ca, sa := pos(a.box)
			cb, sb := pos(b.box)
			return cmpFloat(ca+sa/2, cb+sb/2)
		})
		// As Excalidraw's distributeElements: the selection's extent stays, units are laid out in
		// order of their centres with equal gaps.
		first, last, total := math.Inf(1), math.Inf(-1), 0.0
		for _, u := range us {
			st, sz := pos(u.box)
			first, last = min(first, st), max(last, st+sz)
			total += sz
		}
		span := last - first
		gap := (span - total) / float64(len(us)-1)
		at := first
		for _, u := range us {
			st, sz := pos(u.box)
			delta := at - st
			if d == Horizontal {
				w.moveUnit(u, delta, 0)
			} else {
				w.moveUnit(u, 0, delta)
			}
			at += sz + gap
		}
		return nil
	})
}

func cmpFloat(a, b float64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}
