package render

import (
	"context"
	"fmt"
	"strings"
)

// CheckReport says what Excalidraw's own restore() changes when it loads a scene, the way the
// editor and the renderer load it. A scene written well by our code changes nothing.
type CheckReport struct {
	// Elements counts the scene's elements that are not deleted.
	Elements int `json:"elements"`
	// Dropped lists elements restore() leaves out or deletes (unknown type, zero size, empty text,
	// duplicate id).
	Dropped []DroppedElement `json:"dropped"`
	// Bindings lists references restore() repairs: containerId, frameId, arrow bindings, and
	// boundElements lists that disagree with the other side.
	Bindings []RepairedBinding `json:"bindings"`
	// Text lists texts whose position or size moves by more than half a pixel once re-measured
	// with Excalidraw's fonts and laid out in their container.
	Text []TextChange `json:"text"`
	// MaxTextDelta is the largest move or size change of any text, in scene pixels.
	MaxTextDelta float64 `json:"maxTextDelta"`
}

// DroppedElement is an element restore() does not keep.
type DroppedElement struct {
	ID   string `json:"id"`
	Type string `json:"type"`
}

// RepairedBinding is one reference restore() changes.
type RepairedBinding struct {
	ID     string `json:"id"`
	Field  string `json:"field"`
	Before string `json:"before"`
	After  string `json:"after"`
}

// TextChange is how far one text moves (DX, DY) and grows (DW, DH) when re-measured.
type TextChange struct {
	ID             string  `json:"id"`
	Text           string  `json:"text"`
	DX, DY, DW, DH float64 `json:"-"`
}

// Clean reports whether nothing is dropped or repaired and no text changes by more than tol px.
func (c CheckReport) Clean(tol float64) bool {
	return len(c.Dropped) == 0 && len(c.Bindings) == 0 && c.MaxTextDelta <= tol
}

// String lists the findings, one per line.
func (c CheckReport) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%d elements, %d dropped, %d bindings repaired, text moves up to %.1f px\n",
		c.Elements, len(c.Dropped), len(c.Bindings), c.MaxTextDelta)
	for _, d := range c.Dropped {
		fmt.Fprintf(&b, "dropped %s %q\n", d.Type, d.ID)
	}
	for _, r := range c.Bindings {
		fmt.Fprintf(&b, "repaired %s of %q: %q -> %q\n", r.Field, r.ID, r.Before, r.After)
	}
	for _, t := range c.Text {
		fmt.Fprintf(&b, "text %q (%q): dx %.1f dy %.1f dw %.1f dh %.1f\n", t.ID, t.Text, t.DX, t.DY, t.DW, t.DH)
	}
	return b.String()
}

// Check loads doc with Excalidraw's restore() in a warm tab and reports what it changes.
func (r *Renderer) Check(ctx context.Context, doc []byte) (CheckReport, error) {
	lit, _, err := sceneLiteral(doc)
	if err != nil {
		return CheckReport{}, err
	}
	var rep struct {
		pageReply
		CheckReport
		Text []struct {
			ID   string  `json:"id"`
			Text string  `json:"text"`
			DX   float64 `json:"dx"`
			DY   float64 `json:"dy"`
			DW   float64 `json:"dw"`
			DH   float64 `json:"dh"`
		} `json:"text"`
	}
	if err := r.call(ctx, fmt.Sprintf("ExcalidrawRender.check(JSON.parse(%s))", lit), &rep); err != nil {
		return CheckReport{}, err
	}
	out := rep.CheckReport
	out.Text = nil
	for _, t := range rep.Text {
		out.Text = append(out.Text, TextChange{ID: t.ID, Text: t.Text, DX: t.DX, DY: t.DY, DW: t.DW, DH: t.DH})
	}
	return out, nil
}
