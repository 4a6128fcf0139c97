// Package fontmetrics measures text the way Excalidraw does: advance widths of
// Excalidraw's own fonts, generated from the fonts in headless Chromium and
// embedded, plus Excalidraw's line-height table and its wrapText algorithm.
package fontmetrics

import (
	"strings"
	"unicode/utf8"
)

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

// familyNames maps the names a tool schema may use to family numbers:
// Excalidraw's own FONT_FAMILY keys, lower-cased, and short forms.
var familyNames = map[string]int{
	"virgil": Virgil, "helvetica": Helvetica, "cascadia": Cascadia, "excalifont": Excalifont,
	"nunito": Nunito, "lilita one": LilitaOne, "lilita": LilitaOne, "comic shanns": ComicShanns,
	"comic": ComicShanns, "liberation sans": LiberationSans, "liberation": LiberationSans,
}

// canonicalName is the FONT_FAMILY key of each family, lower-cased.
var canonicalName = map[int]string{
	Virgil: "virgil", Helvetica: "helvetica", Cascadia: "cascadia", Excalifont: "excalifont",
	Nunito: "nunito", LilitaOne: "lilita one", ComicShanns: "comic shanns", LiberationSans: "liberation sans",
}

// FamilyByName returns the family number for a name such as "excalifont",
// "Nunito", "lilita", "comic" or "Liberation Sans" (case and surrounding
// space ignored); ok is false for an unknown name.
func FamilyByName(name string) (family int, ok bool) {
	family, ok = familyNames[strings.ToLower(strings.Join(strings.Fields(name), " "))]
	return family, ok
}

// FamilyName returns the canonical lower-case name of a family number
// ("excalifont" for 5), or "" for a number Excalidraw does not define.
func FamilyName(family int) string { return canonicalName[family] }

// FamilyNames lists the canonical names in family-number order, for schemas
// and error messages.
func FamilyNames() []string {
	return []string{"virgil", "helvetica", "cascadia", "excalifont", "nunito", "lilita one", "comic shanns", "liberation sans"}
}

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

// LineWidth returns the width in px of one line of text in family at
// fontSize: what Excalidraw 0.18.1's getLineWidth gets from canvas
// measureText(line).width, modelled as the sum of measured advance widths plus
// the measured correction of each adjacent pair (kerning). Advances are
// scaled to fontSize the way Chromium's FreeType does it (see scaler).
func LineWidth(family int, fontSize float64, line string) float64 {
	t := tableFor(family)
	sc := t.scaler(fontSize)
	return t.lineWidth(&sc, fontSize, line)
}

// lineWidth is LineWidth with the table and scaler found, for Wrap, which
// measures many pieces of one text.
func (t *table) lineWidth(sc *scaler, fontSize float64, line string) float64 {
	units := 0   // linear widths: estimates, kerning, characters not fitted; 1/65536 em
	var px int64 // fitted advances, 1/65536 px
	prev := rune(-1)
	for i := 0; i < len(line); {
		if n := t.emojiLen(line[i:]); n > 0 {
			units += emojiSeqWidth(line[i : i+n])
			prev = -1
			i += n
			continue
		}
		r, n := utf8.DecodeRuneInString(line[i:])
		i += n
		// Canvas replaces ASCII whitespace with spaces before shaping.
		switch r {
		case '\t', '\n', '\r', '\f':
			r = ' '
		}
		if a := t.advance(r); a&flagFitted != 0 && !sc.linear {
			px += sc.px(a)
		} else if a&flagFitted != 0 {
			units += sc.em(a)
		} else {
			units += int(a)
		}
		if prev >= 0 {
			units += t.kern(prev, r)
		}
		prev = r
	}
	return float64(px)/65536 + float64(units)*fontSize/unitsPerEm
}

// emojiSeqWidth estimates an emoji sequence (ZWJ family, flag, skin tone):
// one glyph where a colour emoji font joins it, but one glyph per part where
// none does (Linux without Noto Color Emoji draws a flag as two letter boxes),
// so every visible part after the first adds estimateEmojiPart.
func emojiSeqWidth(seq string) int {
	parts := 0
	for _, r := range seq {
		switch {
		case r == 0x200D, r == 0xFE0F, r == 0x20E3, r >= 0xE0020 && r <= 0xE007F:
		default:
			parts++
		}
	}
	return estimateEmoji + estimateEmojiPart*max(parts-1, 0)
}

// emojiLen returns the byte length of the emoji sequence s starts with, or 0.
// Pictographs the tables measured (text presentation: ™, ↔, ☺) count as
// text unless VS16 asks for the emoji form.
func (t *table) emojiLen(s string) int {
	r, n := utf8.DecodeRuneInString(s)
	if r < 0xA9 {
		return 0
	}
	if t.measured(r) {
		if next, _ := utf8.DecodeRuneInString(s[n:]); next != 0xFE0F || !isEmojiChar(r) {
			return 0
		}
	} else if !isEmojiChar(r) {
		return 0
	}
	var buf [32]rune
	k := 0
	for _, c := range s {
		if k == len(buf) {
			break
		}
		buf[k] = c
		k++
	}
	end := emojiAt(buf[:k], 0)
	if end == 0 {
		return 0
	}
	bytes := 0
	for _, c := range buf[:end] {
		bytes += utf8.RuneLen(c)
	}
	return bytes
}

// Measure returns the size of a text element's text as Excalidraw's
// measureText computes it: lines split on newlines (CRLF and CR too), tabs
// as eight spaces, width of the widest line, height lines*fontSize*LineHeight.
func Measure(family int, fontSize float64, text string) (width, height float64) {
	// measureText turns empty lines into " " before splitting again, so a
	// lone "\r" still yields an empty line; keep that order.
	parts := strings.Split(text, "\n")
	for i, p := range parts {
		if p == "" {
			parts[i] = " "
		}
	}
	lines := SplitLines(strings.Join(parts, "\n"))
	for _, l := range lines {
		width = max(width, LineWidth(family, fontSize, l))
	}
	return width, float64(len(lines)) * fontSize * LineHeight(family)
}

// SplitLines is Excalidraw's splitIntoLines: CRLF and CR become LF, tabs
// become eight spaces, then the text is split on LF.
func SplitLines(text string) []string {
	text = strings.ReplaceAll(text, "\r\n", "\n")
	text = strings.ReplaceAll(text, "\r", "\n")
	text = strings.ReplaceAll(text, "\t", "        ")
	return strings.Split(text, "\n")
}
