// Package outline reads a scene the way a person describes a diagram: its title, its boxes, what
// connects to what, and the groups around them. The bot uses it for the alt text every picture
// carries and for the text outline it answers `describe` with; SVG exports carry it as <title> and
// <desc>; a diagram's files are named after its title (FileBase). It reads any scene (drawn by the
// tools, edited by hand, imported), so it relies only on geometry and bindings, never on how an
// element was made.
package outline

import (
	"cmp"
	"math"
	"slices"
	"strings"

	"github.com/excalibot/excalibot/scene"
)

// Outline is what a scene shows, in reading order (top to bottom, then left to right).
type Outline struct {
	Title  string  // a heading above the drawing, or the one frame or group around all of it
	Kind   string  // "diagram", "sequence diagram" or "drawing"
	Nodes  []Node  // labelled or unlabelled shapes that are not groups
	Edges  []Edge  // arrows, with the nodes they connect
	Groups []Group // frames and shapes that enclose nodes
	Notes  []string
	Loose  int // lines and arrows bound at neither end
}

// Node is one box (rectangle, ellipse, diamond).
type Node struct {
	ID, Label string
	Shape     scene.Type
}

// Edge is one arrow; From and To are node labels ("" for an end bound to nothing).
type Edge struct {
	From, To, Label string
	Both            bool // arrowheads at both ends
}

// Group is a frame or an enclosing shape and the labels of the nodes inside it.
type Group struct {
	Name    string
	Members []string
}

// Of outlines sc's live elements.
func Of(sc *scene.Scene) Outline {
	els := sc.Elements()
	labels := map[string]string{}
	for _, e := range els {
		if e.Type == scene.Text && e.ContainerID != "" {
			labels[e.ContainerID] = written(e)
		}
	}
	skip := arrowParts(els, labels)
	var shapes, texts, arrows, lines, frames []scene.Element
	for _, e := range els {
		switch {
		case skip[e.ID]:
		case e.Type.IsShape():
			shapes = append(shapes, e)
		case e.Type == scene.Text && e.ContainerID == "" && strings.TrimSpace(e.Text) != "":
			texts = append(texts, e)
		case e.Type == scene.Arrow:
			arrows = append(arrows, e)
		case e.Type == scene.Line:
			lines = append(lines, e)
		case e.Type == scene.Frame:
			frames = append(frames, e)
		}
	}
	sortReading(shapes)
	sortReading(texts)

	var o Outline
	// A shape that wholly encloses other shapes is a group box (a subgraph, a cluster), not a node.
	enclosing := map[string][]string{}
	for _, g := range shapes {
		for _, n := range shapes {
			if n.ID != g.ID && encloses(g.Bounds(), n.Bounds()) {
				enclosing[g.ID] = append(enclosing[g.ID], n.ID)
			}
		}
	}
	texts = labelInside(texts, shapes, labels)
	name := map[string]string{}
	for _, s := range shapes {
		if _, isGroup := enclosing[s.ID]; isGroup {
			continue
		}
		n := Node{ID: s.ID, Label: labels[s.ID], Shape: s.Type}
		o.Nodes = append(o.Nodes, n)
		name[s.ID] = n.Label
		if n.Label == "" {
			name[s.ID] = unlabelled + shapeWord(s.Type)
		}
	}
	for _, s := range shapes {
		if members, ok := enclosing[s.ID]; ok {
			o.Groups = append(o.Groups, Group{Name: labels[s.ID], Members: namesOf(members, name)})
		}
	}
	for _, f := range frames {
		var members []string
		for _, s := range shapes {
			if s.FrameID == f.ID {
				members = append(members, s.ID)
			}
		}
		o.Groups = append(o.Groups, Group{Name: oneLine(f.Name), Members: namesOf(members, name)})
	}

	for _, a := range append(arrows, lines...) {
		from, to := endName(a.StartBinding, name), endName(a.EndBinding, name)
		if from == "" && to == "" {
			if a.Type == scene.Arrow || labels[a.ID] != "" {
				o.Loose++
			}
			continue
		}
		o.Edges = append(o.Edges, Edge{From: from, To: to, Label: labels[a.ID],
			Both: a.StartArrowhead != "" && a.EndArrowhead != ""})
	}

	top, labelSize := math.Inf(1), 0.0
	for _, s := range shapes {
		top = math.Min(top, s.Y)
	}
	for _, e := range els {
		if e.Type == scene.Text && e.ContainerID != "" {
			labelSize = math.Max(labelSize, e.FontSize)
		}
	}
	o.Title, texts = title(texts, top, labelSize, o.Groups, len(o.Nodes))
	for _, t := range texts {
		o.Notes = append(o.Notes, written(t))
	}
	switch {
	case len(lifelinesOf(lines)) >= 2:
		o.Kind = "sequence diagram"
		o.sequence(lifelinesOf(lines), shapes, append(arrows, lines...), labels)
	case len(o.Nodes) > 0:
		o.Kind = "diagram"
	default:
		o.Kind = "drawing"
	}
	return o
}

// arrowParts reads what a group holding one arrow adds to it, as a sequence diagram draws a message
// to oneself (its label beside the loop, since a bound label would sit on the loop's line) and a
// numbered message (Mermaid's autonumber: a small circle with the number at the message's start).
// Free texts in the group are the arrow's label when it has none; circles and the texts over them
// are the number, read as part of the message. It returns the elements taken.
func arrowParts(els []scene.Element, labels map[string]string) map[string]bool {
	members := map[string][]scene.Element{}
	for _, e := range els {
		if e.ContainerID == "" && len(e.GroupIDs) > 0 {
			g := e.GroupIDs[0] // the innermost group
			members[g] = append(members[g], e)
		}
	}
	taken := map[string]bool{}
groups:
	for _, ms := range members {
		var arrow *scene.Element
		var badges, texts []scene.Element
		for i, e := range ms {
			switch {
			case e.Type == scene.Arrow && arrow == nil:
				arrow = &ms[i]
			case e.Type == scene.Arrow:
				continue groups // two arrows: not one message's parts
			case e.Type == scene.Ellipse && e.Width <= 40 && e.Height <= 40:
				badges = append(badges, e)
			case e.Type == scene.Text:
				texts = append(texts, e)
			default:
				continue groups // anything else: a group of the drawing's own
			}
		}
		if arrow == nil {
			continue
		}
		var words []string
		for _, t := range texts {
			c := t.Center()
			over := slices.ContainsFunc(badges, func(b scene.Element) bool {
				r := b.Bounds()
				return c.X >= r.X && c.X <= r.X+r.Width && c.Y >= r.Y && c.Y <= r.Y+r.Height
			})
			if !over {
				words = append(words, written(t))
			}
			taken[t.ID] = over || labels[arrow.ID] == ""
		}
		for _, b := range badges {
			taken[b.ID] = true
		}
		if labels[arrow.ID] == "" && len(words) > 0 {
			labels[arrow.ID] = strings.Join(words, " ")
		}
	}
	return taken
}

// labelInside reads free text placed over a shape without a label of its own as that shape's
// label, as people draw by hand (a text on a box rather than in it); the smallest shape under the
// text's centre takes it. It returns the texts that stay free.
func labelInside(texts, shapes []scene.Element, labels map[string]string) []scene.Element {
	var free []scene.Element
	for _, t := range texts {
		c := t.Center()
		best := -1
		for i, s := range shapes {
			r := s.Bounds()
			if c.X < r.X || c.Y < r.Y || c.X > r.X+r.Width || c.Y > r.Y+r.Height {
				continue
			}
			if best < 0 || r.Width*r.Height < shapes[best].Width*shapes[best].Height {
				best = i
			}
		}
		if best < 0 || hasBoundText(shapes[best]) {
			free = append(free, t)
			continue
		}
		id := shapes[best].ID
		labels[id] = strings.TrimSpace(labels[id] + " " + written(t))
	}
	return free
}

func hasBoundText(s scene.Element) bool {
	return slices.ContainsFunc(s.BoundElements, func(b scene.BoundElement) bool { return b.Type == scene.Text })
}

// unlabelled starts the name an edge gives a box without a label.
const unlabelled = "an unlabelled "

// endName is the node an arrow's end is bound to, or "" when it is bound to nothing known.
func endName(b *scene.Binding, name map[string]string) string {
	if b == nil {
		return ""
	}
	return name[b.ElementID]
}

func namesOf(ids []string, name map[string]string) []string {
	var out []string
	for _, id := range ids {
		if n, ok := name[id]; ok {
			out = append(out, n)
		}
	}
	return out
}

// title picks the heading: the free text set larger than every label and standing above all the
// shapes, else the name of the one group that holds every node. The heading is taken out of texts.
func title(texts []scene.Element, top, labelSize float64, groups []Group, nodes int) (string, []scene.Element) {
	best := -1
	for i, t := range texts {
		if t.Y+t.Height > top+1 || t.FontSize <= labelSize {
			continue
		}
		if best < 0 || t.FontSize > texts[best].FontSize {
			best = i
		}
	}
	if best >= 0 {
		return written(texts[best]), slices.Delete(slices.Clone(texts), best, best+1)
	}
	if len(groups) == 1 && groups[0].Name != "" && len(groups[0].Members) == nodes {
		return groups[0].Name, texts
	}
	return "", texts
}

// lifelinesOf returns the dashed vertical lines of a sequence diagram, left to right.
func lifelinesOf(lines []scene.Element) []scene.Element {
	var out []scene.Element
	for _, l := range lines {
		ps := l.AbsPoints()
		if l.StrokeStyle != "dashed" || len(ps) != 2 {
			continue
		}
		if dx, dy := math.Abs(ps[1].X-ps[0].X), math.Abs(ps[1].Y-ps[0].Y); dy > 4*dx && dy > 40 {
			out = append(out, l)
		}
	}
	slices.SortFunc(out, func(a, b scene.Element) int { return cmp.Compare(a.X, b.X) })
	return out
}

// sortReading orders elements as a reader meets them: by rows (tops within half a typical box
// height count as one row), then from left to right.
func sortReading(els []scene.Element) {
	const row = 30
	slices.SortStableFunc(els, func(a, b scene.Element) int {
		ra, rb := math.Floor(a.Y/row), math.Floor(b.Y/row)
		return cmp.Or(cmp.Compare(ra, rb), cmp.Compare(a.X, b.X))
	})
}

// encloses reports whether outer wholly contains inner and is clearly bigger.
func encloses(outer, inner scene.Rect) bool {
	return inner.X >= outer.X && inner.Y >= outer.Y &&
		inner.X+inner.Width <= outer.X+outer.Width && inner.Y+inner.Height <= outer.Y+outer.Height &&
		outer.Width*outer.Height > 1.5*inner.Width*inner.Height
}

func shapeWord(t scene.Type) string {
	switch t {
	case scene.Ellipse:
		return "ellipse"
	case scene.Diamond:
		return "diamond"
	default:
		return "box"
	}
}

// written is a text as its author wrote it (without the breaks wrapping added), on one line.
func written(t scene.Element) string {
	if t.OriginalText != "" {
		return oneLine(t.OriginalText)
	}
	return oneLine(t.Text)
}

// oneLine joins a wrapped or multi-line text into one line.
func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }
