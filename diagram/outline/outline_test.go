package outline

import (
	"context"
	"flag"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/excalibot/excalibot/diagram/graph"
	"github.com/excalibot/excalibot/diagram/sequence"
	"github.com/excalibot/excalibot/internal/corpusdir"
	"github.com/excalibot/excalibot/scene"
)

var update = flag.Bool("update", false, "rewrite golden files in testdata")

// TestGolden outlines real scenes (other people's drawings, and what the graph and sequence
// builders draw) and compares the summary and the outline with testdata/outline.golden.
func TestGolden(t *testing.T) {
	type sample struct {
		name string
		sc   *scene.Scene
	}
	var samples []sample
	for _, f := range corpusdir.Files(t) {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		sc, err := scene.Decode(data)
		if err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		samples = append(samples, sample{filepath.Base(f), sc})
	}
	samples = append(samples, sample{"graph: deploy pipeline", pipeline(t)}, sample{"sequence: checkout", checkout(t)})

	var b strings.Builder
	for _, s := range samples {
		o := Of(s.sc)
		b.WriteString("== " + s.name + "\n" + o.Summary(300) + "\n--\n" + o.Text() + "\n\n")
	}
	path := filepath.Join("testdata", "outline.golden")
	if *update {
		if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run with -update to create it)", err)
	}
	if got := b.String(); got != string(want) {
		t.Errorf("outlines differ from %s (run with -update and read the diff):\n%s", path, firstDiff(got, string(want)))
	}
}

func pipeline(t *testing.T) *scene.Scene {
	t.Helper()
	sc := scene.New()
	g := graph.Graph{
		Nodes: []graph.Node{{ID: "build", Label: "Build", Group: "CI"}, {ID: "test", Label: "Test", Group: "CI"},
			{ID: "stage", Label: "Staging"}, {ID: "prod", Label: "Production", Shape: scene.Ellipse}},
		Edges: []graph.Edge{{From: "build", To: "test"}, {From: "test", To: "stage", Label: "green"}, {From: "stage", To: "prod", Label: "approved"}},
	}
	if _, err := graph.Draw(context.Background(), sc, g, graph.Options{}); err != nil {
		t.Fatal(err)
	}
	return sc
}

func checkout(t *testing.T) *scene.Scene {
	t.Helper()
	sc := scene.New()
	_, err := sequence.Draw(sc, sequence.Sequence{
		Actors: []sequence.Actor{{ID: "web", Label: "Browser"}, {ID: "api", Label: "API"}},
		Steps: []sequence.Step{{Message: &sequence.Message{From: "web", To: "api", Label: "POST /checkout"}},
			{Message: &sequence.Message{From: "api", To: "web", Label: "201 Created", Style: "dashed"}}},
	})
	if err != nil {
		t.Fatal(err)
	}
	return sc
}

func firstDiff(got, want string) string {
	g, w := strings.Split(got, "\n"), strings.Split(want, "\n")
	for i := 0; i < len(g) || i < len(w); i++ {
		var gl, wl string
		if i < len(g) {
			gl = g[i]
		}
		if i < len(w) {
			wl = w[i]
		}
		if gl != wl {
			return "line " + strconv.Itoa(i+1) + ":\n got  " + gl + "\n want " + wl
		}
	}
	return ""
}

// TestSequenceMessageParts: a message to oneself has its label as a free text beside the loop and a
// numbered diagram has number badges; both are read as parts of their message, not as notes or
// participants.
func TestSequenceMessageParts(t *testing.T) {
	sc := scene.New()
	_, err := sequence.Draw(sc, sequence.Sequence{
		Actors:     []sequence.Actor{{ID: "web", Label: "Browser"}, {ID: "api", Label: "API"}},
		Autonumber: true,
		Steps: []sequence.Step{{Message: &sequence.Message{From: "web", To: "api", Label: "POST /checkout"}},
			{Message: &sequence.Message{From: "api", To: "api", Label: "validate cart"}},
			{Message: &sequence.Message{From: "api", To: "web", Label: "201 Created", Style: "dashed"}}},
	})
	if err != nil {
		t.Fatal(err)
	}
	o := Of(sc)
	var got []string
	for _, e := range o.Edges {
		got = append(got, e.From+" -> "+e.To+": "+e.Label)
	}
	want := []string{"Browser -> API: POST /checkout", "API -> API: validate cart", "API -> Browser: 201 Created"}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("messages\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if len(o.Notes) > 0 || len(o.Nodes) != 2 {
		t.Errorf("notes %q, %d participants; want no notes and 2 participants", o.Notes, len(o.Nodes))
	}
}
