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
	Steps  []struct {
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

// graphNodesHit counts the nodes an arrow's polyline passes through, other than its own ends.
func graphNodesHit(a scene.Element, nodes []scene.Element) int {
	pts := a.AbsPoints()
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
			for i, st := range c.Steps {
				if st.Tool == AddToGraph {
					for _, e := range s.Scene().Elements() {
						before[e.ID] = scene.Point{X: e.X, Y: e.Y}
					}
				}
				if r := s.Call(context.Background(), st.Tool, st.Args); r.IsError {
					t.Fatalf("step %d %s refused:\n%s", i, st.Tool, r.Text)
				}
			}
			sc := s.Scene()
			if dir := os.Getenv("GRAPH_FIT_OUT"); dir != "" { // to look at: excalibot render DIR/NAME.excalidraw
				if err := os.WriteFile(filepath.Join(dir, c.Name+".excalidraw"), encode(t, sc), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			f := measureFit(t, sc)
			rows = append(rows, fmt.Sprintf("%-18s %s", c.Name, f))
			t.Log(f)
			moved := 0
			for _, e := range sc.Elements() {
				if p, ok := before[e.ID]; ok && graph.IsNode(e.Type) && !graph.IsBox(&e) && (p.X != e.X || p.Y != e.Y) {
					moved++
					t.Errorf("%s moved from %v,%v to %v,%v by add_to_graph", e.ID, p.X, p.Y, e.X, e.Y)
				}
			}
			_ = moved
		})
	}
	sort.Strings(rows)
	t.Logf("\n%s", strings.Join(rows, "\n"))
}
