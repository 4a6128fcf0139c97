// Package scene is the Excalidraw document that the agent edits: elements with the full Excalidraw
// field set, bound labels laid out like Excalidraw lays them out, arrows bound edge to edge, groups,
// frames, locking, fractional z-order indices, cheap snapshots, and .excalidraw files that Excalidraw
// opens as-is.
//
// A Scene is not safe for concurrent use. Clone returns an independent copy that shares unchanged
// elements with the original (elements are never modified in place), so a snapshot costs one slice
// and one map copy, and a clone may be read by another goroutine while the original is edited.
package scene

import (
	"encoding/json"
	"slices"
)

// Type is an Excalidraw element type ("rectangle", "arrow", ...).
type Type string

// Element types this package creates and edits. Freedraw, Image and any other type read from a file
// are kept as they came (their type-specific fields are preserved verbatim) and can be moved, grouped,
// framed, locked and deleted, but not resized.
const (
	Rectangle Type = "rectangle"
	Ellipse   Type = "ellipse"
	Diamond   Type = "diamond"
	Text      Type = "text"
	Arrow     Type = "arrow"
	Line      Type = "line"
	Frame     Type = "frame"
	Freedraw  Type = "freedraw"
	Image     Type = "image"
)

// IsShape reports whether t is a closed shape that can hold a label and be an arrow target
// (rectangle, ellipse, diamond).
func (t Type) IsShape() bool { return t == Rectangle || t == Ellipse || t == Diamond }

// IsLinear reports whether t is an arrow or a line (an element made of points).
func (t Type) IsLinear() bool { return t == Arrow || t == Line }

// modeled reports whether this package knows every field of t and writes the full field set.
func (t Type) modeled() bool {
	switch t {
	case Rectangle, Ellipse, Diamond, Text, Arrow, Line, Frame:
		return true
	}
	return false
}

// Point is a 2-D point. In an arrow's or line's Points it is relative to the element's X, Y.
type Point struct{ X, Y float64 }

// Rect is an axis-aligned rectangle.
type Rect struct{ X, Y, Width, Height float64 }

// Center returns the centre of r.
func (r Rect) Center() Point { return Point{r.X + r.Width/2, r.Y + r.Height/2} }

// Union returns the smallest rectangle containing r and o.
func (r Rect) Union(o Rect) Rect {
	x0, y0 := min(r.X, o.X), min(r.Y, o.Y)
	x1, y1 := max(r.X+r.Width, o.X+o.Width), max(r.Y+r.Height, o.Y+o.Height)
	return Rect{x0, y0, x1 - x0, y1 - y0}
}

// Roundness is Excalidraw's corner style: Type 1 legacy, 2 proportional, 3 adaptive (rectangles).
// Value, when set, overrides the adaptive radius (32 px).
type Roundness struct {
	Type  int      `json:"type"`
	Value *float64 `json:"value,omitempty"`
}

// Roundness types as Excalidraw numbers them (ROUNDNESS in packages/common/src/constants.ts).
const (
	RoundnessLegacy       = 1
	RoundnessProportional = 2
	RoundnessAdaptive     = 3
)

// BoundElement is an entry of an element's boundElements: an arrow bound to it or its label text.
type BoundElement struct {
	ID   string `json:"id"`
	Type Type   `json:"type"`
}

// Binding is one end of an arrow attached to an element.
//
// This package writes the v1 form {elementId, focus, gap}, which both Excalidraw 0.18 and
// excalidraw.com read. The v2 form that excalidraw.com writes ({elementId, fixedPoint, mode}) is
// read and written back unchanged until the arrow is re-routed, which rewrites it in v1 form
// (elbow arrows keep their fixedPoint).
type Binding struct {
	ElementID string
	// Focus is -1..1; 0 aims at the target's centre.
	Focus float64
	// Gap is the distance in px between the arrow's end and the target's border.
	Gap float64
	// FixedPoint is the v2 / elbow-arrow anchor as ratios of the target's box, or nil.
	FixedPoint *[2]float64
	// Mode is the v2 binding mode ("inside", "orbit", "skip") or "".
	Mode string

	hasFocus, hasGap bool
	extra            map[string]json.RawMessage
}

// Element is one Excalidraw element. Values returned by Scene methods are copies: change elements
// through Scene.Update and the other Scene methods, which keep versions, labels, bindings and arrows
// consistent.
//
// JSON null fields (frameId, containerId, link, index, name, arrowheads) are the empty string here.
type Element struct {
	ID              string
	Type            Type
	X, Y            float64
	Width, Height   float64
	Angle           float64 // radians, clockwise, about the element's centre
	StrokeColor     string
	BackgroundColor string
	FillStyle       string // hachure | cross-hatch | solid | zigzag
	StrokeWidth     float64
	StrokeStyle     string // solid | dashed | dotted
	Roughness       float64
	Opacity         float64
	Roundness       *Roundness // nil = sharp corners
	Seed            int64
	Version         int64
	VersionNonce    int64
	Index           string // fractional z-order key; kept valid and increasing by the Scene
	IsDeleted       bool
	GroupIDs        []string // innermost group first
	FrameID         string
	BoundElements   []BoundElement
	Updated         int64 // Unix milliseconds of the last change
	Link            string
	Locked          bool

	// Text fields.
	FontSize      float64
	FontFamily    int
	Text          string // as displayed, with the line breaks added by wrapping
	OriginalText  string // as written, before wrapping
	TextAlign     string // left | center | right
	VerticalAlign string // top | middle | bottom
	ContainerID   string // the shape or arrow this text labels, or ""
	AutoResize    bool
	LineHeight    float64 // multiplier of FontSize

	// Arrow and line fields.
	Points         []Point // relative to X, Y; the first is always (0, 0)
	StartBinding   *Binding
	EndBinding     *Binding
	StartArrowhead string // "", arrow, bar, dot, triangle, ...
	EndArrowhead   string
	Elbowed        bool

	// Frame field.
	Name string

	// extra holds fields this package does not model, verbatim, so that files round-trip.
	extra map[string]json.RawMessage
	// owner is the batch token of the working copy that made this copy (see Scene.edit).
	owner *byte
}

// Defaults as Excalidraw's UI sets them for a new element.
const (
	DefaultStrokeColor     = "#1e1e1e"
	DefaultBackgroundColor = "transparent"
	DefaultFontFamily      = 5 // Excalifont
	DefaultFontSize        = 20
	// BoundTextPadding is Excalidraw's BOUND_TEXT_PADDING: the gap between a container's inner box
	// and its label.
	BoundTextPadding = 5
	// DefaultGap is the gap this package leaves between an arrow's end and its target's border,
	// Excalidraw's FIXED_BINDING_DISTANCE.
	DefaultGap = 5
)

// NewElement returns an element of type t with the style Excalidraw's UI gives a new element:
// stroke #1e1e1e width 2 solid, transparent background, solid fill, roughness 1, opacity 100,
// roundness {type 3} for rectangles, {type 2} for diamonds, arrows and lines, none for ellipses,
// text and frames; texts get Excalifont 20 px, left/top aligned, auto-resizing; arrows get an
// arrowhead at the end. Id, seed, nonce, version, index and timestamps are filled in by Scene.Add.
func NewElement(t Type) Element {
	e := Element{
		Type:            t,
		StrokeColor:     DefaultStrokeColor,
		BackgroundColor: DefaultBackgroundColor,
		FillStyle:       "solid",
		StrokeWidth:     2,
		StrokeStyle:     "solid",
		Roughness:       1,
		Opacity:         100,
	}
	switch t {
	case Rectangle:
		e.Roundness = &Roundness{Type: RoundnessAdaptive}
	case Diamond, Arrow, Line:
		e.Roundness = &Roundness{Type: RoundnessProportional}
	case Text:
		e.FontSize = DefaultFontSize
		e.FontFamily = DefaultFontFamily
		e.TextAlign = "left"
		e.VerticalAlign = "top"
		e.AutoResize = true
		e.LineHeight = lineHeightOf(DefaultFontFamily)
	case Frame:
		e.StrokeWidth = 2
		e.Roughness = 0
	}
	if t == Arrow {
		e.EndArrowhead = "arrow"
	}
	if t.IsLinear() {
		e.Points = []Point{{0, 0}}
	}
	return e
}

// Bounds returns the element's axis-aligned box before rotation: X, Y, Width, Height.
// For arrows and lines this is the box of their points. See BoundingBox for the rotated extent.
func (e *Element) Bounds() Rect {
	if e.Type.IsLinear() && len(e.Points) > 0 {
		minX, minY, maxX, maxY := pointsBox(e.Points)
		return Rect{e.X + minX, e.Y + minY, maxX - minX, maxY - minY}
	}
	return Rect{e.X, e.Y, e.Width, e.Height}
}

// Center returns the centre of the element's unrotated box, the point it rotates about.
func (e *Element) Center() Point { return e.Bounds().Center() }

// AbsPoints returns an arrow's or line's points in scene coordinates (rotation applied).
func (e *Element) AbsPoints() []Point {
	out := make([]Point, len(e.Points))
	c := e.Center()
	for i, p := range e.Points {
		out[i] = rotate(Point{e.X + p.X, e.Y + p.Y}, c, e.Angle)
	}
	return out
}

// Label returns the id of the element's bound text (its label), or "".
func (e *Element) Label() string {
	for _, b := range e.BoundElements {
		if b.Type == Text {
			return b.ID
		}
	}
	return ""
}

// InGroup reports whether the element belongs to group g (at any nesting depth).
func (e *Element) InGroup(g string) bool { return slices.Contains(e.GroupIDs, g) }

// clone returns a deep copy of e: every slice, pointer and map is copied, so that the copy can be
// edited without touching an element shared with a snapshot.
func (e *Element) clone() *Element {
	c := *e
	c.owner = nil
	c.GroupIDs = slices.Clone(e.GroupIDs)
	c.BoundElements = slices.Clone(e.BoundElements)
	c.Points = slices.Clone(e.Points)
	if e.Roundness != nil {
		r := *e.Roundness
		if r.Value != nil {
			v := *r.Value
			r.Value = &v
		}
		c.Roundness = &r
	}
	c.StartBinding = e.StartBinding.clone()
	c.EndBinding = e.EndBinding.clone()
	// extra's values are immutable byte slices that nobody writes into; sharing them is safe,
	// but the map itself is copied because keys are added and removed.
	if e.extra != nil {
		c.extra = make(map[string]json.RawMessage, len(e.extra))
		for k, v := range e.extra {
			c.extra[k] = v
		}
	}
	return &c
}

func (b *Binding) clone() *Binding {
	if b == nil {
		return nil
	}
	c := *b
	if b.FixedPoint != nil {
		fp := *b.FixedPoint
		c.FixedPoint = &fp
	}
	if b.extra != nil {
		c.extra = make(map[string]json.RawMessage, len(b.extra))
		for k, v := range b.extra {
			c.extra[k] = v
		}
	}
	return &c
}

func pointsBox(ps []Point) (minX, minY, maxX, maxY float64) {
	minX, minY, maxX, maxY = ps[0].X, ps[0].Y, ps[0].X, ps[0].Y
	for _, p := range ps[1:] {
		minX, maxX = min(minX, p.X), max(maxX, p.X)
		minY, maxY = min(minY, p.Y), max(maxY, p.Y)
	}
	return
}
