package corpus

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/excalibot/excalibot/diagram/measure"
	"github.com/excalibot/excalibot/diagram/mermaid"
	"github.com/excalibot/excalibot/render"
	"github.com/excalibot/excalibot/scene"
	"github.com/excalibot/excalibot/tools"
)

var (
	update = flag.Bool("update", false, "rewrite testdata/report.md with this run's measurements")
	pngDir = flag.String("corpus.png", "", "also render every converted input to DIR/NAME.png, to look at")
)

// displayWidth is the width a chat client shows a picture at on a large screen; a phone shows it
// at about a quarter of that, so text smaller than about 9 px here is unreadable there.
const displayWidth = 1600

// input is one corpus entry: a Mermaid block (testdata/mermaid/NAME.mmd) or a list of graph-tool
// calls (testdata/graph/NAME.json).
type input struct {
	name  string
	src   string // Mermaid text
	calls []call // graph-tool calls, in order
}

type call struct {
	Tool string          `json:"tool"`
	Args json.RawMessage `json:"args"`
}

// graphFile is a graph input: what it models, and the calls a model would make to draw it.
type graphFile struct {
	Models string `json:"models"`
	Calls  []call `json:"calls"`
}

func (in input) isGraph() bool { return in.calls != nil }

// kind is the diagram kind written in the name (LANG-KIND-…): flow, seq, class, state, er, graph.
func (in input) kind() string {
	if in.isGraph() {
		return "graph"
	}
	parts := strings.SplitN(in.name, "-", 3)
	if len(parts) < 3 {
		return "?"
	}
	return parts[1]
}

func loadInputs(t *testing.T) []input {
	t.Helper()
	var out []input
	mmd, _ := filepath.Glob("testdata/mermaid/*.mmd")
	for _, f := range mmd {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, input{name: strings.TrimSuffix(filepath.Base(f), ".mmd"), src: string(b)})
	}
	graphs, _ := filepath.Glob("testdata/graph/*.json")
	for _, f := range graphs {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		var g graphFile
		if err := json.Unmarshal(b, &g); err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		if g.Models == "" || len(g.Calls) == 0 {
			t.Fatalf("%s: want \"models\" (what it is modelled on) and at least one call", f)
		}
		out = append(out, input{name: strings.TrimSuffix(filepath.Base(f), ".json"), calls: g.Calls})
	}
	return out
}

// result is what one input became.
type result struct {
	in  input
	err string // the conversion or a tool call refused it

	// ref are the node and edge counts of the source (Mermaid's own renderer's drawing of it,
	// or the nodes and edges the calls give); -1 when not known.
	refNodes, refEdges int
	m                  measure.Report
	check              render.CheckReport
	moved              int // nodes a follow-up call moved; -1 without follow-up
	fixes              []string
	said               string // what the graph tools answered, every call's text
}

// TestCorpus converts every input the way the program does (Mermaid through the renderer's
// conversion and mermaid.Import, graph inputs through the tool set), measures it, runs Excalidraw's
// restore() check on it, and compares the report with testdata/report.md.
func TestCorpus(t *testing.T) {
	inputs := loadInputs(t)
	if len(inputs) < 40 {
		t.Fatalf("the corpus has %d inputs, want at least 40", len(inputs))
	}
	checkSources(t, inputs)
	refs := loadReference(t)

	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	r, err := render.New(ctx, render.Config{ChromePath: os.Getenv("CHROME"), Tabs: 1, PracticeRenders: -1}, slog.New(slog.DiscardHandler))
	if errors.Is(err, render.ErrNoChrome) {
		t.Skipf("skipping: needs Chromium: %v", err)
	}
	if err != nil {
		t.Fatalf("start the renderer: %v", err)
	}
	defer func() {
		if err := r.Close(); err != nil {
			t.Errorf("close the renderer: %v", err)
		}
	}()
	if *pngDir != "" {
		if err := os.MkdirAll(*pngDir, 0o755); err != nil {
			t.Fatal(err)
		}
	}

	var results []result
	for _, in := range inputs {
		res := result{in: in, refNodes: -1, refEdges: -1, moved: -1}
		if ref, ok := refs[in.name]; ok {
			res.refNodes, res.refEdges = ref.nodes, ref.edges
		}
		var sc *scene.Scene
		if in.isGraph() {
			sc, res.moved, err = drawGraph(ctx, in, &res)
		} else {
			sc, err = drawMermaid(ctx, r, in, &res)
		}
		if err != nil {
			res.err = oneLine(err.Error())
			results = append(results, res)
			continue
		}
		res.m = measure.Measure(sc, measure.Options{DisplayWidth: displayWidth, Padding: render.DefaultPadding})
		doc, err := sc.Encode()
		if err != nil {
			t.Fatalf("%s: encode: %v", in.name, err)
		}
		if res.check, err = r.Check(ctx, doc); err != nil {
			t.Fatalf("%s: Excalidraw's check: %v", in.name, err)
		}
		if *pngDir != "" {
			pic, err := r.PNG(ctx, doc, render.Options{NoEmbedScene: true})
			if err == nil {
				err = os.WriteFile(filepath.Join(*pngDir, in.name+".png"), pic, 0o644)
			}
			if err != nil {
				t.Errorf("%s: picture: %v", in.name, err)
			}
		}
		results = append(results, res)
	}

	got := formatReport(results)
	const golden = "testdata/report.md"
	if *update {
		if err := os.WriteFile(golden, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatalf("%v (run with -update to write it)", err)
	}
	if d := diffLines(string(want), got); d != "" {
		t.Errorf("the measurements changed (if for the better, refresh with go test ./internal/corpus -update):\n%s", d)
	}
}

// drawMermaid converts in like create_from_mermaid and the bot's Mermaid messages do.
func drawMermaid(ctx context.Context, r *render.Renderer, in input, res *result) (*scene.Scene, error) {
	conv, err := r.Mermaid(ctx, in.src)
	if err != nil {
		return nil, err
	}
	res.fixes = conv.Fixes
	d := mermaid.Diagram{Elements: conv.Elements, Files: conv.Files, Type: conv.Type, Image: conv.Image, Fixes: conv.Fixes}
	sc, _, err := mermaid.Import(scene.New(), d, false)
	if err != nil {
		return nil, fmt.Errorf("import: %w", err)
	}
	if conv.Image {
		return nil, fmt.Errorf("came as a picture (%s)", conv.Type)
	}
	return sc, nil
}

// drawGraph makes in's calls on a fresh tool set. With more than one call, moved counts the
// nodes the last call moved.
func drawGraph(ctx context.Context, in input, res *result) (*scene.Scene, int, error) {
	set := tools.New(scene.New(), tools.DefaultLimits())
	moved := -1
	nodes, edges := 0, 0
	for i, c := range in.calls {
		var args struct {
			Nodes []json.RawMessage `json:"nodes"`
			Edges []json.RawMessage `json:"edges"`
		}
		_ = json.Unmarshal(c.Args, &args)
		nodes += len(args.Nodes)
		edges += len(args.Edges)
		before := set.Scene().Clone()
		out := set.Call(ctx, c.Tool, c.Args)
		if out.IsError {
			return nil, 0, fmt.Errorf("call %d (%s) refused: %s", i+1, c.Tool, out.Text)
		}
		res.said += out.Text + "\n"
		if i > 0 && i == len(in.calls)-1 {
			moved = measure.Moved(before, set.Scene(), 1)
		}
	}
	res.refNodes, res.refEdges = nodes, edges
	return set.Scene(), moved, nil
}

func oneLine(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	if r := []rune(s); len(r) > 160 {
		s = string(r[:159]) + "…"
	}
	return s
}
