package main

import "math"

// Chromium does not scale a glyph's advance linearly with the font size: it
// asks FreeType for the unhinted advance, which FreeType computes in fixed
// point from the advance in font units and the font's units per em:
//
//	s26   = trunc(size × 64)                      the size in 26.6
//	scale = round(s26 × 65536 / unitsPerEm)       FT_DivFix
//	adv   = round(units × scale / 64) / 65536 px  FT_MulDiv, 16.16
//
// and HarfBuzz adds those 16.16 advances up. At 16 px a 1 em Xiaolai glyph is
// 16.0000305 px, so 15 of them do not fit in 240 px, which a linear model
// (15 × 16 = 240) gets wrong, and CJK labels, all 1 em glyphs, meet such
// boundaries all the time (an arrow label wraps at 11 × the font size). The
// generator finds each glyph's (units, unitsPerEm) from its widths at several
// sizes; the package then reproduces Chromium's advance at any size to the bit.

// fitSizes are the sizes each character is measured at besides measureSize to
// pin down its (units, unitsPerEm): integer and half sizes where the rounding
// of scale differs.
var fitSizes = []float64{9, 13, 16, 23, 13.5}

// preferredUPM are tried first: the units per em of the fonts Chromium uses
// here (1000 for Excalidraw's own fonts and Xiaolai, 2048 for Liberation and
// DejaVu); then every value from 16 up. A power-of-two multiple of a fitting
// value fits as well, so the first found is as good as any.
var preferredUPM = []int64{1000, 2048, 1024, 2000, 4096, 512, 256, 1200}

// ftAdvance is Chromium's advance in 1/65536 px of a glyph of units/upm at size.
func ftAdvance(units, upm int64, size float64) int64 {
	s26 := int64(size * 64)
	scale := (s26*65536 + upm/2) / upm
	return (units*scale + 32) / 64
}

// fitGlyph returns the (units, unitsPerEm) that reproduce every measured width
// (widths[i] at sizes[i], in px), or ok false when none does.
func fitGlyph(sizes, widths []float64) (units, upm int64, ok bool) {
	try := func(u int64) (int64, bool) {
		ref := int64(math.Round(widths[0] * 65536))
		scale := (int64(sizes[0]*64)*65536 + u/2) / u
		if scale == 0 {
			return 0, false
		}
		a := int64(math.Round(float64(ref) * 64 / float64(scale)))
		if a < 0 || a > math.MaxUint16 {
			return 0, false
		}
		for i, s := range sizes {
			if float64(ftAdvance(a, u, s)) != math.Round(widths[i]*65536) {
				return 0, false
			}
		}
		return a, true
	}
	for _, u := range preferredUPM {
		if a, ok := try(u); ok {
			return a, u, true
		}
	}
	for u := int64(16); u <= 16384; u++ {
		if a, ok := try(u); ok {
			return a, u, true
		}
	}
	return 0, 0, false
}
