package layout

import (
	"context"
	"testing"
)

// layers lays p out and returns, per node id, the layer dot put it on.
func layers(t *testing.T, p *plan) (candidate, map[string]int) {
	t.Helper()
	c, ok, err := runCandidate(context.Background(), p, 1)
	if err != nil || !ok {
		t.Fatalf("lay out: ok %v, %v", ok, err)
	}
	r := p.ranksOf(c.pl)
	out := map[string]int{}
	for i, n := range p.g.Nodes {
		out[n.ID] = r.of[i]
	}
	return c, out
}

// spanOf is how many layers apart the first and last of ids are.
func spanOf(layer map[string]int, ids ...string) int {
	lo, hi := layer[ids[0]], layer[ids[0]]
	for _, id := range ids {
		lo, hi = min(lo, layer[id]), max(hi, layer[id])
	}
	return hi - lo
}

// TestRankGroupsKeepsAGroupWhole: a cluster of worker pods, two feeding Prometheus near the
// start of the flow and one fed by the master at its end (an autoscaling design's pods), is
// stretched over the whole picture by dot's ranking; ranked whole, it takes the layers its own
// edges need: one, or two where a pod feeds the last (the heavy edges between its ranks hold
// it together against the master's pull).
func TestRankGroupsKeepsAGroupWhole(t *testing.T) {
	for _, tc := range []struct {
		name  string
		inner bool // pod1 → pod3
		want  int  // layers between the pods
	}{
		{"pods side by side", false, 0},
		{"a pod feeding another", true, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g := Graph{Direction: TopDown, Clusters: []Cluster{
				{ID: "server", TitleHeight: 24}, {ID: "conductor", TitleHeight: 24}, {ID: "workers", TitleHeight: 24},
			}}
			for _, n := range [][2]string{
				{"nfvo", ""}, {"vnfpm", "server"}, {"vnflcm", "server"}, {"plugin", "server"},
				{"driver", "conductor"}, {"infra", "conductor"}, {"prom", ""},
				{"pod1", "workers"}, {"pod2", "workers"}, {"pod3", "workers"}, {"master", ""},
			} {
				g.Nodes = append(g.Nodes, Node{ID: n[0], Cluster: n[1], Width: 160, Height: 60})
			}
			for _, e := range [][2]string{
				{"nfvo", "vnfpm"}, {"nfvo", "vnflcm"}, {"vnfpm", "plugin"}, {"plugin", "prom"}, {"pod1", "prom"},
				{"pod2", "prom"}, {"prom", "plugin"}, {"plugin", "driver"}, {"driver", "nfvo"},
				{"vnflcm", "infra"}, {"infra", "master"}, {"master", "pod3"},
			} {
				g.Edges = append(g.Edges, Edge{From: e[0], To: e[1]})
			}
			if tc.inner {
				g.Edges = append(g.Edges, Edge{From: "pod1", To: "pod3"})
			}
			g = g.withSpacing()
			plain, before := layers(t, newPlan(g, TopDown, false))
			if got := spanOf(before, "pod1", "pod2", "pod3"); got <= tc.want {
				t.Fatalf("dot put the pods %d layers apart by itself; the graph does not test it", got)
			}
			p := newPlan(g, TopDown, false)
			if !p.rankGroups(false) {
				t.Fatal("rankGroups changed nothing")
			}
			if stretched, _ := mends(plain, p); !stretched {
				t.Error("mends: the plain layout's stretched group not seen")
			}
			if plain.d.stretch == 0 {
				t.Error("the plain layout's stretched group counts no stretch")
			}
			c, after := layers(t, p)
			if c.d.stretch != 0 {
				t.Errorf("ranked whole: stretch %d, want 0", c.d.stretch)
			}
			if got := spanOf(after, "pod1", "pod2", "pod3"); got != tc.want {
				t.Errorf("ranked whole: the pods span %d layers, want %d (layers %v)", got, tc.want, after)
			}
		})
	}
}

// TestSequenceTopMendsAStaircase: a pipeline of four groups, each with a node of its own
// (Kafka, Flink, the catalogue) feeding what the group before feeds too, comes out of dot as a
// staircase: each group starts beside the one before it. In sequence, each group starts after
// the one before it ends.
func TestSequenceTopMendsAStaircase(t *testing.T) {
	g := Graph{Direction: TopDown}
	steps := [][3]string{{"gen", "gen", "events"}, {"ingest", "kafka", "topic"}, {"process", "flink", "job"}, {"store", "catalog", "table"}}
	for k, s := range steps {
		g.Clusters = append(g.Clusters, Cluster{ID: s[0], TitleHeight: 24})
		g.Nodes = append(g.Nodes, Node{ID: s[1] + "_src", Cluster: s[0], Width: 200, Height: 60},
			Node{ID: s[2], Cluster: s[0], Width: 200, Height: 60})
		g.Edges = append(g.Edges, Edge{From: s[1] + "_src", To: s[2]})
		if k > 0 {
			g.Edges = append(g.Edges, Edge{From: steps[k-1][2], To: s[2], LabelWidth: 80, LabelHeight: 20})
		}
	}
	g = g.withSpacing()
	plain, before := layers(t, newPlan(g, TopDown, false))
	if before["kafka_src"] > before["events"] {
		t.Fatal("dot put Kafka after the events by itself; the graph does not test it")
	}
	p := newPlan(g, TopDown, false)
	p.rankGroups(true)
	if _, staircase := mends(plain, p); !staircase {
		t.Error("mends: the plain layout's staircase not seen")
	}
	if plain.d.stretch == 0 {
		t.Error("the plain layout's staircase counts no stretch")
	}
	c, after := layers(t, p)
	if c.d.stretch != 0 {
		t.Errorf("in sequence: stretch %d, want 0", c.d.stretch)
	}
	for k := 1; k < len(steps); k++ {
		end := max(after[steps[k-1][1]+"_src"], after[steps[k-1][2]])
		if start := min(after[steps[k][1]+"_src"], after[steps[k][2]]); start <= end {
			t.Errorf("in sequence: group %s starts on layer %d, want after %s's last layer %d", steps[k][0], start, steps[k-1][0], end)
		}
	}
}

// TestChooseKeepsGroupsRankedWholeClear: a picture with groups ranked whole wins on how it
// reads only where its arrows are as clear as the plain layout's (one crossing or border
// crossing more and the plain layout stands); where it keeps apart arrows the plain layout
// tangles, it wins even when smaller in the preview.
func TestChooseKeepsGroupsRankedWholeClear(t *testing.T) {
	g := Graph{Direction: TopDown, Clusters: []Cluster{{ID: "c", TitleHeight: 24}}}
	for _, id := range []string{"a", "b", "c1", "c2"} {
		cl := ""
		if id[0] == 'c' {
			cl = "c"
		}
		g.Nodes = append(g.Nodes, Node{ID: id, Cluster: cl, Width: 160, Height: 60})
	}
	g.Edges = []Edge{{From: "a", To: "c1"}, {From: "b", To: "c2"}}
	f := Fit{MaxAspect: 2.5, Small: 100, Turn: true}
	wholePlan := newPlan(g, TopDown, false)
	wholePlan.whole = true
	for _, tc := range []struct {
		name         string
		plain, whole candidate
		want         bool // the whole one chosen
	}{
		{"as clear, reads better", candidate{w: 3200, h: 800, d: defects{crossings: 2, borders: 1}},
			candidate{w: 1600, h: 1200, d: defects{crossings: 2, borders: 1}}, true},
		{"one crossing more", candidate{w: 3200, h: 800, d: defects{crossings: 2, borders: 1}},
			candidate{w: 1600, h: 1200, d: defects{crossings: 3, borders: 1}}, false},
		{"one border crossing more", candidate{w: 3200, h: 800, d: defects{crossings: 2, borders: 1}},
			candidate{w: 1600, h: 1200, d: defects{crossings: 2, borders: 2}}, false},
		{"the plain one tangles, the whole one reads smaller", candidate{w: 1600, h: 1200, d: defects{crossings: 10}},
			candidate{w: 1400, h: 2700, d: defects{crossings: 3}}, true},
	} {
		plain, whole := tc.plain, tc.whole
		plain.p, plain.prefer, plain.start = newPlan(g, TopDown, false), 1, true
		whole.p, whole.prefer, whole.start = wholePlan, preferWhole, true
		if got := choose([]candidate{plain, whole}, f).p.whole; got != tc.want {
			t.Errorf("%s: ranked whole chosen %v, want %v", tc.name, got, tc.want)
		}
	}
}

// TestChooseAvoidsStretchedGroups: of two pictures alike in size and crossings, the one whose
// groups hold no empty layers wins (a manager cluster feeding two worker clusters: stretched
// beside them as a 2.8:1 strip, or above them at 1.5:1).
func TestChooseAvoidsStretchedGroups(t *testing.T) {
	g := Graph{Direction: TopDown, Clusters: []Cluster{{ID: "m", TitleHeight: 24}}}
	for _, id := range []string{"a", "b", "c", "d"} {
		g.Nodes = append(g.Nodes, Node{ID: id, Cluster: "m", Width: 160, Height: 60})
	}
	g.Edges = []Edge{{From: "a", To: "b"}, {From: "c", To: "d"}, {From: "a", To: "d"}, {From: "b", To: "c"}}
	f := Fit{MaxAspect: 2.5, Small: 1000, Turn: true}
	p := newPlan(g, TopDown, false)
	stretched := candidate{p: p, prefer: 1, start: true, w: 1288, h: 465, d: defects{crossings: 3, stretch: 2}}
	compact := candidate{p: p, prefer: 1, start: true, w: 950, h: 635, d: defects{crossings: 3}}
	if got := choose([]candidate{stretched, compact}, f); got.d.stretch != 0 {
		t.Errorf("chose the picture with %d empty layers in its groups, want the compact one", got.d.stretch)
	}
}

// TestGroupBoxesFitWhatTheyHold: a data platform's targets group, its flow's groups ordered by
// invisible gates, has no empty strip along its bottom or sides beyond dot's margin (the gates
// take places of their own in their layers, which dot's box holds).
func TestGroupBoxesFitWhatTheyHold(t *testing.T) {
	g := Graph{Direction: LeftRight, Clusters: []Cluster{{ID: "sources", TitleHeight: 30}, {ID: "targets", TitleHeight: 30},
		{ID: "flow", TitleHeight: 30, Parent: "targets"}, {ID: "events", TitleHeight: 30, Parent: "targets"},
		{ID: "serverless", TitleHeight: 30, Parent: "events"}, {ID: "processing", TitleHeight: 30, Parent: "events"},
		{ID: "lake", TitleHeight: 30, Parent: "targets"}}}
	node := func(id, c string) { g.Nodes = append(g.Nodes, Node{ID: id, Width: 160, Height: 80, Cluster: c}) }
	for _, n := range [][2]string{{"core1", "sources"}, {"core2", "sources"}, {"core3", "sources"}, {"pubsub", ""},
		{"dataflow", "flow"}, {"func", "serverless"}, {"appengine", "serverless"}, {"engine", "processing"},
		{"bigtable", "processing"}, {"storage", "lake"}, {"bq", "lake"}} {
		node(n[0], n[1])
	}
	for _, e := range [][2]string{{"core1", "pubsub"}, {"core2", "pubsub"}, {"core3", "pubsub"}, {"pubsub", "dataflow"},
		{"dataflow", "func"}, {"dataflow", "engine"}, {"dataflow", "storage"}, {"dataflow", "bq"}, {"func", "appengine"}, {"engine", "bigtable"}} {
		g.Edges = append(g.Edges, Edge{From: e[0], To: e[1]})
	}
	if p := newPlan(g.withSpacing(), LeftRight, true); !p.hasGates() {
		t.Fatal("the graph's groups are not ordered by gates; the test needs them")
	}
	r, err := Layout(context.Background(), g)
	if err != nil {
		t.Fatal(err)
	}
	holds := map[string][]string{"targets": {"flow", "events", "lake"}, "events": {"serverless", "processing"}}
	for _, n := range g.Nodes {
		if n.Cluster != "" {
			holds[n.Cluster] = append(holds[n.Cluster], n.ID)
		}
	}
	for c, ids := range holds {
		var boxes []Rect
		for _, id := range ids {
			if b, ok := r.Nodes[id]; ok {
				boxes = append(boxes, b)
			} else {
				boxes = append(boxes, r.Clusters[id])
			}
		}
		in, box := union(boxes), r.Clusters[c]
		if gap := box.Y + box.Height - (in.Y + in.Height); gap > clusterMargin+1 {
			t.Errorf("group %s %v: %.0f px below what it holds %v, want at most %.0f", c, box, gap, in, clusterMargin)
		}
		if gaps := [2]float64{in.X - box.X, box.X + box.Width - (in.X + in.Width)}; max(gaps[0], gaps[1]) > clusterMargin+1 {
			t.Errorf("group %s %v: %.0f and %.0f px beside what it holds %v, want at most %.0f", c, box, gaps[0], gaps[1], in, clusterMargin)
		}
	}
}
