package fontmetrics

import (
	"bytes"
	"compress/flate"
	_ "embed"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"sort"
	"sync"
	"unicode"
)

//go:generate go run ./internal/gen -out . -npm internal/browser

// metricsBin holds the advance widths and pair corrections measured by
// internal/gen in Chromium; see that package for the format.
//
//go:embed metrics.bin
var metricsBin []byte

// unitsPerEm is the fixed-point unit of the tables: 1/65536 em.
const unitsPerEm = 65536

// denseLimit: code points below it are looked up in a flat slice.
const denseLimit = 0x2800

// unmeasured marks a slot of the dense slice that the generator did not measure.
const unmeasured = math.MaxUint32

// Estimates for characters outside the measured blocks, in units. They err
// wide so a label never overflows: CJK and other East Asian wide characters
// take the per-family estimate from the tables (Xiaolai's widest for
// Excalifont, else 1 em), an emoji 1.3 em (colour emoji fonts run 1.0-1.3
// em; sequences see emojiSeqWidth), anything else 0.8 em, wider than most letters of Arabic,
// Hebrew, Indic, Thai, Georgian or Armenian fallback fonts.
const (
	estimateEmoji = unitsPerEm * 13 / 10
	estimateOther = unitsPerEm * 8 / 10
	// estimateEmojiPart is each further part of an emoji sequence.
	estimateEmojiPart = unitsPerEm * 11 / 10
	estimateMark      = unitsPerEm / 4
)

// An advance in the tables is fitted, flagFitted | upm index << 16 | units
// (a glyph of units/upms[index] em, scaled as Chromium's FreeType scales it),
// or linear, in 1/65536 em, for what the generator could not fit.
const flagFitted = 1 << 31

// maxUPM bounds the units-per-em values of one family (the fonts Chromium
// draws it with, fallbacks included), so a scaler lives on the stack.
const maxUPM = 16

type table struct {
	upms   []int64              // units per em of the fitted advances
	wide   int                  // estimate for CJK ideographs, kana, fullwidth forms
	hangul int                  // estimate for Hangul
	dense  []uint32             // advance by code point below denseLimit, or unmeasured
	runs   []advRun             // measured code points at or above denseLimit, sorted
	pairs  map[uint32]int32     // (a<<16 | b) -> correction
	firsts [0x10000 / 64]uint64 // bit set: BMP code points that start a pair
}

var tables = sync.OnceValue(func() map[int]*table {
	t, err := decode(metricsBin)
	if err != nil {
		// The file is generated and embedded at build time; TestEmbeddedData
		// catches a bad one before it ships.
		panic(fmt.Sprintf("fontmetrics: embedded metrics.bin: %v", err))
	}
	return t
})

func decode(z []byte) (map[int]*table, error) {
	raw, err := io.ReadAll(flate.NewReader(bytes.NewReader(z)))
	if err != nil {
		return nil, fmt.Errorf("inflate: %w", err)
	}
	r := bytes.NewReader(raw)
	var hdr struct {
		Magic   [4]byte
		Version uint8
		N       uint8
	}
	if err := binary.Read(r, binary.LittleEndian, &hdr); err != nil {
		return nil, fmt.Errorf("read header: %w", err)
	}
	if string(hdr.Magic[:]) != "EXFM" || hdr.Version != 4 {
		return nil, fmt.Errorf("not a version 4 EXFM file (magic %q, version %d)", hdr.Magic[:], hdr.Version)
	}
	out := make(map[int]*table, hdr.N)
	for range hdr.N {
		id, t, err := decodeFamily(r)
		if err != nil {
			return nil, err
		}
		out[id] = t
	}
	if r.Len() != 0 {
		return nil, fmt.Errorf("%d trailing bytes", r.Len())
	}
	return out, nil
}

func decodeFamily(r *bytes.Reader) (int, *table, error) {
	le := binary.LittleEndian
	var id uint8
	var wide, hangul uint32
	var nUPM uint8
	if err := errors.Join(binary.Read(r, le, &id), binary.Read(r, le, &wide), binary.Read(r, le, &hangul), binary.Read(r, le, &nUPM)); err != nil {
		return 0, nil, fmt.Errorf("read family header: %w", err)
	}
	if nUPM > maxUPM {
		return 0, nil, fmt.Errorf("family %d has %d units-per-em values, at most %d", id, nUPM, maxUPM)
	}
	upms := make([]uint16, nUPM)
	var nRanges uint16
	if err := errors.Join(binary.Read(r, le, upms), binary.Read(r, le, &nRanges)); err != nil {
		return 0, nil, fmt.Errorf("read family %d header: %w", id, err)
	}
	t := &table{wide: int(wide), hangul: int(hangul), dense: make([]uint32, denseLimit), pairs: map[uint32]int32{}}
	for _, u := range upms {
		if u == 0 {
			return 0, nil, fmt.Errorf("family %d has a units-per-em of 0", id)
		}
		t.upms = append(t.upms, int64(u))
	}
	for i := range t.dense {
		t.dense[i] = unmeasured
	}
	last := rune(-1)
	for range nRanges {
		var start uint32
		var n uint16
		if err := errors.Join(binary.Read(r, le, &start), binary.Read(r, le, &n)); err != nil {
			return 0, nil, fmt.Errorf("read family %d range header: %w", id, err)
		}
		if rune(start) <= last {
			return 0, nil, fmt.Errorf("family %d range at U+%04X is out of order", id, start)
		}
		last = rune(start) + rune(n) - 1
		adv := make([]uint32, n)
		if err := binary.Read(r, le, adv); err != nil {
			return 0, nil, fmt.Errorf("read family %d advances at U+%04X: %w", id, start, err)
		}
		for i, a := range adv {
			cp := rune(start) + rune(i)
			if a != unmeasured && a&flagFitted != 0 && int((a>>16)&0x7FFF) >= len(t.upms) {
				return 0, nil, fmt.Errorf("family %d: U+%04X names units-per-em %d of %d", id, cp, (a>>16)&0x7FFF, len(t.upms))
			}
			if cp < denseLimit {
				t.dense[cp] = a
			} else {
				t.addRun(cp, a)
			}
		}
	}
	var nPairs uint32
	if err := binary.Read(r, le, &nPairs); err != nil {
		return 0, nil, fmt.Errorf("read family %d pair count: %w", id, err)
	}
	pairs := make([]struct {
		A, B  uint16
		Delta int32
	}, nPairs)
	if err := binary.Read(r, le, pairs); err != nil {
		return 0, nil, fmt.Errorf("read family %d pairs: %w", id, err)
	}
	for _, p := range pairs {
		t.pairs[uint32(p.A)<<16|uint32(p.B)] = p.Delta
		t.firsts[p.A/64] |= 1 << (p.A % 64)
	}
	return int(id), t, nil
}

// tableFor maps an Excalidraw family number to its table, and unknown numbers
// to Excalifont, like Excalidraw's default. Helvetica (2) is a system font:
// Linux resolves it to Liberation Sans, its metric-compatible clone, which
// the generator measured under the name Helvetica, since the system's copy
// and the one Excalidraw ships differ in the glyphs neither has (CJK boxes).
func tableFor(family int) *table {
	ts := tables()
	if t, ok := ts[family]; ok {
		return t
	}
	return ts[Excalifont]
}

// measured reports whether the generator measured r.
func (t *table) measured(r rune) bool {
	if r >= 0 && r < denseLimit {
		return t.dense[r] != unmeasured
	}
	_, ok := t.runAt(r)
	return ok
}

// advRun is a stretch of consecutive code points of one width: the CJK blocks
// are tens of thousands of characters in a handful of widths (1 em for
// ideographs, the fallback's .notdef box where no font has them), so runs keep
// them in a few kilobytes instead of a map of every character.
type advRun struct {
	lo, hi rune // inclusive
	adv    uint32
}

// addRun appends cp, which the file lists in increasing order.
func (t *table) addRun(cp rune, adv uint32) {
	if n := len(t.runs); n > 0 && t.runs[n-1].hi == cp-1 && t.runs[n-1].adv == adv {
		t.runs[n-1].hi = cp
		return
	}
	t.runs = append(t.runs, advRun{lo: cp, hi: cp, adv: adv})
}

// runAt returns the width of r from the runs.
func (t *table) runAt(r rune) (uint32, bool) {
	i := sort.Search(len(t.runs), func(i int) bool { return t.runs[i].hi >= r })
	if i < len(t.runs) && t.runs[i].lo <= r {
		return t.runs[i].adv, true
	}
	return 0, false
}

// advance returns the width of r alone: fitted, or linear in units.
func (t *table) advance(r rune) uint32 {
	if r >= 0 && r < denseLimit {
		if a := t.dense[r]; a != unmeasured {
			return a
		}
	} else if a, ok := t.runAt(r); ok {
		return a
	}
	return uint32(t.estimate(r))
}

// scaler turns fitted advances into px at one font size, as Chromium does:
// FreeType's unhinted advance of a glyph of u font units in a font of upm
// units per em is u × scale / 64 in 16.16 px, scale = s26 × 65536 / upm
// rounded (FT_DivFix), s26 the size in 26.6 truncated, and HarfBuzz adds
// the 16.16 advances. At 16 px a 1 em glyph of a 1000-unit font is
// 16.0000305 px: 15 do not fit in 240 px, which a linear model gets wrong.
type scaler struct {
	scale [maxUPM]int64
	// linear: a size FreeType cannot take (not positive, NaN, huge); the
	// caller scales em units linearly instead, as for estimates.
	linear bool
	upms   []int64
}

func (t *table) scaler(size float64) scaler {
	sc := scaler{upms: t.upms}
	if !(size > 0 && size < 1<<20) {
		sc.linear = true
		return sc
	}
	s26 := int64(size * 64)
	for i, u := range t.upms {
		sc.scale[i] = (s26*65536 + u/2) / u
	}
	return sc
}

// px is the width of fitted advance a in 1/65536 px.
func (sc *scaler) px(a uint32) int64 {
	units, k := int64(a&0xFFFF), (a>>16)&0x7FFF
	return (units*sc.scale[k] + 32) / 64
}

// em is fitted advance a in 1/65536 em, for linear scaling.
func (sc *scaler) em(a uint32) int {
	units, k := int64(a&0xFFFF), (a>>16)&0x7FFF
	return int(units * unitsPerEm / sc.upms[k])
}

// kern returns the correction for a followed by b, in units.
func (t *table) kern(a, b rune) int {
	if a > 0xFFFF || b > 0xFFFF {
		return 0
	}
	if t.firsts[a/64]&(1<<(a%64)) == 0 {
		return 0
	}
	return int(t.pairs[uint32(a)<<16|uint32(b)])
}

var (
	zeroWidth = []*unicode.RangeTable{unicode.Cf, unicode.Variation_Selector}
)

// latinMarks are the combining blocks used with Latin, Greek and Cyrillic.
var latinMarks = []runeRange{{0x0300, 0x036F}, {0x0483, 0x0489}, {0x1AB0, 0x1AFF}, {0x1DC0, 0x1DFF}, {0x20D0, 0x20FF}, {0xFE20, 0xFE2F}}

// estimate is the width of a character the generator did not measure.
func (t *table) estimate(r rune) int {
	switch {
	case unicode.In(r, zeroWidth...):
		return 0 // joiners and variation selectors do not advance
	case inTable(r, latinMarks):
		// A decomposed accent usually takes no room, but when the font
		// lacks it the browser draws the whole cluster in a fallback font.
		return estimateMark
	case isEmojiChar(r):
		return estimateEmoji
	case inTable(r, tabHangul) || inTable(r, hangulJamo):
		return t.hangul
	case isWide(r):
		return t.wide
	default:
		// Other scripts' marks too: without a font for the script every
		// character, mark or not, is a box.
		return estimateOther
	}
}

func isEmojiChar(r rune) bool {
	return inTable(r, tabExtPict) || inTable(r, tabEmojiPres) || inTable(r, tabRI)
}

// wideRanges are the East Asian Wide and Fullwidth blocks (UAX #11) that the
// script tables below do not already cover.
var wideRanges = []runeRange{
	{0x1100, 0x115F}, {0x2E80, 0x303E}, {0x3041, 0x33FF}, {0x3400, 0x4DBF}, {0x4E00, 0x9FFF},
	{0xA000, 0xA4CF}, {0xA960, 0xA97F}, {0xAC00, 0xD7A3}, {0xF900, 0xFAFF}, {0xFE10, 0xFE19},
	{0xFE30, 0xFE6F}, {0xFF00, 0xFF60}, {0xFFE0, 0xFFE6}, {0x16FE0, 0x18AFF}, {0x1B000, 0x1B2FF},
	{0x20000, 0x3FFFD},
}

var hangulJamo = []runeRange{{0x1100, 0x11FF}, {0x3130, 0x318F}, {0xA960, 0xA97F}, {0xD7B0, 0xD7FF}}

func isWide(r rune) bool {
	return inTable(r, wideRanges) || inTable(r, tabHan) || inTable(r, tabHiragana) || inTable(r, tabKatakana)
}

// runeRange is an inclusive range of code points; tables are sorted.
type runeRange struct{ lo, hi rune }

func inTable(r rune, t []runeRange) bool {
	i := sort.Search(len(t), func(i int) bool { return t[i].hi >= r })
	return i < len(t) && t[i].lo <= r
}
