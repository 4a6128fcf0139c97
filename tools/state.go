package tools

import (
	"context"
	"fmt"
	"sort"
	"strings"

	"github.com/excalibot/excalibot/internal/plural"
	"github.com/excalibot/excalibot/scene"
)

// Snapshots are clones of the scene (cheap: elements are shared copy-on-write). They live in the
// Set, so they last as long as the agent run that made them, and clear_canvas keeps them.

const beforeClear = "before-clear"

func (s *Set) snapshotName(o *object) (string, bool) {
	name, ok := o.str("name")
	if !ok && !o.has("name") {
		o.p.add("name", "missing; give the snapshot a name, e.g. \"v1\"")
	}
	o.finish("name")
	if ok && (strings.TrimSpace(name) == "" || len(name) > 60) {
		o.p.add("name", "use a short non-empty name (up to 60 characters), e.g. \"v1\"")
	}
	return name, o.p.ok()
}

func (s *Set) snapshotScene(_ context.Context, sc *scene.Scene, o *object) (string, error) {
	name, ok := s.snapshotName(o)
	if !ok {
		return "", o.p
	}
	s.saveSnapshot(name, sc)
	return fmt.Sprintf("saved snapshot %q (%s). Snapshots: %s", name, plural.Count(sc.Len(), "element", ""), strings.Join(s.order, ", ")), nil
}

// saveSnapshot stores a clone under name, replacing an older one of the same name and evicting the
// oldest beyond MaxSnapshots.
func (s *Set) saveSnapshot(name string, sc *scene.Scene) {
	if _, exists := s.snaps[name]; exists {
		for i, n := range s.order {
			if n == name {
				s.order = append(s.order[:i], s.order[i+1:]...)
				break
			}
		}
	}
	s.snaps[name] = sc.Clone()
	s.order = append(s.order, name)
	for len(s.order) > s.lim.MaxSnapshots {
		delete(s.snaps, s.order[0])
		s.order = s.order[1:]
	}
}

func (s *Set) restoreSnapshot(_ context.Context, _ *scene.Scene, o *object) (string, error) {
	name, ok := s.snapshotName(o)
	if !ok {
		return "", o.p
	}
	snap, found := s.snaps[name]
	if !found {
		if len(s.order) == 0 {
			return "", refuse("name: no snapshot %q; none saved yet (use snapshot_scene first)", name)
		}
		names := append([]string(nil), s.order...)
		sort.Strings(names)
		return "", refuse("name: no snapshot %q%s; saved: %s", name, didYouMean(name, names), strings.Join(names, ", "))
	}
	// The snapshot stays available: restore a clone so later edits do not reach it.
	s.sc = snap.Clone()
	return fmt.Sprintf("restored snapshot %q: the canvas has %s again.", name, plural.Count(s.sc.Len(), "element", "")), nil
}

func (s *Set) clearCanvas(_ context.Context, sc *scene.Scene, _ *object) (string, error) {
	n := sc.Len()
	if n == 0 {
		return "the canvas was already empty.", nil
	}
	s.saveSnapshot(beforeClear, sc)
	c := sc.Clone()
	c.Clear()
	s.sc = c
	return fmt.Sprintf("cleared %s. To undo: restore_snapshot {\"name\":%q}.", plural.Count(n, "element", ""), beforeClear), nil
}

func (s *Set) setViewport(_ context.Context, w *scene.Scene, o *object) (string, error) {
	ids, hasIDs := o.strList("ids")
	x, hasX := s.lim.coord(o, "x")
	y, hasY := s.lim.coord(o, "y")
	wd, hasW := s.lim.size(o, "width")
	ht, hasH := s.lim.size(o, "height")
	o.finish("ids", "x", "y", "width", "height")
	if !o.p.ok() {
		return "", o.p
	}
	area := hasX || hasY || hasW || hasH
	switch {
	case hasIDs && area:
		return "", refuse("give either ids or an area (x, y, width, height), not both")
	case hasIDs:
		if len(ids) == 0 {
			return "", refuse("ids: empty list; give ids like [\"r1\",\"r2\"], or {} for the whole scene")
		}
		if err := unknownIDs(w, "ids", ids); err != nil {
			return "", err
		}
		var box scene.Rect
		for i, id := range ids {
			e, _ := w.Get(id)
			b := scene.BoundingBox(e)
			if i == 0 {
				box = b
			} else {
				box = box.Union(b)
			}
		}
		// A margin so the framed shapes do not touch the picture's edge.
		const margin = 40
		box = scene.Rect{X: box.X - margin, Y: box.Y - margin, Width: box.Width + 2*margin, Height: box.Height + 2*margin}
		if err := w.SetViewport(box); err != nil {
			return "", refuse("%v", err)
		}
		return fmt.Sprintf("viewport fits %s: %s,%s %sx%s.", strings.Join(ids, ", "), num(box.X), num(box.Y), num(box.Width), num(box.Height)), nil
	case area:
		if !(hasX && hasY && hasW && hasH) {
			return "", refuse("an area needs all of x, y, width and height, e.g. {\"x\":0,\"y\":0,\"width\":800,\"height\":600}")
		}
		if err := w.SetViewport(scene.Rect{X: x, Y: y, Width: wd, Height: ht}); err != nil {
			return "", refuse("%v", err)
		}
		return fmt.Sprintf("viewport set to %s,%s %sx%s.", num(x), num(y), num(wd), num(ht)), nil
	}
	w.ClearViewport()
	return "viewport reset: the picture shows the whole scene.", nil
}
