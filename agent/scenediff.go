package agent

import (
	"encoding/json"
	"fmt"
	"math"
	"strings"

	"github.com/excalibot/excalibot/internal/clip"
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

// SceneState reads the elements of an .excalidraw document (or a bare elements array). It reads
// the JSON directly so it works with any producer of the file, including the editor.
func SceneState(doc []byte) ([]ElementState, error) {
	type el struct {
		ID          string  `json:"id"`
		Type        string  `json:"type"`
		X           float64 `json:"x"`
		Y           float64 `json:"y"`
		Width       float64 `json:"width"`
		Height      float64 `json:"height"`
		Text        string  `json:"text"`
		ContainerID *string `json:"containerId"`
		IsDeleted   bool    `json:"isDeleted"`
		Stroke      string  `json:"strokeColor"`
		Fill        string  `json:"backgroundColor"`
		Start       *struct {
			ElementID string `json:"elementId"`
		} `json:"startBinding"`
		End *struct {
			ElementID string `json:"elementId"`
		} `json:"endBinding"`
	}
	var file struct {
		Elements []el `json:"elements"`
	}
	trim := strings.TrimSpace(string(doc))
	var err error
	if strings.HasPrefix(trim, "[") {
		err = json.Unmarshal(doc, &file.Elements)
	} else {
		err = json.Unmarshal(doc, &file)
	}
	if err != nil {
		return nil, fmt.Errorf("read scene elements: %w", err)
	}
	labels := map[string]string{}
	for _, e := range file.Elements {
		if !e.IsDeleted && e.Type == "text" && e.ContainerID != nil && *e.ContainerID != "" {
			labels[*e.ContainerID] = e.Text
		}
	}
	out := make([]ElementState, 0, len(file.Elements))
	for _, e := range file.Elements {
		if e.IsDeleted || e.ID == "" {
			continue
		}
		if e.Type == "text" && e.ContainerID != nil && *e.ContainerID != "" {
			continue // shown as its container's label
		}
		s := ElementState{ID: e.ID, Type: e.Type, X: round1(e.X), Y: round1(e.Y), W: round1(e.Width), H: round1(e.Height),
			Stroke: e.Stroke, Fill: e.Fill}
		if e.Start != nil {
			s.From = e.Start.ElementID
		}
		if e.End != nil {
			s.To = e.End.ElementID
		}
		if e.Type == "text" {
			s.Label = e.Text
		} else {
			s.Label = labels[e.ID]
		}
		out = append(out, s)
	}
	return out, nil
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
		lines = append(lines[:maxDiffLines], fmt.Sprintf("… and %d more changes (%d added, %d removed, %d moved or resized, %d relabelled in all)",
			more, added, removed, moved, relabelled))
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
