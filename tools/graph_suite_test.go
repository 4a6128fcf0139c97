package tools

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/excalibot/excalibot/scene"
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

// suiteCase is one file of testdata/graph-suite: a diagram drawn by tool calls, the first of which
// creates it (and is timed), the rest change it.
type suiteCase struct {
	Name  string `json:"name"`
	Kind  string `json:"kind"`
	Steps []struct {
		Tool string          `json:"tool"`
		Args json.RawMessage `json:"args"`
	} `json:"steps"`
}

// TestGraphSuite draws every diagram of testdata/graph-suite (flows, trees, architectures with
// frames, boxes and nested boxes, random graphs, sequences and mind maps of 5 to 80 nodes) and
// asserts what a readable diagram needs: no overlapping shapes, no overflowing labels, every arrow
// bound with both ends on borders (a sequence's messages resting on lifelines or bars), every
// group enclosing its members and nothing else. It prints per diagram the crossings counted on
// the scene beside dot's own count, and the time of the creating call (go test -v).
func TestGraphSuite(t *testing.T) {
	paths, err := filepath.Glob(filepath.Join("testdata", "graph-suite", "*.json"))
	if err != nil || len(paths) < 30 {
		t.Fatalf("the suite has %d diagrams (%v), want at least 30", len(paths), err)
	}
	var rows []string
	for _, path := range paths {
		data, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		var c suiteCase
		if err := json.Unmarshal(data, &c); err != nil || len(c.Steps) == 0 {
			t.Fatalf("%s: %v (or no steps)", path, err)
		}
		t.Run(c.Name, func(t *testing.T) {
			s := New(newTestScene(), DefaultLimits())
			var took time.Duration
			var first string
			for i, st := range c.Steps {
				start := time.Now()
				r := s.Call(context.Background(), st.Tool, st.Args)
				if i == 0 {
					took, first = time.Since(start), r.Text
				}
				if r.IsError {
					t.Fatalf("step %d %s refused:\n%s", i, st.Tool, r.Text)
				}
			}
			sc := s.Scene()
			if dir := os.Getenv("GRAPH_SUITE_OUT"); dir != "" { // to look at: excalibot render DIR/NAME.excalidraw
				if err := os.WriteFile(filepath.Join(dir, c.Name+".excalidraw"), encode(t, sc), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			q := measureGraph(t, sc)
			seq := c.Steps[0].Tool == "create_sequence"
			if seq {
				q.unbound = unrestingMessages(sc)
			}
			if q.overlaps != 0 || q.unbound != 0 || q.groupFaults != 0 {
				t.Errorf("quality: %s", q)
			}
			var bad, other []string
			for _, w := range Warnings(sc) {
				// Overlaps, overflowing or broken labels and loose arrows must not happen;
				// an arrow passing a shape or a short labelled arrow is reported, not failed.
				if strings.Contains(w, "overlap") || strings.Contains(w, "text of") || strings.Contains(w, "not attached") || strings.Contains(w, "lies on") {
					bad = append(bad, w)
				} else {
					other = append(other, w)
				}
			}
			if len(bad) > 0 {
				t.Errorf("warnings:\n%s", strings.Join(bad, "\n"))
			}
			dot := "-"
			if i := strings.Index(first, " edge crossings"); i >= 0 {
				f := strings.Fields(first[:i])
				dot = f[len(f)-1]
			}
			rows = append(rows, fmt.Sprintf("%-20s %-22s %5d %5d %6d %6d %5s %8v %d", c.Name, c.Kind, q.nodes, q.edges, q.groups, q.crossings, dot,
				took.Round(100*time.Microsecond), len(other)))
		})
	}
	sort.Strings(rows)
	t.Logf("\n%-20s %-22s %5s %5s %6s %6s %5s %8s %s\n%s", "diagram", "kind", "nodes", "edges", "groups", "cross", "dot", "time", "other warnings",
		strings.Join(rows, "\n"))
}

// unrestingMessages counts the arrows of a sequence diagram with an end resting on no line (a
// lifeline or an activation bar's side).
func unrestingMessages(sc *scene.Scene) int {
	var lines []scene.Element
	for _, e := range sc.Elements() {
		if e.Type == scene.Line {
			lines = append(lines, e)
		}
	}
	n := 0
	for _, e := range sc.Elements() {
		if e.Type != scene.Arrow {
			continue
		}
		pts := e.AbsPoints()
		if !restsOn(pts[0], lines) || !restsOn(pts[len(pts)-1], lines) {
			n++
		}
	}
	return n
}
