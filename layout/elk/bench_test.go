package elk

import (
	"context"
	"testing"
	"time"

	"github.com/dop251/goja"
	"github.com/excalibot/excalibot/layout"
)

// BenchmarkStart is what the first layout of a process pays before ELK's own work: compiling
// the bundle, running it and creating ELK (ms-compile, ms-start), and the first layout of a
// small graph in the new runtime (ms-first), against a later one (ms-warm).
func BenchmarkStart(b *testing.B) {
	ctx := context.Background()
	src, err := source(nested(layout.TopDown))
	if err != nil {
		b.Fatal(err)
	}
	var tCompile, tStart, tFirst, tWarm time.Duration
	for b.Loop() {
		t0 := time.Now()
		p, err := goja.Compile("elk.bundled.js", bundle, false)
		if err != nil {
			b.Fatal(err)
		}
		t1 := time.Now()
		r, err := startWith(p)
		if err != nil {
			b.Fatal(err)
		}
		t2 := time.Now()
		mu.Lock()
		run = r
		mu.Unlock()
		if _, err := layoutJSON(ctx, src); err != nil {
			b.Fatal(err)
		}
		t3 := time.Now()
		if _, err := layoutJSON(ctx, src); err != nil {
			b.Fatal(err)
		}
		tCompile += t1.Sub(t0)
		tStart += t2.Sub(t1)
		tFirst += t3.Sub(t2)
		tWarm += time.Since(t3)
	}
	n := float64(b.N) * 1e6
	b.ReportMetric(float64(tCompile)/n, "ms-compile")
	b.ReportMetric(float64(tStart)/n, "ms-start")
	b.ReportMetric(float64(tFirst)/n, "ms-first")
	b.ReportMetric(float64(tWarm)/n, "ms-warm")
}
