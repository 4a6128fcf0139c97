// Package tools gives the agent's model its tools over a scene: JSON schemas written for small
// local models, strict validation of arguments, limits, and results the model can act on.
//
// Every call is atomic: a mutating tool works on a clone of the scene and the clone replaces the
// scene only when every part of the call succeeded, so a refused call changes nothing. Every call
// returns a Result, also for an unknown tool, malformed JSON or a panic inside a tool.
package tools

import (
	"context"
	_ "embed"
	"encoding/json"
	"fmt"
	"strings"
	"sync"

	"github.com/excalibot/excalibot/diagram/mermaid"
	"github.com/excalibot/excalibot/scene"
)

// Spec describes one tool to the model.
type Spec struct {
	// Name is the tool name the model calls, e.g. "batch_create_elements".
	Name string
	// Description tells a small model what the tool does and when to use it.
	Description string
	// Parameters is a JSON Schema object for the tool's arguments.
	Parameters json.RawMessage
}

// Result is the answer to one tool call. Every call gets one, also a failed call.
type Result struct {
	// Text is what the model reads: the outcome, or an error saying which field was wrong,
	// what was wrong, and what would be right.
	Text string
	// IsError is true when the call changed nothing because its arguments were refused.
	IsError bool
	// Done is true when the model called the done tool: the run should end.
	Done bool
	// Changed is true when the call changed the scene (the caller may save a revision).
	Changed bool
}

//go:embed guide/guide.md
var guideText string

// Set is the tool set over one scene. It is safe for concurrent use, though calls are serialised:
// a model's tool calls are meant to apply in order.
type Set struct {
	mu    sync.Mutex
	sc    *scene.Scene
	lim   Limits
	snaps map[string]*scene.Scene
	order []string // snapshot names, oldest first, for evicting beyond MaxSnapshots

	mermaid mermaid.Converter // for create_from_mermaid; nil refuses it (mermaid.go)
}

// New returns the tool set over sc. Zero fields of lim take their DefaultLimits values.
func New(sc *scene.Scene, lim Limits) *Set {
	if sc == nil {
		sc = scene.New()
	}
	return &Set{sc: sc, lim: lim.WithDefaults(), snaps: map[string]*scene.Scene{}}
}

// Limits are the limits the set's tools hold every call to.
func (s *Set) Limits() Limits { return s.lim }

// Scene returns the current scene. restore_snapshot and clear_canvas replace it and every
// successful mutating call changes it, so ask again after each call, and read it only between
// calls (a call in progress may update it in place).
func (s *Set) Scene() *scene.Scene {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.sc
}

// Specs returns the tools in the order the model should see them.
func (s *Set) Specs() []Spec {
	out := make([]Spec, len(toolDocs))
	for i, d := range toolDocs {
		out[i] = Spec{Name: d.name, Description: d.desc, Parameters: append(json.RawMessage(nil), d.params...)}
	}
	return out
}

// handler runs one tool with the call's context (graph layout and Mermaid conversion honour it).
// Mutating handlers get w, the working copy of a scene.Batch whose changes are kept only when the
// handler returns no error; the others get the scene itself and must not change it (snapshot,
// restore and clear replace s.sc instead).
type handler struct {
	mutates bool
	run     func(s *Set, ctx context.Context, w *scene.Scene, o *object) (string, error)
}

// handlers maps tool names to their implementation; Specs' order and texts live in specs.go.
var handlers = map[string]handler{
	ReadDiagramGuide:    {false, (*Set).readGuide},
	GetScene:            {false, (*Set).getScene},
	GetElement:          {false, (*Set).getElement},
	QueryElements:       {false, (*Set).queryElements},
	CreateGraph:         {true, (*Set).createGraph},
	AddToGraph:          {true, (*Set).addToGraph},
	UpdateGraph:         {true, (*Set).updateGraph},
	RemoveFromGraph:     {true, (*Set).removeFromGraph},
	RelayoutGraph:       {true, (*Set).relayoutGraph},
	CreateSequence:      {true, (*Set).createSequence},
	CreateFromMermaid:   {false, (*Set).createFromMermaid}, // replaces s.sc, like restore_snapshot
	BatchCreateElements: {true, (*Set).batchCreate},
	CreateElement:       {true, (*Set).createElement},
	UpdateElement:       {true, (*Set).updateElement},
	DeleteElements:      {true, (*Set).deleteElements},
	GroupElements:       {true, (*Set).groupElements},
	UngroupElements:     {true, (*Set).ungroupElements},
	AlignElements:       {true, (*Set).alignElements},
	DistributeElements:  {true, (*Set).distributeElements},
	LockElements:        {true, (*Set).lockElements},
	UnlockElements:      {true, (*Set).unlockElements},
	SetViewport:         {true, (*Set).setViewport},
	SnapshotScene:       {false, (*Set).snapshotScene},
	RestoreSnapshot:     {false, (*Set).restoreSnapshot},
	ClearCanvas:         {false, (*Set).clearCanvas},
	Done:                {false, (*Set).done},
}

// refusal is an error whose text is already written for the model.
type refusal struct{ msg string }

func (r *refusal) Error() string { return r.msg }

func refuse(format string, args ...any) error { return &refusal{fmt.Sprintf(format, args...)} }

// Call runs the named tool with its JSON arguments and always returns a Result.
func (s *Set) Call(ctx context.Context, name string, args json.RawMessage) (res Result) {
	if err := ctx.Err(); err != nil {
		return Result{Text: "not run: the request was cancelled (" + err.Error() + ")", IsError: true}
	}
	h, ok := handlers[name]
	if !ok {
		return Result{IsError: true, Text: fmt.Sprintf("unknown tool %q%s. Tools: %s", name,
			didYouMean(name, toolNames()), strings.Join(toolNames(), ", "))}
	}
	if len(args) > s.lim.MaxArgs {
		return Result{IsError: true, Text: fmt.Sprintf("%s refused, nothing changed: the arguments are %d KB, over the limit of %d KB. Split the work into several smaller calls.",
			name, len(args)>>10, s.lim.MaxArgs>>10)}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	defer func() {
		// A bug in one tool must not take the bot down; the batch copy it worked on is dropped.
		if r := recover(); r != nil {
			res = Result{IsError: true, Text: fmt.Sprintf("%s failed with an internal error (%v); nothing changed. Try a simpler call.", name, r)}
		}
	}()
	p := &problems{}
	o, ok := parseArgs(args, p)
	if !ok {
		return Result{IsError: true, Text: fmt.Sprintf("%s refused, nothing changed:\n%s", name, p.Error())}
	}
	o.p = p
	var text string
	var err error
	if h.mutates {
		// One working copy per call: the scene keeps the changes only if the whole call succeeds.
		err = s.sc.Batch(func(w *scene.Scene) error {
			var e error
			text, e = h.run(s, ctx, w, o)
			if e == nil && !p.ok() {
				e = p
			}
			return e
		})
	} else {
		text, err = h.run(s, ctx, s.sc, o)
		if err == nil && !p.ok() {
			err = p
		}
	}
	// Unknown fields the call ran without are named after its result, or among its problems when
	// it was refused (unknown.go).
	if err != nil {
		return Result{IsError: true, Text: fmt.Sprintf("%s refused, nothing changed:\n%s", name, errorText(err)+p.ignoredLines())}
	}
	if note := p.ignoredNote(); note != "" {
		text = strings.TrimRight(text, "\n") + note
	}
	res = Result{Text: text, Done: name == Done, Changed: h.mutates}
	if name == RestoreSnapshot || name == ClearCanvas || name == CreateFromMermaid {
		res.Changed = true
	}
	return res
}

// errorText formats a refusal: problem lists as they are, single errors as one "- " line.
func errorText(err error) string {
	if p, ok := err.(*problems); ok {
		return p.Error()
	}
	return "- " + err.Error()
}

// Tools without parameters ignore stray arguments: refusing get_scene over an extra field would
// only cost the model a turn.

func (s *Set) readGuide(_ context.Context, _ *scene.Scene, _ *object) (string, error) {
	return guideText + "\nColour names: " + colorNameList() + ".\n", nil
}

func (s *Set) getScene(_ context.Context, sc *scene.Scene, _ *object) (string, error) {
	return describeScene(sc, s.lim), nil
}

func (s *Set) done(_ context.Context, _ *scene.Scene, o *object) (string, error) {
	// done never refuses: a run that is over should not loop on a malformed summary.
	var summary string
	if v := o.raw("summary"); v != nil {
		_ = json.Unmarshal(v, &summary)
	}
	if summary == "" {
		return "done.", nil
	}
	return "done: " + summary, nil
}
