package agent

import (
	"fmt"
	"math"
	"strings"

	"github.com/excalibot/excalibot/internal/clip"
	"github.com/excalibot/excalibot/internal/plural"
	"github.com/excalibot/excalibot/scene"
)

// ElementState is what the agent remembers of one element: enough to tell the next run that a
// person added, removed, moved or relabelled something. Bound text is folded into its container's
// Label, so a label edit reads as a relabel, not as a new text element.
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
	old := make(map[string]ElementState, len(before))
	for _, e := range before {
		old[e.ID] = e
	}
	cur := make(map[string]bool, len(now))
	var lines []string
	var added, removed, moved, relabelled int
	for _, e := range now {
		cur[e.ID] = true
		o, ok := old[e.ID]
		if !ok {
			added++
			lines = append(lines, fmt.Sprintf("added %s", describe(e)))
			continue
		}
		if o.Label != e.Label {
			relabelled++
			lines = append(lines, fmt.Sprintf("relabelled %s %s: %q -> %q", e.Type, e.ID, clip.Runes(o.Label, 60), clip.Runes(e.Label, 60)))
		}
		if recoloured(o, e) {
			lines = append(lines, fmt.Sprintf("recoloured %s", describe(e)))
		}
		if e.Type == "arrow" || e.Type == "line" {
			continue // bound arrows move with their shapes; their own moves are noise here
		}
		if math.Abs(o.X-e.X) >= 1 || math.Abs(o.Y-e.Y) >= 1 {
			moved++
			lines = append(lines, fmt.Sprintf("moved %s from (%g,%g) to (%g,%g)", describe(e), o.X, o.Y, e.X, e.Y))
		} else if math.Abs(o.W-e.W) >= 1 || math.Abs(o.H-e.H) >= 1 {
			moved++
			lines = append(lines, fmt.Sprintf("resized %s from %gx%g to %gx%g", describe(e), o.W, o.H, e.W, e.H))
		}
	}
	for _, o := range before {
		if !cur[o.ID] {
			removed++
			lines = append(lines, fmt.Sprintf("removed %s", describe(o)))
		}
	}
	if len(lines) == 0 {
		return ""
	}
	if len(lines) > maxDiffLines {
		more := len(lines) - maxDiffLines
		lines = append(lines[:maxDiffLines], fmt.Sprintf("… and %s (%d added, %d removed, %d moved or resized, %d relabelled in all)",
			plural.Count(more, "more change", ""), added, removed, moved, relabelled))
	}
	return "- " + strings.Join(lines, "\n- ")
}

// recoloured reports a colour change; a colour missing on either side (an older memory) is none.
func recoloured(o, e ElementState) bool {
	return o.Stroke != "" && e.Stroke != "" && o.Stroke != e.Stroke || o.Fill != "" && e.Fill != "" && o.Fill != e.Fill
}

func describe(e ElementState) string {
	if e.Label != "" {
		return fmt.Sprintf("%s %s %q", e.Type, e.ID, clip.Runes(e.Label, 60))
	}
	return e.Type + " " + e.ID
}
