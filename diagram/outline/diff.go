package outline

import (
	"math"
	"slices"
	"strings"

	"github.com/excalibot/excalibot/scene"
)

// ChangeKind says what happened to an element between two scenes.
type ChangeKind int

const (
	Added ChangeKind = iota + 1
	Removed
	Renamed     // its label changed: a bound label is its container's, so a box is renamed, not a text replaced
	Moved       // by minShift or more; arrows and lines follow what they connect and never move
	Resized     // by minShift or more, as for moves
	Recoloured  // its stroke or background colour, or its label's colour
	Restyled    // any other look: type, stroke width and style, fill, roughness, opacity, corners, angle, arrowheads, font
	Reconnected // an arrow's or line's end now bound to another element, or to none
	Regrouped   // into or out of a frame or an Excalidraw group
)

var kindWords = [...]string{Added: "added", Removed: "removed", Renamed: "renamed", Moved: "moved", Resized: "resized",
	Recoloured: "recoloured", Restyled: "restyled", Reconnected: "reconnected", Regrouped: "regrouped"}

// String is the past-tense verb: "added", "recoloured".
func (k ChangeKind) String() string {
	if k <= 0 || int(k) >= len(kindWords) {
		return "changed"
	}
	return kindWords[k]
}

// Noun is the kind of thing a person sees in an element, in the order counts of them are written.
type Noun int

const (
	NounBox Noun = iota // rectangle, ellipse, diamond
	NounArrow
	NounLine
	NounText // free text; a bound label is part of its container
	NounFrame
	NounPicture // an image
	NounSketch  // a freehand drawing
	NounOther   // a type this program does not know
)

// NounOf is what an element of type t is called.
func NounOf(t scene.Type) Noun {
	switch t {
	case scene.Rectangle, scene.Ellipse, scene.Diamond:
		return NounBox
	case scene.Arrow:
		return NounArrow
	case scene.Line:
		return NounLine
	case scene.Text:
		return NounText
	case scene.Frame:
		return NounFrame
	case scene.Image:
		return NounPicture
	case scene.Freedraw:
		return NounSketch
	}
	return NounOther
}

// Linear reports an arrow or a line.
func (n Noun) Linear() bool { return n == NounArrow || n == NounLine }

// Part is an element as a person sees it: a box, arrow or line with its bound label folded in, a
// free text, a frame.
type Part struct {
	El   scene.Element
	Noun Noun
	// Label is the bound label's text, a free text's own text or a frame's name, as written (without
	// the breaks wrapping added) on one line.
	Label string
	// From and To are what an arrow's or line's ends are bound to.
	From, To End
	font     labelFont
}

// End is the element an arrow's end is bound to, with its label; the zero End is a free end.
type End struct{ ID, Label string }

// labelFont is what a bound label's look adds to its container's.
type labelFont struct {
	size   float64
	family int
	colour string
}

// Change is one thing that changed about one element. Before is the zero Part for Added, After
// for Removed.
type Change struct {
	Kind          ChangeKind
	Before, After Part
}

// Part is the element as it is now, or as it was when it was removed.
func (c Change) Part() Part {
	if c.Kind == Removed {
		return c.Before
	}
	return c.After
}

// ID is the changed element's id.
func (c Change) ID() string { return c.Part().El.ID }

// minShift is the smallest move or change of size, in pixels, that counts: less does not show in a
// picture and is rounding (the agent's memory keeps positions to a tenth).
const minShift = 1.0

// Diff says what changed from before to after, element by element. Elements are matched once, by
// id; a nil scene is an empty one, and deleted elements are gone. The changes follow after's
// z-order, each element's in the order of ChangeKind, then the removals in before's z-order.
func Diff(before, after *scene.Scene) []Change {
	old, cur := partsOf(before), partsOf(after)
	var out []Change
	for _, p := range cur.list {
		i, ok := old.at[p.El.ID]
		if !ok {
			out = append(out, Change{Kind: Added, After: p})
			continue
		}
		o := old.list[i]
		for _, k := range compare(o, p) {
			out = append(out, Change{Kind: k, Before: o, After: p})
		}
	}
	for _, o := range old.list {
		if _, ok := cur.at[o.El.ID]; !ok {
			out = append(out, Change{Kind: Removed, Before: o})
		}
	}
	return out
}

// sceneParts is a scene's parts in z-order, with each one's place by id.
type sceneParts struct {
	list []Part
	at   map[string]int
}

// partsOf reads sc's live elements as parts: a text bound to a live container becomes that
// container's label instead of a part of its own.
func partsOf(sc *scene.Scene) sceneParts {
	out := sceneParts{at: map[string]int{}}
	if sc == nil {
		return out
	}
	els := sc.Elements()
	live := make(map[string]bool, len(els))
	for _, e := range els {
		live[e.ID] = true
	}
	bound := func(e scene.Element) bool { return e.Type == scene.Text && e.ContainerID != "" && live[e.ContainerID] }
	labels := map[string]scene.Element{}
	for _, e := range els {
		if bound(e) {
			labels[e.ContainerID] = e
		}
	}
	for _, e := range els {
		if bound(e) {
			continue
		}
		p := Part{El: e, Noun: NounOf(e.Type)}
		switch e.Type {
		case scene.Text:
			p.Label = written(e)
		case scene.Frame:
			p.Label = oneLine(e.Name)
		}
		if t, ok := labels[e.ID]; ok {
			p.Label = written(t)
			p.font = labelFont{size: t.FontSize, family: t.FontFamily, colour: t.StrokeColor}
		}
		out.at[e.ID] = len(out.list)
		out.list = append(out.list, p)
	}
	// Ends are named once every label is known.
	for i := range out.list {
		p := &out.list[i]
		p.From, p.To = out.end(p.El.StartBinding), out.end(p.El.EndBinding)
	}
	return out
}

func (s sceneParts) end(b *scene.Binding) End {
	if b == nil {
		return End{}
	}
	if i, ok := s.at[b.ElementID]; ok {
		return End{ID: b.ElementID, Label: s.list[i].Label}
	}
	return End{ID: b.ElementID}
}

// compare lists what changed from o to p, the same element in two scenes.
func compare(o, p Part) []ChangeKind {
	var out []ChangeKind
	a, b := o.El, p.El
	if o.Label != p.Label {
		out = append(out, Renamed)
	}
	if !o.Noun.Linear() && !p.Noun.Linear() {
		if shifted(a.X, b.X) || shifted(a.Y, b.Y) {
			out = append(out, Moved)
		}
		if shifted(a.Width, b.Width) || shifted(a.Height, b.Height) {
			out = append(out, Resized)
		}
	}
	// A label that came or went is a rename; only one on both sides has a look that can change.
	labelled := o.Label != "" && p.Label != ""
	if !sameColour(a.StrokeColor, b.StrokeColor) || !sameColour(a.BackgroundColor, b.BackgroundColor) ||
		labelled && !sameColour(o.font.colour, p.font.colour) {
		out = append(out, Recoloured)
	}
	if a.Type != b.Type || a.FillStyle != b.FillStyle || a.StrokeWidth != b.StrokeWidth ||
		a.StrokeStyle != b.StrokeStyle || a.Roughness != b.Roughness || a.Opacity != b.Opacity ||
		(a.Roundness == nil) != (b.Roundness == nil) || math.Abs(a.Angle-b.Angle) >= minTurn ||
		a.StartArrowhead != b.StartArrowhead || a.EndArrowhead != b.EndArrowhead ||
		labelled && (o.font.size != p.font.size || o.font.family != p.font.family) ||
		a.Type == scene.Text && b.Type == scene.Text && (a.FontSize != b.FontSize || a.FontFamily != b.FontFamily) {
		out = append(out, Restyled)
	}
	if (o.Noun.Linear() || p.Noun.Linear()) && (o.From.ID != p.From.ID || o.To.ID != p.To.ID) {
		out = append(out, Reconnected)
	}
	if a.FrameID != b.FrameID || !slices.Equal(a.GroupIDs, b.GroupIDs) {
		out = append(out, Regrouped)
	}
	return out
}

// minTurn is the smallest turn that counts, in radians (about a third of a degree).
const minTurn = 0.005

func shifted(a, b float64) bool { return math.Abs(a-b) >= minShift }

// sameColour compares CSS colours as written, so "#E03131" is "#e03131".
func sameColour(a, b string) bool { return strings.EqualFold(a, b) }
