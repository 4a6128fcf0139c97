package agent

import (
	"cmp"
	"encoding/json"
	"fmt"
	"math"
	"strings"

	"github.com/excalibot/excalibot/diagram/outline"
	"github.com/excalibot/excalibot/internal/clip"
	"github.com/excalibot/excalibot/internal/plural"
	"github.com/excalibot/excalibot/scene"
)

// ElementState is what the agent remembers of one element: enough to tell the next run that a
// person added, removed, moved or relabelled something. Bound text is folded into its container's
// Label, so a label edit reads as a relabel, not as a new text element. Style other than colours and
// grouping are not kept, so the agent's words about changes leave them out.
type ElementState struct {
	ID    string  `json:"id"`
	Type  string  `json:"type"`
	X     float64 `json:"x"`
	Y     float64 `json:"y"`
	W     float64 `json:"w"`
	H     float64 `json:"h"`
	Label string  `json:"label,omitempty"`
	// Stroke and Fill are the colours; empty in memories written before they were kept.
	Stroke string `json:"stroke,omitempty"`
	Fill   string `json:"fill,omitempty"`
	// From and To are the elements an arrow is bound to.
	From string `json:"from,omitempty"`
	To   string `json:"to,omitempty"`
}

// StateOf is what the agent remembers of a scene's live elements. It reads the typed scene, so
// a scene from any producer (the tools, the editor, an import) is read the same way.
func StateOf(sc *scene.Scene) []ElementState {
	els := sc.Elements()
	labels := map[string]string{}
	for _, e := range els {
		if e.Type == scene.Text && e.ContainerID != "" {
			labels[e.ContainerID] = e.Text
		}
	}
	out := make([]ElementState, 0, len(els))
	for _, e := range els {
		if e.ID == "" || e.Type == scene.Text && e.ContainerID != "" {
			continue // bound text is shown as its container's label
		}
		st := ElementState{ID: e.ID, Type: string(e.Type), X: round1(e.X), Y: round1(e.Y), W: round1(e.Width),
			H: round1(e.Height), Stroke: e.StrokeColor, Fill: e.BackgroundColor}
		if e.Type == scene.Text {
			st.Label = e.Text
		} else {
			st.Label = labels[e.ID]
		}
		if e.StartBinding != nil {
			st.From = e.StartBinding.ElementID
		}
		if e.EndBinding != nil {
			st.To = e.EndBinding.ElementID
		}
		out = append(out, st)
	}
	return out
}

func round1(f float64) float64 { return math.Round(f*10) / 10 }

// maxDiffLines keeps the change report short; a bigger change is summarised by counts.
const maxDiffLines = 15

// DiffScenes describes how now differs from before, one line per change, for the model. Labels are
// quoted so that their text cannot pass for instructions or structure. It returns "" when nothing
// changed.
func DiffScenes(before, now []ElementState) string {
	old, cur, err := scenesOf(before, now)
	if err != nil {
		return "" // states read from JSON always encode; telling nothing beats telling wrong
	}
	return changeNote(outline.Diff(old, cur))
}

// changeNote words what changed for the model, ids and all, so that it can act on each line.
func changeNote(changes []outline.Change) string {
	var lines []string
	var added, removed, relabelled int
	reshaped := map[string]bool{}
	for _, c := range changes {
		o, p := c.Before, c.After
		var line string
		switch c.Kind {
		case outline.Added:
			added++
			line = "added " + describe(p)
		case outline.Removed:
			removed++
			line = "removed " + describe(o)
		case outline.Renamed:
			relabelled++
			line = fmt.Sprintf("relabelled %s %s: %q -> %q", p.El.Type, p.El.ID, clip.Runes(o.Label, 60), clip.Runes(p.Label, 60))
		case outline.Moved:
			reshaped[p.El.ID] = true
			line = fmt.Sprintf("moved %s from (%g,%g) to (%g,%g)", describe(p), o.El.X, o.El.Y, p.El.X, p.El.Y)
		case outline.Resized:
			reshaped[p.El.ID] = true
			line = fmt.Sprintf("resized %s from %gx%g to %gx%g", describe(p), o.El.Width, o.El.Height, p.El.Width, p.El.Height)
		case outline.Reconnected:
			line = fmt.Sprintf("reconnected %s: was %s -> %s, now %s -> %s", describe(p), endOf(o.From), endOf(o.To), endOf(p.From), endOf(p.To))
		default:
			line = c.Kind.String() + " " + describe(p)
		}
		lines = append(lines, line)
	}
	if len(lines) == 0 {
		return ""
	}
	if len(lines) > maxDiffLines {
		more := len(lines) - maxDiffLines
		lines = append(lines[:maxDiffLines], fmt.Sprintf("… and %s (%d added, %d removed, %d moved or resized, %d relabelled in all)",
			plural.Count(more, "more change", ""), added, removed, len(reshaped), relabelled))
	}
	return "- " + strings.Join(lines, "\n- ")
}

func describe(p outline.Part) string {
	if p.Label != "" {
		return fmt.Sprintf("%s %s %q", p.El.Type, p.El.ID, clip.Runes(p.Label, 60))
	}
	return string(p.El.Type) + " " + p.El.ID
}

// endOf names what an arrow's end is bound to by id, as get_scene does.
func endOf(e outline.End) string {
	if e.ID == "" {
		return "nothing"
	}
	return e.ID
}

// scenesOf rebuilds the scenes two states describe, for outline.Diff. A colour missing on one side
// (a memory written before colours were kept) is taken from the other, so that it is no change.
func scenesOf(before, after []ElementState) (*scene.Scene, *scene.Scene, error) {
	byID := func(sts []ElementState) map[string]ElementState {
		m := make(map[string]ElementState, len(sts))
		for _, st := range sts {
			m[st.ID] = st
		}
		return m
	}
	old, cur := byID(before), byID(after)
	b, err := sceneOf(before, cur)
	if err != nil {
		return nil, nil, err
	}
	a, err := sceneOf(after, old)
	if err != nil {
		return nil, nil, err
	}
	return b, a, nil
}

// labelSuffix makes the id of a label's text out of its container's; no id the tools or the editor
// give has a NUL in it.
const labelSuffix = "\x00label"

// sceneOf is the scene states describe: each element with its colours, a label bound to its
// container, an arrow bound at its ends. Colours missing from a state are taken from other's.
func sceneOf(states []ElementState, other map[string]ElementState) (*scene.Scene, error) {
	els := make([]map[string]any, 0, len(states))
	for _, st := range states {
		if st.ID == "" {
			continue
		}
		stroke, fill := st.Stroke, st.Fill
		if o, ok := other[st.ID]; ok {
			stroke, fill = cmp.Or(stroke, o.Stroke), cmp.Or(fill, o.Fill)
		}
		e := map[string]any{"id": st.ID, "type": st.Type, "x": st.X, "y": st.Y, "width": st.W, "height": st.H,
			"strokeColor": stroke, "backgroundColor": fill}
		if scene.Type(st.Type).IsLinear() {
			e["points"] = [][2]float64{{0, 0}, {st.W, st.H}}
			if st.From != "" {
				e["startBinding"] = map[string]any{"elementId": st.From, "focus": 0, "gap": 1}
			}
			if st.To != "" {
				e["endBinding"] = map[string]any{"elementId": st.To, "focus": 0, "gap": 1}
			}
		}
		var label map[string]any
		switch t := scene.Type(st.Type); {
		case t == scene.Text:
			e["text"], e["originalText"] = st.Label, st.Label
		case t == scene.Frame:
			e["name"] = st.Label
		case st.Label != "" && (t.IsShape() || t.IsLinear()): // the only containers a label can have
			label = map[string]any{"id": st.ID + labelSuffix, "type": "text", "text": st.Label, "originalText": st.Label, "containerId": st.ID}
		}
		els = append(els, e)
		if label != nil {
			els = append(els, label)
		}
	}
	data, err := json.Marshal(map[string]any{"type": "excalidraw", "version": 2, "elements": els})
	if err != nil {
		return nil, fmt.Errorf("encode remembered scene: %w", err)
	}
	sc, err := scene.Decode(data)
	if err != nil {
		return nil, fmt.Errorf("decode remembered scene: %w", err)
	}
	return sc, nil
}
