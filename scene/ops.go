package scene

import (
	"fmt"
	"slices"
)

// LabelID is the id SetLabel gives a new label of the element with the given id (suffixed -2, -3,
// ... when taken).
func LabelID(containerID string) string { return containerID + "-label" }

// TextStyle is the style of a label; zero fields mean "keep" (or the default for a new label).
type TextStyle struct {
	FontSize      float64
	FontFamily    int
	StrokeColor   string
	TextAlign     string // left | center | right
	VerticalAlign string // top | middle | bottom
}

func (st TextStyle) validate() error {
	if !finite(st.FontSize) || st.FontSize < 0 {
		return fmt.Errorf("%w: fontSize must be positive (got %g)", ErrInvalid, st.FontSize)
	}
	switch st.TextAlign {
	case "", "left", "center", "right":
	default:
		return fmt.Errorf("%w: textAlign %q: want left, center or right", ErrInvalid, st.TextAlign)
	}
	switch st.VerticalAlign {
	case "", "top", "middle", "bottom":
	default:
		return fmt.Errorf("%w: verticalAlign %q: want top, middle or bottom", ErrInvalid, st.VerticalAlign)
	}
	return nil
}

func (st TextStyle) apply(t *Element) {
	if st.FontSize > 0 {
		t.FontSize = st.FontSize
	}
	if st.FontFamily > 0 {
		t.FontFamily = st.FontFamily
		t.LineHeight = lineHeightOf(st.FontFamily)
	}
	if st.StrokeColor != "" {
		t.StrokeColor = st.StrokeColor
	}
	if st.TextAlign != "" {
		t.TextAlign = st.TextAlign
	}
	if st.VerticalAlign != "" {
		t.VerticalAlign = st.VerticalAlign
	}
}

// SetLabel sets the label of a shape (rectangle, ellipse, diamond) or arrow: a bound text element
// with containerId = id, listed in the container's boundElements, wrapped to the container's inner
// width, centred, and the container grown to fit it. An empty text removes the label. A new label
// gets Excalifont 20 px, centred, in the container's stroke colour; an existing one keeps its style.
// The optional style (at most one) overrides fields of either. It returns the label's id ("" when
// removed). The label can also be restyled later with Update on its id.
func (s *Scene) SetLabel(id, text string, style ...TextStyle) (string, error) {
	var st TextStyle
	if len(style) > 1 {
		return "", fmt.Errorf("element %q: %w: SetLabel takes at most one TextStyle", id, ErrInvalid)
	}
	if len(style) == 1 {
		st = style[0]
		if err := st.validate(); err != nil {
			return "", fmt.Errorf("element %q: label: %w", id, err)
		}
	}
	var lid string
	err := s.atomically(func(w *Scene) error {
		var err error
		lid, err = w.setLabel(id, text, st)
		return err
	})
	return lid, err
}

// arrowLabelText is the text an arrow c's label t gets for text: a path wider than the arrow's
// label wraps at (70 % of the arrow's width, 11 × the font size at least) is broken after
// slashes, written into the text so Excalidraw keeps the breaks (breakAfterSlashes); a label on
// a long arrow stays on one line. Other containers' labels are as given.
func arrowLabelText(c *Element, t *Element, text string) string {
	if c.Type != Arrow {
		return text
	}
	size := t.FontSize
	if size <= 0 {
		size = DefaultFontSize
	}
	_, _, maxW, _ := containerInner(c, size)
	return breakAfterSlashes(t.FontFamily, size, text, maxW)
}

func (s *Scene) setLabel(id, text string, st TextStyle) (string, error) {
	c, err := s.mustGet(id)
	if err != nil {
		return "", err
	}
	if !c.Type.IsShape() && c.Type != Arrow {
		return "", fmt.Errorf("element %q: %w: a %s cannot have a label (rectangles, ellipses, diamonds and arrows can)", id, ErrInvalid, c.Type)
	}
	if c.Locked {
		return "", s.lockedError(c)
	}
	lid := c.Label()
	if text == "" {
		if lid != "" {
			s.deleteSet(map[string]bool{lid: true})
		}
		return "", nil
	}
	if t := s.get(lid); t != nil {
		nt := s.edit(t)
		st.apply(nt)
		text = arrowLabelText(c, nt, text)
		nt.OriginalText = text
		nt.Text = text
		s.touch(nt)
		s.put(nt)
		s.layoutLabel(id)
		return lid, nil
	}
	t := NewElement(Text)
	t.ID = s.freeID(LabelID(id))
	t.StrokeColor = c.StrokeColor
	if t.StrokeColor == "" || t.StrokeColor == "transparent" {
		t.StrokeColor = DefaultStrokeColor
	}
	t.TextAlign, t.VerticalAlign = "center", "middle"
	t.ContainerID = id
	st.apply(&t)
	text = arrowLabelText(c, &t, text)
	t.Text, t.OriginalText = text, text
	t.GroupIDs = slices.Clone(c.GroupIDs)
	t.FrameID = c.FrameID
	t.Seed = s.randInt()
	s.touch(&t)
	// Excalidraw keeps a label right above its container in z-order.
	s.insert(s.pos.m[id]+1, &t)
	nc := s.edit(s.get(id))
	addBound(nc, BoundElement{ID: t.ID, Type: Text})
	s.touch(nc)
	s.put(nc)
	s.layoutLabel(id)
	return t.ID, nil
}

// Delete removes the elements with the given ids and returns every id it removed, in z-order.
//
// Deleting keeps no dangling reference:
//   - a shape's or arrow's label is deleted with it;
//   - arrows bound to a deleted element are deleted too (with their labels): an arrow whose end
//     lost its shape would float, which is what the diagram's reader would call broken;
//   - a deleted arrow is removed from its targets' boundElements;
//   - a deleted label is removed from its container's boundElements;
//   - a deleted frame's children stay, with frameId cleared.
//
// Nothing is removed if any id is unknown or any element to remove is locked. Elements are removed
// outright, not left as isDeleted tombstones: the scene is ours, not a collaboration session.
func (s *Scene) Delete(ids ...string) ([]string, error) {
	var removed []string
	err := s.atomically(func(w *Scene) error {
		set := map[string]bool{}
		for _, id := range ids {
			if _, err := w.mustGetUnlocked(id); err != nil {
				return err
			}
			set[id] = true
		}
		w.expandDelete(set)
		for id := range set {
			if e := w.get(id); e != nil && w.lockedFor(e) {
				return fmt.Errorf("deleting would remove %q, bound to what is deleted: %w", id, w.lockedError(e))
			}
		}
		removed = w.deleteSet(set)
		return nil
	})
	return removed, err
}

// expandDelete adds to set what goes with it: labels and bound arrows (and their labels).
func (s *Scene) expandDelete(set map[string]bool) {
	for changed := true; changed; {
		changed = false
		for id := range set {
			e := s.get(id)
			if e == nil {
				continue
			}
			for _, b := range e.BoundElements {
				if !set[b.ID] && s.get(b.ID) != nil {
					set[b.ID] = true
					changed = true
				}
			}
		}
	}
}

// deleteSet removes exactly the elements in set and cleans references to them in the others.
func (s *Scene) deleteSet(set map[string]bool) []string {
	var removed []string
	for _, e := range s.elems {
		if set[e.ID] {
			removed = append(removed, e.ID)
		}
	}
	for i, e := range s.elems {
		if set[e.ID] {
			continue
		}
		var c *Element
		edit := func() *Element {
			if c == nil {
				c = s.edit(e)
			}
			return c
		}
		for _, b := range e.BoundElements {
			if set[b.ID] {
				dropBound(edit(), b.ID)
			}
		}
		if set[e.ContainerID] {
			// Only reachable for a label whose container is deleted: labels go with containers
			// (expandDelete), so this is a safety net.
			edit().ContainerID = ""
		}
		if set[e.FrameID] {
			edit().FrameID = ""
		}
		if e.StartBinding != nil && set[e.StartBinding.ElementID] {
			edit().StartBinding = nil
		}
		if e.EndBinding != nil && set[e.EndBinding.ElementID] {
			edit().EndBinding = nil
		}
		if c != nil {
			s.touch(c)
			s.elems[i] = c
		}
	}
	s.ownPos()
	kept := s.elems[:0:0]
	for _, e := range s.elems {
		if !set[e.ID] {
			kept = append(kept, e)
		} else {
			delete(s.pos.m, e.ID)
		}
	}
	s.elems = kept
	s.reindexPositions(0)
	return removed
}

// Lock locks the elements (and their labels): they refuse every change until unlocked. Bindings
// stay live: a locked arrow still follows a shape that moves, and a locked shape still lists arrows
// newly bound to it, as in Excalidraw.
func (s *Scene) Lock(ids ...string) error { return s.setLocked(ids, true) }

// Unlock unlocks the elements (and their labels).
func (s *Scene) Unlock(ids ...string) error { return s.setLocked(ids, false) }

func (s *Scene) setLocked(ids []string, locked bool) error {
	return s.atomically(func(w *Scene) error {
		for _, id := range ids {
			e, err := w.mustGet(id)
			if err != nil {
				return err
			}
			targets := []string{id}
			if l := e.Label(); l != "" {
				targets = append(targets, l)
			}
			for _, t := range targets {
				el := w.get(t)
				if el == nil || el.Locked == locked {
					continue
				}
				c := w.edit(el)
				c.Locked = locked
				w.touch(c)
				w.put(c)
			}
		}
		return nil
	})
}

// MoveBy moves the elements by (dx, dy): their labels move with them, frames carry their children,
// and arrows bound to them follow. Groups are not expanded: pass every member (see GroupMembers).
// Nothing moves if any element is unknown or locked.
func (s *Scene) MoveBy(ids []string, dx, dy float64) error {
	if !finite(dx, dy) {
		return fmt.Errorf("move by (%g, %g): %w: offsets must be finite", dx, dy, ErrInvalid)
	}
	return s.atomically(func(w *Scene) error {
		seen := map[string]bool{}
		for _, id := range ids {
			e, err := w.mustGetUnlocked(id)
			if err != nil {
				return err
			}
			if e.ContainerID != "" {
				continue // labels follow their containers
			}
			if seen[id] {
				continue
			}
			seen[id] = true
			w.shift(id, dx, dy)
			if e.Type == Frame {
				for _, c := range w.frameChildren(id) {
					if !seen[c] {
						seen[c] = true
						w.shift(c, dx, dy)
					}
				}
			}
		}
		return nil
	})
}
