package corpus

import (
	"context"
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/excalibot/excalibot/diagram/graph"
	"github.com/excalibot/excalibot/diagram/measure"
	"github.com/excalibot/excalibot/layout/elk"
	"github.com/excalibot/excalibot/render"
)

// byELK lays a copy of each input's own drawing out again with ELK (layout/elk), in the
// direction the input asks for, as plain dot's copy is, and measures it.
func byELK(t *testing.T, runs []sideBySide) []sideBySide {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	opt := measure.Options{DisplayWidth: displayWidth, Padding: render.DefaultPadding}
	out := make([]sideBySide, len(runs))
	var took []time.Duration
	slowest := ""
	defer func() {
		total := time.Duration(0)
		for _, d := range took {
			total += d
		}
		slices.Sort(took)
		if len(took) > 0 {
			t.Logf("ELK laid out %d inputs in %v: median %v, slowest %v (%s)", len(took), total.Round(time.Millisecond),
				took[len(took)/2].Round(time.Millisecond), took[len(took)-1].Round(time.Millisecond), slowest)
		}
	}()
	for i, s := range runs {
		out[i] = s
		if s.err != "" {
			continue
		}
		sc := s.ours.sc.Clone()
		began := time.Now()
		if _, err := graph.RelayoutWith(ctx, sc, s.dir, graph.Options{Layout: elk.Layout}); err != nil {
			t.Fatalf("%s: elk: %v", s.name, err)
		}
		d := time.Since(began)
		if len(took) == 0 || d > slices.Max(took) {
			slowest = s.name
		}
		took = append(took, d)
		out[i].elk = engineRun{sc, measure.Measure(sc, opt)}
	}
	return out
}

// compareELK compares ELK's figures with testdata/layout-elk.md, kept apart from
// testdata/layout.md so that a change to the own layout leaves it alone.
func compareELK(t *testing.T, runs []sideBySide) {
	t.Helper()
	got := formatELK(runs)
	const golden = "testdata/layout-elk.md"
	if *update {
		if err := os.WriteFile(golden, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatalf("%v (run with -update to write it)", err)
	}
	if d := diffLines(string(want), got); d != "" {
		t.Errorf("ELK's layout figures changed (refresh with go test ./internal/corpus -run TestLayoutSideBySide -update):\n%s", d)
	}
}

func formatELK(runs []sideBySide) string {
	var b strings.Builder
	b.WriteString("# Layout side by side: ELK and plain dot\n\n")
	b.WriteString("ELK is elkjs's layered algorithm (layout/elk) on the same graphs as testdata/layout.md, whose dot figures are repeated here. ")
	b.WriteString("Written by `go test ./internal/corpus -run TestLayoutSideBySide -update`; docs/diagram-quality.md says what each figure counts.\n\n")
	b.WriteString("## Totals\n\n| | ELK | plain dot |\n|---|---:|---:|\n")
	for _, row := range totalsAgainstDot(runs, "ELK", func(s sideBySide) measure.Report { return s.elk.m }) {
		fmt.Fprintf(&b, "| %s | %s | %s |\n", row[0], row[1], row[2])
	}
	b.WriteString("\n## Per input\n\n| input | engine |")
	for _, f := range figures {
		b.WriteString(" " + f.name + " |")
	}
	b.WriteString("\n|---|---|" + strings.Repeat("---:|", len(figures)) + "\n")
	for _, s := range runs {
		if s.err != "" {
			fmt.Fprintf(&b, "| %s | refused: %s |%s\n", s.name, strings.ReplaceAll(s.err, "|", `\|`), strings.Repeat("|", len(figures)))
			continue
		}
		fmt.Fprintf(&b, "| %s | elk |", s.name)
		for _, f := range figures {
			b.WriteString(" " + f.get(s.elk.m) + " |")
		}
		b.WriteString("\n")
	}
	return b.String()
}
