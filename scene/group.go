package scene

import (
	"fmt"
	"slices"
)

// Group puts the elements in a new group and returns its id: the group id is appended to each
// element's groupIds (outermost last, as Excalidraw orders them), and to their labels'. An empty
// groupID gets a random one. Grouping elements that already share groups nests the new group
// outside them. Nothing changes if an element is unknown or locked, or fewer than two are given.
func (s *Scene) Group(groupID string, ids ...string) (string, error) {
	if len(ids) < 2 {
		return "", fmt.Errorf("group: %w: need at least 2 elements, got %d", ErrInvalid, len(ids))
	}
	err := s.atomically(func(w *Scene) error {
		if groupID == "" {
			groupID = w.newID()
		}
		for _, id := range ids {
			e, err := w.mustGetUnlocked(id)
			if err != nil {
				return err
			}
			if e.ContainerID != "" {
				return fmt.Errorf("element %q: %w: it is the label of %q; group the container", id, ErrInvalid, e.ContainerID)
			}
			if e.InGroup(groupID) {
				return fmt.Errorf("element %q: %w: already in group %q", id, ErrInvalid, groupID)
			}
		}
		for _, id := range ids {
			w.editWithLabel(id, func(c *Element) { c.GroupIDs = append(c.GroupIDs, groupID) })
		}
		return nil
	})
	if err != nil {
		return "", err
	}
	return groupID, nil
}

// Ungroup removes the group from every element in it (nested groups inside it are kept) and returns
// the ids of the elements that were in it. Locked members refuse.
func (s *Scene) Ungroup(groupID string) ([]string, error) {
	members := s.GroupMembers(groupID)
	if len(members) == 0 {
		return nil, fmt.Errorf("group %q: %w", groupID, ErrNotFound)
	}
	err := s.atomically(func(w *Scene) error {
		for _, id := range members {
			if _, err := w.mustGetUnlocked(id); err != nil {
				return err
			}
		}
		for _, id := range members {
			w.editWithLabel(id, func(c *Element) {
				c.GroupIDs = slices.DeleteFunc(c.GroupIDs, func(g string) bool { return g == groupID })
			})
		}
		return nil
	})
	return members, err
}

// GroupMembers returns the ids of live elements in the group (labels excluded), in z-order.
func (s *Scene) GroupMembers(groupID string) []string {
	var out []string
	for _, e := range s.elems {
		if !e.IsDeleted && e.ContainerID == "" && e.InGroup(groupID) {
			out = append(out, e.ID)
		}
	}
	return out
}

// Groups returns every group id in use, outermost-last order per element, each once, in order of
// first appearance.
func (s *Scene) Groups() []string {
	var out []string
	seen := map[string]bool{}
	for _, e := range s.elems {
		if e.IsDeleted {
			continue
		}
		for _, g := range e.GroupIDs {
			if !seen[g] {
				seen[g] = true
				out = append(out, g)
			}
		}
	}
	return out
}

// editWithLabel applies f to an element and its label, bumping versions.
func (s *Scene) editWithLabel(id string, f func(*Element)) {
	e := s.get(id)
	targets := []string{id}
	if l := e.Label(); l != "" {
		targets = append(targets, l)
	}
	for _, t := range targets {
		c := s.edit(s.get(t))
		f(c)
		s.touch(c)
		s.put(c)
	}
}

// SetFrame makes the elements children of the frame (frameId), with their labels; an empty frameID
// takes them out of their frames. Frames cannot contain frames.
func (s *Scene) SetFrame(frameID string, ids ...string) error {
	return s.atomically(func(w *Scene) error {
		if frameID != "" {
			f, err := w.mustGet(frameID)
			if err != nil {
				return err
			}
			if f.Type != Frame {
				return fmt.Errorf("element %q: %w: it is a %s, not a frame", frameID, ErrInvalid, f.Type)
			}
		}
		for _, id := range ids {
			e, err := w.mustGetUnlocked(id)
			if err != nil {
				return err
			}
			if e.Type == Frame && frameID != "" {
				return fmt.Errorf("element %q: %w: frames cannot be nested", id, ErrInvalid)
			}
			if e.ContainerID != "" {
				return fmt.Errorf("element %q: %w: it is the label of %q; frame the container", id, ErrInvalid, e.ContainerID)
			}
		}
		for _, id := range ids {
			w.editWithLabel(id, func(c *Element) { c.FrameID = frameID })
		}
		return nil
	})
}

// FrameChildren returns the ids of the frame's children (labels excluded), in z-order.
func (s *Scene) FrameChildren(frameID string) []string { return s.frameChildren(frameID) }

// BringToFront moves the elements (with their labels) to the top of the z-order, keeping their
// relative order.
func (s *Scene) BringToFront(ids ...string) error { return s.restack(ids, true) }

// SendToBack moves the elements (with their labels) to the bottom of the z-order, keeping their
// relative order.
func (s *Scene) SendToBack(ids ...string) error { return s.restack(ids, false) }

func (s *Scene) restack(ids []string, front bool) error {
	return s.atomically(func(w *Scene) error {
		move := map[string]bool{}
		for _, id := range ids {
			e, err := w.mustGetUnlocked(id)
			if err != nil {
				return err
			}
			move[id] = true
			if l := e.Label(); l != "" {
				move[l] = true
			}
		}
		var moved, rest []*Element
		for _, e := range w.elems {
			if move[e.ID] {
				moved = append(moved, e)
			} else {
				rest = append(rest, e)
			}
		}
		if front {
			w.elems = append(rest, moved...)
		} else {
			w.elems = append(moved, rest...)
		}
		w.reindexPositions(0)
		// New keys for the moved run only, between its new neighbours.
		start := len(rest)
		if !front {
			start = 0
		}
		lo, hi := "", ""
		if start > 0 {
			lo = w.elems[start-1].Index
		}
		if end := start + len(moved); end < len(w.elems) {
			hi = w.elems[end].Index
		}
		keys, err := keysBetween(lo, hi, len(moved))
		if err != nil {
			return fmt.Errorf("restack: %w", err)
		}
		for i := range moved {
			c := w.edit(w.elems[start+i])
			c.Index = keys[i]
			w.touch(c)
			w.elems[start+i] = c
		}
		return nil
	})
}
