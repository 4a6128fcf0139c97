package tools

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/excalibot/excalibot/scene"
)

// gridDiagram writes batch_create_elements calls (at most 200 elements each) for a diagram of
// shapes labelled like real ones, on a grid with room between them, and arrows between grid
// neighbours, the first labelledArrows of them with a label. Shapes come first, so that every
// chunk only names shapes that exist.
func gridDiagram(shapes, arrows, labelledArrows int) []string {
	const cols = 12
	types := []string{"rectangle", "rectangle", "ellipse", "diamond"}
	fills := []string{"", "blue", "green", "", "yellow", "", "red", "violet"}
	words := []string{"API", "Auth service", "Orders DB", "Queue", "Billing", "Web app", "Cache", "Search", "Payments", "Reports"}
	var items []string
	for i := 0; i < shapes; i++ {
		t := types[i%len(types)]
		w, h := 160, 80
		if t == "diamond" {
			w, h = 220, 130
		}
		it := fmt.Sprintf(`{"id":"s%d","type":"%s","x":%d,"y":%d,"width":%d,"height":%d,"text":"%s %d"`,
			i, t, (i%cols)*320, (i/cols)*300, w, h, words[i%len(words)], i)
		if f := fills[i%len(fills)]; f != "" {
			it += `,"backgroundColor":"` + f + `"`
		}
		items = append(items, it+"}")
	}
	n := 0
	for i := 0; i < shapes && n < arrows; i++ {
		for _, j := range []int{i + 1, i + cols} { // right and down neighbours
			if n == arrows || j >= shapes || (j == i+1 && j%cols == 0) {
				continue
			}
			it := fmt.Sprintf(`{"id":"a%d","type":"arrow","startElementId":"s%d","endElementId":"s%d"`, n, i, j)
			if n < labelledArrows {
				it += `,"text":"calls"`
			}
			items = append(items, it+"}")
			n++
		}
	}
	var calls []string
	for len(items) > 0 {
		k := min(200, len(items))
		calls = append(calls, `{"elements":[`+strings.Join(items[:k], ",")+`]}`)
		items = items[k:]
	}
	return calls
}

func buildScene(tb testing.TB, calls []string) *Set {
	tb.Helper()
	s := New(newTestScene(), DefaultLimits())
	for _, c := range calls {
		mustCall(tb, s, "batch_create_elements", c)
	}
	return s
}

// chain is one batch_create_elements call with n labelled shapes and n-1 arrows binding them in a
// snake, a large diagram in one call (200 shapes + 199 arrows; the file then has 599 elements).
func chain(n int) string {
	var items []string
	for i := 0; i < n; i++ {
		items = append(items, fmt.Sprintf(`{"id":"s%d","type":"rectangle","x":%d,"y":%d,"text":"Step %d"}`, i, (i%20)*240, (i/20)*200, i))
	}
	for i := 1; i < n; i++ {
		items = append(items, fmt.Sprintf(`{"id":"a%d","type":"arrow","startElementId":"s%d","endElementId":"s%d"}`, i, i-1, i))
	}
	return `{"elements":[` + strings.Join(items, ",") + `]}`
}

// BenchmarkBatchCreate runs one large batch: 200 labelled shapes and 199 bound arrows in one
// call (MaxBatch raised to fit its 399 items). Baseline: json.Unmarshal of the same arguments
// into generic values, the least any tool must do with them.
func BenchmarkBatchCreate(b *testing.B) {
	args := []byte(chain(200))
	lim := DefaultLimits()
	lim.MaxBatch, lim.MaxElements = 400, 1000
	base := measure(func() {
		var v any
		if err := json.Unmarshal(args, &v); err != nil {
			b.Fatal(err)
		}
	})
	// Second baseline: the same 599 elements made with scene calls directly (one Batch), so the
	// ratio shows what decoding, checking and the lint of the result add on top.
	direct := measure(func() {
		sc := newTestScene()
		err := sc.Batch(func(w *scene.Scene) error {
			for i := 0; i < 200; i++ {
				e := scene.NewElement(scene.Rectangle)
				e.ID, e.X, e.Y, e.Width, e.Height = fmt.Sprintf("s%d", i), float64((i%20)*240), float64((i/20)*200), 160, 80
				if _, err := w.Add(e); err != nil {
					return err
				}
				if _, err := w.SetLabel(e.ID, fmt.Sprintf("Step %d", i)); err != nil {
					return err
				}
			}
			for i := 1; i < 200; i++ {
				a := scene.NewElement(scene.Arrow)
				a.ID = fmt.Sprintf("a%d", i)
				a.StartBinding = &scene.Binding{ElementID: fmt.Sprintf("s%d", i-1), Gap: scene.DefaultGap}
				a.EndBinding = &scene.Binding{ElementID: fmt.Sprintf("s%d", i), Gap: scene.DefaultGap}
				if _, err := w.Add(a); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			b.Fatal(err)
		}
	})
	b.ResetTimer()
	cpu0, start := cpuTime(), time.Now()
	for b.Loop() {
		s := New(newTestScene(), lim)
		if r := s.Call(context.Background(), "batch_create_elements", args); r.IsError {
			b.Fatal(r.Text)
		}
	}
	wall := time.Since(start) / time.Duration(b.N)
	per := (cpuTime() - cpu0) / time.Duration(b.N)
	b.ReportMetric(float64(per)/1e6, "cpu_ms/call")
	b.ReportMetric(float64(wall)/1e6, "wall_ms/call")
	b.ReportMetric(float64(per)/float64(base), "x_json_unmarshal")
	b.ReportMetric(float64(per)/float64(direct), "x_scene_calls")
}

// BenchmarkGetScene500 describes a 500-element scene (over the 8 KB budget, so the summary path
// runs). Baseline: scene.Encode of the same scene.
func BenchmarkGetScene500(b *testing.B) {
	s := buildScene(b, gridDiagram(170, 160, 0))
	sc := s.Scene()
	if sc.Len() != 500 {
		b.Fatalf("scene has %d elements, want 500", sc.Len())
	}
	base := measure(func() {
		if _, err := sc.Encode(); err != nil {
			b.Fatal(err)
		}
	})
	b.ResetTimer()
	cpu0, start := cpuTime(), time.Now()
	var out string
	for b.Loop() {
		out = describeScene(sc, s.lim)
	}
	wall := time.Since(start) / time.Duration(b.N)
	per := (cpuTime() - cpu0) / time.Duration(b.N)
	b.ReportMetric(float64(per)/1e6, "cpu_ms/call")
	b.ReportMetric(float64(wall)/1e6, "wall_ms/call")
	b.ReportMetric(float64(len(out)), "bytes")
	b.ReportMetric(float64(per)/float64(base), "x_encode")
}

// BenchmarkSceneTextSize compares get_scene's size per element with the raw Excalidraw JSON of
// the same 290-element scene (95 labelled shapes, 80 arrows, 20 of them labelled), indented as
// the file is written and compacted.
func BenchmarkSceneTextSize(b *testing.B) {
	s := buildScene(b, gridDiagram(95, 80, 20))
	sc := s.Scene()
	n := sc.Len()
	if n != 290 {
		b.Fatalf("scene has %d elements, want 290", n)
	}
	raw, err := sc.Encode()
	if err != nil {
		b.Fatal(err)
	}
	var compact bytes.Buffer
	if err := json.Compact(&compact, raw); err != nil {
		b.Fatal(err)
	}
	var text string
	for b.Loop() {
		text = describeScene(sc, s.lim)
	}
	per := float64(len(text)) / float64(n)
	b.ReportMetric(per, "scene_B/elem")
	b.ReportMetric(float64(len(raw))/float64(n), "file_B/elem")
	b.ReportMetric(float64(compact.Len())/float64(n), "compactjson_B/elem")
	b.ReportMetric(float64(compact.Len())/float64(len(text)), "x_smaller_than_compact")
	if strings.Contains(text, "truncated") || strings.Contains(text, "warnings:") {
		b.Fatalf("the 290-element scene should fit the budget without warnings:\n%s", text)
	}
}

// cpuTime is the process's user+system CPU time. On a machine shared with other work, CPU time
// per call is far steadier than wall time (it still includes the GC's background work).
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// measure returns the CPU time per run of f, over enough runs to be stable. CPU time, like the
// benchmarks' cpu_ms/call, so that baseline and subject are compared on the same footing even
// when other processes take the cores in between.
func measure(f func()) time.Duration {
	f() // warm up
	n := 0
	start, cpu0 := time.Now(), cpuTime()
	for time.Since(start) < 300*time.Millisecond || n < 5 {
		f()
		n++
	}
	return (cpuTime() - cpu0) / time.Duration(n)
}

// TestSceneTextBudget checks the byte budget and the truncation note on a scene far over it.
func TestSceneTextBudget(t *testing.T) {
	s := buildScene(t, gridDiagram(170, 160, 0))
	text := describeScene(s.Scene(), s.lim)
	if len(text) > s.lim.SceneBudget {
		t.Errorf("get_scene is %d bytes, budget %d", len(text), s.lim.SceneBudget)
	}
	for _, want := range []string{"scene: 500 elements", "truncated:", "query_elements", `"area"`} {
		if !strings.Contains(text, want) {
			t.Errorf("truncated get_scene lacks %q:\n%s", want, text)
		}
	}
	// Every connection shown names shapes that are shown: no dangling references in the view.
	shown := map[string]bool{}
	lines := strings.Split(text, "\n")
	for _, l := range lines[1:] {
		if f := strings.Fields(l); len(f) > 1 && !strings.Contains(l, "->") {
			shown[f[0]] = true
		}
	}
	for _, l := range lines {
		if f := strings.Fields(l); len(f) >= 3 && f[1] == "->" {
			if !shown[f[0]] || !shown[f[2]] {
				t.Errorf("connection %q names a shape not shown", l)
			}
		}
	}
	// The hidden elements are reachable with the query the note suggests.
	i := strings.Index(text, `{"area":`)
	j := strings.Index(text[i:], "}}")
	r := s.Call(context.Background(), "query_elements", json.RawMessage(text[i:i+j+2]))
	if r.IsError || !strings.Contains(r.Text, "matching") {
		t.Errorf("suggested query failed: %s", r.Text)
	}
}
