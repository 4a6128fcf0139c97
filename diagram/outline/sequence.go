package outline

import (
	"cmp"
	"math"
	"slices"

	"github.com/excalibot/excalibot/scene"
)

// sequence rereads a sequence diagram: its nodes are the participants heading the lifelines, its
// edges the messages between lifelines from top to bottom. Messages are found by where their ends
// lie, since a message need not be bound to anything; activation bars are not boxes, and other
// labelled shapes (notes) become notes.
func (o *Outline) sequence(lifelines, shapes, links []scene.Element, labels map[string]string) {
	actorOf := make([]string, len(lifelines))
	role := map[string]string{}
	for i, l := range lifelines {
		best := -1
		for j, s := range shapes {
			c := s.Center()
			if s.Width < 20 || math.Abs(c.X-l.X) > 3 {
				if s.Width < 20 && math.Abs(c.X-l.X) <= s.Width {
					role[s.ID] = "bar"
				}
				continue
			}
			role[s.ID] = "actor"
			if best < 0 || s.Y < shapes[best].Y {
				best = j
			}
		}
		if best >= 0 {
			actorOf[i] = labels[shapes[best].ID]
			if actorOf[i] == "" {
				actorOf[i] = unlabelled + shapeWord(shapes[best].Type)
			}
		}
	}
	o.Nodes = nil
	for i, l := range lifelines {
		if actorOf[i] != "" {
			o.Nodes = append(o.Nodes, Node{ID: l.ID, Label: actorOf[i], Shape: scene.Rectangle})
		}
	}
	nearest := func(x float64) string {
		best, dist := "", 30.0
		for i, l := range lifelines {
			if d := math.Abs(x - l.X); d < dist {
				best, dist = actorOf[i], d
			}
		}
		return best
	}
	var msgs []scene.Element
	for _, a := range links {
		if a.Type == scene.Arrow || a.EndArrowhead != "" {
			msgs = append(msgs, a)
		}
	}
	slices.SortStableFunc(msgs, func(a, b scene.Element) int { return cmp.Compare(a.Y, b.Y) })
	o.Edges, o.Loose = nil, 0
	for _, m := range msgs {
		ps := m.AbsPoints()
		if len(ps) < 2 {
			continue
		}
		from, to := nearest(ps[0].X), nearest(ps[len(ps)-1].X)
		if from == "" && to == "" {
			o.Loose++
			continue
		}
		o.Edges = append(o.Edges, Edge{From: from, To: to, Label: labels[m.ID]})
	}
	var notes []string
	for _, s := range shapes {
		if role[s.ID] == "" && labels[s.ID] != "" {
			notes = append(notes, labels[s.ID])
		}
	}
	o.Notes = append(notes, o.Notes...)
	o.Groups = nil
}
