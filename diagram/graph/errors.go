package graph

import (
	"errors"
	"fmt"
	"strings"

	"github.com/excalibot/excalibot/scene"
)

// Problem is one thing wrong with a graph: Where names the item by its Ref and field, e.g.
// "nodes[1].id"; Err says what is wrong (it may wrap a scene error).
type Problem struct {
	Where string
	Err   error
}

// Problems are all that is wrong with a graph Draw or Add was given; nothing was drawn.
type Problems []Problem

func (p *Problems) add(where, format string, args ...any) {
	*p = append(*p, Problem{Where: where, Err: fmt.Errorf(format, args...)})
}

func (p *Problems) ok() bool { return len(*p) == 0 }

func (p Problems) Error() string {
	var b strings.Builder
	for i, q := range p {
		if i > 0 {
			b.WriteString("; ")
		}
		if q.Where != "" {
			b.WriteString(q.Where + ": ")
		}
		b.WriteString(q.Err.Error())
	}
	return b.String()
}

// TakenError is a new node's id that an element on the canvas already has.
type TakenError struct {
	ID   string
	Type scene.Type // the element's type
}

func (e *TakenError) Error() string {
	return fmt.Sprintf("%q is already on the canvas (%s)", e.ID, e.Type)
}

// LockedError is nodes a relayout would move that are locked.
type LockedError struct{ IDs []string }

func (e *LockedError) Error() string { return "nodes " + strings.Join(e.IDs, ", ") + " are locked" }

// ErrNoNodes is a relayout of a canvas that has no nodes.
var ErrNoNodes = errors.New("the canvas has no nodes to lay out")

// TooManyError is a graph that would bring the canvas over its element limit (labels count).
type TooManyError struct{ Total, Limit, Now int }

func (e *TooManyError) Error() string {
	return fmt.Sprintf("the canvas would hold %d elements (labels count); the limit is %d", e.Total, e.Limit)
}
