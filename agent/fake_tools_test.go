package agent

import (
	"context"
	"encoding/json"
	"fmt"
	"sort"
	"strings"
	"sync"

	"github.com/excalibot/excalibot/tools"
)

// boardTools is a small toolbox over an in-memory board, enough to play scripted conversations:
// get_scene, batch_create_elements, update_element, delete_elements and done. It checks ids the
// way the real tools do (unknown ids are errors that name the ids that exist) and writes the board
// as an .excalidraw document with bound text, so scene diffs can be tested on real file shapes.
type boardTools struct {
	mu    sync.Mutex
	order []string
	els   map[string]*boardEl
	calls []string // "name args" per call, in order
	lint  []string // warnings the board reports as open
}

var _ SceneView = (*boardTools)(nil)

// State is the board as the agent remembers a scene, in id order.
func (b *boardTools) State() []ElementState {
	b.mu.Lock()
	defer b.mu.Unlock()
	ids := append([]string(nil), b.order...)
	sort.Strings(ids)
	out := make([]ElementState, 0, len(ids))
	for _, id := range ids {
		e := b.els[id]
		out = append(out, ElementState{ID: e.ID, Type: e.Type, X: e.X, Y: e.Y, W: e.W, H: e.H, Label: e.Text, From: e.Start, To: e.End})
	}
	return out
}

// Warnings are the board's open warnings.
func (b *boardTools) Warnings() []string { return b.lint }

type boardEl struct {
	ID    string  `json:"id"`
	Type  string  `json:"type"`
	X     float64 `json:"x"`
	Y     float64 `json:"y"`
	W     float64 `json:"width"`
	H     float64 `json:"height"`
	Text  string  `json:"text"`
	Start string  `json:"startElementId"`
	End   string  `json:"endElementId"`
}

var _ Toolbox = (*boardTools)(nil)

func newBoard() *boardTools { return &boardTools{els: map[string]*boardEl{}} }

func (b *boardTools) Specs() []tools.Spec {
	el := `{"type":"object","properties":{"id":{"type":"string"},"type":{"type":"string","enum":["rectangle","ellipse","diamond","arrow","text"]},"x":{"type":"number"},"y":{"type":"number"},"width":{"type":"number"},"height":{"type":"number"},"text":{"type":"string"},"startElementId":{"type":"string"},"endElementId":{"type":"string"}},"required":["id","type"]}`
	return []tools.Spec{
		{Name: "get_scene", Description: "Describe the scene: elements with ids, connections, warnings.",
			Parameters: json.RawMessage(`{"type":"object","properties":{}}`)},
		{Name: "batch_create_elements", Description: "Create shapes and arrows in one call.",
			Parameters: json.RawMessage(`{"type":"object","properties":{"elements":{"type":"array","items":` + el + `}},"required":["elements"]}`)},
		{Name: "update_element", Description: "Change an element by id.",
			Parameters: json.RawMessage(`{"type":"object","properties":{"id":{"type":"string"},"x":{"type":"number"},"y":{"type":"number"},"text":{"type":"string"}},"required":["id"]}`)},
		{Name: "delete_elements", Description: "Delete elements by id.",
			Parameters: json.RawMessage(`{"type":"object","properties":{"ids":{"type":"array","items":{"type":"string"}}},"required":["ids"]}`)},
		{Name: "done", Description: "Finish with a one-sentence summary.",
			Parameters: json.RawMessage(`{"type":"object","properties":{"summary":{"type":"string"}}}`)},
	}
}

func (b *boardTools) Call(_ context.Context, name string, args json.RawMessage) tools.Result {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.calls = append(b.calls, name+" "+string(args))
	fail := func(format string, a ...any) tools.Result {
		return tools.Result{IsError: true, Text: "Error: " + fmt.Sprintf(format, a...)}
	}
	switch name {
	case "get_scene":
		return tools.Result{Text: b.describe()}
	case "batch_create_elements":
		var in struct{ Elements []boardEl }
		if err := json.Unmarshal(args, &in); err != nil {
			return fail("elements: %v", err)
		}
		seen := map[string]bool{}
		for i, e := range in.Elements {
			if e.ID == "" || b.els[e.ID] != nil || seen[e.ID] {
				return fail("elements[%d].id %q is empty or taken; nothing was created", i, e.ID)
			}
			seen[e.ID] = true
			for _, end := range []string{e.Start, e.End} {
				if end != "" && b.els[end] == nil && !seen[end] {
					return fail("elements[%d]: no element with id %q; existing: %s; nothing was created", i, end, strings.Join(b.order, ", "))
				}
			}
		}
		for _, e := range in.Elements {
			e := e
			if e.W == 0 {
				e.W, e.H = 160, 70
			}
			b.els[e.ID] = &e
			b.order = append(b.order, e.ID)
		}
		return tools.Result{Text: fmt.Sprintf("Created %d elements.", len(in.Elements)), Changed: true}
	case "update_element":
		var in struct {
			ID   string
			X, Y *float64
			Text *string
		}
		if err := json.Unmarshal(args, &in); err != nil {
			return fail("%v", err)
		}
		e := b.els[in.ID]
		if e == nil {
			return fail("no element with id %q; existing: %s", in.ID, strings.Join(b.order, ", "))
		}
		if in.X != nil {
			e.X = *in.X
		}
		if in.Y != nil {
			e.Y = *in.Y
		}
		if in.Text != nil {
			e.Text = *in.Text
		}
		return tools.Result{Text: "Updated " + in.ID + ".", Changed: true}
	case "delete_elements":
		var in struct{ IDs []string }
		if err := json.Unmarshal(args, &in); err != nil {
			return fail("%v", err)
		}
		for _, id := range in.IDs {
			b.remove(id)
		}
		return tools.Result{Text: fmt.Sprintf("Deleted %d elements.", len(in.IDs)), Changed: true}
	case "done":
		return tools.Result{Text: "Finished.", Done: true}
	}
	return fail("unknown tool %q", name)
}

func (b *boardTools) remove(id string) {
	delete(b.els, id)
	for i, o := range b.order {
		if o == id {
			b.order = append(b.order[:i:i], b.order[i+1:]...)
			return
		}
	}
}

// edit changes the board the way a person in the editor would (outside the agent).
func (b *boardTools) edit(fn func(els map[string]*boardEl) []string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	for _, id := range fn(b.els) {
		if b.els[id] == nil {
			b.remove(id)
		} else {
			b.order = append(b.order, id)
		}
	}
}

func (b *boardTools) describe() string {
	var lines []string
	lines = append(lines, fmt.Sprintf("%d elements", len(b.order)))
	for _, id := range b.order {
		e := b.els[id]
		lines = append(lines, fmt.Sprintf("%s %s at (%g,%g) %q", e.ID, e.Type, e.X, e.Y, e.Text))
	}
	return strings.Join(lines, "\n")
}

func (b *boardTools) labels() map[string]string {
	b.mu.Lock()
	defer b.mu.Unlock()
	out := map[string]string{}
	for id, e := range b.els {
		out[id] = e.Text
	}
	return out
}

// snapshot writes the board as an .excalidraw document: labels are bound text elements.
func (b *boardTools) snapshot() ([]byte, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	var els []map[string]any
	ids := append([]string(nil), b.order...)
	sort.Strings(ids)
	for _, id := range ids {
		e := b.els[id]
		el := map[string]any{"id": e.ID, "type": e.Type, "x": e.X, "y": e.Y, "width": e.W,
			"height": e.H, "isDeleted": false, "text": map[bool]string{true: e.Text}[e.Type == "text"]}
		if e.Start != "" {
			el["startBinding"] = map[string]any{"elementId": e.Start}
		}
		if e.End != "" {
			el["endBinding"] = map[string]any{"elementId": e.End}
		}
		els = append(els, el)
		if e.Text != "" && e.Type != "text" {
			els = append(els, map[string]any{"id": e.ID + "-label", "type": "text", "x": e.X + 10, "y": e.Y + 10,
				"width": 50, "height": 25, "text": e.Text, "containerId": e.ID})
		}
	}
	return json.Marshal(map[string]any{"type": "excalidraw", "version": 2, "elements": els})
}
