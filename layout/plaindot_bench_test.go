package layout

import (
	"context"
	"fmt"
	"testing"
	"time"
)

// groupedGraph is randomGraph's n nodes and m edges in five groups, two of them nested, with a
// label on every third edge: the size of a large diagram a model draws.
func groupedGraph(n, m int, seed uint64) Graph {
	g := randomGraph(n, m, seed)
	g.Clusters = []Cluster{{ID: "g0", TitleHeight: 30}, {ID: "g1", TitleHeight: 30}, {ID: "g2", TitleHeight: 30, Parent: "g1"},
		{ID: "g3", TitleHeight: 30}, {ID: "g4", TitleHeight: 30, Parent: "g3"}}
	for i := range g.Nodes {
		if i%6 < 5 {
			g.Nodes[i].Cluster = fmt.Sprintf("g%d", i%6)
		}
	}
	for i := range g.Edges {
		if i%3 == 0 {
			g.Edges[i].LabelWidth, g.Edges[i].LabelHeight = 80, 25
		}
	}
	return g
}

// BenchmarkLayout40 lays a grouped 40-node graph out by the own engine (fitted to a screen, as
// Draw asks) and by plain dot in the same run, and reports the time of each and their ratio.
func BenchmarkLayout40(b *testing.B) {
	ctx := context.Background()
	ours := groupedGraph(40, 55, 7)
	ours.Fit = Fit{MaxAspect: 2.5, MaxWidth: 2800, Small: 1000, Turn: true}
	dot := ours
	dot.Engine = EnginePlainDot
	for _, g := range []Graph{ours, dot} { // warm Graphviz up outside the timing
		if _, err := Layout(ctx, g); err != nil {
			b.Fatal(err)
		}
	}
	var tOurs, tDot time.Duration
	for b.Loop() {
		start := time.Now()
		if _, err := Layout(ctx, ours); err != nil {
			b.Fatal(err)
		}
		mid := time.Now()
		if _, err := Layout(ctx, dot); err != nil {
			b.Fatal(err)
		}
		tOurs += mid.Sub(start)
		tDot += time.Since(mid)
	}
	b.ReportMetric(float64(tOurs)/1e6/float64(b.N), "ms-ours/op")
	b.ReportMetric(float64(tDot)/1e6/float64(b.N), "ms-dot/op")
	b.ReportMetric(float64(tOurs)/float64(tDot), "x-ours-vs-dot")
}
