// Package sequence draws sequence diagrams on a scene. They have their own placement, not a graph
// layout: one column per actor with a dashed lifeline, one row per step in the order given
// (draw.go). Excalidraw binds arrows only to shapes, so messages are free arrows whose ends rest on
// a lifeline or on the side of an activation bar (the tools' lint accepts an arrow end resting on
// a line; bars are closed lines). Each actor is grouped with its lifeline and bars so they move
// together in the editor; notes and block boxes get GroupPrefix groups too, which keeps the graph
// builders from taking them for nodes.
//
// The steps are one ordered list, as in Mermaid: a message, a note over or beside actors, or a
// block (loop, alt, opt, par, critical, break) holding more steps, with else branches.
package sequence

import (
	"errors"
	"fmt"

	"github.com/excalibot/excalibot/diagram"
	"github.com/excalibot/excalibot/scene"
)

const (
	seqColumnGap = 80.0 // least gap between actor boxes
	seqRow       = 56.0 // least height of a message row
	seqSelfDrop  = 36.0 // how far down a message to oneself comes back
	seqFont      = 16.0 // messages, notes and block texts: Excalidraw's "S" size

	// GroupPrefix starts the group ids of a sequence's parts: an actor with its lifeline is
	// "seq-<actor id>". Graph layouts leave elements in such groups where they are.
	GroupPrefix = "seq-"
)

// Sequence is a whole diagram: the actors, left to right, and the steps, top to bottom.
type Sequence struct {
	Actors []Actor
	Steps  []Step
	// Autonumber draws each message's number (1, 2, 3 …) in a badge at its start, as Mermaid does.
	Autonumber bool
}

// Actor is one column.
type Actor struct {
	ID    string
	Label string
	// Shape is the box's type: scene.Rectangle when empty, or scene.Ellipse, scene.Diamond.
	Shape scene.Type
	// Fill is the box's background colour; empty keeps Excalidraw's default.
	Fill string
	// Ref names the actor in errors, e.g. the caller's "actors[0]"; the id when empty.
	Ref string
}

// Step is one step: set exactly one of Message, Note and Block.
type Step struct {
	Message *Message
	Note    *Note
	Block   *Block
	// Ref names the step in errors, e.g. the caller's "messages[2]".
	Ref string
}

// Message is an arrow from one actor's lifeline to another's (or back to its own).
type Message struct {
	From, To string // actor ids
	Label    string
	// Style is "solid" (the default) or "dashed" (a reply).
	Style string
	// Arrow is where the heads go: "end" (the default), "both" or "none".
	Arrow string
	// Activate opens an activation bar on To; Deactivate closes From's innermost one.
	Activate, Deactivate bool
}

// Side is where a note goes.
type Side string

const (
	Over    Side = "over" // over one actor, or spanning two
	LeftOf  Side = "left"
	RightOf Side = "right"
)

// Note is a text box over or beside actors.
type Note struct {
	Text   string
	Side   Side
	Actors []string // one actor id, or two for Over
}

// Block is a box around steps: a loop, alternatives and the like.
type Block struct {
	Kind  string // loop, alt, opt, par, critical or break
	Label string // the condition, drawn as [label]
	Steps []Step
	// Else are the further branches of an alt or par block, drawn below dashed dividers.
	Else []Branch
}

// Branch is one else (alt) or and (par) section of a block.
type Branch struct {
	Label string
	Steps []Step
}

// Result says what Draw added.
type Result struct {
	// IDs are the new elements' ids, the actors first.
	IDs                                          []string
	Actors, Messages, Notes, Blocks, Activations int
}

// ItemError is an actor or step Draw could not draw; Err is the scene's error.
type ItemError struct {
	Item  string // the Ref of the actor or step, or `note "…"`
	Field string // the part that failed ("label", "from", "to"), or ""
	Err   error
}

// Where is the item, and the field when there is one: "messages[2].label".
func (e *ItemError) Where() string {
	if e.Field == "" {
		return e.Item
	}
	return e.Item + "." + e.Field
}

func (e *ItemError) Error() string { return e.Where() + ": " + e.Err.Error() }
func (e *ItemError) Unwrap() error { return e.Err }

// actor, step and section are the diagram as the drawing plans it: actors by column.
type actor struct {
	ref, id, label string
	shape          scene.Type
	fill           *string
}

type step struct {
	ref string
	// message
	from, to, label, style, arrow string
	activate, deactivate          bool
	cols                          [2]int // actor columns of from and to, of a note's actors
	// note
	note, side string
	// block
	block    string
	sections []section // the block's own steps first, then each else/and branch
}

type section struct {
	label string
	steps []step
}

func (st *step) isNote() bool  { return st.side != "" }
func (st *step) isBlock() bool { return st.block != "" }

// Draw adds the diagram to w right of what w holds (diagram.Beside). It changes w even when it
// fails; callers that must not keep half a diagram draw on a batch copy (scene.Batch).
func Draw(w *scene.Scene, s Sequence) (Result, error) {
	if len(s.Actors) == 0 || len(s.Steps) == 0 {
		return Result{}, errors.New("a sequence needs at least one actor and one step")
	}
	d := &seqDrawing{w: w, autonumber: s.Autonumber}
	col := map[string]int{}
	for i, a := range s.Actors {
		ac := actor{ref: a.Ref, id: a.ID, label: a.Label, shape: a.Shape}
		if ac.ref == "" {
			ac.ref = a.ID
		}
		if ac.shape == "" {
			ac.shape = scene.Rectangle
		}
		if _, _, ok := diagram.DefaultSize(ac.shape); !ok {
			return Result{}, &ItemError{Item: ac.ref, Field: "shape", Err: fmt.Errorf("%q is not a node shape; use rectangle, ellipse or diamond", a.Shape)}
		}
		if a.Fill != "" {
			ac.fill = &a.Fill
		}
		if _, dup := col[a.ID]; dup {
			return Result{}, &ItemError{Item: ac.ref, Field: "id", Err: fmt.Errorf("%q is used by two actors", a.ID)}
		}
		col[a.ID] = i
		d.actors = append(d.actors, ac)
	}
	steps, err := plan(s.Steps, col, 0)
	if err != nil {
		return Result{}, err
	}
	at := diagram.Beside(w)
	return d.draw(steps, at.X, at.Y)
}

// plan turns the steps into the drawing's steps, finding each actor's column.
func plan(in []Step, col map[string]int, depth int) ([]step, error) {
	if depth > 4 {
		return nil, errors.New("blocks nest at most 4 deep")
	}
	out := make([]step, 0, len(in))
	for _, s := range in {
		st := step{ref: s.Ref}
		find := func(field, id string) (int, error) {
			c, ok := col[id]
			if !ok {
				return 0, &ItemError{Item: s.Ref, Field: field, Err: fmt.Errorf("no actor %q", id)}
			}
			return c, nil
		}
		var err error
		switch {
		case s.Message != nil && s.Note == nil && s.Block == nil:
			m := s.Message
			st.from, st.to, st.label, st.style, st.arrow = m.From, m.To, m.Label, m.Style, m.Arrow
			st.activate, st.deactivate = m.Activate, m.Deactivate
			if st.style == "" {
				st.style = "solid"
			}
			if st.arrow == "" {
				st.arrow = "end"
			}
			if st.cols[0], err = find("from", m.From); err != nil {
				return nil, err
			}
			if st.cols[1], err = find("to", m.To); err != nil {
				return nil, err
			}
		case s.Note != nil && s.Message == nil && s.Block == nil:
			n := s.Note
			if n.Text == "" || len(n.Actors) == 0 || len(n.Actors) > 2 || n.Side != Over && len(n.Actors) != 1 ||
				n.Side != Over && n.Side != LeftOf && n.Side != RightOf {
				return nil, &ItemError{Item: s.Ref, Err: errors.New("a note needs its text and one actor beside it, or one or two it is over")}
			}
			st.note, st.side = n.Text, string(n.Side)
			first, err := find(string(n.Side), n.Actors[0])
			if err != nil {
				return nil, err
			}
			last, err := find(string(n.Side), n.Actors[len(n.Actors)-1])
			if err != nil {
				return nil, err
			}
			st.cols = [2]int{min(first, last), max(first, last)}
		case s.Block != nil && s.Message == nil && s.Note == nil:
			b := s.Block
			if b.Kind == "" {
				return nil, &ItemError{Item: s.Ref, Field: "block", Err: errors.New("a block needs its kind (loop, alt, opt, par, critical, break)")}
			}
			st.block = b.Kind
			inner, err := plan(b.Steps, col, depth+1)
			if err != nil {
				return nil, err
			}
			st.sections = append(st.sections, section{label: b.Label, steps: inner})
			for _, br := range b.Else {
				steps, err := plan(br.Steps, col, depth+1)
				if err != nil {
					return nil, err
				}
				st.sections = append(st.sections, section{label: br.Label, steps: steps})
			}
		default:
			return nil, &ItemError{Item: s.Ref, Err: errors.New("a step is one of a message, a note and a block")}
		}
		out = append(out, st)
	}
	return out, nil
}
