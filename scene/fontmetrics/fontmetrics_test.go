package fontmetrics

import (
	"math"
	"strings"
	"testing"
	"time"
)

func TestLineHeight(t *testing.T) {
	tests := []struct {
		family int
		want   float64
	}{
		{Virgil, 1.25}, {Helvetica, 1.15}, {Cascadia, 1.2}, {Excalifont, 1.25}, {Nunito, 1.35},
		{LilitaOne, 1.15}, {ComicShanns, 1.25}, {LiberationSans, 1.15},
		{4, 1.25}, {0, 1.25}, {100, 1.25}, // unknown: Excalifont
	}
	for _, tt := range tests {
		if got := LineHeight(tt.family); got != tt.want {
			t.Errorf("LineHeight(%d) = %v, want %v", tt.family, got, tt.want)
		}
	}
}

func TestFamilyByName(t *testing.T) {
	tests := []struct {
		name   string
		want   int
		wantOK bool
	}{
		{"excalifont", Excalifont, true}, {"Nunito", Nunito, true}, {"lilita", LilitaOne, true},
		{"Lilita One", LilitaOne, true}, {"  lilita   one ", LilitaOne, true}, {"comic", ComicShanns, true},
		{"Comic Shanns", ComicShanns, true}, {"liberation", LiberationSans, true},
		{"Liberation Sans", LiberationSans, true}, {"cascadia", Cascadia, true}, {"VIRGIL", Virgil, true},
		{"helvetica", Helvetica, true}, {"arial", 0, false}, {"", 0, false},
	}
	for _, tt := range tests {
		got, ok := FamilyByName(tt.name)
		if got != tt.want || ok != tt.wantOK {
			t.Errorf("FamilyByName(%q) = %d, %v; want %d, %v", tt.name, got, ok, tt.want, tt.wantOK)
		}
	}
	for _, name := range FamilyNames() {
		f, ok := FamilyByName(name)
		if !ok || FamilyName(f) != name {
			t.Errorf("FamilyNames has %q, which maps to %d named %q", name, f, FamilyName(f))
		}
	}
}

func near(a, b float64) bool { return math.Abs(a-b) < 1e-9 }

func TestMeasure(t *testing.T) {
	lw := func(s string) float64 { return LineWidth(Excalifont, 20, s) }
	lh := 20 * 1.25
	tests := []struct {
		text          string
		width, height float64
	}{
		{"", lw(" "), lh}, // an empty text measures as one space
		{"Load balancer", lw("Load balancer"), lh},
		{"a\nlonger line", lw("longer line"), 2 * lh},
		{"a\r\nb", lw("a"), 2 * lh},
		{"a\rb", lw("a"), 2 * lh},
		{"x\n", lw("x"), 2 * lh},
		{"\tx", lw("        x"), lh},                // tabs are eight spaces
		{"a\n\n\nb", max(lw("a"), lw("b")), 4 * lh}, // empty lines count
	}
	for _, tt := range tests {
		w, h := Measure(Excalifont, 20, tt.text)
		if !near(w, tt.width) || !near(h, tt.height) {
			t.Errorf("Measure(%q) = %.3f×%.3f, want %.3f×%.3f", tt.text, w, h, tt.width, tt.height)
		}
	}
}

func TestLineWidth(t *testing.T) {
	em := func(family int, s string) float64 { return LineWidth(family, 100, s) / 100 }
	tests := []struct {
		name     string
		got      float64
		min, max float64
	}{
		{"empty", em(Excalifont, ""), 0, 0},
		{"Helvetica is Liberation Sans", em(Helvetica, "Helvetica") - em(LiberationSans, "Helvetica"), 0, 0},
		{"unknown family is Excalifont", em(42, "Excalidraw") - em(Excalifont, "Excalidraw"), 0, 0},
		{"tab is a space", em(Nunito, "a\tb") - em(Nunito, "a b"), 0, 0},
		{"Cascadia is monospaced", em(Cascadia, "iiii") - em(Cascadia, "WWWW"), 0, 0},
		{"kerning makes AV narrower", em(LiberationSans, "AV") - em(LiberationSans, "A") - em(LiberationSans, "V"), -0.2, -0.01},
		// No font of Nunito's has CJK and the renderer's system none: Chromium draws a box.
		{"CJK outside Excalifont is the fallback's box", em(Nunito, "漢"), 0.36, 0.37},
		{"Hangul outside Excalifont is the fallback's box", em(Nunito, "한"), 0.36, 0.37},
		{"Xiaolai ideograph for Excalifont", em(Excalifont, "漢"), 0.9999, 1.0001},
		{"Xiaolai Hangul for Excalifont", em(Excalifont, "한"), 0.9, 1},
		{"Xiaolai halfwidth katakana", em(Excalifont, "ｱ"), 0.4999, 0.5001},
		{"emoji", em(Excalifont, "😀"), 1.3, 1.3},
		{"ZWJ family errs wide", em(Excalifont, "👨\u200d👩\u200d👧"), 3.5, 3.5},
		{"flag is two regional indicators", em(Excalifont, "🇨🇿"), 2.4, 2.4},
		{"text-style pictograph measured", em(LiberationSans, "™"), 0.5, 1.1},
		{"VS16 makes it an emoji", em(LiberationSans, "™\ufe0f"), 1.3, 1.3},
		{"Arabic estimated", em(Excalifont, "م"), 0.8, 0.8},
		{"ZWJ alone has no width", em(Excalifont, "\u200d"), 0, 0},
	}
	for _, tt := range tests {
		if tt.got < tt.min-1e-4 || tt.got > tt.max+1e-4 {
			t.Errorf("%s: got %.4f em, want within [%v, %v]", tt.name, tt.got, tt.min, tt.max)
		}
	}
	// Widths scale with the size, but in FreeType's fixed point, not linearly.
	if a, b := LineWidth(Nunito, 13, "Пользователь"), LineWidth(Nunito, 26, "Пользователь"); math.Abs(2*a-b) > 0.01 {
		t.Errorf("width at 26px %.4f, want about twice the width at 13px (%.4f)", b, a)
	}
	// Chromium's own numbers (canvas measureText): a 1 em glyph of a 1000-unit
	// font is 16.0000305 px at 16 px and 99.9999084 px at 100 px, so 15 of
	// them do not fit in 240 px.
	for _, tt := range []struct {
		size float64
		text string
		want float64
	}{
		{16, "用", 16.000030517578125}, {100, "用", 99.99990844726562}, {14.4, "用", 14.390701293945312},
		{16, "用户在登录页面输入手机号码，系", 240.0004577636719},
	} {
		if got := LineWidth(Excalifont, tt.size, tt.text); math.Abs(got-tt.want) > 1e-9 {
			t.Errorf("LineWidth(Excalifont, %v, %q) = %.9f, Chromium %.9f", tt.size, tt.text, got, tt.want)
		}
	}
}

func TestScaler(t *testing.T) {
	tb := &table{upms: []int64{1000, 2048}}
	for _, tt := range []struct {
		size       float64
		units, upm uint32
		want       int64 // 1/65536 px
	}{
		{16, 1000, 0, 1048578}, {100, 1000, 0, 6553594}, {20, 0, 0, 0}, {20, 1139, 1, 728960},
	} {
		sc := tb.scaler(tt.size)
		if got := sc.px(flagFitted | tt.upm<<16 | tt.units); got != tt.want {
			t.Errorf("size %v: %d/%d em = %d, want %d", tt.size, tt.units, tb.upms[tt.upm], got, tt.want)
		}
	}
	// Sizes FreeType cannot take scale linearly, as before any fitting.
	for _, tt := range []struct {
		size float64
		want float64
	}{{-20, -20 * LineWidth(Excalifont, 1, "用")}, {0, 0}, {1e30, 1e30 * LineWidth(Excalifont, 1, "用")}} {
		if got := LineWidth(Excalifont, tt.size, "用"); math.Abs(got-tt.want) > math.Abs(tt.want)*1e-3 {
			t.Errorf("LineWidth at %v px = %v, want %v", tt.size, got, tt.want)
		}
	}
	if got := LineWidth(Excalifont, math.NaN(), "用"); !math.IsNaN(got) {
		t.Errorf("LineWidth at NaN px = %v, want NaN", got)
	}
}

// timePerOp times n calls of f after the benchmark loop. (testing.Benchmark
// cannot nest inside a running benchmark: both take the benchmark lock.)
func timePerOp(n int, f func()) float64 {
	start := time.Now()
	for range n {
		f()
	}
	return float64(time.Since(start).Nanoseconds()) / float64(n)
}

var benchLabel = "Authentication Service → Пользователь (v2)"

// BenchmarkLineWidth reports the cost against a bare loop over the same runes
// (the cheapest possible per-character estimate).
func BenchmarkLineWidth(b *testing.B) {
	var sink float64
	for b.Loop() {
		sink += LineWidth(Excalifont, 20, benchLabel)
	}
	ns := float64(b.Elapsed().Nanoseconds()) / float64(b.N)
	bare := timePerOp(b.N, func() {
		n := 0
		for range benchLabel {
			n++
		}
		sink += float64(n) * 0.6 * 20
	})
	b.ReportMetric(ns/bare, "x-bare-rune-loop")
	_ = sink
}

// BenchmarkWrap wraps a long label into a 150 px box and reports the cost in
// units of one LineWidth of the whole text.
func BenchmarkWrap(b *testing.B) {
	text := strings.Repeat("Load balancer in front of the API gateway ", 3)
	var sink string
	for b.Loop() {
		sink = Wrap(Excalifont, 20, text, 150)
	}
	ns := float64(b.Elapsed().Nanoseconds()) / float64(b.N)
	var w float64
	one := timePerOp(b.N, func() { w += LineWidth(Excalifont, 20, text) })
	b.ReportMetric(ns/one, "x-one-LineWidth")
	b.ReportMetric(float64(strings.Count(sink, "\n")+1), "lines")
}
