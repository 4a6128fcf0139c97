package tools

import (
	"fmt"
	"math"
	"strings"

	"github.com/excalibot/excalibot/scene"
)

// Sequence diagrams have their own placement, not a graph layout: one column per actor with a
// dashed lifeline, one row per message in the order given. Excalidraw binds arrows only to shapes,
// so messages are free arrows whose ends rest on the lifelines (lint accepts an arrow end resting
// on a line); each actor is grouped with its lifeline so they move together in the editor.

const (
	seqColumnGap = 80.0 // least gap between actor boxes
	seqRow       = 60.0 // least height of a message row
	seqSelfWidth = 60.0 // how far a message to oneself loops out
	seqSelfDrop  = 40.0 // and how far down it comes back

	seqGroupPrefix = "seq-" // group of an actor and its lifeline; graph tools leave these alone
)

type seqActor struct {
	path, id, label, shape string
	fill                   *string
}

type seqMessage struct {
	path, from, to, label, style, arrow string
}

func (s *Set) createSequence(w *scene.Scene, o *object) (string, error) {
	actorObjs, _ := o.objList("actors")
	msgObjs, _ := o.objList("messages")
	finishGraph(o, []string{"actors", "messages"})
	if !o.has("messages") {
		o.p.add("messages", "missing; give a list like [{\"from\":\"user\",\"to\":\"api\",\"label\":\"GET /\"}]")
	}
	if n := len(actorObjs) + len(msgObjs); n > s.lim.MaxBatch {
		return "", refuse("%d actors and messages in one call; the limit is %d", n, s.lim.MaxBatch)
	}
	var actors []seqActor
	for _, a := range actorObjs {
		n := decodeNode(a, s.lim) // the fields and rules of graph nodes
		if n.group != "" {
			a.p.add(a.path+".group", "actors of a sequence diagram have no groups")
		}
		actors = append(actors, seqActor{path: n.path, id: n.id, label: n.label, shape: n.shape, fill: n.fill})
	}
	var msgs []seqMessage
	for _, m := range msgObjs {
		e := decodeEdge(m, s.lim)
		msgs = append(msgs, seqMessage{path: e.path, from: e.from, to: e.to, label: e.label, style: e.style, arrow: e.arrow})
	}
	if !o.p.ok() {
		return "", o.p
	}
	if len(msgs) == 0 {
		return "", refuse("messages: the list is empty; give at least one message")
	}
	// Actors not listed are made from the messages, in the order they first appear.
	byRef := map[string]int{}
	for i, a := range actors {
		byRef[a.id], byRef[normLabel(a.label)] = i, i
	}
	p := &problems{}
	resolve := func(ref string) int {
		if i, ok := byRef[ref]; ok {
			return i
		}
		if i, ok := byRef[normLabel(ref)]; ok {
			return i
		}
		if len(actorObjs) > 0 {
			return -1
		}
		id := freshID(slug(ref, s.lim.MaxIDLength), "actor", s.lim.MaxIDLength, func(c string) bool {
			_, inCall := byRef[c]
			return inCall || w.Has(c)
		})
		actors = append(actors, seqActor{id: id, label: ref, shape: "rectangle"})
		i := len(actors) - 1
		byRef[ref], byRef[normLabel(ref)] = i, i
		return i
	}
	cols := make([][2]int, len(msgs))
	for k, m := range msgs {
		cols[k] = [2]int{resolve(m.from), resolve(m.to)}
		for j, end := range []string{"from", "to"} {
			if cols[k][j] < 0 {
				p.add(m.path+"."+end, "no actor %q; actors: %s", []string{m.from, m.to}[j], actorList(actors))
			}
		}
	}
	seen := map[string]string{}
	for _, a := range actors {
		if prev, dup := seen[a.id]; dup {
			p.add(a.path+".id", "%q is already used by %s", a.id, prev)
		}
		seen[a.id] = a.path
		if w.Has(a.id) {
			p.add(a.path+".id", "%q is already on the canvas; pick another id", a.id)
		}
	}
	if !p.ok() {
		return "", p
	}
	if total := w.Len() + 3*len(actors) + 2*len(msgs); total > s.lim.MaxElements {
		return "", refuse("the canvas would hold %d elements (labels count); the limit is %d", total, s.lim.MaxElements)
	}
	before, hadContent := oldBounds(w, nil)
	ox, oy := 0.0, 0.0
	if hadContent {
		ox, oy = before.X+before.Width+3*graphGap, before.Y
	}
	return s.drawSequence(w, actors, msgs, cols, ox, oy)
}

// normLabel is a label as looked up: case and spacing ignored, prefixed so it never equals an id.
func normLabel(s string) string {
	return "\x00" + strings.Join(strings.Fields(strings.ToLower(s)), " ")
}

func actorList(actors []seqActor) string {
	out := ""
	for i, a := range actors {
		if i > 0 {
			out += ", "
		}
		out += fmt.Sprintf("%s (%q)", a.id, a.label)
	}
	return out
}

// drawSequence adds the actors and messages, then places them: the widest label between two
// columns sets the column spacing, the tallest label in a row its height.
func (s *Set) drawSequence(w *scene.Scene, actors []seqActor, msgs []seqMessage, cols [][2]int, ox, oy float64) (string, error) {
	var ids []string
	var maxW, maxH float64
	for _, a := range actors {
		e := scene.NewElement(scene.Type(a.shape))
		e.ID, e.Width, e.Height = a.id, defaultSizes[a.shape][0], defaultSizes[a.shape][1]
		if a.fill != nil {
			e.BackgroundColor = *a.fill
		}
		if _, err := w.Add(e); err != nil {
			return "", refuse("%s: %s", a.path, sceneErrText(err))
		}
		if _, err := w.SetLabel(a.id, a.label); err != nil {
			return "", refuse("%s.label: %s", a.path, sceneErrText(err))
		}
		if err := fitLabel(w, a.id); err != nil {
			return "", err
		}
		e, _ = w.Get(a.id)
		maxW, maxH = math.Max(maxW, e.Width), math.Max(maxH, e.Height)
		ids = append(ids, a.id)
	}
	spacing := maxW + seqColumnGap
	msgIDs := make([]string, len(msgs))
	rows := make([]float64, len(msgs))
	for k, m := range msgs {
		id := fmt.Sprintf("msg%d", k+1)
		for i := 2; w.Has(id); i++ {
			id = fmt.Sprintf("msg%d-%d", k+1, i)
		}
		e := scene.NewElement(scene.Arrow)
		e.ID, e.StrokeStyle, e.EndArrowhead = id, m.style, "arrow"
		switch m.arrow {
		case "both":
			e.StartArrowhead = "arrow"
		case "none":
			e.EndArrowhead = ""
		}
		e.Points = []scene.Point{{}, {X: 100}}
		if _, err := w.Add(e); err != nil {
			return "", refuse("%s: %s", m.path, sceneErrText(err))
		}
		rows[k] = seqRow
		if m.label != "" {
			if _, err := w.SetLabel(id, m.label); err != nil {
				return "", refuse("%s.label: %s", m.path, sceneErrText(err))
			}
			l, _ := w.Get(scene.LabelID(id))
			rows[k] = math.Max(seqRow, l.Height+30)
			span := math.Abs(float64(cols[k][1] - cols[k][0]))
			if span == 0 {
				spacing = math.Max(spacing, seqSelfWidth+l.Width+maxW/2+seqColumnGap)
			} else {
				spacing = math.Max(spacing, (l.Width+60)/span)
			}
		}
		if cols[k][0] == cols[k][1] {
			rows[k] += seqSelfDrop
		}
		msgIDs[k] = id
	}
	centre := func(i int) float64 { return ox + maxW/2 + float64(i)*spacing }
	for i, a := range actors {
		e, _ := w.Get(a.id)
		if err := w.MoveBy([]string{a.id}, centre(i)-e.Width/2-e.X, oy+maxH-e.Height-e.Y); err != nil {
			return "", fmt.Errorf("place actor %q: %w", a.id, err)
		}
	}
	y := oy + maxH + seqRow
	for k, id := range msgIDs {
		from, to := centre(cols[k][0]), centre(cols[k][1])
		pts := []scene.Point{{}, {X: to - from}}
		if cols[k][0] == cols[k][1] {
			pts = []scene.Point{{}, {X: seqSelfWidth}, {X: seqSelfWidth, Y: seqSelfDrop}, {Y: seqSelfDrop}}
		}
		self := cols[k][0] == cols[k][1]
		if err := w.Update(id, func(e *scene.Element) error {
			e.X, e.Y, e.Points = from, y, pts
			if self {
				e.Roundness = nil // a square loop; a rounded one curls into its own label
			}
			return nil
		}); err != nil {
			return "", fmt.Errorf("place message %q: %w", id, err)
		}
		y += rows[k]
	}
	// Lifelines last, so they know how far down the messages go.
	for i, a := range actors {
		line := scene.NewElement(scene.Line)
		line.ID = "life-" + a.id
		for j := 2; w.Has(line.ID); j++ {
			line.ID = fmt.Sprintf("life-%s-%d", a.id, j)
		}
		line.X, line.Y = centre(i), oy+maxH
		line.Points = []scene.Point{{}, {Y: y - (oy + maxH)}}
		line.StrokeStyle, line.StrokeColor, line.StrokeWidth = "dashed", "#868e96", 1
		if _, err := w.Add(line); err != nil {
			return "", fmt.Errorf("lifeline of %q: %w", a.id, err)
		}
		if _, err := w.Group(seqGroupPrefix+a.id, a.id, line.ID); err != nil {
			return "", fmt.Errorf("group %q with its lifeline: %w", a.id, err)
		}
		ids = append(ids, line.ID)
	}
	ids = append(ids, msgIDs...)
	return fmt.Sprintf("sequence drawn: %d actors, %d messages.\n", len(actors), len(msgs)) + createdText(w, ids, s.lim), nil
}
