package graph

import (
	"errors"
	"fmt"
	"maps"
	"math"
	"slices"
	"sort"
	"strings"

	"github.com/excalibot/excalibot/diagram"
	"github.com/excalibot/excalibot/scene"
)

// Groups of a graph are drawn in one of two styles, as the caller asks:
//
//   - a frame: Excalidraw's own container, titled above its top-left corner. Frames cannot nest.
//   - a box: a light rectangle with its title inside at the top. The box, its title and its
//     members share an Excalidraw group "grp-<box id>", so they move together in the editor, and
//     groups nest the Excalidraw way (a member's groupIds list the innermost box first). A box may
//     sit in a frame or in another box.
//
// Like the rest of the graph, groups are read back from the scene on every call: a node's group is
// its innermost box, else its frame.

const (
	boxGroupPrefix = scene.BoxGroupPrefix
	groupMargin    = 20.0 // between a group's border and its members
	boxFill        = "#f8f9fa"
	boxInnerFill   = "#f1f3f5" // a box inside a box, a shade darker so the nesting shows
	boxStroke      = "#adb5bd"
)

// IsBox reports whether e is a group's box: a rectangle in the Excalidraw group named after it.
func IsBox(e *scene.Element) bool { return scene.IsGroupBox(e) }

// boxOf returns the innermost box e is in (not counting e itself when e is a box), or "".
func boxOf(w *scene.Scene, e *scene.Element) string {
	for _, g := range e.GroupIDs {
		id, ok := strings.CutPrefix(g, boxGroupPrefix)
		if !ok || id == e.ID {
			continue
		}
		if b, ok := w.Get(id); ok && IsBox(&b) {
			return id
		}
	}
	return ""
}

// groupOf is the group e belongs to: its innermost box, else its frame.
func groupOf(w *scene.Scene, e *scene.Element) string {
	if b := boxOf(w, e); b != "" {
		return b
	}
	return e.FrameID
}

// parentGroup is the group a group (frame or box) sits in, or "".
func parentGroup(w *scene.Scene, id string) string {
	e, ok := w.Get(id)
	if !ok || e.Type == scene.Frame {
		return ""
	}
	return groupOf(w, &e)
}

// TitleOf returns the id of a box's title: the free text directly in the box's group.
func TitleOf(w *scene.Scene, boxID string) string {
	found := ""
	w.Each(func(e *scene.Element) bool {
		if e.Type == scene.Text && e.ContainerID == "" && len(e.GroupIDs) > 0 && e.GroupIDs[0] == boxGroupPrefix+boxID {
			found = e.ID
			return false
		}
		return true
	})
	return found
}

// groupName is a group's title: a frame's name or a box's title text.
func groupName(w *scene.Scene, id string) string {
	e, ok := w.Get(id)
	if !ok {
		return ""
	}
	if e.Type == scene.Frame {
		return e.Name
	}
	if t, ok := w.Get(TitleOf(w, id)); ok {
		return t.OriginalText
	}
	return ""
}

// FindGroup finds a frame or box by id or by its title (case and spaces ignored).
func FindGroup(w *scene.Scene, ref string) string {
	if e, ok := w.Get(ref); ok && (e.Type == scene.Frame || IsBox(&e)) {
		return ref
	}
	want := strings.Join(strings.Fields(strings.ToLower(ref)), " ")
	found := ""
	w.Each(func(e *scene.Element) bool {
		if e.Type == scene.Frame || IsBox(e) {
			if strings.Join(strings.Fields(strings.ToLower(groupName(w, e.ID))), " ") == want {
				found = e.ID
				return false
			}
		}
		return true
	})
	return found
}

// frameAbove is the frame a group is in, itself included, or "".
func frameAbove(w *scene.Scene, id string) string {
	for g := id; g != ""; g = parentGroup(w, g) {
		if e, ok := w.Get(g); ok && e.Type == scene.Frame {
			return g
		}
	}
	return ""
}

// addBox adds a box and its title (1×1 until placed, see emptyGroup), not yet grouped.
func addBox(w *scene.Scene, id, title string, depth int) (string, error) {
	e := scene.NewElement(scene.Rectangle)
	e.ID, e.Width, e.Height = id, 1, 1
	e.BackgroundColor, e.StrokeColor, e.StrokeWidth = boxFill, boxStroke, 1
	if depth > 0 {
		e.BackgroundColor = boxInnerFill
	}
	if _, err := w.Add(e); err != nil {
		return "", err
	}
	t := scene.NewElement(scene.Text)
	t.ID = diagram.FreshID(id+"-title", "title", 64, w.Has)
	t.Text, t.OriginalText, t.FontSize, t.StrokeColor = title, title, 16, "#495057"
	if _, err := w.Add(t); err != nil {
		return "", err
	}
	return t.ID, nil
}

// assignBoxes puts each element of want into the box want[id] and that box's ancestors ("" takes
// it out of every box). Excalidraw lists a member's groups innermost first and the scene can only
// add a group as the outermost, so every box whose membership changes is ungrouped with its
// ancestors and grouped again innermost first. parents gives the parent box of boxes that are not
// grouped yet (new ones), titles their titles.
func assignBoxes(w *scene.Scene, want map[string]string, parents, titles map[string]string) error {
	parentOf := func(b string) string {
		if p, ok := parents[b]; ok {
			return p
		}
		if e, ok := w.Get(b); ok {
			if p := boxOf(w, &e); p != "" {
				return p
			}
		}
		return ""
	}
	affected := map[string]bool{}
	mark := func(b string) {
		for ; b != ""; b = parentOf(b) {
			affected[b] = true
		}
	}
	for id, b := range want {
		if e, ok := w.Get(id); ok {
			mark(boxOf(w, &e))
		}
		mark(b)
	}
	for b := range parents {
		mark(b)
	}
	depth := map[string]int{}
	for b := range affected {
		for p := parentOf(b); p != ""; p = parentOf(p) {
			depth[b]++
		}
	}
	members := map[string][]string{}
	for b := range affected {
		for _, m := range w.GroupMembers(boxGroupPrefix + b) {
			if _, moving := want[m]; !moving {
				members[b] = append(members[b], m)
			}
		}
		if _, isNew := parents[b]; isNew && len(members[b]) == 0 {
			members[b] = []string{b, titles[b]}
		}
	}
	ids := make([]string, 0, len(want))
	for id := range want {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	for _, id := range ids {
		for b := want[id]; b != ""; b = parentOf(b) {
			members[b] = append(members[b], id)
		}
	}
	// New boxes join their parents' groups with their titles.
	for b, p := range parents {
		for ; p != ""; p = parentOf(p) {
			if !slices.Contains(members[p], b) {
				members[p] = append(members[p], b, titles[b])
			}
		}
	}
	order := make([]string, 0, len(affected))
	for b := range affected {
		order = append(order, b)
	}
	sort.Slice(order, func(i, j int) bool {
		if depth[order[i]] != depth[order[j]] {
			return depth[order[i]] > depth[order[j]]
		}
		return order[i] < order[j]
	})
	for _, b := range order {
		if _, err := w.Ungroup(boxGroupPrefix + b); err != nil && !errors.Is(err, scene.ErrNotFound) {
			return fmt.Errorf("regroup box %q: %w", b, err)
		}
	}
	for _, b := range order {
		if _, err := w.Group(boxGroupPrefix+b, members[b]...); err != nil {
			return fmt.Errorf("group box %q: %w", b, err)
		}
	}
	return nil
}

// placeBox puts a box at r and its title in the box's top-left corner.
func placeBox(w *scene.Scene, id string, r scene.Rect) error {
	if err := w.Update(id, func(e *scene.Element) error {
		e.X, e.Y, e.Width, e.Height = r.X, r.Y, r.Width, r.Height
		return nil
	}); err != nil {
		return fmt.Errorf("place box %q: %w", id, err)
	}
	if t := TitleOf(w, id); t != "" {
		e, _ := w.Get(t)
		if err := w.MoveBy([]string{t}, r.X+12-e.X, r.Y+6-e.Y); err != nil {
			return fmt.Errorf("place the title of %q: %w", id, err)
		}
	}
	return nil
}

// Members are the nodes and boxes directly or indirectly in a group, without the group's own
// box and title.
func Members(w *scene.Scene, id string) []string {
	g, ok := w.Get(id)
	if !ok {
		return nil
	}
	if g.Type == scene.Frame {
		return w.FrameChildren(id)
	}
	title := TitleOf(w, id)
	var out []string
	for _, m := range w.GroupMembers(boxGroupPrefix + id) {
		if m != id && m != title {
			out = append(out, m)
		}
	}
	return out
}

// fitGroup grows a frame or box to hold its members with a margin (and a box its title), then its
// parent groups in turn; it never shrinks, so a group the human sized keeps its size. Members in
// skip (nodes not placed yet) do not count, nor do arrows, which follow their nodes; a placeholder
// with no member left to hold stays as it is.
func fitGroup(w *scene.Scene, id string, skip map[string]bool) error {
	for g := id; g != ""; g = parentGroup(w, g) {
		f, ok := w.Get(g)
		if !ok {
			return nil
		}
		// A box's title sits inside its top edge; a frame's name is drawn above the frame.
		top := groupMargin + FrameTitle
		if f.Type == scene.Frame {
			top = groupMargin
		}
		minX, minY, maxX, maxY := f.X, f.Y, f.X+f.Width, f.Y+f.Height
		if emptyGroup(f) {
			minX, minY, maxX, maxY = math.Inf(1), math.Inf(1), math.Inf(-1), math.Inf(-1)
		}
		for _, m := range Members(w, g) {
			c, ok := w.Get(m)
			if !ok || skip[m] || c.ContainerID != "" || c.Type.IsLinear() {
				continue
			}
			b := c.Bounds()
			minX, minY = math.Min(minX, b.X-groupMargin), math.Min(minY, b.Y-top)
			maxX, maxY = math.Max(maxX, b.X+b.Width+groupMargin), math.Max(maxY, b.Y+b.Height+groupMargin)
		}
		if math.IsInf(minX, 0) || minX == f.X && minY == f.Y && maxX == f.X+f.Width && maxY == f.Y+f.Height {
			continue
		}
		r := scene.Rect{X: minX, Y: minY, Width: maxX - minX, Height: maxY - minY}
		place := placeBox
		if f.Type == scene.Frame {
			place = placeFrame
		}
		if err := place(w, g, r); err != nil {
			return err
		}
	}
	return nil
}

// placeFrame gives a frame its geometry without dragging its children along.
func placeFrame(w *scene.Scene, id string, r scene.Rect) error {
	before := map[string]scene.Point{}
	for _, c := range w.FrameChildren(id) {
		if e, ok := w.Get(c); ok && !e.Type.IsLinear() {
			before[c] = scene.Point{X: e.X, Y: e.Y}
		}
	}
	if err := w.Update(id, func(e *scene.Element) error {
		e.X, e.Y, e.Width, e.Height = r.X, r.Y, r.Width, r.Height
		return nil
	}); err != nil {
		return fmt.Errorf("grow frame %q: %w", id, err)
	}
	for _, c := range slices.Sorted(maps.Keys(before)) {
		e, _ := w.Get(c)
		if p := before[c]; e.X != p.X || e.Y != p.Y {
			if err := w.MoveBy([]string{c}, p.X-e.X, p.Y-e.Y); err != nil {
				return fmt.Errorf("grow frame %q: %w", id, err)
			}
		}
	}
	return nil
}

// emptyGroup reports whether a frame or box is the 1×1 placeholder a group is created as, before
// its first node is placed: its box must not count when the group grows around that node.
func emptyGroup(f scene.Element) bool { return f.Width == 1 && f.Height == 1 }

// groupParents resolves the parents of new groups (a declared group, or one on the canvas, by id or
// title) and settles their styles: a group inside another is a box, since frames cannot nest. It
// returns every new group's parent ("" for none).
func groupParents(w *scene.Scene, groups []groupArgs, named map[string]string, p *Problems) map[string]string {
	parents := make(map[string]string, len(groups))
	for _, g := range groups {
		parents[g.id] = ""
	}
	for i := range groups {
		g := &groups[i]
		if g.parent == "" {
			continue
		}
		pid := named[g.parent]
		if pid == "" {
			pid = FindGroup(w, g.parent)
		}
		switch {
		case pid == "":
			p.add(g.path+".parent", "no group %q; give the id or title of a group in this call or on the canvas", g.parent)
			continue
		case pid == g.id:
			p.add(g.path+".parent", "a group cannot be inside itself")
			continue
		}
		parents[g.id] = pid
		g.style = "box"
	}
	for _, g := range groups { // a loop of parents would nest forever
		seen := map[string]bool{}
		for q := g.id; q != ""; q = parents[q] {
			if seen[q] {
				p.add(g.path+".parent", "groups %q and %q are inside each other", g.id, g.parent)
				break
			}
			seen[q] = true
			if _, isNew := parents[q]; !isNew {
				break
			}
		}
	}
	return parents
}

// frameIn is the frame a group is in, itself included, looking up new groups' parents in parents.
func frameIn(w *scene.Scene, id string, parents map[string]string) string {
	for g, n := id, 0; g != "" && n < 64; n++ {
		if e, ok := w.Get(g); ok && e.Type == scene.Frame {
			return g
		}
		if p, isNew := parents[g]; isNew {
			g = p
		} else {
			g = parentGroup(w, g)
		}
	}
	return ""
}

// addGroups adds new groups' frames and boxes (outer ones first, so inner ones are drawn over them),
// each box grouped with its title and put in its parents.
func addGroups(w *scene.Scene, groups []groupArgs, parents map[string]string) ([]string, error) {
	depth := func(id string) int {
		d := 0
		for q := parents[id]; q != "" && d < 64; d++ {
			if p, isNew := parents[q]; isNew {
				q = p
			} else {
				q = parentGroup(w, q)
			}
		}
		return d
	}
	order := append([]groupArgs(nil), groups...)
	sort.SliceStable(order, func(i, j int) bool { return depth(order[i].id) < depth(order[j].id) })
	var ids []string
	boxParents, titles := map[string]string{}, map[string]string{}
	for _, g := range order {
		if g.style == "frame" {
			e := scene.NewElement(scene.Frame)
			e.ID, e.Name, e.Width, e.Height = g.id, g.title, 1, 1 // a placeholder until placed (see emptyGroup)
			if _, err := w.Add(e); err != nil {
				return nil, fmt.Errorf("%s: %w", g.path, err)
			}
			ids = append(ids, g.id)
			continue
		}
		title, err := addBox(w, g.id, g.title, depth(g.id))
		if err != nil {
			return nil, fmt.Errorf("%s: %w", g.path, err)
		}
		if f := frameIn(w, parents[g.id], parents); f != "" {
			if err := w.SetFrame(f, g.id, title); err != nil {
				return nil, fmt.Errorf("%s: %w", g.path, err)
			}
		}
		bp := parents[g.id]
		if e, ok := w.Get(bp); ok && e.Type == scene.Frame {
			bp = ""
		}
		boxParents[g.id], titles[g.id] = bp, title
		ids = append(ids, g.id)
	}
	if len(boxParents) > 0 {
		if err := assignBoxes(w, nil, boxParents, titles); err != nil {
			return nil, err
		}
	}
	return ids, nil
}

// makeRoom opens a band of space along a group's bottom (top-down) or right edge (left-right),
// or its top or left edge when back says the layers run the other way there (a snake's odd rows),
// for a node that fits nowhere in it: everything beyond the edge moves away by the node's size
// plus a gap, and the groups the edge runs through (the node's group and the groups around it)
// grow by as much. Relative positions are kept, a person's edits included. It returns where the
// node goes: inside the group, in the new band, as near to near as the band allows.
func makeRoom(w *scene.Scene, node, group string, dir string, back bool, near scene.Point) (scene.Point, error) {
	n, _ := w.Get(node)
	g, _ := w.Get(group)
	lr := dir == "LR"
	size := n.Height + diagram.Gap
	if lr {
		size = n.Width + diagram.Gap
	}
	span := func(b scene.Rect) (float64, float64) {
		if lr {
			return b.X, b.X + b.Width
		}
		return b.Y, b.Y + b.Height
	}
	gStart, gEnd := span(g.Bounds())
	edge := gEnd
	if back {
		edge = gStart
	}
	var move, grow []string
	w.Each(func(e *scene.Element) bool {
		if e.ID == node || e.ContainerID != "" || e.Type == scene.Arrow && e.StartBinding != nil && e.EndBinding != nil {
			return true // labels and bound arrows follow their elements
		}
		start, end := span(e.Bounds())
		group := e.Type == scene.Frame || IsBox(e)
		switch {
		case !back && start >= edge-0.5, back && end <= edge+0.5:
			move = append(move, e.ID)
		case group && !back && end >= edge-0.5, group && back && start <= edge+0.5:
			grow = append(grow, e.ID)
		}
		return true
	})
	shift := size
	if back {
		shift = -size
	}
	dx, dy := 0.0, shift
	if lr {
		dx, dy = shift, 0
	}
	if err := w.MoveBy(move, dx, dy); err != nil {
		return scene.Point{}, fmt.Errorf("make room in %q: %w", group, err)
	}
	for _, id := range grow {
		var children []string
		if e, _ := w.Get(id); back && e.Type == scene.Frame {
			children = w.FrameChildren(id)
		}
		if err := w.Update(id, func(e *scene.Element) error {
			if back { // grown at its near side: its corner moves
				e.X, e.Y = e.X+dx, e.Y+dy
				e.Width, e.Height = e.Width-dx, e.Height-dy
			} else {
				e.Width, e.Height = e.Width+dx, e.Height+dy
			}
			return nil
		}); err != nil {
			return scene.Point{}, fmt.Errorf("make room in %q: %w", group, err)
		}
		// A frame whose corner moves takes its children along; those beyond the edge have moved
		// already and the others stay, so each is put back.
		if err := w.MoveBy(children, -dx, -dy); err != nil {
			return scene.Point{}, fmt.Errorf("make room in %q: %w", group, err)
		}
	}
	// The node's corner: in the band, next to what the group held, across it as near to near as
	// the group allows (the band is empty across the whole group).
	clamp := func(v, lo, hi float64) float64 { return math.Max(lo, math.Min(v, math.Max(lo, hi))) }
	at := edge - groupMargin + diagram.Gap/2
	if back {
		at = edge - (size - diagram.Gap) // the node's far side at the old edge
	}
	if lr {
		return scene.Point{X: at, Y: clamp(near.Y, g.Y+FrameTitle+groupMargin, g.Y+g.Height-groupMargin-n.Height)}, nil
	}
	return scene.Point{X: clamp(near.X, g.X+groupMargin, g.X+g.Width-groupMargin-n.Width), Y: at}, nil
}
