package bot

import (
	"slices"
	"strings"

	"github.com/excalibot/excalibot/diagram/outline"
	"github.com/excalibot/excalibot/internal/clip"
	"github.com/excalibot/excalibot/internal/plural"
	"github.com/excalibot/excalibot/scene"
)

// Changes says in a few words what after changed from before, the revision it was made on:
// "added 3 boxes, 2 arrows; renamed ‘DB’ to ‘Postgres’". It reads outline.Diff: renaming a box is
// one change, not a text removed and another added, and arrows follow the boxes they connect. A
// nil before is an empty scene. "" means nothing visible changed. History, undo, redo and revert
// say it.
func Changes(before, after *scene.Scene) string {
	tallies := map[outline.ChangeKind]tally{}
	var renames []string
	for _, c := range outline.Diff(before, after) {
		if c.Kind == outline.Renamed {
			renames = append(renames, rename(c))
			continue
		}
		t := tallies[c.Kind]
		t.add(c.Part().Noun)
		tallies[c.Kind] = t
	}
	var out []string
	say := func(kinds ...outline.ChangeKind) {
		for _, k := range kinds {
			if s := tallies[k].String(); s != "" {
				out = append(out, k.String()+" "+s)
			}
		}
	}
	say(outline.Added, outline.Removed)
	if len(renames) > 0 {
		const listed = 2
		s := strings.Join(renames[:min(len(renames), listed)], ", ")
		if len(renames) > listed {
			s += " and " + plural.Count(len(renames)-listed, "other", "others")
		}
		out = append(out, s)
	}
	say(outline.Moved, outline.Resized, outline.Recoloured, outline.Restyled, outline.Reconnected, outline.Regrouped)
	return strings.Join(out, "; ")
}

// noun is what a kind of element is called, one and many.
type noun struct {
	one, many string
	a         string // the article: "a box", "an arrow"
}

var nouns = map[outline.Noun]noun{
	outline.NounBox:     {one: "box", many: "boxes", a: "a"},
	outline.NounArrow:   {one: "arrow", a: "an"},
	outline.NounLine:    {one: "line", a: "a"},
	outline.NounText:    {one: "text", a: "a"},
	outline.NounFrame:   {one: "frame", a: "a"},
	outline.NounPicture: {one: "picture", a: "a"},
	outline.NounSketch:  {one: "freehand drawing", a: "a"},
	outline.NounOther:   {one: "element", a: "an"},
}

// rename says how an element's label changed.
func rename(c outline.Change) string {
	o, p := c.Before.Label, c.After.Label
	n := nouns[c.After.Noun]
	switch {
	case o == "":
		return "labelled " + n.a + " " + n.one + " " + quote(p)
	case p == "":
		return "took the label " + quote(o) + " off " + n.a + " " + n.one
	case c.After.Noun == outline.NounText:
		return "rewrote " + quote(o) + " as " + quote(p)
	}
	return "renamed " + quote(o) + " to " + quote(p)
}

func quote(s string) string { return "‘" + clip.Runes(s, 30) + "’" }

// tally counts elements by noun.
type tally map[outline.Noun]int

func (t *tally) add(n outline.Noun) {
	if *t == nil {
		*t = tally{}
	}
	(*t)[n]++
}

// String is "3 boxes, 1 arrow", in the nouns' order; "" for none.
func (t tally) String() string {
	ns := make([]outline.Noun, 0, len(t))
	for n := range t {
		ns = append(ns, n)
	}
	slices.Sort(ns)
	out := make([]string, len(ns))
	for i, n := range ns {
		out[i] = plural.Count(t[n], nouns[n].one, nouns[n].many)
	}
	return strings.Join(out, ", ")
}
