package tools

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/excalibot/excalibot/scene"
)

// elemArgs is one element as the model described it, decoded and checked field by field but not
// yet applied. Pointer fields are nil when not given, so update_element changes only what was sent.
type elemArgs struct {
	path string // "elements[2]" or "", for messages when applying

	ID, Type            string
	X, Y, Width, Height *float64
	Text                *string
	StrokeColor         *string
	BackgroundColor     *string
	FillStyle           *string
	StrokeStyle         *string
	StrokeWidth         *float64
	Roughness           *float64
	Opacity             *float64
	FontSize            *float64
	FontFamily          *int
	StartID, EndID      *string
	StartHead, EndHead  *string // "" means no arrowhead
	Points              []pt
	FrameID             *string
	Locked              *bool
}

type pt struct{ X, Y float64 }

// elementTypes are the types the model may create, with the aliases small models use.
var (
	elementTypes = []string{"rectangle", "ellipse", "diamond", "text", "arrow", "line", "frame"}
	typeAliases  = map[string]string{
		"rect": "rectangle", "box": "rectangle", "square": "rectangle", "circle": "ellipse",
		"oval": "ellipse", "rhombus": "diamond", "decision": "diamond", "label": "text",
		"connector": "arrow",
	}
	fillStyles   = []string{"solid", "hachure", "cross-hatch", "zigzag"}
	strokeStyles = []string{"solid", "dashed", "dotted"}
	arrowheads   = []string{"arrow", "triangle", "bar", "dot", "none"}
	alignments   = []string{"left", "center", "right", "top", "middle", "bottom"}
	directions   = []string{"horizontal", "vertical"}
)

// fontFamilies maps font names to Excalidraw's FONT_FAMILY numbers (files store numbers).
var fontFamilies = map[string]int{
	"virgil": 1, "helvetica": 2, "cascadia": 3, "excalifont": 5, "nunito": 6,
	"lilita": 7, "lilita one": 7, "comic": 8, "comic shanns": 8, "liberation": 9, "liberation sans": 9,
}

var fontNames = []string{"excalifont", "nunito", "lilita", "comic", "liberation", "cascadia", "virgil", "helvetica"}

// elementFields are the fields of a created element; updateFields those update_element takes.
var (
	styleFields = []string{"x", "y", "width", "height", "text", "strokeColor", "backgroundColor",
		"fillStyle", "strokeStyle", "strokeWidth", "roughness", "opacity", "fontSize", "fontFamily",
		"startElementId", "endElementId", "startArrowhead", "endArrowhead", "points", "frameId", "locked"}
	elementFields = append([]string{"id", "type"}, styleFields...)
	updateFields  = append([]string{"id"}, styleFields...)
)

// decodeElement reads one element. forCreate requires id and type; otherwise (update) type is
// refused because an element cannot change type in Excalidraw.
func decodeElement(o *object, lim Limits, forCreate bool) elemArgs {
	a := elemArgs{path: o.path}
	if forCreate {
		id, ok := lim.id(o, "id")
		if !ok && !o.has("id") {
			o.p.add(o.at("id"), "missing; choose a short id like \"r1\" so arrows and later calls can refer to it")
		}
		a.ID = id
		t, ok := o.enum("type", elementTypes, typeAliases)
		if !ok && !o.has("type") {
			o.p.add(o.at("type"), "missing; use one of %s", quoteList(elementTypes))
		}
		a.Type = t
	} else {
		if s, ok := o.str("id"); ok {
			a.ID = s
		} else if !o.has("id") {
			o.p.add(o.at("id"), "missing; give the id of the element to change, e.g. \"r1\"")
		}
		if o.has("type") {
			o.p.add(o.at("type"), "an element cannot change type; delete it and create a new one with the same id")
		}
	}
	a.X = optNum(lim.coord(o, "x"))
	a.Y = optNum(lim.coord(o, "y"))
	a.Width = optNum(lim.size(o, "width"))
	a.Height = optNum(lim.size(o, "height"))
	if s, ok := lim.label(o, "text"); ok {
		a.Text = &s
	}
	a.StrokeColor = optColor(o, "strokeColor", roleStroke)
	a.BackgroundColor = optColor(o, "backgroundColor", roleFill)
	if s, ok := o.enum("fillStyle", fillStyles, map[string]string{"crosshatch": "cross-hatch", "cross_hatch": "cross-hatch"}); ok {
		a.FillStyle = &s
	}
	if s, ok := o.enum("strokeStyle", strokeStyles, map[string]string{"dash": "dashed", "dot": "dotted"}); ok {
		a.StrokeStyle = &s
	}
	a.StrokeWidth = optRange(o, "strokeWidth", 0.5, 16, "1 (thin), 2 (normal) or 4 (bold)")
	a.Roughness = optRange(o, "roughness", 0, 2, "0, 1 or 2")
	a.Opacity = optRange(o, "opacity", 0, 100, "a number from 0 to 100")
	a.FontSize = optRange(o, "fontSize", 4, 200, "16, 20, 28 or 36")
	a.FontFamily = optFont(o, "fontFamily")
	if s, ok := o.str("startElementId"); ok {
		a.StartID = &s
	}
	if s, ok := o.str("endElementId"); ok {
		a.EndID = &s
	}
	a.StartHead = optHead(o, "startArrowhead")
	a.EndHead = optHead(o, "endArrowhead")
	a.Points = decodePoints(o, lim, "points")
	if s, ok := o.str("frameId"); ok {
		a.FrameID = &s
	}
	if b, ok := o.boolean("locked"); ok {
		a.Locked = &b
	}
	if forCreate {
		o.finish(elementFields...)
	} else {
		o.finish(updateFields...)
	}
	checkFieldsForType(o, &a, forCreate)
	return a
}

// checkFieldsForType refuses fields that make no sense for the element's type, so the model does
// not believe it set something that Excalidraw would ignore.
// For updates it runs again once the element's type is known.
func checkFieldsForType(o *object, a *elemArgs, forCreate bool) {
	t := a.Type
	if t == "" {
		return // update: the type is known only when applying.
	}
	linear := t == "arrow" || t == "line"
	if !linear {
		for _, f := range []struct {
			name  string
			given bool
		}{{"startElementId", a.StartID != nil}, {"endElementId", a.EndID != nil},
			{"startArrowhead", a.StartHead != nil}, {"endArrowhead", a.EndHead != nil}, {"points", a.Points != nil}} {
			if f.given {
				o.p.add(o.at(f.name), "only arrows and lines have %s; this element is a %s", f.name, t)
			}
		}
	}
	if linear && (a.Width != nil || a.Height != nil) {
		o.p.add(o.at("width"), "%s has no width or height: attach it with startElementId/endElementId, or give points like [[0,0],[200,0]]", withArticle(scene.Type(t)))
	}
	if t == "line" {
		if a.StartID != nil || a.EndID != nil {
			o.p.add(o.at("startElementId"), "lines do not attach to shapes in Excalidraw; use type \"arrow\" (with endArrowhead \"none\" for a plain connector)")
		}
		if a.Text != nil {
			o.p.add(o.at("text"), "lines cannot carry a label; use an arrow, or a separate text element")
		}
	}
	if t == "frame" && (a.FontSize != nil || a.FontFamily != nil) {
		o.p.add(o.at("fontSize"), "frames show their text as a title in Excalidraw's own style; remove fontSize/fontFamily")
	}
	if !forCreate {
		return
	}
	if !linear && (a.X == nil || a.Y == nil) {
		for _, f := range []struct {
			name string
			v    *float64
		}{{"x", a.X}, {"y", a.Y}} {
			if f.v == nil && !o.has(f.name) {
				o.p.add(o.at(f.name), "missing; a %s needs its top-left corner, e.g. \"x\": 100, \"y\": 200", t)
			}
		}
	}
	if t == "frame" && (a.Width == nil || a.Height == nil) && !o.has("width") && !o.has("height") {
		o.p.add(o.at("width"), "a frame needs width and height that contain its children, e.g. 600 and 400")
	}
	if t == "text" && a.Text == nil && !o.has("text") {
		o.p.add(o.at("text"), "missing; a text element needs its text, e.g. \"Title\"")
	}
	if t == "text" && a.Text != nil && strings.TrimSpace(*a.Text) == "" {
		o.p.add(o.at("text"), "empty; a text element needs its text, e.g. \"Title\"")
	}
	if linear && a.StartID == nil && a.EndID == nil && a.Points == nil && !o.has("points") {
		o.p.add(o.path, "a %s needs startElementId and endElementId (ids of shapes), or x, y and points like [[0,0],[200,0]]", t)
	}
}

func optNum(v float64, ok bool) *float64 {
	if !ok {
		return nil
	}
	return &v
}

func optRange(o *object, name string, lo, hi float64, want string) *float64 {
	v, ok := o.num(name)
	if !ok {
		return nil
	}
	if v < lo || v > hi {
		o.p.add(o.at(name), "%g is out of range; use %s", v, want)
		return nil
	}
	return &v
}

func optColor(o *object, name string, role colorRole) *string {
	s, ok := o.str(name)
	if !ok {
		return nil
	}
	c, err := resolveColor(s, role)
	if err != nil {
		o.p.add(o.at(name), "%v", err)
		return nil
	}
	return &c
}

func optFont(o *object, name string) *int {
	v := o.raw(name)
	if v == nil {
		return nil
	}
	n, isNum := jsonNumber(v)
	if s, ok := fastString(v); ok && !isNum {
		// A font number sent as a string, "5".
		if f, err := strconv.ParseFloat(strings.TrimSpace(s), 64); err == nil && !math.IsNaN(f) && !math.IsInf(f, 0) {
			n, isNum = f, true
		}
	}
	if isNum {
		for _, f := range fontFamilies {
			if float64(f) == n {
				i := f
				return &i
			}
		}
		o.p.add(o.at(name), "font number %g is not an Excalidraw font; use a name: %s", n, quoteList(fontNames))
		return nil
	}
	s, ok := o.str(name)
	if !ok {
		return nil
	}
	k := strings.ToLower(strings.TrimSpace(s))
	if f, ok := fontFamilies[k]; ok {
		return &f
	}
	o.p.add(o.at(name), "unknown font %q; use one of %s%s", s, quoteList(fontNames), didYouMean(k, fontNames))
	return nil
}

func optHead(o *object, name string) *string {
	s, ok := o.enum(name, arrowheads, map[string]string{"null": "none", "": "none", "triangle_outline": "triangle"})
	if !ok {
		return nil
	}
	if s == "none" {
		s = ""
	}
	return &s
}

// decodePoints reads [[x,y], …]; also {x, y} objects, which some models prefer, numbers as
// strings, and the list sent as a JSON-encoded string.
func decodePoints(o *object, lim Limits, name string) []pt {
	v, _ := o.structured(name)
	if v == nil {
		return nil
	}
	var items []any
	if err := jsonUnmarshalNumbers(v, &items); err != nil {
		o.p.add(o.at(name), "want a list of points like [[0,0],[200,0]], got %s", describeJSON(v))
		return nil
	}
	if len(items) < 2 {
		o.p.add(o.at(name), "need at least 2 points, like [[0,0],[200,0]]")
		return nil
	}
	if len(items) > 100 {
		o.p.add(o.at(name), "%d points is too many; use at most 100", len(items))
		return nil
	}
	out := make([]pt, 0, len(items))
	for i, it := range items {
		x, y, ok := pointXY(it)
		field := fmt.Sprintf("%s[%d]", o.at(name), i)
		if !ok {
			o.p.add(field, "want [x, y] with two numbers, like [200, 0]")
			return nil
		}
		if abs(x) > lim.MaxCoord || abs(y) > lim.MaxCoord {
			o.p.add(field, "point is outside the canvas; keep coordinates within ±%g", lim.MaxCoord)
			return nil
		}
		out = append(out, pt{x, y})
	}
	return out
}

func pointXY(it any) (float64, float64, bool) {
	switch p := it.(type) {
	case []any:
		if len(p) != 2 {
			return 0, 0, false
		}
		x, ok1 := finiteNum(p[0])
		y, ok2 := finiteNum(p[1])
		return x, y, ok1 && ok2
	case map[string]any:
		if len(p) != 2 {
			return 0, 0, false
		}
		x, ok1 := finiteNum(p["x"])
		y, ok2 := finiteNum(p["y"])
		return x, y, ok1 && ok2
	}
	return 0, 0, false
}

func abs(v float64) float64 {
	if v < 0 {
		return -v
	}
	return v
}
