package tools

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
	"time"
)

// suiteGraph is a create_graph call for a connected random graph of n nodes and m edges (fixed
// by seed), with labels of varied length, mixed shapes and, when groups > 0, that many groups.
func suiteGraph(n, m, groups int, dir string, seed uint64) string {
	r := rand.New(rand.NewPCG(seed, 3))
	words := []string{"API", "Auth service", "Database", "Queue", "Billing", "Search index", "Cache", "Load balancer", "Worker", "Mailer", "Reports", "Web app"}
	shapes := []string{"rectangle", "rectangle", "rectangle", "ellipse", "diamond"}
	type node struct {
		ID    string `json:"id"`
		Label string `json:"label"`
		Shape string `json:"shape"`
		Group string `json:"group,omitempty"`
	}
	type edge struct {
		From  string `json:"from"`
		To    string `json:"to"`
		Label string `json:"label,omitempty"`
	}
	var call struct {
		Direction string `json:"direction"`
		Nodes     []node `json:"nodes"`
		Edges     []edge `json:"edges"`
	}
	call.Direction = dir
	for i := range n {
		nd := node{ID: fmt.Sprintf("n%d", i), Label: fmt.Sprintf("%s %d", words[r.IntN(len(words))], i), Shape: shapes[r.IntN(len(shapes))]}
		if groups > 0 {
			nd.Group = fmt.Sprintf("Group %d", i*groups/n)
		}
		call.Nodes = append(call.Nodes, nd)
	}
	seen := map[[2]int]bool{}
	add := func(a, b int) {
		seen[[2]int{a, b}] = true
		e := edge{From: fmt.Sprintf("n%d", a), To: fmt.Sprintf("n%d", b)}
		if r.IntN(5) == 0 {
			e.Label = "yes"
		}
		call.Edges = append(call.Edges, e)
	}
	for i := 1; i < n && len(call.Edges) < m; i++ {
		add(r.IntN(i), i)
	}
	for tries := 0; len(call.Edges) < m && tries < 10*m; tries++ {
		if a, b := r.IntN(n), r.IntN(n); a < b && !seen[[2]int{a, b}] {
			add(a, b)
		}
	}
	b, _ := json.Marshal(call)
	return string(b)
}

// TestGraphSuite lays out graphs of 5 to 80 nodes, flat and grouped, top-down and left-right, and
// asserts what the issue asks of every one: no overlapping shapes, no overflowing labels, every
// arrow bound with both ends on borders. Crossings and times are printed (go test -v).
func TestGraphSuite(t *testing.T) {
	type size struct{ n, m, groups int }
	sizes := []size{{5, 5, 0}, {6, 6, 0}, {8, 9, 2}, {10, 12, 0}, {12, 14, 2}, {15, 18, 3}, {20, 24, 0}, {25, 30, 0},
		{30, 36, 4}, {35, 40, 3}, {40, 48, 0}, {50, 58, 0}, {60, 70, 5}, {70, 80, 4}, {80, 90, 0}}
	if testing.Short() {
		sizes = sizes[:5]
	}
	for i, sz := range sizes {
		for _, dir := range []string{"TB", "LR"} {
			name := fmt.Sprintf("%dnodes-%dgroups-%s", sz.n, sz.groups, dir)
			t.Run(name, func(t *testing.T) {
				s := New(newTestScene(), DefaultLimits())
				start := time.Now()
				r := s.Call(context.Background(), "create_graph", json.RawMessage(suiteGraph(sz.n, sz.m, sz.groups, dir, uint64(i+1))))
				took := time.Since(start)
				if r.IsError {
					t.Fatalf("refused:\n%s", r.Text)
				}
				q := measureGraph(t, s.Scene())
				if q.overlaps != 0 || q.unbound != 0 {
					t.Errorf("quality: %s", q)
				}
				var bad, other []string
				for _, w := range Warnings(s.Scene()) {
					// Overlaps, overflowing or broken labels and loose arrows must not happen;
					// an arrow passing a shape or a short labelled arrow is reported, not failed.
					if strings.Contains(w, "overlap") || strings.Contains(w, "text of") || strings.Contains(w, "not attached") {
						bad = append(bad, w)
					} else {
						other = append(other, w)
					}
				}
				if len(bad) > 0 {
					t.Errorf("warnings:\n%s", strings.Join(bad, "\n"))
				}
				var dotCrossings int
				if i := strings.Index(r.Text, "groups, "); i >= 0 {
					fmt.Sscanf(r.Text[i+len("groups, "):], "%d", &dotCrossings)
				}
				t.Logf("%s: crossings %d (dot's own count %d), mean edge %.0f px, %v; other warnings: %q", name, q.crossings, dotCrossings, q.meanEdge, took.Round(time.Millisecond), other)
			})
		}
	}
}
