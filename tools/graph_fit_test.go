package tools

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/excalibot/excalibot/diagram/graph"
	"github.com/excalibot/excalibot/scene"
)

// fitCase is one file of testdata/graph-fit: graph-tool calls modelled on a public diagram (its
// source named in the file), drawn and then measured as a chat client shows the picture.
type fitCase struct {
	Name   string `json:"name"`
	Kind   string `json:"kind"`
	Source string `json:"source"`
	// SideBySide says the diagram's top-level groups must not share any x: they follow each
	// other left to right.
	SideBySide bool `json:"sideBySide"`
	Steps      []struct {
		Tool string          `json:"tool"`
		Args json.RawMessage `json:"args"`
	} `json:"steps"`
}

// shownWidth is the width a picture is measured at: a chat client fits it to about this many
// pixels on a large screen, fewer on a phone.
const shownWidth = 1600.0

// fitFigures are the measures of one drawing that decide whether it reads in a chat.
type fitFigures struct {
	width, height float64 // the picture: the drawing with the renderer's padding
	aspect        float64 // the longer side over the shorter, ≥ 1
	minTextPx     float64 // the smallest text's font size once the picture is shownWidth wide
	labels        int     // edge labels
	offEdge       float64 // the farthest an edge label's centre lies from its arrow (px)
	posMin        float64 // where along its arrow the label nearest an end sits (0…0.5, 0.5 = middle)
	labelOnNode   int     // edge labels overlapping a node
	labelOnLabel  int     // pairs of edge labels overlapping
	nodeOverlaps  int     // pairs of nodes overlapping
	throughNodes  int     // arrows whose line passes through a node other than their ends
	detours       int     // arrows more than 3× (and 400 px) longer than the line between their ends
	unbound       int     // arrows not bound at both ends on the borders
}

func (f fitFigures) String() string {
	return fmt.Sprintf("%.0f×%.0f aspect %.2f, text %.1f px at %.0f wide; %d labels: off edge %.1f px, nearest end %.2f, on nodes %d, on labels %d; node overlaps %d, arrows through nodes %d, detours %d, unbound %d",
		f.width, f.height, f.aspect, f.minTextPx, shownWidth, f.labels, f.offEdge, f.posMin, f.labelOnNode, f.labelOnLabel, f.nodeOverlaps, f.throughNodes, f.detours, f.unbound)
}

// pictureBounds is the box the renderer exports: every element (arrows by their points, a frame
// with its name above it) plus the default padding of 20 px.
func pictureBounds(sc *scene.Scene) scene.Rect {
	minX, minY, maxX, maxY := math.Inf(1), math.Inf(1), math.Inf(-1), math.Inf(-1)
	for _, e := range sc.Elements() {
		b := e.Bounds()
		if e.Type == scene.Frame {
			b.Y -= graph.FrameTitle
			b.Height += graph.FrameTitle
		}
		minX, minY = math.Min(minX, b.X), math.Min(minY, b.Y)
		maxX, maxY = math.Max(maxX, b.X+b.Width), math.Max(maxY, b.Y+b.Height)
	}
	const pad = 20.0
	return scene.Rect{X: minX - pad, Y: minY - pad, Width: maxX - minX + 2*pad, Height: maxY - minY + 2*pad}
}

// alongPolyline is the distance from p to the polyline pts and where the nearest point lies along
// it, as a share of its length (0 at the start, 1 at the end).
func alongPolyline(pts []scene.Point, p scene.Point) (dist, at float64) {
	var total float64
	for i := 1; i < len(pts); i++ {
		total += math.Hypot(pts[i].X-pts[i-1].X, pts[i].Y-pts[i-1].Y)
	}
	dist = math.Inf(1)
	var run float64
	for i := 1; i < len(pts); i++ {
		a, b := pts[i-1], pts[i]
		l := math.Hypot(b.X-a.X, b.Y-a.Y)
		t := 0.0
		if l > 0 {
			t = math.Max(0, math.Min(1, ((p.X-a.X)*(b.X-a.X)+(p.Y-a.Y)*(b.Y-a.Y))/(l*l)))
		}
		q := scene.Point{X: a.X + t*(b.X-a.X), Y: a.Y + t*(b.Y-a.Y)}
		if d := math.Hypot(p.X-q.X, p.Y-q.Y); d < dist {
			dist = d
			if total > 0 {
				at = (run + t*l) / total
			}
		}
		run += l
	}
	return dist, at
}

func rectsOverlap(a, b scene.Rect) bool {
	return a.X < b.X+b.Width && b.X < a.X+a.Width && a.Y < b.Y+b.Height && b.Y < a.Y+a.Height
}

// measureFit computes the figures from the scene alone.
func measureFit(t *testing.T, sc *scene.Scene) fitFigures {
	t.Helper()
	var f fitFigures
	pic := pictureBounds(sc)
	f.width, f.height = pic.Width, pic.Height
	f.aspect = math.Max(pic.Width/pic.Height, pic.Height/pic.Width)
	minFont := math.Inf(1)
	var nodes, arrows, labels []scene.Element
	for _, e := range sc.Elements() {
		switch {
		case e.Type == scene.Text:
			minFont = math.Min(minFont, e.FontSize)
			if c, ok := sc.Get(e.ContainerID); ok && c.Type == scene.Arrow {
				labels = append(labels, e)
			}
		case graph.IsNode(e.Type) && !graph.IsBox(&e):
			nodes = append(nodes, e)
		case e.Type == scene.Arrow:
			arrows = append(arrows, e)
		}
	}
	f.minTextPx = minFont * shownWidth / pic.Width
	f.labels = len(labels)
	f.posMin = 0.5
	for i, l := range labels {
		a, _ := sc.Get(l.ContainerID)
		d, at := alongPolyline(a.AbsPoints(), l.Center())
		f.offEdge = math.Max(f.offEdge, d)
		f.posMin = math.Min(f.posMin, math.Min(at, 1-at))
		lb := l.Bounds()
		for _, n := range nodes {
			if rectsOverlap(lb, n.Bounds()) {
				f.labelOnNode++
				t.Logf("label %q of %s lies on node %s", l.OriginalText, a.ID, n.ID)
			}
		}
		for _, m := range labels[i+1:] {
			if rectsOverlap(lb, m.Bounds()) {
				f.labelOnLabel++
				t.Logf("label %q of %s lies on label %q of %s", l.OriginalText, a.ID, m.OriginalText, m.ContainerID)
			}
		}
	}
	for i := range nodes {
		for j := i + 1; j < len(nodes); j++ {
			if scene.Overlap(nodes[i], nodes[j]) {
				f.nodeOverlaps++
			}
		}
	}
	for _, a := range arrows {
		pts := a.AbsPoints()
		if graphNodesHit(a, nodes) > 0 {
			f.throughNodes++
		}
		var length float64
		for k := 1; k < len(pts); k++ {
			length += math.Hypot(pts[k].X-pts[k-1].X, pts[k].Y-pts[k-1].Y)
		}
		first, last := pts[0], pts[len(pts)-1]
		if direct := math.Hypot(last.X-first.X, last.Y-first.Y); length > 3*direct && length-direct > 400 {
			f.detours++
			t.Logf("arrow %s is %.0f px long between ends %.0f px apart", a.ID, length, direct)
		}
		bound := a.StartBinding != nil && a.EndBinding != nil
		for _, end := range []struct {
			b *scene.Binding
			p scene.Point
		}{{a.StartBinding, first}, {a.EndBinding, last}} {
			if end.b == nil {
				continue
			}
			if target, ok := sc.Get(end.b.ElementID); !ok || scene.DistanceToBorder(target, end.p) > scene.DefaultGap+1 {
				bound = false
			}
		}
		if !bound {
			f.unbound++
		}
	}
	return f
}

// graphNodesHit counts the nodes an arrow's drawn path passes through, other than its own ends.
func graphNodesHit(a scene.Element, nodes []scene.Element) int {
	pts := a.DrawnPath()
	n := 0
	for _, nd := range nodes {
		if a.StartBinding != nil && nd.ID == a.StartBinding.ElementID || a.EndBinding != nil && nd.ID == a.EndBinding.ElementID {
			continue
		}
		for k := 1; k < len(pts); k++ {
			if scene.SegmentIntersects(nd, pts[k-1], pts[k]) {
				n++
				break
			}
		}
	}
	return n
}

// TestGraphFit draws every diagram of testdata/graph-fit and asserts that it reads once a chat
// client fits it to the screen: an aspect within 2.5:1, text at least 9 px high at 1600 px wide,
// edge labels on their own arrows near the middle and clear of nodes and of each other, no
// overlapping nodes, arrows bound on the borders without detours, and, after add_to_graph, the
// nodes drawn before where they were. The figures go to testdata/graph-fit/figures.golden.
func TestGraphFit(t *testing.T) {
	paths, err := filepath.Glob(filepath.Join("testdata", "graph-fit", "*.json"))
	if err != nil || len(paths) < 10 {
		t.Fatalf("graph-fit has %d diagrams (%v), want at least 10", len(paths), err)
	}
	var rows []string
	for _, path := range paths {
		data, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		var c fitCase
		if err := json.Unmarshal(data, &c); err != nil || len(c.Steps) == 0 || c.Source == "" {
			t.Fatalf("%s: %v (or no steps, or no source)", path, err)
		}
		t.Run(c.Name, func(t *testing.T) {
			s := New(newTestScene(), DefaultLimits())
			before := map[string]scene.Point{}
			var laid string // how the first call laid the graph out
			for i, st := range c.Steps {
				if st.Tool == AddToGraph {
					for _, e := range s.Scene().Elements() {
						before[e.ID] = scene.Point{X: e.X, Y: e.Y}
					}
				}
				r := s.Call(context.Background(), st.Tool, st.Args)
				if r.IsError {
					t.Fatalf("step %d %s refused:\n%s", i, st.Tool, r.Text)
				}
				if i == 0 { // "graph laid out LR (wrapped into 3 rows, to fit the screen): …"
					laid, _, _ = strings.Cut(r.Text, ":")
					laid = strings.TrimPrefix(strings.TrimSuffix(laid, ", to fit the screen)"), "graph laid out ")
					laid = strings.Replace(laid, " (", ", ", 1)
				}
			}
			sc := s.Scene()
			if dir := os.Getenv("GRAPH_FIT_OUT"); dir != "" { // to look at: excalibot render DIR/NAME.excalidraw
				if err := os.WriteFile(filepath.Join(dir, c.Name+".excalidraw"), encode(t, sc), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			f := measureFit(t, sc)
			rows = append(rows, fmt.Sprintf("%-18s %-40s %s", c.Name, laid, f))
			t.Log(f)
			if math.Max(f.width, f.height) > 1000+40 && f.aspect > 2.6 {
				t.Errorf("aspect %.2f, want at most about %.1f", f.aspect, graph.MaxAspect)
			}
			if f.minTextPx < graph.MinTextPx {
				t.Errorf("text %.1f px high at %.0f px wide, want ≥ %.0f", f.minTextPx, shownWidth, graph.MinTextPx)
			}
			if f.offEdge > 2 || f.posMin < 0.15 {
				t.Errorf("labels %.1f px off their arrows, the nearest %.2f of the way from an end; want on them, near the middle", f.offEdge, f.posMin)
			}
			if f.labelOnNode+f.labelOnLabel+f.nodeOverlaps+f.throughNodes+f.detours+f.unbound > 0 {
				t.Errorf("want no labels on nodes or labels, overlaps, arrows through nodes, detours or loose arrows: %s", f)
			}
			if _, faults := groupFaults(sc); len(faults) > 0 {
				t.Errorf("group faults: %v", faults)
			}
			if c.SideBySide {
				if stacked := stackedGroups(sc); len(stacked) > 0 {
					t.Errorf("groups stacked: %v", stacked)
				}
			}
			for _, e := range sc.Elements() {
				if p, ok := before[e.ID]; ok && graph.IsNode(e.Type) && !graph.IsBox(&e) && (p.X != e.X || p.Y != e.Y) {
					t.Errorf("%s moved from %v,%v to %v,%v by add_to_graph", e.ID, p.X, p.Y, e.X, e.Y)
				}
			}
			if len(before) > 0 {
				if far := farFromNeighbours(sc, before); len(far) > 0 {
					t.Errorf("new nodes far from what they connect to: %v", far)
				}
			}
		})
	}
	sort.Strings(rows)
	t.Logf("\n%s", strings.Join(rows, "\n"))
	golden(t, filepath.Join("testdata", "graph-fit", "figures.golden"), []byte(strings.Join(rows, "\n")+"\n"))
}

// stackedGroups lists the pairs of top-level groups (frames, outermost boxes) that share some x.
func stackedGroups(sc *scene.Scene) []string {
	var tops []scene.Element
	for _, e := range sc.Elements() {
		if e.Type == scene.Frame || graph.IsBox(&e) && graph.Read(sc).Parent(e.ID) == "" && len(e.GroupIDs) <= 1 && e.FrameID == "" {
			tops = append(tops, e)
		}
	}
	var out []string
	for i, a := range tops {
		for _, b := range tops[i+1:] {
			if a.X < b.X+b.Width && b.X < a.X+a.Width {
				out = append(out, a.ID+"/"+b.ID)
			}
		}
	}
	return out
}

// farFromNeighbours lists the nodes added since before that lie further from every node they are
// joined to, and from those nodes' other neighbours (a new leaf ends a stacked column), than three
// times the median gap along the diagram's old edges (border to border).
func farFromNeighbours(sc *scene.Scene, before map[string]scene.Point) []string {
	gap := func(a, b scene.Rect) float64 {
		dx := math.Max(0, math.Max(a.X-(b.X+b.Width), b.X-(a.X+a.Width)))
		dy := math.Max(0, math.Max(a.Y-(b.Y+b.Height), b.Y-(a.Y+a.Height)))
		return math.Hypot(dx, dy)
	}
	nb := map[string][]string{}
	var oldGaps []float64
	for _, e := range sc.Elements() {
		if e.Type != scene.Arrow || e.StartBinding == nil || e.EndBinding == nil {
			continue
		}
		a, b := e.StartBinding.ElementID, e.EndBinding.ElementID
		nb[a], nb[b] = append(nb[a], b), append(nb[b], a)
		_, oa := before[a]
		_, ob := before[b]
		if oa && ob {
			ea, _ := sc.Get(a)
			eb, _ := sc.Get(b)
			oldGaps = append(oldGaps, gap(ea.Bounds(), eb.Bounds()))
		}
	}
	sort.Float64s(oldGaps)
	near := 3 * oldGaps[len(oldGaps)/2]
	var out []string
	for id := range nb {
		if _, old := before[id]; old {
			continue
		}
		n, _ := sc.Get(id)
		best := math.Inf(1)
		for _, m := range nb[id] {
			for _, k := range append([]string{m}, nb[m]...) {
				if k != id {
					e, _ := sc.Get(k)
					best = math.Min(best, gap(n.Bounds(), e.Bounds()))
				}
			}
		}
		if best > near {
			out = append(out, fmt.Sprintf("%s %.0f px (near is %.0f)", id, best, near))
		}
	}
	sort.Strings(out)
	return out
}
