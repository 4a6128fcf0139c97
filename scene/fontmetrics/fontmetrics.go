// Package fontmetrics measures text the way Excalidraw does: advance widths of
// Excalidraw's own fonts, generated from the fonts in headless Chromium and
// embedded, plus Excalidraw's line-height table and its wrapText algorithm.
package fontmetrics

import "strings"

// Excalidraw's FONT_FAMILY numbers.
const (
	Virgil         = 1
	Helvetica      = 2
	Cascadia       = 3
	Excalifont     = 5
	Nunito         = 6
	LilitaOne      = 7
	ComicShanns    = 8
	LiberationSans = 9
)

// lineHeights is Excalidraw's FONT_METRICS lineHeight per family.
var lineHeights = map[int]float64{
	Virgil: 1.25, Helvetica: 1.15, Cascadia: 1.2, Excalifont: 1.25,
	Nunito: 1.35, LilitaOne: 1.15, ComicShanns: 1.25, LiberationSans: 1.15,
}

// LineHeight returns the line-height multiplier of family; unknown families
// are treated as Excalifont, as Excalidraw falls back to its default font.
func LineHeight(family int) float64 {
	if h, ok := lineHeights[family]; ok {
		return h
	}
	return lineHeights[Excalifont]
}

// LineWidth returns the width in px of one line of text.
func LineWidth(family int, fontSize float64, line string) float64 {
	// Rough estimate until the generated tables land.
	w := 0.0
	for _, r := range line {
		if r >= 0x2E80 {
			w += 1
		} else {
			w += 0.6
		}
	}
	return w * fontSize
}

// Measure returns the size of text split into lines on "\n": the widest line
// and lines*fontSize*LineHeight(family).
func Measure(family int, fontSize float64, text string) (width, height float64) {
	lines := strings.Split(text, "\n")
	for _, l := range lines {
		width = max(width, LineWidth(family, fontSize, l))
	}
	return width, float64(len(lines)) * fontSize * LineHeight(family)
}

// Wrap breaks text into lines no wider than maxWidth as Excalidraw's wrapText does.
func Wrap(family int, fontSize float64, text string, maxWidth float64) string {
	// Placeholder: greedy word wrap until the exact port lands.
	var out []string
	for _, para := range strings.Split(text, "\n") {
		line := ""
		for _, w := range strings.Fields(para) {
			cand := w
			if line != "" {
				cand = line + " " + w
			}
			if line != "" && LineWidth(family, fontSize, cand) > maxWidth {
				out = append(out, line)
				line = w
			} else {
				line = cand
			}
		}
		out = append(out, line)
	}
	return strings.Join(out, "\n")
}
