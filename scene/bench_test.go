package scene

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/excalibot/excalibot/internal/corpusdir"
)

// baseline times f (run before the measured loop, which b.Loop times on its own) for at least
// 200 ms and returns ns per call: benchmarks report their cost as a ratio to it, measured in the
// same run on the same loaded machine.
func baseline(b *testing.B, f func()) float64 {
	b.Helper()
	n := 0
	start := time.Now()
	for n < 3 || time.Since(start) < 200*time.Millisecond {
		f()
		n++
	}
	return float64(time.Since(start).Nanoseconds()) / float64(n)
}

// buildFlow makes n labelled rectangles in a grid and n-1 labelled arrows chaining them, through
// the batch API (what tools' batch_create_elements does).
func buildFlow(tb testing.TB, s *Scene, n int) {
	tb.Helper()
	err := s.Batch(func(b *Scene) error {
		return addFlow(b, n)
	})
	if err != nil {
		tb.Fatal(err)
	}
}

func addFlow(s *Scene, n int) error {
	for i := range n {
		e := NewElement(Rectangle)
		e.ID = fmt.Sprintf("n%d", i)
		e.X, e.Y = float64(i%20)*220, float64(i/20)*160
		e.Width, e.Height = 160, 80
		if _, err := s.Add(e); err != nil {
			return err
		}
		if _, err := s.SetLabel(e.ID, fmt.Sprintf("Step %d of the flow", i)); err != nil {
			return err
		}
	}
	for i := 1; i < n; i++ {
		a := NewElement(Arrow)
		a.ID = fmt.Sprintf("e%d", i)
		a.Points = nil
		a.StartBinding = &Binding{ElementID: fmt.Sprintf("n%d", i-1)}
		a.EndBinding = &Binding{ElementID: fmt.Sprintf("n%d", i)}
		if _, err := s.Add(a); err != nil {
			return err
		}
		if i%5 == 0 {
			if _, err := s.SetLabel(a.ID, "next"); err != nil {
				return err
			}
		}
	}
	return nil
}

// BenchmarkBatchCreate is a large batch_create_elements call: 200 labelled shapes and 199 bound
// arrows in one all-or-nothing batch. The baseline runs the same operations without Batch, so each
// one clones the scene for its own atomicity.
func BenchmarkBatchCreate(b *testing.B) {
	base := baseline(b, func() {
		{
			if err := addFlow(New(), 200); err != nil {
				b.Fatal(err)
			}
		}
	})
	for b.Loop() {
		buildFlow(b, New(), 200)
	}
	perOp := float64(b.Elapsed().Nanoseconds()) / float64(b.N)
	b.ReportMetric(perOp/1e6, "ms/batch")
	b.ReportMetric(base/perOp, "x-vs-unbatched")
}

// deepCopy is the baseline for Clone: copy every element.
func deepCopy(s *Scene) *Scene {
	c := s.Clone()
	for i, e := range c.elems {
		c.elems[i] = e.clone()
	}
	return c
}

// BenchmarkClone measures a snapshot of a 600-element scene (200 shapes, 200 labels, 199 arrows,
// 40 arrow labels) against deep-copying every element.
func BenchmarkClone(b *testing.B) {
	s := New()
	buildFlow(b, s, 200)
	base := baseline(b, func() {
		{
			_ = deepCopy(s)
		}
	})
	for b.Loop() {
		_ = s.Clone()
	}
	perOp := float64(b.Elapsed().Nanoseconds()) / float64(b.N)
	b.ReportMetric(perOp/1e3, "µs/clone")
	b.ReportMetric(base/perOp, "x-faster-than-deepcopy")
}

// BenchmarkMoveShape moves a shape with a label and two bound arrows (each with a re-laid-out
// label) against moving a lone shape.
func BenchmarkMoveShape(b *testing.B) {
	s := New()
	buildFlow(b, s, 200)
	lone := NewElement(Rectangle)
	lone.ID, lone.X, lone.Y, lone.Width, lone.Height = "lone", -500, -500, 100, 50
	if _, err := s.Add(lone); err != nil {
		b.Fatal(err)
	}
	move := func(id string) func(*Element) error {
		return func(e *Element) error { e.X++; return nil }
	}
	base := baseline(b, func() {
		{
			if err := s.Update("lone", move("lone")); err != nil {
				b.Fatal(err)
			}
		}
	})
	for b.Loop() {
		if err := s.Update("n55", move("n55")); err != nil {
			b.Fatal(err)
		}
	}
	perOp := float64(b.Elapsed().Nanoseconds()) / float64(b.N)
	b.ReportMetric(perOp/1e3, "µs/move")
	b.ReportMetric(perOp/base, "x-lone-shape")
}

// BenchmarkDecodeCorpus decodes the largest-element-count corpus file; the baseline is a plain
// json.Unmarshal of the same bytes into generic maps.
func BenchmarkDecodeCorpus(b *testing.B) {
	dir, err := corpusdir.Dir()
	if err != nil {
		b.Skip(err)
	}
	data, err := os.ReadFile(filepath.Join(dir, "starbridge--diagram.excalidraw"))
	if err != nil {
		b.Skip(err)
	}
	base := baseline(b, func() {
		{
			var v any
			if err := jsonUnmarshal(data, &v); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.SetBytes(int64(len(data)))
	for b.Loop() {
		if _, err := Decode(data); err != nil {
			b.Fatal(err)
		}
	}
	perOp := float64(b.Elapsed().Nanoseconds()) / float64(b.N)
	b.ReportMetric(perOp/base, "x-json.Unmarshal")
}

// BenchmarkEncode writes the 600-element scene; the baseline is json.Marshal of the decoded
// generic form of the same file.
func BenchmarkEncode(b *testing.B) {
	s := New()
	buildFlow(b, s, 200)
	out, err := s.Encode()
	if err != nil {
		b.Fatal(err)
	}
	var generic any
	if err := jsonUnmarshal(out, &generic); err != nil {
		b.Fatal(err)
	}
	base := baseline(b, func() {
		{
			if _, err := jsonMarshalIndent(generic); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.SetBytes(int64(len(out)))
	for b.Loop() {
		if _, err := s.Encode(); err != nil {
			b.Fatal(err)
		}
	}
	perOp := float64(b.Elapsed().Nanoseconds()) / float64(b.N)
	b.ReportMetric(perOp/base, "x-json.MarshalIndent")
	b.ReportMetric(float64(len(out))/float64(s.Len()), "bytes/element")
}
