package tools

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/excalibot/excalibot/diagram"
	"github.com/excalibot/excalibot/diagram/sequence"
	"github.com/excalibot/excalibot/internal/plural"
	"github.com/excalibot/excalibot/scene"
)

// create_sequence's arguments: the steps are one ordered list, as in Mermaid: a message {from, to,
// label, style, activate, deactivate}, a note {note, over | left_of | right_of}, or a block {block:
// loop|alt|opt|par|critical|break, label, messages, else: [{label, messages}]} whose messages may
// hold more steps. They are decoded and their actors found here (by id or label, with the model's
// field paths in every refusal); diagram/sequence draws them.

var (
	seqBlocks      = []string{"loop", "alt", "opt", "par", "critical", "break"}
	seqStepFields  = []string{"from", "to", "label", "style", "arrow", "activate", "deactivate", "return"}
	seqNoteFields  = []string{"note", "over", "left_of", "right_of"}
	seqBlockFields = []string{"block", "label", "messages", "else"}
	seqHints       = map[string]string{"text": "label", "source": "from", "target": "to", "kind": "block", "type": "block",
		"condition": "label", "steps": "messages", "and": "else", "left": "left_of", "right": "right_of", "leftOf": "left_of", "rightOf": "right_of", "actor": "over"}
)

type seqActor struct {
	path, id, label, shape string
	fill                   *string
}

// seqStep is one step as the model gave it: a message, a note or a block.
type seqStep struct {
	path string
	// message
	from, to, label, style, arrow string
	activate, deactivate          bool
	cols                          [2]int // actor columns of from and to
	// note: text and the actors it is over or beside
	note, side string // side: over, left, right
	refs       []string
	// block
	block    string
	sections []seqSection // the block's own steps first, then each else/and branch
}

type seqSection struct {
	label string
	steps []seqStep
}

func (st *seqStep) isNote() bool  { return st.side != "" }
func (st *seqStep) isBlock() bool { return st.block != "" }

// seqHint handles unknown fields, pointing at the right name for the usual slips.
func seqHint(o *object, known []string) {
	finishGraph(o, known, seqHints)
}

// decodeSteps reads a list of steps; depth counts enclosing blocks.
func (s *Set) decodeSteps(objs []*object, depth int, count *int) []seqStep {
	var out []seqStep
	for _, m := range objs {
		*count++
		switch {
		case m.has("block"):
			out = append(out, s.decodeBlock(m, depth, count))
		case m.has("note"):
			out = append(out, s.decodeNote(m))
		default:
			e := decodeEdgeFields(m, s.lim)
			st := seqStep{path: m.path, from: e.from, to: e.to, label: e.label, style: e.style, arrow: e.arrow}
			st.activate, _ = m.boolean("activate")
			st.deactivate, _ = m.boolean("deactivate")
			if ret, _ := m.boolean("return"); ret && !e.hasStyle {
				st.style = "dashed" // a reply is drawn dashed, as in UML and Mermaid
			}
			if st.from == "" || st.to == "" {
				m.p.add(m.path, "give from and to (actor ids or labels), a note {\"note\":…,\"over\":…} or a block {\"block\":\"loop\",\"messages\":[…]}")
			}
			seqHint(m, seqStepFields)
			out = append(out, st)
		}
	}
	return out
}

func (s *Set) decodeNote(m *object) seqStep {
	st := seqStep{path: m.path}
	st.note, _ = s.lim.label(m, "note")
	for _, side := range []string{"over", "left_of", "right_of"} {
		if refs, ok := m.strList(side); ok {
			if len(refs) == 1 && strings.Count(refs[0], ",") == 1 { // "over": "API, DB" means two actors
				refs = strings.Split(refs[0], ",")
				for i := range refs {
					refs[i] = strings.TrimSpace(refs[i])
				}
			}
			if st.side != "" {
				m.p.add(m.at(side), "give one of over, left_of and right_of")
			}
			st.side, st.refs = strings.TrimSuffix(side, "_of"), refs
		}
	}
	switch {
	case st.side == "":
		m.p.add(m.path, "say where the note goes: \"over\":\"API\" (or [\"API\",\"DB\"]), \"left_of\" or \"right_of\"")
	case len(st.refs) == 0 || len(st.refs) > 2 || st.side != "over" && len(st.refs) != 1:
		field := st.side
		if field != "over" {
			field += "_of"
		}
		m.p.add(m.at(field), "give one actor (or two for over)")
		st.side = ""
	}
	if strings.TrimSpace(st.note) == "" {
		m.p.add(m.at("note"), "the note has no text")
	}
	seqHint(m, seqNoteFields)
	return st
}

func (s *Set) decodeBlock(m *object, depth int, count *int) seqStep {
	st := seqStep{path: m.path}
	st.block, _ = m.enum("block", seqBlocks, map[string]string{"if": "alt", "optional": "opt", "parallel": "par", "for": "loop", "while": "loop", "repeat": "loop"})
	label, _ := s.lim.label(m, "label")
	inner, _ := m.itemList("messages", seqMessage)
	branches, _ := m.objList("else")
	seqHint(m, seqBlockFields)
	if depth >= 4 {
		m.p.add(m.path, "blocks nest at most 4 deep")
		return st
	}
	if len(inner) == 0 {
		m.p.add(m.at("messages"), "a block needs the messages it holds, e.g. {\"block\":\"loop\",\"label\":\"every 5 s\",\"messages\":[{\"from\":\"a\",\"to\":\"b\"}]}")
	}
	if len(branches) > 0 && st.block != "alt" && st.block != "par" {
		m.p.add(m.at("else"), "only alt and par blocks have branches")
	}
	st.sections = append(st.sections, seqSection{label: label, steps: s.decodeSteps(inner, depth+1, count)})
	for _, b := range branches {
		bl, _ := s.lim.label(b, "label")
		bm, _ := b.itemList("messages", seqMessage)
		seqHint(b, []string{"label", "messages"})
		if len(bm) == 0 {
			b.p.add(b.at("messages"), "a branch needs its messages")
		}
		st.sections = append(st.sections, seqSection{label: bl, steps: s.decodeSteps(bm, depth+1, count)})
	}
	return st
}

// seqMessage is a message written as one string, "Client -> API: GET /", a reply "API -->
// Client: 200 OK" (Mermaid's ->> and -->> too); the first ": " after the second name starts the
// label.
func seqMessage(text string) (map[string]json.RawMessage, error) {
	e, err := ParseEdge(text, nil)
	if err != nil {
		return nil, errNoMessage
	}
	f := jsonFields("from", e.From, "to", e.To, "label", e.Label)
	if e.Reply {
		f["return"] = json.RawMessage("true")
	}
	return f, nil
}

var errNoMessage = errors.New(`write a message as "A -> B: label", a reply as "B --> A: label"`)

// decodeEdgeFields reads a message's edge fields without refusing the sequence-only ones.
func decodeEdgeFields(o *object, lim Limits) edgeArgs {
	a := edgeArgs{path: o.path, arrow: "end", style: "solid"}
	a.from, _ = o.str("from")
	a.to, _ = o.str("to")
	a.label, a.hasLabel = lim.label(o, "label")
	if st, ok := o.enum("style", []string{"solid", "dashed"}, map[string]string{"dash": "dashed", "dotted": "dashed"}); ok {
		a.style, a.hasStyle = st, true
	}
	if ar, ok := o.enum("arrow", graphArrows, map[string]string{"forward": "end", "two-way": "both", "no": "none"}); ok {
		a.arrow = ar
	}
	return a
}

func (s *Set) createSequence(_ context.Context, w *scene.Scene, o *object) (string, error) {
	actorObjs, _ := o.itemList("actors", labelNode)
	msgObjs, _ := o.itemList("messages", seqMessage)
	autonumber, _ := o.boolean("autonumber")
	finishGraph(o, []string{"actors", "messages", "autonumber"})
	if !o.has("messages") {
		o.p.add("messages", "missing; give a list like [{\"from\":\"user\",\"to\":\"api\",\"label\":\"GET /\"}]")
	}
	var actors []seqActor
	for _, a := range actorObjs {
		n := decodeNode(a, s.lim) // the fields and rules of graph nodes
		if n.group != "" {
			a.p.add(a.path+".group", "actors of a sequence diagram have no groups")
		}
		actors = append(actors, seqActor{path: n.path, id: n.id, label: n.label, shape: n.shape, fill: n.fill})
	}
	count := len(actorObjs)
	steps := s.decodeSteps(msgObjs, 0, &count)
	if count > s.lim.MaxBatch {
		return "", refuse("%d actors and steps in one call; the limit is %d", count, s.lim.MaxBatch)
	}
	if !o.p.ok() {
		return "", o.p
	}
	if len(steps) == 0 {
		return "", refuse("messages: the list is empty; give at least one message")
	}
	// Actors not listed are made from the steps, in the order they first appear.
	byRef := map[string]int{}
	for i, a := range actors {
		byRef[a.id], byRef[normLabel(a.label)] = i, i
	}
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
		id := diagram.FreshID(diagram.Slug(ref, s.lim.MaxIDLength), "actor", s.lim.MaxIDLength, func(c string) bool {
			_, inCall := byRef[c]
			return inCall || w.Has(c)
		})
		actors = append(actors, seqActor{id: id, label: ref, shape: "rectangle"})
		i := len(actors) - 1
		byRef[ref], byRef[normLabel(ref)] = i, i
		return i
	}
	p := &problems{}
	nMsgs, nItems := resolveSteps(steps, resolve, func() []seqActor { return actors }, p)
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
	if total := w.Len() + 4*len(actors) + 2*nMsgs + 4*nItems; total > s.lim.MaxElements {
		return "", refuse("the canvas would hold %d elements (labels count); the limit is %d", total, s.lim.MaxElements)
	}
	seq := sequence.Sequence{Steps: toSteps(steps, actors), Autonumber: autonumber}
	for _, a := range actors {
		sa := sequence.Actor{ID: a.id, Label: a.label, Shape: scene.Type(a.shape), Ref: a.path}
		if a.fill != nil {
			sa.Fill = *a.fill
		}
		seq.Actors = append(seq.Actors, sa)
	}
	res, err := sequence.Draw(w, seq)
	var ie *sequence.ItemError
	if errors.As(err, &ie) {
		return "", refuse("%s: %s", ie.Where(), sceneErrText(ie.Err))
	}
	if err != nil {
		return "", err
	}
	return fmt.Sprintf("sequence drawn: %s, %s, %s, %s, %s.\n",
		plural.Count(res.Actors, "actor", ""), plural.Count(res.Messages, "message", ""), plural.Count(res.Notes, "note", ""),
		plural.Count(res.Blocks, "block", ""), plural.Count(res.Activations, "activation", "")) + createdText(w, res.IDs, s.lim), nil
}

// toSteps gives the resolved steps to diagram/sequence, every actor by its id.
func toSteps(in []seqStep, actors []seqActor) []sequence.Step {
	out := make([]sequence.Step, 0, len(in))
	for _, st := range in {
		s := sequence.Step{Ref: st.path}
		switch {
		case st.isBlock():
			b := &sequence.Block{Kind: st.block, Label: st.sections[0].label, Steps: toSteps(st.sections[0].steps, actors)}
			for _, sec := range st.sections[1:] {
				b.Else = append(b.Else, sequence.Branch{Label: sec.label, Steps: toSteps(sec.steps, actors)})
			}
			s.Block = b
		case st.isNote():
			n := &sequence.Note{Text: st.note, Side: sequence.Side(st.side), Actors: []string{actors[st.cols[0]].id}}
			if len(st.refs) == 2 {
				n.Actors = append(n.Actors, actors[st.cols[1]].id)
			}
			s.Note = n
		default:
			s.Message = &sequence.Message{From: actors[st.cols[0]].id, To: actors[st.cols[1]].id, Label: st.label,
				Style: st.style, Arrow: st.arrow, Activate: st.activate, Deactivate: st.deactivate}
		}
		out = append(out, s)
	}
	return out
}

// resolveSteps finds the actor columns of every message and note, recording unknown actors. It
// returns the number of messages and of other drawn items (notes, blocks, branches).
func resolveSteps(steps []seqStep, resolve func(string) int, actors func() []seqActor, p *problems) (msgs, items int) {
	for i := range steps {
		st := &steps[i]
		switch {
		case st.isBlock():
			items += len(st.sections)
			for _, sec := range st.sections {
				m, it := resolveSteps(sec.steps, resolve, actors, p)
				msgs, items = msgs+m, items+it
			}
		case st.isNote():
			items++
			cols := []int{}
			for _, r := range st.refs {
				c := resolve(r)
				if c < 0 {
					p.add(st.path, "no actor %q; actors: %s", r, actorList(actors()))
					continue
				}
				cols = append(cols, c)
			}
			if len(cols) == len(st.refs) {
				st.cols = [2]int{cols[0], cols[len(cols)-1]}
				if st.cols[0] > st.cols[1] {
					st.cols[0], st.cols[1] = st.cols[1], st.cols[0]
				}
			}
		default:
			msgs++
			st.cols = [2]int{resolve(st.from), resolve(st.to)}
			for j, end := range []string{"from", "to"} {
				if st.cols[j] < 0 {
					p.add(st.path+"."+end, "no actor %q; actors: %s", []string{st.from, st.to}[j], actorList(actors()))
				}
			}
		}
	}
	return msgs, items
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
