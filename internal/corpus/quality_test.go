package corpus

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/excalibot/excalibot/diagram/measure"
	"github.com/excalibot/excalibot/render"
	"github.com/excalibot/excalibot/scene"
	"github.com/excalibot/excalibot/tools"
)

// Bounds the own layout must keep on the whole graph corpus, measured on the drawn pictures
// against plain dot laid out in the same run (TestLayoutSideBySide's runs).
const (
	maxCrossingRatio = 0.8  // the own layout's edge crossings over plain dot's, in total
	readableAspect   = 2.55 // a picture longer than this (2.5:1 and rounding) does not read as it is
	readablePx       = 11.5 // nor one whose median label is smaller in a 1600×1200 preview (12 px, rounding)
	// maxLosingInputs bounds the inputs where the own layout crosses more than plain dot's
	// crossings + moreCrossings: dense graphs whose every arrangement tangles more than dot's.
	maxLosingInputs = 2
)

// TestLayoutQuality asserts what every picture of the graph corpus must be: no two nodes
// touching, no group frames overlapping, no node inside a group it does not belong to, no arrow through a box that is not
// its end; in total fewer crossings than plain dot by maxCrossingRatio, at most maxLosingInputs
// inputs with more than dot's crossings + moreCrossings, and no more needless
// group-border crossings; and a picture too long or too small to read as it is must have been
// said to be so in the tool's answer, with a way to split it.
func TestLayoutQuality(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	runs := cachedRuns(ctx, t)
	if len(runs) < 40 {
		t.Fatalf("%d graph inputs, want at least 40", len(runs))
	}
	var ours, dot, oursBorder, dotBorder int
	var losing []string
	for _, r := range runs {
		if r.err != "" {
			t.Errorf("%s: %s", r.name, r.err)
			continue
		}
		m := r.ours.m
		if a, b, ok := touching(r.ours.sc); ok {
			// Nodes closer than a border's width read as one; an arrow from one cannot leave
			// without crossing the other.
			t.Errorf("%s: %s and %s touch", r.name, a, b)
		}
		if m.FrameOverlaps+m.Intruders+m.ArrowsThroughNodes+m.ShapeOverlaps > 0 {
			t.Errorf("%s: %d frame overlaps, %d nodes in a foreign group, %d arrows through a box, %d shape overlaps; want none",
				r.name, m.FrameOverlaps, m.Intruders, m.ArrowsThroughNodes, m.ShapeOverlaps)
		}
		ours += m.Crossings
		dot += r.dt.m.Crossings
		if m.Crossings > r.dt.m.Crossings+moreCrossings {
			losing = append(losing, fmt.Sprintf("%s (%d against %d)", r.name, m.Crossings, r.dt.m.Crossings))
		}
		oursBorder += m.NeedlessBorderCrossings
		dotBorder += r.dt.m.NeedlessBorderCrossings
		if (m.Elongation() > readableAspect || m.LabelPx1600 < readablePx) && !strings.Contains(r.said, "hard to read in a chat") {
			t.Errorf("%s: %.1f:1 with labels of %.1f px in the preview, and the tool did not say so:\n%s", r.name, m.Elongation(), m.LabelPx1600, r.said)
		}
	}
	if float64(ours) > maxCrossingRatio*float64(dot) {
		t.Errorf("%d edge crossings against plain dot's %d (%.2f×), want at most %.1f×", ours, dot, float64(ours)/float64(dot), maxCrossingRatio)
	}
	if len(losing) > maxLosingInputs {
		t.Errorf("%d inputs with more than plain dot's crossings + %d, want at most %d: %s", len(losing), moreCrossings, maxLosingInputs, strings.Join(losing, ", "))
	}
	if oursBorder > dotBorder {
		t.Errorf("%d needless group-border crossings against plain dot's %d, want at most as many", oursBorder, dotBorder)
	}
	t.Logf("crossings %d vs dot %d (%.2f×); needless border crossings %d vs %d", ours, dot, float64(ours)/float64(dot), oursBorder, dotBorder)
}

// TestAddIntoArchitecture adds a node into the fullest group of every laid-out architecture of
// the corpus, joined to one of its members, as a follow-up add_to_graph does: the arrangement
// drawn before is kept (a group may open a band for the node, shifting what lies beyond it, but no
// two nodes change sides), and the picture keeps no overlapping frames, no node in a foreign group
// and no arrow through a box.
func TestAddIntoArchitecture(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	opt := measure.Options{DisplayWidth: displayWidth, Padding: render.DefaultPadding}
	tried := 0
	for _, in := range loadInputs(t) {
		if !in.isGraph() {
			continue
		}
		var args struct {
			Nodes []struct{ ID, Group string } `json:"nodes"`
		}
		if json.Unmarshal(in.calls[0].Args, &args) != nil {
			continue
		}
		members := map[string][]string{}
		best := ""
		for _, n := range args.Nodes {
			if n.Group == "" {
				continue
			}
			members[n.Group] = append(members[n.Group], n.ID)
			if best == "" || len(members[n.Group]) > len(members[best]) {
				best = n.Group
			}
		}
		if best == "" {
			continue
		}
		tried++
		sc, err := firstDrawing(ctx, t, in)
		if err != nil {
			t.Errorf("%s: %v", in.name, err)
			continue
		}

		before := measure.Measure(sc, opt)
		was := sc.Clone()
		set := tools.New(sc, tools.DefaultLimits())
		add := fmt.Sprintf(`{"nodes":[{"id":"added-node","label":"Added service","group":%q}],"edges":[{"from":%q,"to":"added-node","label":"calls"}]}`, best, members[best][0])
		if out := set.Call(ctx, "add_to_graph", json.RawMessage(add)); out.IsError {
			t.Errorf("%s: add_to_graph refused: %s", in.name, out.Text)
			continue
		}
		m := measure.Measure(set.Scene(), opt)
		if a, b, ok := arrangementKept(was, set.Scene()); !ok {
			t.Errorf("%s: adding a node put %s and %s the other way round", in.name, a, b)
		}
		if m.FrameOverlaps > before.FrameOverlaps || m.Intruders > before.Intruders || m.ArrowsThroughNodes > before.ArrowsThroughNodes || m.ShapeOverlaps > before.ShapeOverlaps {
			t.Errorf("%s: after adding into %s: %d frame overlaps, %d foreign nodes, %d arrows through a box, %d shape overlaps (before: %d, %d, %d, %d)",
				in.name, best, m.FrameOverlaps, m.Intruders, m.ArrowsThroughNodes, m.ShapeOverlaps,
				before.FrameOverlaps, before.Intruders, before.ArrowsThroughNodes, before.ShapeOverlaps)
		}
	}
	if tried < 30 {
		t.Errorf("added into %d architectures, want at least 30", tried)
	}
}

// arrangementKept reports whether every two nodes of before still lie the same way round (left
// or right of each other, above or below) in after; else it names two that do not.
func arrangementKept(before, after *scene.Scene) (string, string, bool) {
	type at struct {
		id   string
		x, y float64
	}
	var old []at
	before.Each(func(e *scene.Element) bool {
		if e.Type.IsShape() && e.Type != scene.Frame && !scene.IsGroupBox(e) { // groups grow, nodes stay
			if a, ok := after.Get(e.ID); ok {
				old = append(old, at{e.ID, e.X, e.Y}, at{e.ID, a.X, a.Y})
			}
		}
		return true
	})
	side := func(a, b float64) int {
		switch {
		case a < b-1:
			return -1
		case a > b+1:
			return 1
		}
		return 0
	}
	for i := 0; i < len(old); i += 2 {
		for j := i + 2; j < len(old); j += 2 {
			if side(old[i].x, old[j].x)*side(old[i+1].x, old[j+1].x) < 0 || side(old[i].y, old[j].y)*side(old[i+1].y, old[j+1].y) < 0 {
				return old[i].id, old[j].id, false
			}
		}
	}
	return "", "", true
}

// touching finds two nodes of sc less than 4 px apart, neither holding the other.
func touching(sc *scene.Scene) (string, string, bool) {
	var nodes []scene.Element
	sc.Each(func(e *scene.Element) bool {
		if e.Type.IsShape() && e.Type != scene.Frame && !scene.IsGroupBox(e) {
			nodes = append(nodes, *e)
		}
		return true
	})
	for i, a := range nodes {
		for _, b := range nodes[i+1:] {
			ra, rb := a.Bounds(), b.Bounds()
			gapX := max(rb.X-(ra.X+ra.Width), ra.X-(rb.X+rb.Width))
			gapY := max(rb.Y-(ra.Y+ra.Height), ra.Y-(rb.Y+rb.Height))
			if max(gapX, gapY) < 4 && max(gapX, gapY) >= -1 {
				return a.ID, b.ID, true
			}
		}
	}
	return "", "", false
}

// firstDrawing is the scene in's first call draws: the side-by-side run's own drawing when that
// was the only call (drawing again takes long under the race detector), else drawn anew.
func firstDrawing(ctx context.Context, t *testing.T, in input) (*scene.Scene, error) {
	if len(in.calls) == 1 {
		for _, r := range cachedRuns(ctx, t) {
			if r.name == in.name && r.err == "" {
				return r.ours.sc.Clone(), nil
			}
		}
	}
	var res result
	sc, _, err := drawGraph(ctx, input{name: in.name, calls: in.calls[:1]}, &res)
	return sc, err
}
