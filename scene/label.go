package scene

import (
	"math"
	"strings"

	"github.com/excalibot/excalibot/scene/fontmetrics"
)

// Text layout inside containers, after packages/element/src/textElement.ts (getContainerCoords,
// getBoundTextMaxWidth/Height, computeBoundTextPosition, computeContainerDimensionForBoundText) and
// arrow labels after LinearElementEditor.getBoundTextElementPosition.

const (
	// arrowLabelWidthFraction and arrowLabelMinWidthRatio are ARROW_LABEL_WIDTH_FRACTION and
	// ARROW_LABEL_FONT_SIZE_TO_MIN_WIDTH_RATIO: an arrow label wraps at 70% of the arrow's width,
	// but never narrower than 11 × font size.
	arrowLabelWidthFraction = 0.7
	arrowLabelMinWidthRatio = 11
)

func lineHeightOf(family int) float64 { return fontmetrics.LineHeight(family) }

// breakAfterSlashes breaks each word of text wider than maxW after its last slash that lets the
// piece fit, again for the rest: Excalidraw breaks such a word between any two letters
// ("localhost:16686/searc", "h"), where a path broken after a slash still reads as one. A word
// with no such slash is left to Excalidraw.
func breakAfterSlashes(family int, size float64, text string, maxW float64) string {
	fits := func(s string) bool { return fontmetrics.LineWidth(family, size, s) <= maxW }
	lines := strings.Split(text, "\n")
	for i, line := range lines {
		words := strings.Split(line, " ")
		for j, word := range words {
			var pieces []string
			for !fits(word) {
				cut := -1
				for k := len(word) - 2; k > 0; k-- { // a slash ending the word breaks nothing
					if word[k] == '/' && fits(word[:k+1]) {
						cut = k + 1
						break
					}
				}
				if cut < 0 {
					break
				}
				pieces = append(pieces, word[:cut])
				word = word[cut:]
			}
			words[j] = strings.Join(append(pieces, word), "\n")
		}
		lines[i] = strings.Join(words, " ")
	}
	return strings.Join(lines, "\n")
}

func wrapText(family int, size float64, text string, maxW float64) string {
	return fontmetrics.Wrap(family, size, text, max(maxW, 0))
}

// measureText sets a free (unbound) auto-resizing text element's size from its text.
func measureText(e *Element) {
	if e.LineHeight <= 0 {
		e.LineHeight = lineHeightOf(e.FontFamily)
	}
	w, _ := fontmetrics.Measure(e.FontFamily, e.FontSize, e.Text)
	e.Width = w
	e.Height = textHeight(e)
}

// textHeight is Excalidraw's getTextHeight: lines × fontSize × lineHeight.
func textHeight(e *Element) float64 {
	lines := 1
	for i := 0; i < len(e.Text); i++ {
		if e.Text[i] == '\n' {
			lines++
		}
	}
	return float64(lines) * e.FontSize * e.LineHeight
}

// containerInner returns the offset of the text area from the container's x/y and its maximum
// width and height, per container type (excalidraw.md §4).
func containerInner(c *Element, fontSize float64) (ox, oy, maxW, maxH float64) {
	w, h := c.Width, c.Height
	ox, oy = BoundTextPadding, BoundTextPadding
	switch c.Type {
	case Ellipse:
		ox += (w / 2) * (1 - math.Sqrt2/2)
		oy += (h / 2) * (1 - math.Sqrt2/2)
		maxW = math.Round(w/2*math.Sqrt2) - 2*BoundTextPadding
		maxH = math.Round(h/2*math.Sqrt2) - 2*BoundTextPadding
	case Diamond:
		ox += w / 4
		oy += h / 4
		maxW = math.Round(w/2) - 2*BoundTextPadding
		maxH = math.Round(h/2) - 2*BoundTextPadding
	case Arrow, Line:
		maxW = max(arrowLabelWidthFraction*w, arrowLabelMinWidthRatio*fontSize)
		maxH = h
	default:
		maxW = w - 2*BoundTextPadding
		maxH = h - 2*BoundTextPadding
	}
	return ox, oy, maxW, maxH
}

// TextArea returns the box a container's label may fill, in scene coordinates before rotation:
// the inner box of excalidraw.md §4 (padding 5; the smaller inscribed boxes of ellipses and
// diamonds). For arrows it is the wrapping width centred on the arrow's midpoint, as tall as the
// label's font allows one line (fontSize 20 assumed); for other elements it is the element's box.
func TextArea(c Element) Rect {
	if c.Type.IsLinear() {
		_, _, maxW, _ := containerInner(&c, DefaultFontSize)
		m := linearMidpoint(&c)
		h := DefaultFontSize * lineHeightOf(DefaultFontFamily)
		return Rect{m.X - maxW/2, m.Y - h/2, maxW, h}
	}
	if !c.Type.IsShape() {
		return Rect{c.X, c.Y, c.Width, c.Height}
	}
	ox, oy, maxW, maxH := containerInner(&c, DefaultFontSize)
	return Rect{c.X + ox, c.Y + oy, maxW, maxH}
}

// LabelText returns the text of the element's label as written (before wrapping), or "".
func (s *Scene) LabelText(id string) string {
	e := s.get(id)
	if e == nil {
		return ""
	}
	if t := s.get(e.Label()); t != nil {
		return t.OriginalText
	}
	return ""
}

// containerHeightFor is computeContainerDimensionForBoundText: the container height that fits a
// label of height textH.
func containerHeightFor(t Type, textH float64) float64 {
	d := math.Ceil(textH) + 2*BoundTextPadding
	switch t {
	case Ellipse:
		return math.Round(d / math.Sqrt2 * 2)
	case Diamond:
		return 2 * d
	}
	return d
}

// layoutLabel wraps the label of container id to its inner width, grows the container when the
// text is taller than its inner box (re-routing its arrows), and centres the label per its
// alignment. It is a no-op for elements without a label.
func (s *Scene) layoutLabel(id string) {
	c := s.get(id)
	if c == nil {
		return
	}
	lid := c.Label()
	t := s.get(lid)
	if t == nil {
		return
	}
	// A shallow copy to compute on (layout changes scalars and the text only).
	v := *t
	nt := &v
	if nt.LineHeight <= 0 {
		nt.LineHeight = lineHeightOf(nt.FontFamily)
	}
	_, _, maxW, maxH := containerInner(c, nt.FontSize)
	nt.Text = fontmetrics.Wrap(nt.FontFamily, nt.FontSize, nt.OriginalText, max(maxW, 0))
	w, _ := fontmetrics.Measure(nt.FontFamily, nt.FontSize, nt.Text)
	nt.Width, nt.Height = w, textHeight(nt)

	if c.Type.IsShape() && nt.Height > maxH {
		nc := s.edit(c)
		nc.Height = containerHeightFor(c.Type, nt.Height)
		s.touch(nc)
		s.put(nc)
		c = nc
		defer s.RerouteArrows(c.ID)
	}
	placeLabel(c, nt)
	if sameTextGeometry(nt, t) {
		return
	}
	e := s.edit(t)
	e.X, e.Y, e.Width, e.Height, e.Angle = nt.X, nt.Y, nt.Width, nt.Height, nt.Angle
	e.Text, e.LineHeight = nt.Text, nt.LineHeight
	s.touch(e)
	s.put(e)
}

func sameTextGeometry(a, b *Element) bool {
	return a.X == b.X && a.Y == b.Y && a.Width == b.Width && a.Height == b.Height &&
		a.Angle == b.Angle && a.Text == b.Text && a.LineHeight == b.LineHeight
}

// placeLabel positions text t inside (or, for arrows, on the middle of) container c.
func placeLabel(c, t *Element) {
	if c.Type.IsLinear() {
		m := linearMidpoint(c)
		t.X, t.Y = m.X-t.Width/2, m.Y-t.Height/2
		t.Angle = 0
		return
	}
	ox, oy, maxW, maxH := containerInner(c, t.FontSize)
	x, y := c.X+ox, c.Y+oy
	switch t.TextAlign {
	case "center":
		x += (maxW - t.Width) / 2
	case "right":
		x += maxW - t.Width
	}
	switch t.VerticalAlign {
	case "middle":
		y += (maxH - t.Height) / 2
	case "bottom":
		y += maxH - t.Height
	}
	t.X, t.Y = x, y
	t.Angle = c.Angle
}

// linearMidpoint is where Excalidraw centres an arrow's label: the middle point for an odd number
// of points, else the midpoint of the middle segment.
func linearMidpoint(e *Element) Point {
	pts := e.AbsPoints()
	n := len(pts)
	if n == 0 {
		return Point{e.X, e.Y}
	}
	if n%2 == 1 {
		return pts[n/2]
	}
	a, b := pts[n/2-1], pts[n/2]
	return Point{(a.X + b.X) / 2, (a.Y + b.Y) / 2}
}
