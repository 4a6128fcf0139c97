package fontmetrics

import (
	"math"
	"strings"

	"golang.org/x/text/unicode/norm"
)

// Wrap breaks text into lines no wider than maxWidth px, as Excalidraw
// 0.18.1's wrapText (element/textWrapping.ts) does, step for step: lines that
// fit stay as they are; others are cut into tokens (words, whitespace, CJK
// characters, emoji) and filled greedily; a token wider than a whole line is
// broken between characters, except one holding an emoji; line ends lose
// their whitespace, the last line keeps what still fits. A maxWidth that is
// negative, NaN or infinite returns text unchanged, as wrapText does.
//
// One difference: wrapText caches character widths by their first UTF-16
// unit, so two astral characters sharing a high surrogate share a width
// within a browser session; Wrap measures each character.
func Wrap(family int, fontSize float64, text string, maxWidth float64) string {
	t := tableFor(family)
	sc := t.scaler(fontSize)
	return wrapWith(text, maxWidth, func(s string) float64 { return t.lineWidth(&sc, fontSize, s) })
}

// wrapWith is Wrap with any line-width function; tests pass Excalidraw's
// test-suite metric (10 px per UTF-16 unit) to replay its cases.
func wrapWith(text string, maxWidth float64, width func(string) float64) string {
	if math.IsNaN(maxWidth) || math.IsInf(maxWidth, 0) || maxWidth < 0 {
		return text
	}
	w := wrapper{width: width, max: maxWidth}
	var lines []string
	for _, line := range strings.Split(text, "\n") {
		if w.width(line) <= maxWidth {
			lines = append(lines, line)
			continue
		}
		lines = append(lines, w.wrapLine(line)...)
	}
	return strings.Join(lines, "\n")
}

type wrapper struct {
	width func(string) float64
	max   float64
}

func (w wrapper) wrapLine(line string) []string {
	var lines []string
	tokens := Tokens(line)
	cur, curWidth := "", 0.0
	for i := 0; i < len(tokens); {
		tok := tokens[i]
		test := cur + tok
		var testWidth float64
		if isSingleChar(tok) {
			// wrapText adds the lone character's width, without kerning.
			testWidth = curWidth + w.width(tok)
		} else {
			testWidth = w.width(test)
		}
		if strings.IndexFunc(tok, isJSSpace) >= 0 || testWidth <= w.max {
			cur, curWidth = test, testWidth
			i++
			continue
		}
		if cur == "" {
			parts := w.wrapWord(tok)
			trailing := ""
			if len(parts) > 0 {
				trailing = parts[len(parts)-1]
				lines = append(lines, parts[:len(parts)-1]...)
			}
			cur, curWidth = trailing, w.width(trailing)
			i++
		} else {
			lines = append(lines, trimEndJS(cur))
			cur, curWidth = "", 0
		}
	}
	if cur != "" {
		lines = append(lines, w.trimLine(cur))
	}
	return lines
}

// wrapWord breaks one token between characters; a token holding an emoji is
// kept whole.
func (w wrapper) wrapWord(word string) []string {
	if containsEmoji([]rune(word)) {
		return []string{word}
	}
	var lines []string
	cur, curWidth := "", 0.0
	for _, r := range word {
		c := string(r)
		cw := w.width(c)
		if curWidth+cw <= w.max {
			cur += c
			curWidth += cw
			continue
		}
		if cur != "" {
			lines = append(lines, cur)
		}
		cur, curWidth = c, cw
	}
	if cur != "" {
		lines = append(lines, cur)
	}
	return lines
}

// trimLine drops the last line's trailing whitespace that does not fit, as
// wrapText's trimLine with its /^(.+?)(\s+)$/ split.
func (w wrapper) trimLine(line string) string {
	if w.width(line) <= w.max {
		return line
	}
	trimmed, spaces := splitTrailingSpace(line)
	tw := w.width(trimmed)
	for _, r := range spaces {
		cw := w.width(string(r))
		if tw+cw > w.max {
			break
		}
		trimmed += string(r)
		tw += cw
	}
	return trimmed
}

// splitTrailingSpace mirrors `line.match(/^(.+?)(\s+)$/) ?? [line,
// line.trimEnd(), ""]`: the lazy head holds at least one character and no
// line terminator; without a match the line is trimmed and nothing is kept.
func splitTrailingSpace(line string) (head, spaces string) {
	rs := []rune(line)
	end := len(rs)
	for end > 1 && isJSSpace(rs[end-1]) {
		end--
	}
	if end == len(rs) || strings.ContainsFunc(string(rs[:end]), isLineTerminator) {
		return trimEndJS(line), ""
	}
	return string(rs[:end]), string(rs[end:])
}

func isLineTerminator(r rune) bool {
	return r == '\n' || r == '\r' || r == 0x2028 || r == 0x2029
}

// isJSSpace is JavaScript's \s: WhiteSpace and LineTerminator, the set
// String.prototype.trimEnd removes too.
func isJSSpace(r rune) bool { return inTable(r, tabSpace) }

func trimEndJS(s string) string { return strings.TrimRightFunc(s, isJSSpace) }

func isSingleChar(s string) bool {
	n := 0
	for range s {
		n++
	}
	return n == 1
}

// Tokens is Excalidraw's parseTokens: the NFC-normalised line split where a
// line may break. Concatenated, the tokens give the normalised line back.
func Tokens(line string) []string {
	rs := []rune(norm.NFC.String(line))
	var out []string
	push := func(s []rune) {
		if len(s) > 0 {
			out = append(out, string(s))
		}
	}
	// This is String.prototype.split with the break regex: a consuming emoji
	// match becomes its own token; a zero-width break splits unless it sits
	// where the previous split ended.
	p := 0
	for q := 0; q < len(rs); {
		if e := emojiAt(rs, q); e > q {
			push(rs[p:q])
			push(rs[q:e])
			p, q = e, e
			continue
		}
		if q > p && breakAt(rs, q) {
			push(rs[p:q])
			p = q
		}
		q++
	}
	push(rs[p:])
	return out
}
