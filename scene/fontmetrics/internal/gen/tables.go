package main

import (
	"bytes"
	"compress/flate"
	"encoding/binary"
	"fmt"
	"go/format"
	"math"
	"os"
	"slices"
	"strings"

	"github.com/excalibot/excalibot/scene/fontmetrics/internal/browser"
)

// unicodeProps are the regex atoms of Excalidraw's line-break and emoji
// regexes (textWrapping.ts). Go takes their ranges from V8 so that both agree
// on the Unicode version.
var unicodeProps = []string{
	`\p{Extended_Pictographic}`, `\p{Emoji_Presentation}`, `\p{Emoji_Modifier}`, `\p{Emoji}`, `\p{RI}`,
	`\p{Script=Han}`, `\p{Script=Hiragana}`, `\p{Script=Katakana}`, `\p{Script=Hangul}`, `\s`,
}

// propVar names the Go table of each property.
var propVar = map[string]string{
	`\p{Extended_Pictographic}`: "tabExtPict", `\p{Emoji_Presentation}`: "tabEmojiPres",
	`\p{Emoji_Modifier}`: "tabEmojiMod", `\p{Emoji}`: "tabEmoji", `\p{RI}`: "tabRI",
	`\p{Script=Han}`: "tabHan", `\p{Script=Hiragana}`: "tabHiragana", `\p{Script=Katakana}`: "tabKatakana",
	`\p{Script=Hangul}`: "tabHangul", `\s`: "tabSpace",
}

// measuredRanges are the blocks measured per family: Latin (with Extended-A/B
// and Additional for Vietnamese), Greek, Cyrillic, the punctuation and symbol
// blocks diagram labels use, and the BMP's Chinese, Japanese and Korean blocks
// (cjkRanges). Everything else gets an estimate.
var measuredRanges = slices.Concat([][2]rune{
	{0x20, 0x7E}, {0xA0, 0x24F}, {0x370, 0x3FF}, {0x400, 0x52F}, {0x1E00, 0x1EFF},
	{0x2000, 0x206F}, {0x20A0, 0x20CF}, {0x2100, 0x214F}, {0x2190, 0x23FF},
	{0x2460, 0x27BF}, {0xFB00, 0xFB06}, {boxProbe, boxProbe},
}, cjkRanges)

// boxProbe is a private-use character no font has: its width is that of the
// box Chromium draws for a missing glyph, which the tests compare against.
const boxProbe = 0xE000

// cjkRanges are the BMP blocks of Chinese, Japanese and Korean text: Hangul
// Jamo, CJK radicals to CJK Unified Ideographs (punctuation, kana, Bopomofo,
// enclosed and compatibility forms, Extension A), Hangul syllables and their
// extended Jamo, compatibility ideographs, vertical, compatibility and small
// forms, halfwidth and fullwidth forms. Each family draws them in whatever
// font Chromium falls back to (Xiaolai for Excalifont, as Excalidraw's
// getFontFamilyFallbacks names it; the system's fallback otherwise), and
// measuring them all records that choice glyph by glyph.
var cjkRanges = [][2]rune{
	{0x1100, 0x11FF}, {0x2E80, 0x9FFF}, {0xA960, 0xA97F}, {0xAC00, 0xD7FF}, {0xF900, 0xFAFF},
	{0xFE10, 0xFE1F}, {0xFE30, 0xFE6F}, {0xFF00, 0xFFEF},
}

func inRanges(r rune, rs [][2]rune) bool {
	for _, x := range rs {
		if r >= x[0] && r <= x[1] {
			return true
		}
	}
	return false
}

func unionRanges(a, b [][2]rune) [][2]rune { return append(slices.Clone(a), b...) }

// measuredCodePoints lists measuredRanges without the characters shown as
// emoji by default (Emoji_Presentation): those render in the system's emoji
// font, which differs per machine, so they get the emoji estimate instead.
// Text-presentation pictographs (™, ↔, ☺) stay: the text fonts draw them.
func measuredCodePoints(emoji [][2]rune) []rune {
	var out []rune
	for _, rg := range measuredRanges {
		for r := rg[0]; r <= rg[1]; r++ {
			if r >= 0x2000 && inRanges(r, emoji) {
				continue
			}
			out = append(out, r)
		}
	}
	slices.Sort(out) // the file lists ranges in code point order
	return out
}

func span(lo, hi rune) []rune {
	var out []rune
	for r := lo; r <= hi; r++ {
		out = append(out, r)
	}
	return out
}

// pairGroups are the sets within which every ordered pair is measured: each
// script with the punctuation, digits and spaces it is written with. Pairs
// across scripts do not kern.
func pairGroups() [][]rune {
	common := slices.Concat(span(0x20, 0x40), span(0x5B, 0x60), span(0x7B, 0x7E), span(0xA0, 0xBF), span(0x2010, 0x203A))
	latin := slices.Concat(span(0x20, 0x7E), span(0xA0, 0x17F), span(0x2010, 0x203A))
	greek := slices.Concat(common, span(0x386, 0x3CE))
	cyr := slices.Concat(common, span(0x400, 0x45F), span(0x490, 0x491))
	return [][]rune{latin, greek, cyr}
}

// familyData is one family's tables.
type familyData struct {
	id     int
	wide   uint32 // estimate for CJK ideographs, kana and fullwidth forms, 1/65536 em
	hangul uint32 // estimate for Hangul, 1/65536 em
	upms   []uint16
	ranges []advRange
	pairs  []pair
	fitted int // characters fitted to (units, unitsPerEm); the others are linear
}

// An advance is either fitted, flagFitted | upm index << 16 | units, or
// linear, in 1/65536 em (below 1 << 31).
const flagFitted = 1 << 31

// maxUPM is fontmetrics' bound on the units-per-em values of one family.
const maxUPM = 16

type advRange struct {
	start rune
	adv   []uint32
}

type pair struct {
	a, b  uint16
	delta int32
}

// unitsPerEm is the fixed point of the tables: 1/65536 em, fine enough that
// a sum of advances lands within 1e-4 px of Chromium's at label sizes, so
// wrap decisions at an exact boundary rarely differ.
const unitsPerEm = 65536

func toUnits(px, size float64) float64 { return math.Round(px / size * unitsPerEm) }

// newFamilyData builds a family's tables from the widths of cps at size (adv)
// and at each of fitSizes (fit[k][i] is cps[i] at fitSizes[k]).
func newFamilyData(id int, cps []rune, adv []float64, fit [][]float64, pairs []browser.Pair, size float64) familyData {
	fd := familyData{id: id}
	upmIndex := map[int64]uint32{}
	type fitted struct {
		units, upm int64
		ok         bool
	}
	cache := map[string]fitted{} // many characters share one set of widths
	sizes := append([]float64{size}, fitSizes...)
	for i, r := range cps {
		u := uint32(min(toUnits(adv[i], size), flagFitted-1))
		ws := []float64{adv[i]}
		for k := range fitSizes {
			ws = append(ws, fit[k][i])
		}
		key := fmt.Sprint(ws)
		f, seen := cache[key]
		if !seen {
			f.units, f.upm, f.ok = fitGlyph(sizes, ws)
			cache[key] = f
		}
		if f.ok {
			k, ok := upmIndex[f.upm]
			if !ok && len(fd.upms) < maxUPM {
				k = uint32(len(fd.upms))
				upmIndex[f.upm] = k
				fd.upms = append(fd.upms, uint16(f.upm))
				ok = true
			}
			if ok {
				u = flagFitted | k<<16 | uint32(f.units)
				fd.fitted++
			}
		}
		n := len(fd.ranges)
		if n > 0 && fd.ranges[n-1].start+rune(len(fd.ranges[n-1].adv)) == r && len(fd.ranges[n-1].adv) < math.MaxUint16 {
			fd.ranges[n-1].adv = append(fd.ranges[n-1].adv, u)
			continue
		}
		fd.ranges = append(fd.ranges, advRange{start: r, adv: []uint32{u}})
	}
	for _, p := range pairs {
		d := toUnits(p.Delta, size)
		if d == 0 || p.A > 0xFFFF || p.B > 0xFFFF {
			continue
		}
		fd.pairs = append(fd.pairs, pair{a: uint16(p.A), b: uint16(p.B), delta: int32(d)})
	}
	slices.SortFunc(fd.pairs, func(x, y pair) int {
		if x.a != y.a {
			return int(x.a) - int(y.a)
		}
		return int(x.b) - int(y.b)
	})
	return fd
}

// encode writes the format fontmetrics/data.go reads, deflated:
//
//	"EXFM" version=4 u8, families u8, then per family:
//	id u8, wide u32, hangul u32, upms u8, upms×unitsPerEm u16,
//	ranges u16, per range (start u32, count u16, count×advance u32),
//	pairs u32, per pair (a u16, b u16, delta i32), sorted by (a, b);
//	an advance is fitted (flagFitted | upm index<<16 | units) or linear
//	(1/65536 em); estimates and pair deltas are in 1/65536 em.
func encode(fams []familyData) []byte {
	var raw bytes.Buffer
	w := func(v any) { _ = binary.Write(&raw, binary.LittleEndian, v) } // bytes.Buffer never fails
	raw.WriteString("EXFM")
	w(uint8(4))
	w(uint8(len(fams)))
	for _, f := range fams {
		w(uint8(f.id))
		w(f.wide)
		w(f.hangul)
		w(uint8(len(f.upms)))
		w(f.upms)
		w(uint16(len(f.ranges)))
		for _, r := range f.ranges {
			w(uint32(r.start))
			w(uint16(len(r.adv)))
			w(r.adv)
		}
		w(uint32(len(f.pairs)))
		for _, p := range f.pairs {
			w(p.a)
			w(p.b)
			w(p.delta)
		}
	}
	var z bytes.Buffer
	zw, _ := flate.NewWriter(&z, flate.BestCompression) // level is valid
	_, _ = zw.Write(raw.Bytes())
	_ = zw.Close()
	return z.Bytes()
}

// writeUnicodeTables writes the V8 property ranges as Go tables.
func writeUnicodeTables(path string, props map[string][][2]rune) error {
	var b strings.Builder
	b.WriteString("// Code generated by internal/gen from V8's Unicode data; DO NOT EDIT.\n\npackage fontmetrics\n\n")
	for _, p := range unicodeProps {
		rs, ok := props[p]
		if !ok || len(rs) == 0 {
			return fmt.Errorf("V8 returned no ranges for %s", p)
		}
		fmt.Fprintf(&b, "// %s matches %s.\nvar %s = []runeRange{", propVar[p], p, propVar[p])
		for i, r := range rs {
			if i%6 == 0 {
				b.WriteString("\n\t")
			} else {
				b.WriteString(" ")
			}
			fmt.Fprintf(&b, "{0x%X, 0x%X},", r[0], r[1])
		}
		b.WriteString("\n}\n\n")
	}
	src, err := format.Source([]byte(b.String()))
	if err != nil {
		return fmt.Errorf("format tables: %w", err)
	}
	return os.WriteFile(path, src, 0o644)
}

// wideEstimates returns the CJK and Hangul estimates of a family. Excalifont
// falls back to Xiaolai, which Excalidraw bundles, so its widths are measured
// (the widest of a sample); other families fall back to whatever CJK font the
// viewer's system has, so they get 1 em, at least as wide as the common ones.
func wideEstimates(b *browser.Browser, f browser.Family) (wide, hangul uint32, err error) {
	if f.ID != 5 {
		return unitsPerEm, unitsPerEm, nil
	}
	var han, hang []rune
	for r := rune(0x4E00); r <= 0x9FFF; r += 37 {
		han = append(han, r)
	}
	han = append(han, span(0x3041, 0x3096)...)
	han = append(han, span(0x30A1, 0x30FA)...)
	han = append(han, span(0xFF01, 0xFF5E)...)
	for r := rune(0xAC00); r <= 0xD7A3; r += 29 {
		hang = append(hang, r)
	}
	font := browser.FontString(f.ID, measureSize)
	maxOf := func(cps []rune) (uint32, error) {
		ws, err := b.MeasureChars(font, cps)
		if err != nil {
			return 0, err
		}
		return uint32(toUnits(slices.Max(ws), measureSize)), nil
	}
	if wide, err = maxOf(han); err != nil {
		return 0, 0, err
	}
	hangul, err = maxOf(hang)
	return wide, hangul, err
}
