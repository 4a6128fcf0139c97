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

type table struct {
	wide   int                  // estimate for CJK ideographs, kana, fullwidth forms
	hangul int                  // estimate for Hangul
	dense  []uint32             // advance by code point below denseLimit, or unmeasured
	sparse map[rune]uint32      // measured code points at or above denseLimit
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
	if string(hdr.Magic[:]) != "EXFM" || hdr.Version != 3 {
		return nil, fmt.Errorf("not a version 3 EXFM file (magic %q, version %d)", hdr.Magic[:], hdr.Version)
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
	var nRanges uint16
	if err := errors.Join(binary.Read(r, le, &id), binary.Read(r, le, &wide), binary.Read(r, le, &hangul), binary.Read(r, le, &nRanges)); err != nil {
		return 0, nil, fmt.Errorf("read family header: %w", err)
	}
	t := &table{wide: int(wide), hangul: int(hangul), dense: make([]uint32, denseLimit), sparse: map[rune]uint32{}, pairs: map[uint32]int32{}}
	for i := range t.dense {
		t.dense[i] = unmeasured
	}
	for range nRanges {
		var start uint32
		var n uint16
		if err := errors.Join(binary.Read(r, le, &start), binary.Read(r, le, &n)); err != nil {
			return 0, nil, fmt.Errorf("read family %d range header: %w", id, err)
		}
		adv := make([]uint32, n)
		if err := binary.Read(r, le, adv); err != nil {
			return 0, nil, fmt.Errorf("read family %d advances at U+%04X: %w", id, start, err)
		}
		for i, a := range adv {
			cp := rune(start) + rune(i)
			if cp < denseLimit {
				t.dense[cp] = a
			} else {
				t.sparse[cp] = a
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

// tableFor maps an Excalidraw family number to its table: Helvetica (2) is
// measured as Liberation Sans, its metric-compatible clone (what Linux
// resolves "Helvetica" to; identical widths in Chromium), and unknown
// numbers as Excalifont, like Excalidraw's default.
func tableFor(family int) *table {
	ts := tables()
	if family == Helvetica {
		family = LiberationSans
	}
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
	_, ok := t.sparse[r]
	return ok
}

// advance returns the width of r alone, in units.
func (t *table) advance(r rune) int {
	if r >= 0 && r < denseLimit {
		if a := t.dense[r]; a != unmeasured {
			return int(a)
		}
	} else if a, ok := t.sparse[r]; ok {
		return int(a)
	}
	return t.estimate(r)
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
