package fontmetrics

import (
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// The golden files are Chromium's own answers, written by internal/gen
// (go generate): canvas measureText widths of whole strings that are not in
// the per-character tables, and the output of Excalidraw 0.18.1's parseTokens
// and wrapText run verbatim in the page. They are refreshed by regenerating,
// not by this package's output.

// tolerancePx is how close a measurement must come to Excalidraw's own: within 4 px.
const tolerancePx = 4

type measureCase struct {
	Family int     `json:"family"`
	Size   float64 `json:"size"`
	Text   string  `json:"text"`
	Width  float64 `json:"width"`
}

func readGolden[T any](t testing.TB, name string) []T {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatalf("read golden (regenerate with go generate ./scene/fontmetrics): %v", err)
	}
	var out []T
	if err := json.Unmarshal(b, &out); err != nil {
		t.Fatalf("decode %s: %v", name, err)
	}
	if len(out) == 0 {
		t.Fatalf("%s holds no cases", name)
	}
	return out
}

// errStats accumulates absolute errors per family.
type errStats struct {
	n        int
	sum, max float64
	worst    string
}

func (s *errStats) add(err float64, what string) {
	s.n++
	s.sum += math.Abs(err)
	if math.Abs(err) > s.max {
		s.max, s.worst = math.Abs(err), what
	}
}

func familyName(id int) string { return FamilyName(id) }

func TestGoldenMeasure(t *testing.T) {
	cases := readGolden[measureCase](t, "measure.golden.json")
	stats := map[int]*errStats{}
	for _, c := range cases {
		got := LineWidth(c.Family, c.Size, c.Text)
		diff := got - c.Width
		if stats[c.Family] == nil {
			stats[c.Family] = &errStats{}
		}
		stats[c.Family].add(diff, fmt.Sprintf("%q at %vpx: got %.2f want %.2f", c.Text, c.Size, got, c.Width))
		if math.Abs(diff) > tolerancePx {
			t.Errorf("LineWidth(%d, %v, %q) = %.2f, want %.2f ± %d", c.Family, c.Size, c.Text, got, c.Width, tolerancePx)
		}
	}
	ids := make([]int, 0, len(stats))
	for id := range stats {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	for _, id := range ids {
		s := stats[id]
		// Regression guard far inside the 4 px target: the model lands within
		// hundredths of a pixel, so anything near 0.5 px means it broke
		// (kerning lost, a table shifted).
		if s.max > 0.5 {
			t.Errorf("family %d: max error %.3f px, want under 0.5 px (%s)", id, s.max, s.worst)
		}
		t.Logf("family %d %-16s cases %3d  mean |err| %.3f px  max %.3f px (%s)", id, familyName(id), s.n, s.sum/float64(s.n), s.max, s.worst)
	}
}

// TestGoldenSafe: for scripts the tables do not cover, the estimate must
// never be narrower than Chromium, so a label never overflows its shape.
func TestGoldenSafe(t *testing.T) {
	for _, c := range readGolden[measureCase](t, "safe.golden.json") {
		got := LineWidth(c.Family, c.Size, c.Text)
		if got < c.Width-0.5 {
			t.Errorf("LineWidth(%d, %v, %q) = %.2f, narrower than Chromium's %.2f", c.Family, c.Size, c.Text, got, c.Width)
		}
	}
}

func TestGoldenTokens(t *testing.T) {
	type tokensCase struct {
		Line   string   `json:"line"`
		Tokens []string `json:"tokens"`
	}
	for _, c := range readGolden[tokensCase](t, "tokens.golden.json") {
		if got := Tokens(c.Line); !slices.Equal(got, c.Tokens) {
			t.Errorf("Tokens(%q) = %q, want %q", c.Line, got, c.Tokens)
		}
	}
}

type wrapGoldenCase struct {
	Family   int     `json:"family"`
	Size     float64 `json:"size"`
	MaxWidth float64 `json:"maxWidth"`
	Text     string  `json:"text"`
	Want     string  `json:"want"`
}

func TestGoldenWrap(t *testing.T) {
	cases := readGolden[wrapGoldenCase](t, "wrap.golden.json")
	same, wider, boxes := 0, 0, 0
	for _, c := range cases {
		got := Wrap(c.Family, c.Size, c.Text, c.MaxWidth)
		switch {
		case got == c.Want:
			same++
		case estimated(c.Family, c.Text) && strings.Count(got, "\n") >= strings.Count(c.Want, "\n"):
			// An estimate errs wide, so breaking earlier is the intended result.
			wider++
			t.Logf("breaks earlier on an estimate: Wrap(%d, %v, %q, %v) = %q, wrapText %q", c.Family, c.Size, c.Text, c.MaxWidth, got, c.Want)
		case boxBesideCommon(c.Family, c.Text):
			boxes++
			t.Logf("box beside punctuation: Wrap(%d, %v, %q, %v) = %q, wrapText %q", c.Family, c.Size, c.Text, c.MaxWidth, got, c.Want)
		default:
			t.Errorf("Wrap(%d, %v, %q, %v):\n got %q\nwant %q", c.Family, c.Size, c.Text, c.MaxWidth, got, c.Want)
		}
	}
	t.Logf("%d of %d wrap cases identical to Excalidraw's wrapText; %d break earlier on estimated characters, %d differ on boxes beside punctuation", same, len(cases), wider, boxes)
	if same < len(cases)*99/100 {
		t.Errorf("only %d of %d wrap cases identical, want at least 99%%", same, len(cases))
	}
}

func TestEmbeddedData(t *testing.T) {
	ts, err := decode(metricsBin)
	if err != nil {
		t.Fatalf("decode embedded metrics.bin: %v", err)
	}
	for _, id := range []int{Virgil, Cascadia, Excalifont, Nunito, LilitaOne, ComicShanns, LiberationSans} {
		tb, ok := ts[id]
		if !ok {
			t.Errorf("family %d missing from metrics.bin", id)
			continue
		}
		for _, r := range "AzЖλ€" {
			if tb.dense[r] == unmeasured || tb.dense[r] == 0 {
				t.Errorf("family %d: no width for %q", id, r)
			}
		}
	}
	if _, err := decode(metricsBin[:len(metricsBin)/2]); err == nil {
		t.Error("decode of a truncated file succeeded, want an error")
	}
	if !strings.Contains(fmt.Sprint(decodeErr([]byte("nope"))), "inflate") {
		t.Errorf("decode of garbage: %v, want an inflate error", decodeErr([]byte("nope")))
	}
}

// estimated reports whether text holds a character the tables only estimate
// for family.
func estimated(family int, text string) bool {
	tb := tableFor(family)
	for _, r := range text {
		if r != '\n' && !tb.measured(r) {
			return true
		}
	}
	return false
}

func decodeErr(b []byte) error { _, err := decode(b); return err }
