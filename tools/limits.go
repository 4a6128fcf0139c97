package tools

import (
	"fmt"
	"math"
)

// Limits bound what one tool call, and the scene as a whole, may hold. They protect the
// renderer, the store and the model's context from a run-away or hostile model.
type Limits struct {
	// MaxElements caps the elements in the scene (labels and arrows count, as in the file).
	MaxElements int
	// MaxBatch caps the elements one batch_create_elements call may create.
	MaxBatch int
	// MaxLabel caps the characters of one label or text.
	MaxLabel int
	// MaxCoord bounds every coordinate and size to ±MaxCoord.
	MaxCoord float64
	// SceneBudget caps get_scene's output in bytes; beyond it distant elements are summarised.
	SceneBudget int
	// MaxSnapshots caps the named snapshots kept for snapshot_scene.
	MaxSnapshots int
	// MaxIDLength caps the length of a model-chosen id.
	MaxIDLength int
	// MaxArgs caps one call's arguments in bytes, checked before they are parsed: the largest
	// legitimate call (a full batch of MaxBatch labelled elements) is well under it, and a
	// run-away model must not make the bot parse and hold megabytes.
	MaxArgs int
}

// DefaultLimits returns the shipped limits: 500 elements, 200 per batch, labels of 500
// characters, coordinates within ±100 000, an 8 KB get_scene, 256 KB of arguments per call.
func DefaultLimits() Limits {
	return Limits{
		MaxElements:  500,
		MaxBatch:     200,
		MaxLabel:     500,
		MaxCoord:     100000,
		SceneBudget:  8192,
		MaxSnapshots: 20,
		MaxIDLength:  40,
		MaxArgs:      256 << 10,
	}
}

// WithDefaults fills zero fields from DefaultLimits so a partly set Limits still works.
func (l Limits) WithDefaults() Limits {
	d := DefaultLimits()
	if l.MaxElements <= 0 {
		l.MaxElements = d.MaxElements
	}
	if l.MaxBatch <= 0 {
		l.MaxBatch = d.MaxBatch
	}
	if l.MaxLabel <= 0 {
		l.MaxLabel = d.MaxLabel
	}
	if l.MaxCoord <= 0 || math.IsNaN(l.MaxCoord) || math.IsInf(l.MaxCoord, 0) {
		l.MaxCoord = d.MaxCoord
	}
	if l.SceneBudget <= 0 {
		l.SceneBudget = d.SceneBudget
	}
	if l.MaxSnapshots <= 0 {
		l.MaxSnapshots = d.MaxSnapshots
	}
	if l.MaxIDLength <= 0 {
		l.MaxIDLength = d.MaxIDLength
	}
	if l.MaxArgs <= 0 {
		l.MaxArgs = d.MaxArgs
	}
	return l
}

// coord reads a coordinate field and checks it is within the limit.
func (l Limits) coord(o *object, name string) (float64, bool) {
	v, ok := o.num(name)
	if !ok {
		return 0, false
	}
	if math.Abs(v) > l.MaxCoord {
		o.p.add(o.at(name), "%g is outside the canvas; keep coordinates within ±%g", v, l.MaxCoord)
		return 0, false
	}
	return v, true
}

// minSize is the smallest width or height accepted: below it a shape is a speck and its label
// cannot be laid out.
const minSize = 10

// size reads a width or height: positive and within the limit.
func (l Limits) size(o *object, name string) (float64, bool) {
	v, ok := o.num(name)
	if !ok {
		return 0, false
	}
	if v <= 0 {
		o.p.add(o.at(name), "%g is not a positive size; use a size like 160 (width) or 80 (height)", v)
		return 0, false
	}
	if v < minSize {
		o.p.add(o.at(name), "%g px is too small to see; use at least %d, e.g. 160 (width) or 80 (height)", v, minSize)
		return 0, false
	}
	if v > l.MaxCoord {
		o.p.add(o.at(name), "%g is too large; keep sizes up to %g", v, l.MaxCoord)
		return 0, false
	}
	return v, true
}

// label reads a label or text field and checks its length.
func (l Limits) label(o *object, name string) (string, bool) {
	s, ok := o.str(name)
	if !ok {
		return "", false
	}
	if n := len([]rune(s)); n > l.MaxLabel {
		o.p.add(o.at(name), "text is %d characters long; the limit is %d, shorten it", n, l.MaxLabel)
		return "", false
	}
	return s, true
}

// id reads an element id the model chose.
func (l Limits) id(o *object, name string) (string, bool) {
	s, ok := o.str(name)
	if !ok {
		return "", false
	}
	if err := l.CheckID(s); err != nil {
		o.p.add(o.at(name), "%v", err)
		return "", false
	}
	return s, true
}

// CheckID keeps ids short and printable: they appear in get_scene lines, where a space, quote or
// newline inside an id could be mistaken for structure. Code that makes ids for the tools (a
// plan's node ids) asks it too, so both accept the same ids.
func (l Limits) CheckID(s string) error {
	if s == "" {
		return fmt.Errorf("empty id; use a short id like \"r1\" or \"db\"")
	}
	if len(s) > l.MaxIDLength {
		return fmt.Errorf("id %q is %d bytes long; keep ids up to %d, like \"r1\" or \"api\"", s, len(s), l.MaxIDLength)
	}
	for _, r := range s {
		ok := r == '-' || r == '_' || r == '.' || r == ':' ||
			(r >= '0' && r <= '9') || (r >= 'a' && r <= 'z') || (r >= 'A' && r <= 'Z')
		if !ok {
			return fmt.Errorf("id %q contains %q; use letters, digits, '-', '_', '.' or ':' like \"user-db\"", s, r)
		}
	}
	return nil
}
