package tools

import (
	"context"
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/excalibot/excalibot/scene"
)

// unknownIDs returns a refusal naming ids that are not in the scene, each with the closest
// existing ids, or nil.
func unknownIDs(sc *scene.Scene, field string, ids []string) error {
	var missing []string
	for _, id := range ids {
		if !sc.Has(id) {
			missing = append(missing, id)
		}
	}
	if len(missing) == 0 {
		return nil
	}
	return refuse("%s", unknownIDText(sc, field, missing))
}

func unknownIDText(sc *scene.Scene, field string, missing []string) string {
	all := visibleIDs(sc)
	var b strings.Builder
	for i, id := range missing {
		if i > 0 {
			b.WriteString("\n- ")
		}
		fmt.Fprintf(&b, "%s: no element with id %q", field, id)
		if near := closest(id, all, 3); len(near) > 0 {
			fmt.Fprintf(&b, "; closest ids: %s", quoteList(near))
		} else if len(all) == 0 {
			b.WriteString("; the canvas is empty")
		} else if len(all) <= 12 {
			fmt.Fprintf(&b, "; ids on the canvas: %s", strings.Join(all, ", "))
		} else {
			b.WriteString("; call get_scene to see the ids")
		}
	}
	return b.String()
}

// visibleIDs are the ids get_scene shows (labels are reached through their shape).
func visibleIDs(sc *scene.Scene) []string {
	var out []string
	sc.Each(func(e *scene.Element) bool {
		if e.Type != scene.Text || e.ContainerID == "" {
			out = append(out, e.ID)
		}
		return true
	})
	return out
}

func (s *Set) getElement(_ context.Context, sc *scene.Scene, o *object) (string, error) {
	id, ok := o.str("id")
	if !ok && !o.has("id") {
		o.p.add("id", "missing; give the id of an element, e.g. \"r1\"")
	}
	o.finish("id")
	if !o.p.ok() {
		return "", o.p
	}
	e, found := sc.Get(id)
	if !found {
		return "", refuse("%s", unknownIDText(sc, "id", []string{id}))
	}
	v := newView(sc)
	return describeElement(v, &e), nil
}

// describeElement lists every property of one element, named as the tools name them.
func describeElement(v *view, e *scene.Element) string {
	var b strings.Builder
	line := func(format string, args ...any) { fmt.Fprintf(&b, format+"\n", args...) }
	line("%s: %s", showID(e.ID), e.Type)
	if e.Type.IsLinear() {
		var pts []string
		for _, p := range e.AbsPoints() {
			pts = append(pts, num(p.X)+","+num(p.Y))
		}
		line("points (absolute): %s", strings.Join(pts, " -> "))
		for _, end := range []struct {
			name string
			b    *scene.Binding
		}{{"startElementId", e.StartBinding}, {"endElementId", e.EndBinding}} {
			if end.b != nil {
				line("%s: %s", end.name, end.b.ElementID)
			} else {
				line("%s: none (free end)", end.name)
			}
		}
		line("startArrowhead: %s, endArrowhead: %s", headName(e.StartArrowhead), headName(e.EndArrowhead))
	} else {
		line("x: %s, y: %s, width: %s, height: %s", num(e.X), num(e.Y), num(e.Width), num(e.Height))
	}
	if e.Angle != 0 {
		line("rotation: %s degrees", num(e.Angle*180/math.Pi))
	}
	ft := e
	switch {
	case e.Type == scene.Text:
		line("text: %s", strconv.Quote(textOf(e)))
		if e.ContainerID != "" {
			line("label of: %s", e.ContainerID)
		}
	case e.Type == scene.Frame:
		line("name: %s", strconv.Quote(e.Name))
	default:
		if l, ok := v.labelOf(e); ok {
			line("text: %s", strconv.Quote(l))
			ft = v.byID[e.Label()]
		} else {
			ft = nil
		}
	}
	if ft != nil {
		line("fontSize: %s, fontFamily: %s", num(ft.FontSize), fontName(ft.FontFamily))
	}
	line("strokeColor: %s, backgroundColor: %s, fillStyle: %s, strokeStyle: %s, strokeWidth: %s, roughness: %s, opacity: %s",
		colorName(e.StrokeColor, roleStroke), colorName(e.BackgroundColor, roleFill), e.FillStyle, e.StrokeStyle,
		num(e.StrokeWidth), num(e.Roughness), num(e.Opacity))
	var arrows []string
	for _, be := range e.BoundElements {
		if be.Type == scene.Arrow {
			arrows = append(arrows, be.ID)
		}
	}
	if len(arrows) > 0 {
		line("arrows attached: %s", strings.Join(arrows, ", "))
	}
	if len(e.GroupIDs) > 0 {
		line("groups: %s", strings.Join(e.GroupIDs, ", "))
	}
	if e.FrameID != "" {
		line("frameId: %s", e.FrameID)
	}
	if e.Type == scene.Frame {
		var kids []string
		for i := range v.elems {
			if c := &v.elems[i]; c.FrameID == e.ID && !v.isLabel(c) {
				kids = append(kids, c.ID)
			}
		}
		line("children: %s", orNone(kids))
	}
	if e.Link != "" {
		line("link: %s", strconv.Quote(e.Link))
	}
	line("locked: %t", e.Locked)
	return b.String()
}

func headName(h string) string {
	if h == "" {
		return "none"
	}
	return h
}

func orNone(list []string) string {
	if len(list) == 0 {
		return "none"
	}
	return strings.Join(list, ", ")
}

func (s *Set) queryElements(_ context.Context, sc *scene.Scene, o *object) (string, error) {
	typ, hasType := o.enum("type", elementTypes, typeAliases)
	ids, hasIDs := o.strList("ids")
	text, hasText := o.str("text")
	var area scene.Rect
	hasArea := false
	if a, ok := o.sub("area"); ok {
		hasArea = true
		area.X, _ = s.lim.coord(a, "x")
		area.Y, _ = s.lim.coord(a, "y")
		w, okW := s.lim.size(a, "width")
		h, okH := s.lim.size(a, "height")
		if !okW && !a.has("width") || !okH && !a.has("height") {
			a.p.add(a.path, "an area needs x, y, width and height, e.g. {\"x\":0,\"y\":0,\"width\":800,\"height\":600}")
		}
		area.Width, area.Height = w, h
		a.finish("x", "y", "width", "height")
	}
	o.finish("type", "ids", "area", "text")
	if !o.p.ok() {
		return "", o.p
	}
	if hasIDs {
		if err := unknownIDs(sc, "ids", ids); err != nil {
			return "", err
		}
	}
	idSet := map[string]bool{}
	for _, id := range ids {
		idSet[id] = true
	}
	needle := strings.ToLower(text)
	v := newView(sc)
	var lines, conns []string
	for i := range v.elems {
		e := &v.elems[i]
		if v.isLabel(e) {
			continue
		}
		if hasType && string(e.Type) != typ {
			continue
		}
		if hasIDs && !idSet[e.ID] {
			continue
		}
		if hasArea && !scene.BoundingBox(*e).Intersects(area) {
			continue
		}
		if hasText {
			l, _ := v.labelOf(e)
			if e.Type == scene.Text {
				l = textOf(e)
			} else if e.Type == scene.Frame {
				l = e.Name
			}
			if !strings.Contains(strings.ToLower(l), needle) {
				continue
			}
		}
		if v.isConnection(e) {
			conns = append(conns, v.connectionLine(e))
		} else {
			lines = append(lines, v.elementLine(e))
		}
	}
	n := len(lines) + len(conns)
	if n == 0 {
		return "no elements match.", nil
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%d matching:\n", n)
	shown := 0
	for _, l := range append(lines, conns...) {
		if b.Len()+len(l) > s.lim.SceneBudget-120 {
			fmt.Fprintf(&b, "truncated: %d more not shown; narrow the query (smaller area, or ids).\n", n-shown)
			break
		}
		if shown == len(lines) && len(conns) > 0 {
			b.WriteString("connections:\n")
		}
		b.WriteString(l + "\n")
		shown++
	}
	return b.String(), nil
}
