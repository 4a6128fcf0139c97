package agent

import (
	"fmt"
	"math"
	"strings"

	"github.com/excalibot/excalibot/internal/clip"
	"github.com/excalibot/excalibot/internal/plural"
)

// changeSummary says in a person's words what a run changed, from the scenes before and after it:
// "Added Monitoring after Deploy; 5 boxes, 4 arrows." It is the reply when the model wrote no
// summary of its own, so it names things by their labels, never by tool calls. It returns "" when
// nothing a person would see changed.
func changeSummary(before, after []ElementState) string {
	old := make(map[string]ElementState, len(before))
	for _, e := range before {
		old[e.ID] = e
	}
	byID := make(map[string]ElementState, len(after))
	for _, e := range after {
		byID[e.ID] = e
	}
	var added, removed, renamed, recolored, moved []string
	newArrows := 0
	for _, e := range after {
		o, ok := old[e.ID]
		switch {
		case !ok && isConnector(e):
			newArrows++
		case !ok:
			added = append(added, addedPhrase(e, after, old, byID))
		case o.Label != e.Label && e.Label != "" && o.Label != "":
			renamed = append(renamed, fmt.Sprintf("%s to %s", quoteLabel(o.Label), quoteLabel(e.Label)))
		case o.Label != e.Label && e.Label != "":
			renamed = append(renamed, "labelled "+quoteLabel(e.Label))
		}
		if ok && recoloured(o, e) {
			recolored = append(recolored, nameOf(e))
		}
		if ok && !isConnector(e) && (math.Abs(o.X-e.X) >= 1 || math.Abs(o.Y-e.Y) >= 1) {
			moved = append(moved, nameOf(e))
		}
	}
	goneArrows := 0
	for _, o := range before {
		if _, ok := byID[o.ID]; !ok {
			if isConnector(o) {
				goneArrows++
			} else {
				removed = append(removed, nameOf(o))
			}
		}
	}
	var parts []string
	if len(before) == 0 && len(after) > 0 {
		parts = append(parts, "Drew "+listOf(labelsOf(after), 6))
	} else {
		if len(added) > 0 {
			parts = append(parts, "Added "+listOf(added, 4))
		}
		if len(renamed) > 0 {
			parts = append(parts, "Renamed "+listOf(renamed, 3))
		}
		if len(recolored) > 0 {
			parts = append(parts, "Recoloured "+listOf(recolored, 4))
		}
		if len(removed) > 0 {
			parts = append(parts, "Removed "+listOf(removed, 4))
		}
		if len(moved) > 0 && len(added)+len(removed) == 0 {
			parts = append(parts, "Moved "+listOf(moved, 4))
		}
		if len(parts) == 0 {
			switch {
			case newArrows > 0:
				parts = append(parts, "Connected "+plural.Count(newArrows, "more arrow", ""))
			case goneArrows > 0:
				parts = append(parts, "Removed "+plural.Count(goneArrows, "arrow", ""))
			}
		}
	}
	if len(parts) == 0 {
		return ""
	}
	return strings.Join(parts, "; ") + "; " + tally(after) + "."
}

// addedPhrase names a new element and, when a new arrow ties it to an element that was already
// there, where it went: "Monitoring after Deploy".
func addedPhrase(e ElementState, after []ElementState, old, byID map[string]ElementState) string {
	name := nameOf(e)
	for _, a := range after {
		if !isConnector(a) || old[a.ID].ID != "" {
			continue
		}
		if a.To == e.ID {
			if p, ok := old[a.From]; ok && p.Label != "" {
				return name + " after " + quoteLabel(p.Label)
			}
		}
		if a.From == e.ID {
			if n, ok := old[a.To]; ok && n.Label != "" {
				return name + " before " + quoteLabel(n.Label)
			}
		}
	}
	return name
}

func isConnector(e ElementState) bool { return e.Type == "arrow" || e.Type == "line" }

// nameOf is an element as a person calls it: its label, else its kind.
func nameOf(e ElementState) string {
	if e.Label != "" {
		return quoteLabel(e.Label)
	}
	switch e.Type {
	case "rectangle", "ellipse", "diamond":
		return "a box"
	case "frame":
		return "a group"
	}
	return "a " + e.Type
}

func quoteLabel(s string) string { return clip.Runes(oneLine(s), 40) }

func labelsOf(els []ElementState) []string {
	var out []string
	for _, e := range els {
		if !isConnector(e) && e.Label != "" && e.Type != "text" {
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
