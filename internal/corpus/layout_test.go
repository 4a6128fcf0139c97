package corpus

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/excalibot/excalibot/diagram/graph"
	"github.com/excalibot/excalibot/diagram/measure"
	"github.com/excalibot/excalibot/render"
	"github.com/excalibot/excalibot/scene"
)

var withELK = flag.Bool("layout.elk", true, "also lay every input out with ELK and compare testdata/layout-elk.md (about two minutes; off, the sheets show two engines)")

var beforeDir = flag.String("layout.before", "", "with -layout.sheets: sheets only of the inputs whose own drawing differs from DIR/NAME.excalidraw (the same calls made at an earlier revision: scripts/layout-before-after.sh), that drawing first")

var sheetsDir = flag.String("layout.sheets", "", "also render each graph input drawn by both engines to DIR/NAME.png side by side, with DIR/index.html (needs Chromium)")

// Thresholds of the side-by-side report.
const (
	moreCrossings = 2    // an input where ours has more than dot's crossings plus this is a loss
	smallLabelPx  = 12.0 // a median label below this, fitted to the screen, is hard to read
)

// engineRun is one input laid out by one engine.
type engineRun struct {
	sc *scene.Scene
	m  measure.Report
}

// sideBySide is one graph input drawn by the own layout and by plain dot (and by ELK, once
// byELK has laid it out).
type sideBySide struct {
	name     string
	err      string
	ours, dt engineRun
	elk      engineRun
	dir      graph.Direction // the direction the input asks for, which plain dot and ELK keep
	said     string          // what the tools answered while drawing ours
}

// TestLayoutSideBySide draws every graph input as the tools do (the own layout) and lays the
// same nodes, sizes, labels and groups out again with plain Graphviz dot and with ELK, in the
// direction the input asks for, measures the pictures alike and compares with
// testdata/layout.md (ours and dot) and testdata/layout-elk.md (ELK, beside dot). It needs no
// browser; -layout.sheets renders the pictures to look at.
func TestLayoutSideBySide(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	runs := cachedRuns(ctx, t)
	got := formatSideBySide(runs)
	const golden = "testdata/layout.md"
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
		t.Errorf("the layout figures changed (if for the better, refresh with go test ./internal/corpus -run TestLayoutSideBySide -update):\n%s", d)
	}
	switch {
	case raceDetector:
		t.Log("ELK's figures are not compared under the race detector, which slows its JavaScript interpreter about fivefold; run without -race")
		return
	case *withELK:
		runs = byELK(t, runs)
		compareELK(t, runs)
	}
	if *sheetsDir != "" {
		// Their own time: rendering 65 contact sheets takes minutes on a busy machine.
		sheetsCtx, cancel := context.WithTimeout(context.Background(), 20*time.Minute)
		defer cancel()
		writeSheets(sheetsCtx, t, *sheetsDir, runs)
	}
}

// laidOut holds the side-by-side runs once made: TestLayoutSideBySide and TestLayoutQuality read
// the same ones, and making them takes long under the race detector.
var laidOut struct {
	once sync.Once
	runs []sideBySide
}

// cachedRuns makes the side-by-side runs once per test binary.
func cachedRuns(ctx context.Context, t *testing.T) []sideBySide {
	t.Helper()
	laidOut.once.Do(func() { laidOut.runs = sideBySideRuns(ctx, t) })
	return laidOut.runs
}

func sideBySideRuns(ctx context.Context, t *testing.T) []sideBySide {
	t.Helper()
	opt := measure.Options{DisplayWidth: displayWidth, Padding: render.DefaultPadding}
	var out []sideBySide
	for _, in := range loadInputs(t) {
		if !in.isGraph() {
			continue
		}
		s := sideBySide{name: in.name}
		var res result
		ours, _, err := drawGraph(ctx, in, &res)
		if err != nil {
			s.err = oneLine(err.Error())
			out = append(out, s)
			continue
		}
		dot := ours.Clone()
		if _, err := graph.RelayoutWith(ctx, dot, askedDirection(in, ours), graph.Options{Engine: graph.PlainDot}); err != nil {
			t.Fatalf("%s: plain dot: %v", in.name, err)
		}
		s.said = res.said
		s.dir = askedDirection(in, ours)
		s.ours = engineRun{ours, measure.Measure(ours, opt)}
		s.dt = engineRun{dot, measure.Measure(dot, opt)}
		out = append(out, s)
	}
	return out
}

// askedDirection is the direction the input's first create_graph call asks for, else the way
// the own drawing runs.
func askedDirection(in input, sc *scene.Scene) graph.Direction {
	for _, c := range in.calls {
		var args struct {
			Direction string `json:"direction"`
		}
		if c.Tool == "create_graph" && json.Unmarshal(c.Args, &args) == nil && args.Direction != "" {
			return graph.Direction(args.Direction)
		}
	}
	return graph.Read(sc).Direction()
}

// figure is one column of the per-input table.
var figures = []struct {
	name string
	get  func(measure.Report) string
}{
	{"nodes", func(m measure.Report) string { return strconv.Itoa(m.Nodes) }},
	{"crossings", func(m measure.Report) string { return strconv.Itoa(m.Crossings) }},
	{"through nodes", func(m measure.Report) string { return strconv.Itoa(m.ArrowsThroughNodes) }},
	{"shape overlaps", func(m measure.Report) string { return strconv.Itoa(m.ShapeOverlaps) }},
	{"labels on nodes", func(m measure.Report) string { return strconv.Itoa(m.LabelsOnNodes) }},
	{"frame overlaps", func(m measure.Report) string { return strconv.Itoa(m.FrameOverlaps) }},
	{"intruders", func(m measure.Report) string { return strconv.Itoa(m.Intruders) }},
	{"border crossings needless / all", func(m measure.Report) string {
		return fmt.Sprintf("%d / %d", m.NeedlessBorderCrossings, m.BorderCrossings)
	}},
	{"size", func(m measure.Report) string { return fmt.Sprintf("%.0f×%.0f", m.Width, m.Height) }},
	{"aspect", aspect},
	{"label px 1600×1200", func(m measure.Report) string { return fmt.Sprintf("%.1f", m.LabelPx1600) }},
	{"label px phone", func(m measure.Report) string { return fmt.Sprintf("%.1f", m.LabelPxPhone) }},
	{"edge length / diagonal", func(m measure.Report) string { return fmt.Sprintf("%.2f", m.EdgeLengthRatio) }},
	{"node area", func(m measure.Report) string { return fmt.Sprintf("%.0f %%", 100*m.NodeArea) }},
}

func formatSideBySide(runs []sideBySide) string {
	var b strings.Builder
	b.WriteString("# Layout side by side: the own layout and plain dot\n\n")
	b.WriteString("Written by `go test ./internal/corpus -run TestLayoutSideBySide -update`; docs/diagram-quality.md says what each figure counts.\n\n")
	b.WriteString("## Totals\n\n| | ours | plain dot |\n|---|---:|---:|\n")
	for _, row := range sideBySideTotals(runs) {
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
		for _, e := range []struct {
			name string
			m    measure.Report
		}{{"ours", s.ours.m}, {"dot", s.dt.m}} {
			fmt.Fprintf(&b, "| %s | %s |", s.name, e.name)
			for _, f := range figures {
				b.WriteString(" " + f.get(e.m) + " |")
			}
			b.WriteString("\n")
		}
	}
	return b.String()
}

// sideBySideTotals are the Totals rows: a name, then ours and dot's figure.
func sideBySideTotals(runs []sideBySide) [][3]string {
	return totalsAgainstDot(runs, "ours", func(s sideBySide) measure.Report { return s.ours.m })
}

// totalsAgainstDot are the Totals rows of one engine (named name, its report got by engine)
// beside plain dot's: a name, then the engine's and dot's figure.
func totalsAgainstDot(runs []sideBySide, name string, engine func(sideBySide) measure.Report) [][3]string {
	var ok []sideBySide
	for _, s := range runs {
		if s.err == "" {
			ok = append(ok, s)
		}
	}
	sum := func(get func(measure.Report) int) (int, int) {
		a, d := 0, 0
		for _, s := range ok {
			a += get(engine(s))
			d += get(s.dt.m)
		}
		return a, d
	}
	count := func(bad func(measure.Report) bool) (int, int) {
		return sum(func(m measure.Report) int {
			if bad(m) {
				return 1
			}
			return 0
		})
	}
	median := func(get func(measure.Report) float64) (float64, float64) {
		var a, d []float64
		for _, s := range ok {
			a = append(a, get(engine(s)))
			d = append(d, get(s.dt.m))
		}
		return medianOf(a), medianOf(d)
	}
	row := func(name string, a, d string) [3]string { return [3]string{name, a, d} }
	total := func(name string, get func(measure.Report) int) [3]string {
		a, d := sum(get)
		return row(name, strconv.Itoa(a), strconv.Itoa(d))
	}
	inputs := func(name string, bad func(measure.Report) bool) [3]string {
		a, d := count(bad)
		return row(name, strconv.Itoa(a), strconv.Itoa(d))
	}
	mid := func(name, format string, get func(measure.Report) float64) [3]string {
		a, d := median(get)
		return row(name, fmt.Sprintf(format, a), fmt.Sprintf(format, d))
	}
	ca, cd := sum(func(m measure.Report) int { return m.Crossings })
	ratio := "-"
	if cd > 0 {
		ratio = fmt.Sprintf("%.2f", float64(ca)/float64(cd))
	}
	worse := 0
	for _, s := range ok {
		if engine(s).Crossings > s.dt.m.Crossings+moreCrossings {
			worse++
		}
	}
	na, nd := median(func(m measure.Report) float64 { return m.NodeArea })
	return [][3]string{
		row("inputs laid out", strconv.Itoa(len(ok)), strconv.Itoa(len(ok))),
		row("edge crossings", strconv.Itoa(ca), strconv.Itoa(cd)),
		row("… "+name+" / dot", ratio, ""),
		row(fmt.Sprintf("inputs where %s has more than dot's crossings + %d", name, moreCrossings), strconv.Itoa(worse), ""),
		total("arrows through nodes", func(m measure.Report) int { return m.ArrowsThroughNodes }),
		total("shape overlaps", func(m measure.Report) int { return m.ShapeOverlaps }),
		total("edge labels on nodes", func(m measure.Report) int { return m.LabelsOnNodes }),
		total("intruders (nodes inside a group not theirs)", func(m measure.Report) int { return m.Intruders }),
		total("frame overlaps", func(m measure.Report) int { return m.FrameOverlaps }),
		total("group border crossings", func(m measure.Report) int { return m.BorderCrossings }),
		total("… needless", func(m measure.Report) int { return m.NeedlessBorderCrossings }),
		total("arrows and labels over group titles", func(m measure.Report) int { return m.OverTitles }),
		total("edge labels on group borders", func(m measure.Report) int { return m.LabelsOnBorders }),
		inputs(fmt.Sprintf("pictures longer than %.1f:1", maxElongation), func(m measure.Report) bool { return m.Elongation() > maxElongation }),
		mid("median label px at 1600×1200", "%.1f", func(m measure.Report) float64 { return m.LabelPx1600 }),
		mid("median label px on a phone (390×844)", "%.1f", func(m measure.Report) float64 { return m.LabelPxPhone }),
		inputs(fmt.Sprintf("inputs with labels under %.0f px at 1600×1200", smallLabelPx), func(m measure.Report) bool { return m.LabelPx1600 < smallLabelPx }),
		inputs(fmt.Sprintf("inputs with labels under %.0f px on a phone", smallLabelPx), func(m measure.Report) bool { return m.LabelPxPhone < smallLabelPx }),
		mid("median edge length / diagonal", "%.2f", func(m measure.Report) float64 { return m.EdgeLengthRatio }),
		row("median node area share", fmt.Sprintf("%.0f %%", 100*na), fmt.Sprintf("%.0f %%", 100*nd)),
	}
}

func medianOf(v []float64) float64 {
	if len(v) == 0 {
		return 0
	}
	v = slices.Clone(v)
	slices.Sort(v)
	if len(v)%2 == 1 {
		return v[len(v)/2]
	}
	return (v[len(v)/2-1] + v[len(v)/2]) / 2
}
