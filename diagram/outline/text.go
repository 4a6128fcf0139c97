package outline

import (
	"fmt"
	"strings"

	"github.com/excalibot/excalibot/internal/clip"
	"github.com/excalibot/excalibot/internal/plural"
)

// Summary is the outline in a sentence or two, for alt text: the kind and title, the boxes by
// name and the connections, shortened to at most max runes (whole items are left out, and the
// count of those left out is said, rather than a word cut in half).
func (o Outline) Summary(max int) string {
	var b strings.Builder
	b.WriteString(o.heading())
	if len(o.Nodes) == 0 && len(o.Edges) == 0 {
		if len(o.Notes) > 0 {
			b.WriteString(": " + joinWithin(quoted(o.Notes), max-b.Len()-2) + ".")
		} else {
			b.WriteString(".")
		}
		return clip.Runes(b.String(), max)
	}
	b.WriteString(" with " + o.tally() + ".")
	names := make([]string, 0, len(o.Nodes))
	for _, n := range o.Nodes {
		if n.Label != "" {
			names = append(names, n.Label)
		}
	}
	// A connection between two unnamed boxes says nothing to someone who cannot see it.
	links := make([]string, 0, len(o.Edges))
	for _, e := range o.Edges {
		if e.named() {
			links = append(links, e.phrase())
		}
	}
	rest := max - runes(b.String())
	if len(links) > 0 {
		// The connections name the boxes too; when they fit, the list of boxes is left out.
		if s := " " + joinWithin(links, rest-2) + "."; runes(s) <= rest && !strings.Contains(s, " more") || len(names) == 0 {
			b.WriteString(s)
			return clip.Runes(b.String(), max)
		}
	}
	if len(names) > 0 {
		prefix := " " + o.section("Boxes", "Participants") + ": "
		b.WriteString(prefix + joinWithin(names, rest-runes(prefix)-1) + ".")
	}
	return clip.Runes(b.String(), max)
}

// Text is the outline as a short document: a heading line, then boxes, connections, groups and
// free text as lists. It is what `describe` answers, for screen readers and for pasting into docs.
func (o Outline) Text() string {
	var b strings.Builder
	b.WriteString(o.heading())
	if len(o.Nodes) > 0 || len(o.Edges) > 0 {
		b.WriteString(" with " + o.tally())
	}
	b.WriteString("\n")
	if len(o.Nodes) > 0 {
		b.WriteString("\n" + o.section("Boxes", "Participants") + ":\n")
		for _, n := range o.Nodes {
			label := n.Label
			if label == "" {
				label = "(unlabelled " + shapeWord(n.Shape) + ")"
			}
			fmt.Fprintf(&b, "- %s\n", label)
		}
	}
	if len(o.Edges) > 0 {
		b.WriteString("\n" + o.section("Connections", "Messages") + ":\n")
		for _, e := range o.Edges {
			fmt.Fprintf(&b, "- %s\n", e.phrase())
		}
	}
	if len(o.Groups) > 0 {
		b.WriteString("\nGroups:\n")
		for _, g := range o.Groups {
			name := g.Name
			if name == "" {
				name = "(unnamed)"
			}
			if len(g.Members) == 0 {
				fmt.Fprintf(&b, "- %s\n", name)
				continue
			}
			fmt.Fprintf(&b, "- %s: %s\n", name, strings.Join(g.Members, ", "))
		}
	}
	if len(o.Notes) > 0 {
		b.WriteString("\nText:\n")
		for _, n := range o.Notes {
			fmt.Fprintf(&b, "- %s\n", n)
		}
	}
	if o.Loose > 0 {
		fmt.Fprintf(&b, "\n%s connected to nothing.\n", plural.Count(o.Loose, "line is", "lines are"))
	}
	return strings.TrimRight(b.String(), "\n")
}

// section names a list the way the diagram's kind calls its parts.
func (o Outline) section(diagram, sequence string) string {
	if o.Kind == "sequence diagram" {
		return sequence
	}
	return diagram
}

func (o Outline) heading() string {
	kind := o.Kind
	if kind == "" {
		kind = "drawing"
	}
	h := strings.ToUpper(kind[:1]) + kind[1:]
	if o.Title != "" {
		h += " “" + o.Title + "”"
	}
	return h
}

func (o Outline) tally() string {
	node, nodes, edge := "box", "boxes", "arrow"
	if o.Kind == "sequence diagram" {
		node, nodes, edge = "participant", "participants", "message"
	}
	parts := []string{plural.Count(len(o.Nodes), node, nodes)}
	if len(o.Edges) > 0 {
		parts = append(parts, plural.Count(len(o.Edges), edge, ""))
	}
	if len(o.Groups) > 0 {
		parts = append(parts, plural.Count(len(o.Groups), "group", ""))
	}
	return strings.Join(parts, ", ")
}

func (e Edge) named() bool {
	return e.From != "" && !strings.HasPrefix(e.From, unlabelled) || e.To != "" && !strings.HasPrefix(e.To, unlabelled)
}

// phrase is "A → B", "A ↔ B", "A → B (label)"; an end bound to nothing is "…".
func (e Edge) phrase() string {
	from, to := e.From, e.To
	if from == "" {
		from = "…"
	}
	if to == "" {
		to = "…"
	}
	arrow := " → "
	if e.Both {
		arrow = " ↔ "
	}
	s := from + arrow + to
	if e.Label != "" {
		s += " (" + e.Label + ")"
	}
	return s
}

// joinWithin joins items with ", " while they fit in max runes, then says how many were left out.
func joinWithin(items []string, max int) string {
	var b strings.Builder
	for i, it := range items {
		sep := ""
		if i > 0 {
			sep = ", "
		}
		more := ""
		if i < len(items)-1 {
			more = fmt.Sprintf(" and %d more", len(items)-i-1)
		}
		if runes(b.String())+runes(sep+it)+runes(more) > max && i > 0 {
			return b.String() + fmt.Sprintf(" and %d more", len(items)-i)
		}
		b.WriteString(sep + it)
	}
	return b.String()
}

func quoted(items []string) []string {
	out := make([]string, len(items))
	for i, s := range items {
		out[i] = "“" + s + "”"
	}
	return out
}

func runes(s string) int { return len([]rune(s)) }
