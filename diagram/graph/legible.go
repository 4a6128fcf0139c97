package graph

import (
	"math"
	"slices"

	"github.com/excalibot/excalibot/scene"
)

// How well a drawn graph reads once a chat client shows it: a laptop's preview is about
// PreviewWidth×PreviewHeight px, and a label smaller than MinPreviewPx there is hard to read.
const (
	PreviewWidth  = 1600.0
	PreviewHeight = 1200.0
	MinPreviewPx  = 12.0
)

// Legibility is how a drawn graph reads at chat size.
type Legibility struct {
	// Aspect is the picture's longer side over its shorter one.
	Aspect float64
	// PreviewPx is the median label's height in px when the whole picture is fitted into
	// PreviewWidth×PreviewHeight.
	PreviewPx float64
}

// Readable reports whether the picture is within MaxAspect and its labels at least MinPreviewPx
// in the preview.
func (l Legibility) Readable() bool {
	return l.Aspect <= MaxAspect+0.05 && l.PreviewPx >= MinPreviewPx
}

// legibility reads g as drawn on w: its extent (nodes, groups and arrows) and the median font
// size of its nodes' and edges' labels.
func legibility(w *scene.Scene, g sceneGraph) Legibility {
	var box scene.Rect
	first := true
	add := func(id string) {
		e, ok := w.Get(id)
		if !ok {
			return
		}
		b := scene.BoundingBox(e)
		if first {
			box, first = b, false
			return
		}
		box = box.Union(b)
	}
	var fonts []float64
	font := func(id string) {
		e, _ := w.Get(id)
		if l, ok := w.Get(e.Label()); ok && e.Label() != "" && l.FontSize > 0 {
			fonts = append(fonts, l.FontSize)
		}
	}
	for _, id := range g.nodes {
		add(id)
		font(id)
	}
	for _, f := range g.frames {
		add(f)
	}
	for _, e := range g.edges {
		add(e.id)
		font(e.id)
	}
	if first || box.Width <= 0 || box.Height <= 0 || len(fonts) == 0 {
		return Legibility{Aspect: 1, PreviewPx: math.Inf(1)}
	}
	slices.Sort(fonts)
	w0, h0 := box.Width+2*pictureMargin, box.Height+2*pictureMargin
	scale := math.Min(PreviewWidth/w0, PreviewHeight/h0)
	return Legibility{Aspect: math.Max(box.Width/box.Height, box.Height/box.Width), PreviewPx: fonts[len(fonts)/2] * scale}
}
