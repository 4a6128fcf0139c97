package bot

import (
	"math"
	"slices"
	"strings"

	"github.com/excalibot/excalibot/internal/clip"
	"github.com/excalibot/excalibot/internal/plural"
	"github.com/excalibot/excalibot/scene"
)

// changes says in a few words what after changed from before, the revision it was made on:
// "added 3 boxes, 2 arrows; renamed ‘DB’ to ‘Postgres’". Elements are matched by id; a label is
// part of the shape or arrow it labels, so renaming a box is one change, not a text removed and
// another added. Arrows follow the boxes they connect, so only their ends and style count. A nil
// before is an empty scene. "" means nothing visible changed.
func changes(before, after *scene.Scene) string {
	old, cur := parts(before), parts(after)
	var added, removed, moved, resized, recoloured, restyled, reconnected tally
	var renames []string
	for _, id := range cur.order {
		p := cur.byID[id]
		o, ok := old.byID[id]
		if !ok {
			added.add(p.noun)
			continue
		}
		if r := rename(o, p); r != "" {
			renames = append(renames, r)
		}
		if p.noun.linear {
			if !sameEnd(o.el.StartBinding, p.el.StartBinding) || !sameEnd(o.el.EndBinding, p.el.EndBinding) {
				reconnected.add(p.noun)
			}
		} else {
			if far(o.el.X, p.el.X) || far(o.el.Y, p.el.Y) {
				moved.add(p.noun)
			}
			if far(o.el.Width, p.el.Width) || far(o.el.Height, p.el.Height) {
				resized.add(p.noun)
			}
		}
		switch colour, other := styleChange(o, p); {
		case other:
			restyled.add(p.noun)
		case colour:
			recoloured.add(p.noun)
		}
	}
	for _, id := range old.order {
		if _, ok := cur.byID[id]; !ok {
			removed.add(old.byID[id].noun)
		}
	}
	var out []string
	for _, g := range []struct {
		verb string
		t    tally
	}{{"added", added}, {"removed", removed}} {
		if s := g.t.String(); s != "" {
			out = append(out, g.verb+" "+s)
		}
	}
	if len(renames) > 0 {
		const listed = 2
		s := strings.Join(renames[:min(len(renames), listed)], ", ")
		if len(renames) > listed {
			s += " and " + plural.Count(len(renames)-listed, "other", "others")
		}
		out = append(out, s)
	}
	for _, g := range []struct {
		verb string
		t    tally
	}{{"moved", moved}, {"resized", resized}, {"recoloured", recoloured}, {"restyled", restyled}, {"reconnected", reconnected}} {
		if s := g.t.String(); s != "" {
			out = append(out, g.verb+" "+s)
		}
	}
	return strings.Join(out, "; ")
}

// part is one thing a person sees in a scene: an element with its label.
type part struct {
	el    scene.Element
	label string // the bound text, the free text itself, or a frame's name
	font  fontStyle
	noun  noun
}

// fontStyle is what a label's look adds to its element's.
type fontStyle struct {
	size   float64
	family int
	colour string
}

// noun is what a kind of element is called, one and many.
type noun struct {
	one, many string
	a         string // the article: "a box", "an arrow"
	rank      int    // the order counts are written in
	linear    bool
}

var (
	nounBox     = noun{one: "box", many: "boxes", a: "a", rank: 0}
	nounArrow   = noun{one: "arrow", a: "an", rank: 1, linear: true}
	nounLine    = noun{one: "line", a: "a", rank: 2, linear: true}
	nounText    = noun{one: "text", a: "a", rank: 3}
	nounFrame   = noun{one: "frame", a: "a", rank: 4}
	nounPicture = noun{one: "picture", a: "a", rank: 5}
	nounSketch  = noun{one: "freehand drawing", a: "a", rank: 6}
	nounOther   = noun{one: "element", a: "an", rank: 7}
)

func nounOf(t scene.Type) noun {
	switch t {
	case scene.Rectangle, scene.Ellipse, scene.Diamond:
		return nounBox
	case scene.Arrow:
		return nounArrow
	case scene.Line:
		return nounLine
	case scene.Text:
		return nounText
	case scene.Frame:
		return nounFrame
	case scene.Image:
		return nounPicture
	case scene.Freedraw:
		return nounSketch
	}
	return nounOther
}

// sceneParts is a scene's parts by id, in z-order.
type sceneParts struct {
	order []string
	byID  map[string]part
}

// parts reads sc's live elements as parts: a text bound to a live container becomes that
// container's label instead of a part of its own.
func parts(sc *scene.Scene) sceneParts {
	out := sceneParts{byID: map[string]part{}}
	if sc == nil {
		return out
	}
	els := sc.Elements()
	live := map[string]bool{}
	for _, e := range els {
		live[e.ID] = true
	}
	labels := map[string]scene.Element{}
	for _, e := range els {
		if e.Type == scene.Text && e.ContainerID != "" && live[e.ContainerID] {
			labels[e.ContainerID] = e
		}
	}
	for _, e := range els {
		if e.Type == scene.Text && e.ContainerID != "" && live[e.ContainerID] {
			continue
		}
		p := part{el: e, noun: nounOf(e.Type)}
		switch {
		case e.Type == scene.Text:
			p.label = textOf(e)
		case e.Type == scene.Frame:
			p.label = strings.Join(strings.Fields(e.Name), " ")
		}
		if t, ok := labels[e.ID]; ok {
			p.label = textOf(t)
			p.font = fontStyle{size: t.FontSize, family: t.FontFamily, colour: t.StrokeColor}
		}
		out.order = append(out.order, e.ID)
		out.byID[e.ID] = p
	}
	return out
}

// textOf is a text as written, on one line.
func textOf(t scene.Element) string {
	s := t.OriginalText
	if s == "" {
		s = t.Text
	}
	return strings.Join(strings.Fields(s), " ")
}

// rename says how a part's label changed, or "" when it did not.
func rename(o, p part) string {
	switch {
	case o.label == p.label:
		return ""
	case o.label == "":
		return "labelled " + p.noun.a + " " + p.noun.one + " " + quote(p.label)
	case p.label == "":
		return "took the label " + quote(o.label) + " off " + p.noun.a + " " + p.noun.one
	case p.noun == nounText:
		return "rewrote " + quote(o.label) + " as " + quote(p.label)
	}
	return "renamed " + quote(o.label) + " to " + quote(p.label)
}

func quote(s string) string { return "‘" + clip.Runes(s, 30) + "’" }

// styleChange reports whether a part's colours changed, and whether anything else of its look did.
func styleChange(o, p part) (colour, other bool) {
	a, b := o.el, p.el
	labelled := o.label != "" && p.label != "" // a label that came or went is a rename, not a style
	colour = a.StrokeColor != b.StrokeColor || a.BackgroundColor != b.BackgroundColor || labelled && o.font.colour != p.font.colour
	other = a.Type != b.Type || a.FillStyle != b.FillStyle || a.StrokeWidth != b.StrokeWidth ||
		a.StrokeStyle != b.StrokeStyle || a.Roughness != b.Roughness || a.Opacity != b.Opacity ||
		(a.Roundness == nil) != (b.Roundness == nil) || far(a.Angle*100, b.Angle*100) ||
		a.StartArrowhead != b.StartArrowhead || a.EndArrowhead != b.EndArrowhead ||
		labelled && (o.font.size != p.font.size || o.font.family != p.font.family) ||
		(a.Type == scene.Text && (a.FontSize != b.FontSize || a.FontFamily != b.FontFamily))
	return colour, other
}

// far reports a difference a person would notice (half a pixel is rounding).
func far(a, b float64) bool { return math.Abs(a-b) >= 0.5 }

func sameEnd(a, b *scene.Binding) bool {
	if a == nil || b == nil {
		return a == b
	}
	return a.ElementID == b.ElementID
}

// tally counts parts by noun.
type tally map[noun]int

func (t *tally) add(n noun) {
	if *t == nil {
		*t = tally{}
	}
	(*t)[n]++
}

// String is "3 boxes, 1 arrow", in the nouns' order; "" for none.
func (t tally) String() string {
	nouns := make([]noun, 0, len(t))
	for n := range t {
		nouns = append(nouns, n)
	}
	slices.SortFunc(nouns, func(a, b noun) int { return a.rank - b.rank })
	out := make([]string, len(nouns))
	for i, n := range nouns {
		out[i] = plural.Count(t[n], n.one, n.many)
	}
	return strings.Join(out, ", ")
}
