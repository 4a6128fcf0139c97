package measure

import (
	"slices"
	"strings"

	"github.com/excalibot/excalibot/scene"
)

// group is a frame or a group box (scene.IsGroupBox) with what it holds by membership, not by
// where things happen to lie: the figures below compare the two.
type group struct {
	el *scene.Element
	// in says which elements are members, directly or through a box inside it.
	in func(e *scene.Element) bool
}

// readGroups finds the frames and boxes of a scene. A box's members share its Excalidraw group;
// a frame's members carry its id as their frameId, or sit in a box that does.
func readGroups(els []*scene.Element, byID map[string]*scene.Element) []group {
	var out []group
	for _, e := range els {
		switch {
		case e.Type == scene.Frame:
			id := e.ID
			out = append(out, group{el: e, in: func(m *scene.Element) bool {
				if m.FrameID == id {
					return true
				}
				return slices.ContainsFunc(boxesOf(m, byID), func(b *scene.Element) bool { return b.FrameID == id })
			}})
		case scene.IsGroupBox(e):
			g, id := scene.BoxGroup(e.ID), e.ID
			out = append(out, group{el: e, in: func(m *scene.Element) bool { return m.ID != id && m.InGroup(g) }})
		}
	}
	return out
}

// boxesOf returns the boxes e sits in.
func boxesOf(e *scene.Element, byID map[string]*scene.Element) []*scene.Element {
	var out []*scene.Element
	for _, g := range e.GroupIDs {
		id, ok := strings.CutPrefix(g, scene.BoxGroupPrefix)
		if !ok {
			continue
		}
		if b := byID[id]; b != nil && b != e && scene.IsGroupBox(b) {
			out = append(out, b)
		}
	}
	return out
}

// frameOverlaps counts pairs of groups whose boxes overlap where neither holds the other: one
// group inside another must lie wholly inside it, two others must not meet at all.
func frameOverlaps(gs []group) int {
	n := 0
	for i, a := range gs {
		for _, b := range gs[i+1:] {
			ra, rb := a.el.Bounds(), b.el.Bounds()
			if overlapArea(ra, rb) <= 1 {
				continue
			}
			if a.in(b.el) && contains(ra, rb) || b.in(a.el) && contains(rb, ra) {
				continue
			}
			n++
		}
	}
	return n
}

// intruders counts the nodes that lie (in part) inside the box of a group they do not belong to.
func intruders(gs []group, nodes []*scene.Element) int {
	n := 0
	for _, nd := range nodes {
		if slices.ContainsFunc(gs, func(g group) bool {
			return !g.in(nd) && g.el != nd && overlapArea(inset(nd.Bounds(), 1), g.el.Bounds()) > 0
		}) {
			n++
		}
	}
	return n
}

// borderCrossings counts how often each drawn path crosses a group's border, and how many of
// those membership does not ask for: an edge crosses the border of each group that holds one of
// its ends and not the other once, and no other border. An end that is no node counts as in the
// groups it lies in.
func borderCrossings(gs []group, paths []drawn) (all, needless int) {
	for _, p := range paths {
		if len(p.pts) < 2 {
			continue
		}
		for _, g := range gs {
			r := g.el.Bounds()
			c := 0
			inside := r.Contains(p.pts[0])
			for _, q := range p.pts[1:] {
				if in := r.Contains(q); in != inside {
					c++
					inside = in
				}
			}
			holds := func(end *scene.Element, at scene.Point) bool {
				if end == nil {
					return r.Contains(at)
				}
				return g.in(end)
			}
			want := 0
			if holds(p.from, p.pts[0]) != holds(p.to, p.pts[len(p.pts)-1]) {
				want = 1
			}
			all += c
			needless += max(0, c-want)
		}
	}
	return all, needless
}

// boxTitles are the titles of group boxes: the free texts whose innermost group is a box's own.
func boxTitles(texts []*scene.Element) []*scene.Element {
	var out []*scene.Element
	for _, t := range texts {
		if t.ContainerID == "" && len(t.GroupIDs) > 0 && strings.HasPrefix(t.GroupIDs[0], scene.BoxGroupPrefix) {
			out = append(out, t)
		}
	}
	return out
}

// overTitles counts the pairs of a title and an arrow whose drawn path crosses it or whose label
// covers part of it.
func overTitles(titles []*scene.Element, paths []drawn, texts []*scene.Element, byID map[string]*scene.Element) int {
	n := 0
	for _, t := range titles {
		box := inset(t.Bounds(), 1)
		for _, p := range paths {
			for i := 0; i+1 < len(p.pts); i++ {
				if segmentInRect(box, p.pts[i], p.pts[i+1]) {
					n++
					break
				}
			}
		}
		for _, l := range texts {
			if c := byID[l.ContainerID]; c != nil && c.Type == scene.Arrow && box.Intersects(inset(l.Bounds(), 1)) {
				n++
			}
		}
	}
	return n
}

// segmentInRect reports whether the segment a-b passes through the rectangle r.
func segmentInRect(r scene.Rect, a, b scene.Point) bool {
	box := scene.NewElement(scene.Rectangle)
	box.X, box.Y, box.Width, box.Height, box.Roundness = r.X, r.Y, r.Width, r.Height, nil
	return scene.SegmentIntersects(box, a, b)
}

// labelsOnBorders counts the arrow labels whose box is neither inside a group's box nor clear of
// it, for any group.
func labelsOnBorders(gs []group, texts []*scene.Element, byID map[string]*scene.Element) int {
	n := 0
	for _, l := range texts {
		if c := byID[l.ContainerID]; c == nil || c.Type != scene.Arrow {
			continue
		}
		box := inset(l.Bounds(), 1)
		for _, g := range gs {
			if gb := g.el.Bounds(); box.Intersects(gb) && !contains(gb, box) {
				n++
				break
			}
		}
	}
	return n
}
