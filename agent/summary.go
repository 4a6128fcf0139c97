package agent

import (
	"fmt"
	"strings"

	"github.com/excalibot/excalibot/diagram/outline"
	"github.com/excalibot/excalibot/internal/clip"
	"github.com/excalibot/excalibot/internal/plural"
	"github.com/excalibot/excalibot/scene"
)

// ChangeSummary says in a person's words what a run changed, from the scenes before and after it:
// "Added Monitoring after Deploy; 5 boxes, 4 arrows." It is the reply when the model wrote no
// summary of its own, so it names things by their labels, never by tool calls. It returns "" when
// nothing a person would see changed.
func ChangeSummary(before, after []ElementState) string {
	if len(before) == 0 && len(after) > 0 {
		return "Drew " + listOf(labelsOf(after), 6) + "; " + tally(after) + "."
	}
	old, cur, err := scenesOf(before, after)
	if err != nil {
		return ""
	}
	s := changeReply(outline.Diff(old, cur))
	if s == "" {
		return ""
	}
	return s + "; " + tally(after) + "."
}

// changeReply words what changed for the person who asked. New and removed arrows are counted, and
// said only when nothing else changed; moves and resizes are said only when nothing came or went:
// adding or removing a box moves the others, which is the layout's doing, not news.
func changeReply(changes []outline.Change) string {
	added := map[string]bool{}
	renamed := map[string]bool{}
	for _, c := range changes {
		switch c.Kind {
		case outline.Added:
			added[c.ID()] = true
		case outline.Renamed:
			renamed[c.ID()] = true
		}
	}
	var adds, removes, renames, labels, unlabels, recolours, reconnects, moves, resizes []string
	newArrows, goneArrows := 0, 0
	for _, c := range changes {
		o, p := c.Before, c.After
		switch c.Kind {
		case outline.Added:
			if p.Noun.Linear() {
				newArrows++
			} else {
				adds = append(adds, addedPhrase(p, changes, added))
			}
		case outline.Removed:
			if o.Noun.Linear() {
				goneArrows++
			} else {
				removes = append(removes, nameOf(o))
			}
		case outline.Renamed:
			switch {
			case o.Label == "":
				labels = append(labels, kindOf(p)+" "+quoteLabel(p.Label))
			case p.Label == "":
				unlabels = append(unlabels, quoteLabel(o.Label))
			default:
				renames = append(renames, quoteLabel(o.Label)+" to "+quoteLabel(p.Label))
			}
		case outline.Recoloured:
			recolours = append(recolours, nameOf(p))
		case outline.Reconnected:
			reconnects = append(reconnects, nameOf(p))
		case outline.Moved:
			moves = append(moves, nameOf(p))
		case outline.Resized:
			if !renamed[p.El.ID] { // a new label grows its box
				resizes = append(resizes, nameOf(p))
			}
		}
	}
	var parts []string
	say := func(verb string, items []string, n int) {
		if len(items) > 0 {
			parts = append(parts, verb+" "+listOf(items, n))
		}
	}
	say("Added", adds, 4)
	say("Renamed", renames, 3)
	say("Labelled", labels, 3)
	if len(unlabels) > 0 {
		word := "label"
		if len(unlabels) > 1 {
			word = "labels"
		}
		parts = append(parts, "Took the "+word+" "+listOf(unlabels, 3)+" off")
	}
	say("Recoloured", recolours, 4)
	say("Removed", removes, 4)
	say("Reconnected", reconnects, 4)
	if len(adds)+len(removes) == 0 {
		say("Moved", moves, 4)
		say("Resized", resizes, 4)
	}
	if len(parts) == 0 {
		switch {
		case newArrows > 0:
			parts = append(parts, "Connected "+plural.Count(newArrows, "more arrow", ""))
		case goneArrows > 0:
			parts = append(parts, "Removed "+plural.Count(goneArrows, "arrow", ""))
		}
	}
	return strings.Join(parts, "; ")
}

// addedPhrase names a new element and, when a new arrow ties it to an element that was already
// there, where it went: "Monitoring after Deploy".
func addedPhrase(p outline.Part, changes []outline.Change, added map[string]bool) string {
	name := nameOf(p)
	for _, c := range changes {
		a := c.After
		if c.Kind != outline.Added || !a.Noun.Linear() {
			continue
		}
		if a.To.ID == p.El.ID && a.From.ID != "" && !added[a.From.ID] && a.From.Label != "" {
			return name + " after " + quoteLabel(a.From.Label)
		}
		if a.From.ID == p.El.ID && a.To.ID != "" && !added[a.To.ID] && a.To.Label != "" {
			return name + " before " + quoteLabel(a.To.Label)
		}
	}
	return name
}

// nameOf is an element as a person calls it: its label, an arrow by what it connects, else its
// kind.
func nameOf(p outline.Part) string {
	switch {
	case p.Label != "":
		return quoteLabel(p.Label)
	case p.Noun.Linear() && p.From.Label != "" && p.To.Label != "":
		_, kind, _ := strings.Cut(kindOf(p), " ")
		return "the " + kind + " from " + quoteLabel(p.From.Label) + " to " + quoteLabel(p.To.Label)
	}
	return kindOf(p)
}

// kindOf is what an element is, with its article: "a box", "an arrow".
func kindOf(p outline.Part) string {
	switch p.Noun {
	case outline.NounBox:
		return "a box"
	case outline.NounArrow:
		return "an arrow"
	case outline.NounLine:
		return "a line"
	case outline.NounText:
		return "a text"
	case outline.NounFrame:
		return "a group"
	case outline.NounPicture:
		return "a picture"
	case outline.NounSketch:
		return "a freehand drawing"
	}
	return "an element"
}

func quoteLabel(s string) string { return clip.Runes(oneLine(s), 40) }

// labelsOf is the labels of a new diagram's boxes and groups, what "Drew …" names.
func labelsOf(els []ElementState) []string {
	var out []string
	for _, e := range els {
		if n := outline.NounOf(scene.Type(e.Type)); !n.Linear() && n != outline.NounText && e.Label != "" {
			out = append(out, quoteLabel(e.Label))
		}
	}
	if len(out) == 0 {
		return []string{"the diagram"}
	}
	return out
}

// listOf joins up to n items as a sentence does: "A, B and C", "A, B and 3 more".
func listOf(items []string, n int) string {
	if len(items) > n {
		items = append(items[:n:n], fmt.Sprintf("%d more", len(items)-n))
	}
	if len(items) == 1 {
		return items[0]
	}
	return strings.Join(items[:len(items)-1], ", ") + " and " + items[len(items)-1]
}

// tally counts what the diagram holds now: "5 boxes, 4 arrows".
func tally(els []ElementState) string {
	var boxes, arrows, texts, groups, other int
	for _, e := range els {
		switch e.Type {
		case "rectangle", "ellipse", "diamond":
			boxes++
		case "arrow", "line":
			arrows++
		case "text":
			texts++
		case "frame":
			groups++
		default:
			other++
		}
	}
	var out []string
	for _, c := range []struct {
		n            int
		one, several string
	}{{boxes, "box", "boxes"}, {arrows, "arrow", "arrows"}, {groups, "group", "groups"}, {texts, "text", "texts"}, {other, "other element", "other elements"}} {
		if c.n > 0 {
			out = append(out, plural.Count(c.n, c.one, c.several))
		}
	}
	if len(out) == 0 {
		return "the diagram is empty"
	}
	return strings.Join(out, ", ")
}
