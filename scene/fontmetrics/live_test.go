package fontmetrics

import (
	"context"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/excalibot/excalibot/scene/fontmetrics/internal/browser"
)

// startLive starts Chromium with Excalidraw's fonts, or skips the test saying
// what is missing.
func startLive(t *testing.T) *browser.Browser {
	t.Helper()
	if testing.Short() {
		t.Skip("live Chromium check skipped in -short mode")
	}
	chromium := cmpOr(os.Getenv("FONTMETRICS_CHROMIUM"), "/usr/bin/chromium")
	if _, err := os.Stat(chromium); err != nil {
		t.Skipf("live Chromium check skipped: no Chromium at %s (set FONTMETRICS_CHROMIUM)", chromium)
	}
	pkg := filepath.Join("internal", "browser")
	if _, err := os.Stat(browser.DistDir(pkg)); err != nil {
		t.Skipf("live Chromium check skipped: Excalidraw's npm package is not installed (cd scene/fontmetrics/%s && npm ci --ignore-scripts --legacy-peer-deps)", pkg)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	t.Cleanup(cancel)
	b, err := browser.Start(ctx, browser.Options{Chromium: chromium, PackageDir: pkg})
	if err != nil {
		t.Fatalf("start Chromium: %v", err)
	}
	t.Cleanup(b.Close)
	return b
}

func cmpOr(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

// Alphabets for random labels: each script with the digits, punctuation and
// spaces it is written with.
var liveAlphabets = []string{
	"abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789 .,:;-()/&'\"!?%#@+=_éèüöäßçñÉÅøł–—…“”",
	"абвгдеёжзийклмнопрстуфхцчшщъыьэюяАБВГДЕЁЖЗИЙКЛМНОПРСТУФХЦЧШЩЭЮЯіїєґ 0123456789.,:;-()«»!?",
	"αβγδεζηθικλμνξοπρστυφχψωάέήίόύώΑΒΓΔΕΖΗΘΙΚΛΜΝΞΟΠΡΣΤΥΦΧΨΩ 0123456789.,;-()!",
}

func randomLabel(rng *rand.Rand) string {
	alpha := []rune(liveAlphabets[rng.IntN(len(liveAlphabets))])
	n := 3 + rng.IntN(30)
	var b strings.Builder
	for range n {
		if rng.IntN(6) == 0 {
			b.WriteByte(' ') // word-like runs
			continue
		}
		b.WriteRune(alpha[rng.IntN(len(alpha))])
	}
	return b.String()
}

var liveFamilies = []int{Virgil, Helvetica, Cascadia, Excalifont, Nunito, LilitaOne, ComicShanns, LiberationSans}

// TestLiveChromium starts one Chromium (a few seconds) for three checks:
// random labels re-measured against LineWidth, random wrap cases against
// Excalidraw's wrapText, and the test-file cases against wrapText with the
// test metric.
func TestLiveChromium(t *testing.T) {
	b := startLive(t)
	t.Run("labels", func(t *testing.T) { liveLabels(t, b) })
	t.Run("wrap", func(t *testing.T) { liveWrap(t, b) })
	t.Run("excalidraw-test-cases", func(t *testing.T) { liveExcalidrawCases(t, b) })
	t.Run("scripts", func(t *testing.T) { liveScripts(t, b) })
	t.Run("scripts-wrap", func(t *testing.T) { liveScriptsWrap(t, b) })
}

// liveLabels re-measures random labels (not in any table or golden file) and
// checks LineWidth within the 4 px target.
func liveLabels(t *testing.T, b *browser.Browser) {
	rng := rand.New(rand.NewPCG(1, 2))
	const perFamily = 60
	type sample struct {
		family int
		size   float64
		text   string
	}
	var samples []sample
	var items []browser.Item
	for _, fam := range liveFamilies {
		for range perFamily {
			s := sample{family: fam, size: float64(12 + rng.IntN(30)), text: randomLabel(rng)}
			samples = append(samples, s)
			items = append(items, browser.Item{Font: browser.FontString(s.family, s.size), Text: s.text})
		}
	}
	want, err := b.MeasureMany(items)
	if err != nil {
		t.Fatalf("measure in Chromium: %v", err)
	}
	worst := map[int]float64{}
	for i, s := range samples {
		got := LineWidth(s.family, s.size, s.text)
		worst[s.family] = max(worst[s.family], math.Abs(got-want[i]))
		if math.Abs(got-want[i]) > tolerancePx {
			t.Errorf("LineWidth(%d, %v, %q) = %.2f, Chromium %.2f", s.family, s.size, s.text, got, want[i])
		}
	}
	for _, fam := range liveFamilies {
		t.Logf("family %d: %d random labels, max |err| %.3f px", fam, perFamily, worst[fam])
	}
}

// liveWrap compares Wrap with Excalidraw's wrapText on random cases.
func liveWrap(t *testing.T, b *browser.Browser) {
	rng := rand.New(rand.NewPCG(3, 4))
	var cases []browser.WrapCase
	var fams []int
	var sizes []float64
	for range 400 {
		fam := liveFamilies[rng.IntN(len(liveFamilies))]
		size := float64(14 + rng.IntN(24))
		text := randomLabel(rng) + " " + randomLabel(rng)
		cases = append(cases, browser.WrapCase{Text: text, Font: browser.FontString(fam, size), MaxWidth: float64(20 + rng.IntN(300))})
		fams, sizes = append(fams, fam), append(sizes, size)
	}
	wrapped, err := b.Wrap(cases)
	if err != nil {
		t.Fatalf("wrap in Chromium: %v", err)
	}
	same := 0
	for i, c := range cases {
		got := Wrap(fams[i], sizes[i], c.Text, c.MaxWidth)
		if got == wrapped[i] {
			same++
			continue
		}
		t.Errorf("Wrap(%d, %v, %q, %v):\n got %q\nwant %q", fams[i], sizes[i], c.Text, c.MaxWidth, got, wrapped[i])
	}
	t.Logf("wrap: %d of %d random cases identical to Excalidraw's wrapText", same, len(cases))
}

// liveExcalidrawCases runs the test-file cases through 0.18.1's own wrapText
// with the test metric, confirming the table's expectations.
func liveExcalidrawCases(t *testing.T, b *browser.Browser) {
	var cases []browser.WrapCase
	for _, c := range excalidrawWrapCases {
		if math.IsNaN(c.maxWidth) || math.IsInf(c.maxWidth, 0) {
			continue // JSON cannot carry them; the table covers them
		}
		cases = append(cases, browser.WrapCase{Text: c.text, MaxWidth: c.maxWidth})
	}
	want, err := b.WrapTestMetric(cases)
	if err != nil {
		t.Fatalf("wrap in Chromium: %v", err)
	}
	for i, c := range cases {
		if got := wrapWith(c.Text, c.MaxWidth, excalidrawTestWidth); got != want[i] {
			t.Errorf("wrap(%q, %v) = %q, 0.18.1 wrapText %q", c.Text, c.MaxWidth, got, want[i])
		}
	}
}

// liveScripts re-measures the sample labels of every script
// (testdata/scripts.golden.json) in Chromium and checks LineWidth within
// scriptTolerancePx.
func liveScripts(t *testing.T, b *browser.Browser) {
	cases := readGolden[scriptCase](t, "scripts.golden.json")
	items := make([]browser.Item, len(cases))
	for i, c := range cases {
		items[i] = browser.Item{Font: browser.FontString(c.Family, c.Size), Text: c.Text}
	}
	want, err := b.MeasureMany(items)
	if err != nil {
		t.Fatalf("measure in Chromium: %v", err)
	}
	logScriptErrors(t, cases, scriptErrors(t, cases, want))
}

// liveScriptsWrap runs every golden wrap case (the script texts at the
// widths where 1 em characters meet the limit among them) through
// Excalidraw's wrapText in Chromium again and compares with Wrap.
func liveScriptsWrap(t *testing.T, b *browser.Browser) {
	cases := readGolden[wrapGoldenCase](t, "wrap.golden.json")
	calls := make([]browser.WrapCase, len(cases))
	for i, c := range cases {
		calls[i] = browser.WrapCase{Text: c.Text, Font: browser.FontString(c.Family, c.Size), MaxWidth: c.MaxWidth}
	}
	wrapped, err := b.Wrap(calls)
	if err != nil {
		t.Fatalf("wrap in Chromium: %v", err)
	}
	same, boxes := 0, 0
	for i, c := range cases {
		got := Wrap(c.Family, c.Size, c.Text, c.MaxWidth)
		switch {
		case got == wrapped[i]:
			same++
		case boxBesideCommon(c.Family, c.Text):
			boxes++
			t.Logf("box beside punctuation: Wrap(%d, %v, %q, %v) = %q, wrapText %q", c.Family, c.Size, c.Text, c.MaxWidth, got, wrapped[i])
		default:
			t.Errorf("Wrap(%d, %v, %q, %v):\n got %q\nwant %q", c.Family, c.Size, c.Text, c.MaxWidth, got, wrapped[i])
		}
	}
	t.Logf("wrap: %d of %d golden cases identical to Excalidraw's wrapText in this Chromium; %d differ on boxes beside punctuation", same, len(cases), boxes)
	if boxes > len(cases)/100 {
		t.Errorf("%d cases differ on boxes beside punctuation, want at most 1%%", boxes)
	}
}
