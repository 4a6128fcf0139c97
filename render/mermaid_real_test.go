package render

import (
	"encoding/json"
	"flag"
	"math"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/excalibot/excalibot/scene"
)

var update = flag.Bool("update", false, "rewrite golden files in testdata")

// TestMermaidReal converts the diagrams of testdata/mermaid/real (written by people, see its
// README) and checks what docs/mermaid.md promises: no markup left in any text; every arrow label
// on its arrow, away from the ends, on no node and no other label; flowchart and state arrows
// bound at both ends with their ends on the borders; Excalidraw's restore() changing nothing.
// Each diagram's content (shapes, labels, colours, links, arrows and what they join) is compared
// with its .golden file (-update rewrites them). -v prints the measurements.
func TestMermaidReal(t *testing.T) {
	r := shared(t)
	files, _ := filepath.Glob("testdata/mermaid/real/*.mmd")
	if len(files) < 10 {
		t.Fatalf("found %d diagrams in testdata/mermaid/real, want at least 10", len(files))
	}
	var total mermaidStats
	table := []string{statsHeader()}
	for _, f := range files {
		name := strings.TrimSuffix(filepath.Base(f), ".mmd")
		t.Run(name, func(t *testing.T) {
			res, err := r.Mermaid(testCtx(t), string(readFile(t, f)))
			if err != nil {
				t.Fatal(err)
			}
			es := melems(t, res.Elements)
			st := measure(es)
			check := restoreReport(t, r, res)
			total = total.add(st)
			table = append(table, st.row(name, check))
			if st.Markup > 0 {
				t.Errorf("%d texts still show markup", st.Markup)
			}
			if st.OffArrow > 0 || st.LabelsOnNodes > 0 || st.LabelsOnLabels > 0 {
				t.Errorf("labels: %d off their arrow, %d on a node, %d on another label", st.OffArrow, st.LabelsOnNodes, st.LabelsOnLabels)
			}
			if st.MidLabels != st.Labels {
				t.Errorf("%d of %d arrow labels lie in the middle half of their arrow", st.MidLabels, st.Labels)
			}
			if st.FarEnds > 0 {
				t.Errorf("%d arrow ends are bound to a shape they do not touch", st.FarEnds)
			}
			if res.Type != "sequence" && st.Unbound > 0 {
				t.Errorf("%d arrow ends are not bound", st.Unbound)
			}
			if check != "clean" {
				t.Errorf("Excalidraw's restore changes the scene: %s", check)
			}
			golden(t, strings.TrimSuffix(f, ".mmd")+".golden", summary(es))
		})
	}
	table = append(table, total.row("total", ""))
	t.Log("\n" + strings.Join(table, "\n"))
}

// restoreReport loads the result as a file (package scene, as every tool does) and runs
// Excalidraw's restore() on it: "clean", or what it changed.
func restoreReport(t *testing.T, r *Renderer, res MermaidResult) string {
	t.Helper()
	raw, err := json.Marshal(map[string]any{"type": "excalidraw", "version": 2, "elements": res.Elements, "files": res.Files})
	if err != nil {
		t.Fatal(err)
	}
	sc, err := scene.Decode(raw)
	if err != nil {
		t.Fatalf("scene.Decode: %v", err)
	}
	doc, err := sc.Encode()
	if err != nil {
		t.Fatal(err)
	}
	rep, err := r.Check(testCtx(t), doc)
	if err != nil {
		t.Fatalf("Check: %v", err)
	}
	if rep.Clean(1) {
		return "clean"
	}
	return strings.TrimSpace(strings.ReplaceAll(rep.String(), "\n", "; "))
}

func golden(t *testing.T, path, got string) {
	t.Helper()
	if *update {
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run with -update to write it)", err)
	}
	if got != string(want) {
		t.Errorf("%s differs (run with -update after checking):\n got:\n%s\nwant:\n%s", path, got, want)
	}
}

// realDiagram converts one file of testdata/mermaid/real.
func realDiagram(t *testing.T, name string) (MermaidResult, []melem) {
	t.Helper()
	res, err := shared(t).Mermaid(testCtx(t), string(readFile(t, "testdata/mermaid/real/"+name+".mmd")))
	if err != nil {
		t.Fatal(err)
	}
	return res, melems(t, res.Elements)
}

// labelOf returns the text bound to e, if any.
func labelOf(es []melem, e melem) (melem, bool) {
	for _, ref := range e.BoundElements {
		for _, t := range es {
			if t.ID == ref.ID && ref.Type == "text" {
				return t, true
			}
		}
	}
	return melem{}, false
}

func byIDOf(es []melem) map[string]melem {
	m := map[string]melem{}
	for _, e := range es {
		m[e.ID] = e
	}
	return m
}

// TestMermaidRealLinks: <a href> and click links become element links (http and https only),
// markup and entities become text, and a ~~~ link draws no arrow.
func TestMermaidRealLinks(t *testing.T) {
	_, es := realDiagram(t, "docs-links")
	m := byIDOf(es)
	link := func(id string) string {
		if l := m[id].Link; l != nil {
			return *l
		}
		return ""
	}
	for id, want := range map[string]string{"start": "https://example.org/guide/install", "rotate": "https://example.org/guide/logs", "evil": "", "conf": ""} {
		if got := link(id); got != want {
			t.Errorf("link of %s = %q, want %q", id, got, want)
		}
	}
	for id, want := range map[string]string{"start": "Install", "conf": "Configure\nconfig.yaml", "run": "Run & watch", "evil": "Click me"} {
		if l, _ := labelOf(es, m[id]); l.OriginalText != want {
			t.Errorf("label of %s = %q, want %q", id, l.OriginalText, want)
		}
	}
	if l, _ := labelOf(es, m["run_rotate"]); l.OriginalText != "logs > 1 GB" {
		t.Errorf("edge label %q, want %q", l.OriginalText, "logs > 1 GB")
	}
	arrows := 0
	for _, e := range es {
		if e.Type == "arrow" {
			arrows++
			if e.StartBinding != nil && e.EndBinding != nil && e.StartBinding.ElementID == "conf" && e.EndBinding.ElementID == "evil" {
				t.Error("the ~~~ link between conf and evil is drawn")
			}
		}
	}
	if arrows != 5 {
		t.Errorf("%d arrows, want 5 (six links, one of them ~~~)", arrows)
	}
}

// TestMermaidRealSelfLoops: a self-loop is an arrow from a shape back to it, around it, with its
// label, in flowcharts and state diagrams.
func TestMermaidRealSelfLoops(t *testing.T) {
	for _, tc := range []struct{ file, node, label string }{
		{"task-flow-newlines", "F", "retry"},
		{"retry-state", "Retrying", "wait for backoff"},
	} {
		_, es := realDiagram(t, tc.file)
		m := byIDOf(es)
		found := false
		for _, e := range es {
			if e.Type != "arrow" || e.StartBinding == nil || e.EndBinding == nil || e.StartBinding.ElementID != tc.node || e.EndBinding.ElementID != tc.node {
				continue
			}
			found = true
			if l, _ := labelOf(es, e); l.OriginalText != tc.label {
				t.Errorf("%s: self-loop label %q, want %q", tc.file, l.OriginalText, tc.label)
			}
			// The loop leaves the shape: its middle point lies outside the shape's box.
			pts, n := e.abs(), m[tc.node]
			mid := pts[len(pts)/2]
			if len(pts) < 3 || n.box().contains(mbox{mid.X, mid.Y, mid.X, mid.Y}) {
				t.Errorf("%s: self-loop points %v do not go around %s %+v", tc.file, pts, tc.node, n.box())
			}
		}
		if !found {
			t.Errorf("%s: no self-loop on %s", tc.file, tc.node)
		}
	}
}

// TestMermaidRealColours: classDef, class, style and ::: colours are the shapes' fill, stroke and
// label colours; a label without a color stays Excalidraw's default, not its shape's stroke.
func TestMermaidRealColours(t *testing.T) {
	for _, tc := range []struct {
		file, id, fill, stroke, text string
	}{
		{"k8s-ingress", "ingress", "#326ce5", "#fff", "#fff"},
		{"k8s-ingress", "client", "#ddd", "#fff", "#000"},
		{"k8s-ingress", "cluster", "#fff", "#bbb", "#326ce5"},
		{"fastapi-architecture-zh", "API", "#4CAF50", "#333", "#1e1e1e"},
		{"fastapi-architecture-zh", "DB", "#00758F", "#333", "#1e1e1e"},
		{"k8s-diagram-guide", "m", "#fff", "#000", "#000"},
	} {
		_, es := realDiagram(t, tc.file)
		e := byIDOf(es)[tc.id]
		l, _ := labelOf(es, e)
		if e.BackgroundColor != tc.fill || e.StrokeColor != tc.stroke || l.StrokeColor != tc.text {
			t.Errorf("%s %s: fill %s stroke %s text %s, want %s %s %s", tc.file, tc.id, e.BackgroundColor, e.StrokeColor,
				l.StrokeColor, tc.fill, tc.stroke, tc.text)
		}
	}
}

// TestMermaidRealSequence: messages are bound to nothing they do not touch, activations sit on
// their lifelines starting at the message that opened them, and a note over two participants
// spans both lifelines.
func TestMermaidRealSequence(t *testing.T) {
	res, es := realDiagram(t, "oauth-sequence")
	if res.Type != "sequence" {
		t.Fatalf("type %q", res.Type)
	}
	m := byIDOf(es)
	// Lifelines are the longest vertical lines (the frames of alt blocks are lines too).
	longest := 0.0
	for _, e := range es {
		if e.Type == "line" && len(e.Points) == 2 && e.Points[1][0] == 0 {
			longest = math.Max(longest, e.Points[1][1])
		}
	}
	var lifelines []float64
	for _, e := range es {
		if e.Type == "line" && len(e.Points) == 2 && e.Points[1][0] == 0 && e.Points[1][1] > 0.8*longest {
			lifelines = append(lifelines, e.X)
		}
	}
	sort.Float64s(lifelines)
	if len(lifelines) != 6 {
		t.Fatalf("%d lifelines, want 6", len(lifelines))
	}
	var messages []melem
	for _, e := range es {
		if e.Type == "arrow" {
			messages = append(messages, e)
			for _, b := range []*mbinding{e.StartBinding, e.EndBinding} {
				if b != nil {
					t.Errorf("message %s is bound to %s", e.ID, b.ElementID)
				}
			}
		}
	}
	activations := 0
	for _, e := range es {
		if e.Type != "rectangle" || e.BackgroundColor != "#e9ecef" || len(e.BoundElements) > 0 || e.Width > 20 {
			continue
		}
		activations++
		cx := e.X + e.Width/2
		on := false
		for _, x := range lifelines {
			on = on || math.Abs(cx-x) <= 1
		}
		if !on {
			t.Errorf("activation at x %.0f is on no lifeline %v", cx, lifelines)
		}
		opened := false
		for _, a := range messages {
			end := a.abs()[len(a.Points)-1]
			opened = opened || (math.Abs(end.X-e.X) <= 6 || math.Abs(end.X-(e.X+e.Width)) <= 6) && end.Y <= e.Y+1 && end.Y >= e.Y-15
		}
		if !opened {
			t.Errorf("activation at (%.0f,%.0f) starts where no message arrives", e.X, e.Y)
		}
	}
	if activations != 4 {
		t.Errorf("%d activations, want 4", activations)
	}
	// The message to its own lifeline has its text beside the loop (checkSelfMessages).
	var self *melem
	for i, e := range es {
		if e.Type == "arrow" && len(e.Points) > 2 && math.Abs(e.Points[len(e.Points)-1][0]) <= 2 {
			self = &es[i]
		}
	}
	if self == nil {
		t.Fatal("no self-message")
	}
	checkSelfMessages(t, es)
	var note *melem
	for _, e := range es {
		if l, ok := labelOf(es, e); ok && strings.HasPrefix(l.OriginalText, "consent is remembered") {
			note = &e
		}
	}
	if note == nil {
		t.Fatal("no note 'consent is remembered'")
	}
	provider := m["Provider-top"]
	if !(note.X <= lifelines[0] && note.X+note.Width >= provider.X+provider.Width/2) {
		t.Errorf("the note over User,Provider spans %.0f..%.0f, not both lifelines (%.0f, %.0f)", note.X, note.X+note.Width, lifelines[0], provider.X+provider.Width/2)
	}
}

// checkSelfMessages checks every message to its own lifeline: its text is a free text beside the
// loop, past the loop's far side, across its middle, grouped with it, and on no lifeline and no
// other text.
func checkSelfMessages(t *testing.T, es []melem) {
	t.Helper()
	longest := 0.0
	for _, e := range es {
		if e.Type == "line" && len(e.Points) == 2 && e.Points[1][0] == 0 {
			longest = math.Max(longest, e.Points[1][1])
		}
	}
	for _, a := range es {
		pts := a.abs()
		if a.Type != "arrow" || len(pts) < 3 || math.Abs(pts[0].X-pts[len(pts)-1].X) > 2 {
			continue
		}
		if l, bound := labelOf(es, a); bound {
			t.Errorf("self-message %s has a bound label %q, drawn on its loop", a.ID, l.Text)
			continue
		}
		far, y0, y1 := math.Inf(-1), math.Inf(1), math.Inf(-1)
		for _, p := range pts {
			far, y0, y1 = math.Max(far, p.X), math.Min(y0, p.Y), math.Max(y1, p.Y)
		}
		var text *melem
		for i, e := range es {
			if e.Type == "text" && e.ContainerID == "" && len(a.GroupIDs) > 0 && slices.Equal(e.GroupIDs, a.GroupIDs) && !isNumber(e.Text) {
				text = &es[i]
			}
		}
		if text == nil {
			t.Errorf("self-message %s: no text grouped with it", a.ID)
			continue
		}
		mid := (y0 + y1) / 2
		if text.X < far || text.Y > mid || text.Y+text.Height < mid {
			t.Errorf("self-message %s's text %q at %+v, want it right of x %.0f and across y %.0f", a.ID, text.Text, text.box(), far, mid)
		}
		for _, e := range es {
			switch {
			case e.ID == text.ID:
			case e.Type == "line" && len(e.Points) == 2 && e.Points[1][0] == 0 && e.Points[1][1] > 0.8*longest:
				if e.X > text.X && e.X < text.X+text.Width && e.Y < text.Y+text.Height && e.Y+e.Points[1][1] > text.Y {
					t.Errorf("self-message %s's text %q at %+v lies on the lifeline at x %.0f", a.ID, text.Text, text.box(), e.X)
				}
			case e.Type == "text" && text.box().overlaps(e.box(), 1):
				t.Errorf("self-message %s's text %q at %+v covers %q at %+v", a.ID, text.Text, text.box(), e.Text, e.box())
			}
		}
	}
}

func isNumber(s string) bool {
	_, err := strconv.Atoi(s)
	return err == nil
}

// TestMermaidSequenceParts: self-messages with their text beside the loop (short, long enough to
// be wrapped before the next lifeline, on a bar, on the last lifeline), and autonumber drawn as a
// badge at each message's start, grouped with it.
func TestMermaidSequenceParts(t *testing.T) {
	const src = `sequenceDiagram
  autonumber
  participant C as Client
  participant S as Server
  participant D as DB
  C->>S: request
  activate S
  S->>S: validate the request body against the schema and the caller's quota
  S->>D: query
  D->>D: plan
  D-->>S: rows
  S->>S: render
  deactivate S
  S-->>C: 200 OK
`
	res, err := shared(t).Mermaid(testCtx(t), src)
	if err != nil {
		t.Fatal(err)
	}
	es := melems(t, res.Elements)
	checkSelfMessages(t, es)
	var arrows []melem
	for _, e := range es {
		if e.Type == "arrow" {
			arrows = append(arrows, e)
		}
	}
	if len(arrows) != 7 {
		t.Fatalf("%d messages, want 7", len(arrows))
	}
	sort.SliceStable(arrows, func(i, j int) bool { return arrows[i].abs()[0].Y < arrows[j].abs()[0].Y })
	for k, a := range arrows {
		want := strconv.Itoa(k + 1)
		var badge, num *melem
		for i, e := range es {
			if len(a.GroupIDs) == 0 || !slices.Equal(e.GroupIDs, a.GroupIDs) {
				continue
			}
			switch {
			case e.Type == "ellipse":
				badge = &es[i]
			case e.Type == "text" && isNumber(e.Text):
				num = &es[i]
			}
		}
		if badge == nil || num == nil {
			t.Errorf("message %d (%s): badge %v, number %v; want both grouped with it", k+1, a.ID, badge, num)
			continue
		}
		start := a.abs()[0]
		bx, by := badge.X+badge.Width/2, badge.Y+badge.Height/2
		if math.Abs(bx-start.X) > 3 || math.Abs(by-start.Y) > 3 || badge.Width > 40 {
			t.Errorf("message %d's badge at %+v, want a small circle centred on its start (%.0f, %.0f)", k+1, badge.box(), start.X, start.Y)
		}
		if num.Text != want || math.Abs(num.X+num.Width/2-bx) > 1 || math.Abs(num.Y+num.Height/2-by) > 1 {
			t.Errorf("message %d's number %q at %+v, want %q centred in its badge (%.0f, %.0f)", k+1, num.Text, num.box(), want, bx, by)
		}
	}
}
