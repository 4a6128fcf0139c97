package tools

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"
)

// handPlaced turns a create_graph call into the batch_create_elements call a model would write
// with coordinates: the same shapes, labels and arrows on a grid. It is the baseline: what the
// graph tool costs beyond drawing the same elements.
func handPlaced(call string) string {
	var g struct {
		Nodes []struct{ ID, Label, Shape string }
		Edges []struct{ From, To, Label string }
	}
	if err := json.Unmarshal([]byte(call), &g); err != nil {
		panic(err)
	}
	var items []map[string]any
	for i, n := range g.Nodes {
		items = append(items, map[string]any{"id": n.ID, "type": n.Shape, "x": (i % 8) * 320, "y": (i / 8) * 300, "text": n.Label})
	}
	for i, e := range g.Edges {
		items = append(items, map[string]any{"id": fmt.Sprintf("a%d", i), "type": "arrow", "startElementId": e.From, "endElementId": e.To, "text": e.Label})
	}
	b, _ := json.Marshal(map[string]any{"elements": items})
	return string(b)
}

// BenchmarkCreateGraph times create_graph on 10/30/60-node graphs against batch_create_elements
// drawing the same elements at hand-given coordinates, in the same run.
func BenchmarkCreateGraph(b *testing.B) {
	ctx := context.Background()
	for _, sz := range []struct{ n, m int }{{10, 12}, {30, 36}, {60, 70}} {
		call := suiteGraph(sz.n, sz.m, 0, "TB", uint64(sz.n))
		batch := handPlaced(call)
		var base float64
		b.Run(fmt.Sprintf("batch/%d", sz.n), func(b *testing.B) {
			for b.Loop() {
				s := New(newTestScene(), DefaultLimits())
				if r := s.Call(ctx, "batch_create_elements", json.RawMessage(batch)); r.IsError {
					b.Fatal(r.Text)
				}
			}
			base = float64(b.Elapsed().Nanoseconds()) / float64(b.N)
		})
		b.Run(fmt.Sprintf("graph/%d", sz.n), func(b *testing.B) {
			for b.Loop() {
				s := New(newTestScene(), DefaultLimits())
				if r := s.Call(ctx, "create_graph", json.RawMessage(call)); r.IsError {
					b.Fatal(r.Text)
				}
			}
			if base > 0 {
				b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/base, "x-batch")
			}
		})
	}
}
