package corpus

import (
	"bufio"
	"fmt"
	"os"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/excalibot/excalibot/diagram/measure"
)

// Thresholds of the report, as the docs state them.
const (
	maxElongation = 2.5 // a picture longer than this either way does not fit a phone
	minTextPx     = 9.0 // text smaller than this at 1600 px is unreadable on a phone
	checkTol      = 2.0 // px a text may move under Excalidraw's re-measuring
)

// formatReport writes the results as Markdown: the totals first (to paste into docs), then one
// row per input.
func formatReport(rs []result) string {
	var b strings.Builder
	b.WriteString("# Corpus measurements\n\n")
	b.WriteString("Written by `go test ./internal/corpus -update`; docs/diagram-quality.md says what each figure counts.\n\n")
	b.WriteString("## Totals\n\n")
	all, mer, gr := totals(rs, nil), totals(rs, func(r result) bool { return !r.in.isGraph() }), totals(rs, func(r result) bool { return r.in.isGraph() })
	b.WriteString("| | all | Mermaid | graph tools |\n|---|---:|---:|---:|\n")
	for _, row := range totalRows {
		fmt.Fprintf(&b, "| %s | %s | %s | %s |\n", row.name, row.get(all), row.get(mer), row.get(gr))
	}
	b.WriteString("\n## Per input\n\n")
	b.WriteString("Nodes and edges: drawn / in the source (`?`: not known). Labels: in the middle / at an end / all.\n\n")
	b.WriteString("| input | nodes | edges | overlaps | text overlaps | labels | labels on nodes | markup | through nodes | crossings | aspect | min text px | Excalidraw's check |\n")
	b.WriteString("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|\n")
	for _, r := range rs {
		if r.err != "" {
			fmt.Fprintf(&b, "| %s | refused: %s |||||||||||\n", r.in.name, strings.ReplaceAll(r.err, "|", `\|`))
			continue
		}
		m := r.m
		mid, end := labelSpread(m.Labels)
		fmt.Fprintf(&b, "| %s | %d / %s | %d / %s | %d | %d | %d / %d / %d | %d | %d | %d | %d | %s | %.1f | %s |\n",
			r.in.name, m.Nodes, ref(r.refNodes), m.Arrows, ref(r.refEdges), m.ShapeOverlaps, m.TextOverlaps,
			mid, end, len(m.Labels), m.LabelsOnNodes, m.Markup, m.ArrowsThroughNodes, m.Crossings,
			aspect(m), m.MinTextPx, checkText(r))
	}
	return b.String()
}

// sums adds up the results that pass keep (all when keep is nil).
type sums struct {
	inputs, converted, refused                         int
	nodes, refNodes, edges, refEdges                   int
	overlaps, textOverlaps, labelsOnNodes, markup      int
	labels, labelsMid, labelsEnd, through, crossings   int
	elongated, smallText, checkClean, followUps, moved int
}

func totals(rs []result, keep func(result) bool) sums {
	var s sums
	for _, r := range rs {
		if keep != nil && !keep(r) {
			continue
		}
		s.inputs++
		if r.err != "" {
			s.refused++
			continue
		}
		s.converted++
		m := r.m
		if r.refNodes >= 0 {
			s.nodes += m.Nodes
			s.refNodes += r.refNodes
		}
		if r.refEdges >= 0 {
			s.edges += m.Arrows
			s.refEdges += r.refEdges
		}
		s.overlaps += m.ShapeOverlaps
		s.textOverlaps += m.TextOverlaps
		s.labelsOnNodes += m.LabelsOnNodes
		s.markup += m.Markup
		mid, end := labelSpread(m.Labels)
		s.labels += len(m.Labels)
		s.labelsMid += mid
		s.labelsEnd += end
		s.through += m.ArrowsThroughNodes
		s.crossings += m.Crossings
		if m.Elongation() > maxElongation {
			s.elongated++
		}
		if m.MinTextPx < minTextPx {
			s.smallText++
		}
		if r.check.Clean(checkTol) {
			s.checkClean++
		}
		if r.moved >= 0 {
			s.followUps++
			s.moved += r.moved
		}
	}
	return s
}

var totalRows = []struct {
	name string
	get  func(sums) string
}{
	{"inputs", func(s sums) string { return strconv.Itoa(s.inputs) }},
	{"converted (not refused)", func(s sums) string { return strconv.Itoa(s.converted) }},
	{"nodes drawn / in the source", func(s sums) string { return fmt.Sprintf("%d / %d", s.nodes, s.refNodes) }},
	{"edges drawn / in the source", func(s sums) string { return fmt.Sprintf("%d / %d", s.edges, s.refEdges) }},
	{"shape overlaps", func(s sums) string { return strconv.Itoa(s.overlaps) }},
	{"text overlaps", func(s sums) string { return strconv.Itoa(s.textOverlaps) }},
	{"edge labels", func(s sums) string { return strconv.Itoa(s.labels) }},
	{"… in the middle of their edge (30–70 %)", func(s sums) string { return strconv.Itoa(s.labelsMid) }},
	{"… at an end of their edge (first or last 15 %)", func(s sums) string { return strconv.Itoa(s.labelsEnd) }},
	{"edge labels on nodes", func(s sums) string { return strconv.Itoa(s.labelsOnNodes) }},
	{"texts with markup left", func(s sums) string { return strconv.Itoa(s.markup) }},
	{"arrows through nodes", func(s sums) string { return strconv.Itoa(s.through) }},
	{"edge crossings", func(s sums) string { return strconv.Itoa(s.crossings) }},
	{fmt.Sprintf("pictures longer than %.1f:1", maxElongation), func(s sums) string { return strconv.Itoa(s.elongated) }},
	{fmt.Sprintf("pictures with text under %.0f px at 1600 px wide", minTextPx), func(s sums) string { return strconv.Itoa(s.smallText) }},
	{"pass Excalidraw's check", func(s sums) string { return fmt.Sprintf("%d / %d", s.checkClean, s.converted) }},
	{"nodes moved by a follow-up call", func(s sums) string { return fmt.Sprintf("%d (in %d follow-ups)", s.moved, s.followUps) }},
}

func labelSpread(ls []measure.LabelPlace) (mid, end int) {
	for _, l := range ls {
		if l.Middle() {
			mid++
		}
		if l.AtEnd() {
			end++
		}
	}
	return mid, end
}

func ref(n int) string {
	if n < 0 {
		return "?"
	}
	return strconv.Itoa(n)
}

// aspect is written as W:H with the longer side first turned to 1 (3.2:1 is wide, 1:3.2 tall).
func aspect(m measure.Report) string {
	a := m.Aspect()
	switch {
	case a <= 0:
		return "-"
	case a >= 1:
		return fmt.Sprintf("%.1f:1", a)
	default:
		return fmt.Sprintf("1:%.1f", 1/a)
	}
}

func checkText(r result) string {
	c := r.check
	if c.Clean(checkTol) {
		return "ok"
	}
	var parts []string
	if n := len(c.Dropped); n > 0 {
		parts = append(parts, fmt.Sprintf("%d dropped", n))
	}
	if n := len(c.Bindings); n > 0 {
		parts = append(parts, fmt.Sprintf("%d bindings repaired", n))
	}
	if c.MaxTextDelta > checkTol {
		parts = append(parts, fmt.Sprintf("text off by %.0f px", c.MaxTextDelta))
	}
	return strings.Join(parts, ", ")
}

type refCounts struct{ nodes, edges int }

// loadReference reads testdata/reference.tsv: the nodes and edges Mermaid's own renderer draws
// for each Mermaid input (scripts/mermaid-side-by-side.sh writes it).
func loadReference(t *testing.T) map[string]refCounts {
	t.Helper()
	f, err := os.Open("testdata/reference.tsv")
	if os.IsNotExist(err) {
		return nil
	}
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	out := map[string]refCounts{}
	sc := bufio.NewScanner(f)
	for line := 1; sc.Scan(); line++ {
		l := sc.Text()
		if l == "" || strings.HasPrefix(l, "#") {
			continue
		}
		fs := strings.Split(l, "\t")
		if len(fs) != 3 {
			t.Fatalf("testdata/reference.tsv:%d: want NAME, NODES and EDGES separated by tabs, got %q", line, l)
		}
		n, err1 := strconv.Atoi(fs[1])
		e, err2 := strconv.Atoi(fs[2])
		if err1 != nil || err2 != nil {
			t.Fatalf("testdata/reference.tsv:%d: counts must be numbers, got %q", line, l)
		}
		out[fs[0]] = refCounts{n, e}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

var sourceRow = regexp.MustCompile("^\\| `([a-z0-9-]+)`")

// checkSources fails when an input has no row in testdata/README.md (where its source is named)
// or the README names an input that is not there.
func checkSources(t *testing.T, inputs []input) {
	t.Helper()
	b, err := os.ReadFile("testdata/README.md")
	if err != nil {
		t.Fatal(err)
	}
	listed := map[string]bool{}
	for _, l := range strings.Split(string(b), "\n") {
		if m := sourceRow.FindStringSubmatch(l); m != nil {
			listed[m[1]] = true
		}
	}
	have := map[string]bool{}
	for _, in := range inputs {
		have[in.name] = true
		if !listed[in.name] {
			t.Errorf("testdata/README.md has no row for %s: name its source", in.name)
		}
	}
	for name := range listed {
		if !have[name] {
			t.Errorf("testdata/README.md lists %s, which is not in the corpus", name)
		}
	}
}

// diffLines returns the lines of want and got that differ, marked - and +, or "" when equal.
func diffLines(want, got string) string {
	if want == got {
		return ""
	}
	w, g := strings.Split(want, "\n"), strings.Split(got, "\n")
	var b strings.Builder
	for i := 0; i < max(len(w), len(g)); i++ {
		var a, c string
		if i < len(w) {
			a = w[i]
		}
		if i < len(g) {
			c = g[i]
		}
		if a != c {
			fmt.Fprintf(&b, "- %s\n+ %s\n", a, c)
		}
	}
	return b.String()
}
