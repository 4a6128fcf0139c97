package layout_test

import (
	"context"
	"testing"
	"time"

	"github.com/excalibot/excalibot/layout"
	"github.com/excalibot/excalibot/layout/elk"
)

// BenchmarkLayout40ELK lays BenchmarkLayout40's grouped 40-node graph out by ELK (layout/elk)
// and by plain dot in the same run, and reports the time of each and their ratio. The engines
// are started outside the timing (layout/elk's BenchmarkStart measures ELK's start).
func BenchmarkLayout40ELK(b *testing.B) {
	ctx := context.Background()
	g := layout.GroupedGraph(40, 55, 7)
	dot := g
	dot.Engine = layout.EnginePlainDot
	if _, err := layout.Layout(ctx, dot); err != nil {
		b.Fatal(err)
	}
	if _, err := elk.Layout(ctx, g); err != nil {
		b.Fatal(err)
	}
	var tELK, tDot time.Duration
	for b.Loop() {
		start := time.Now()
		if _, err := elk.Layout(ctx, g); err != nil {
			b.Fatal(err)
		}
		mid := time.Now()
		if _, err := layout.Layout(ctx, dot); err != nil {
			b.Fatal(err)
		}
		tELK += mid.Sub(start)
		tDot += time.Since(mid)
	}
	b.ReportMetric(float64(tELK)/1e6/float64(b.N), "ms-elk/op")
	b.ReportMetric(float64(tDot)/1e6/float64(b.N), "ms-dot/op")
	b.ReportMetric(float64(tELK)/float64(tDot), "x-elk-vs-dot")
}
