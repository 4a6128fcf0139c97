package plan

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/tiktoken-go/tokenizer"

	"github.com/excalibot/excalibot/scene"
	"github.com/excalibot/excalibot/tools"
)

// The figures of docs/agent.md, "Tokens per diagram": what a model must write to draw each
// architecture of the layout corpus (internal/corpus/testdata/graph, create_graph calls of real
// diagrams), in every protocol, counted with a real BPE (cl100k_base, offline), against the
// Mermaid text of the same diagram. testdata/tokens.golden.md holds the table; go test
// ./agent/plan -update rewrites it.

// corpusGraph is the first create_graph call of a corpus input, as the tools read it.
type corpusGraph struct {
	Direction string `json:"direction"`
	Nodes     []struct {
		ID, Label, Shape, Color, Group string
	} `json:"nodes"`
	Edges []struct {
		From, To, Label, Style, Arrow string
	} `json:"edges"`
	Groups []struct {
		ID, Title, Parent, Style string
	} `json:"groups"`
}

type corpusInput struct {
	name string
	args json.RawMessage // the create_graph arguments as written
	g    corpusGraph
}

func loadCorpus(t *testing.T) []corpusInput {
	t.Helper()
	files, err := filepath.Glob("../../internal/corpus/testdata/graph/*.json")
	if err != nil || len(files) == 0 {
		t.Fatalf("no corpus inputs: %v", err)
	}
	var out []corpusInput
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		var file struct {
			Calls []struct {
				Tool string          `json:"tool"`
				Args json.RawMessage `json:"args"`
			} `json:"calls"`
		}
		if err := json.Unmarshal(b, &file); err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		in := corpusInput{name: strings.TrimSuffix(filepath.Base(f), ".json"), args: file.Calls[0].Args}
		if file.Calls[0].Tool != tools.CreateGraph {
			t.Fatalf("%s: the first call is %s, not create_graph", f, file.Calls[0].Tool)
		}
		if err := json.Unmarshal(in.args, &in.g); err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		for i, n := range in.g.Nodes {
			if n.Label == "" {
				in.g.Nodes[i].Label = n.ID
			}
		}
		out = append(out, in)
	}
	return out
}

// field and obj write JSON objects with their keys in a given order (the order the grammar
// makes a model write them) and without HTML escapes ("->" stays "->", as a model writes it).
type field struct {
	k string
	v any
}

type obj []field

func (o obj) MarshalJSON() ([]byte, error) {
	var b bytes.Buffer
	b.WriteByte('{')
	for i, f := range o {
		if i > 0 {
			b.WriteByte(',')
		}
		k, _ := marshal(f.k, "")
		v, err := marshal(f.v, "")
		if err != nil {
			return nil, err
		}
		b.Write(k)
		b.WriteByte(':')
		b.Write(v)
	}
	b.WriteByte('}')
	return b.Bytes(), nil
}

// marshal writes v as a model would: compact, or indented by indent.
func marshal(v any, indent string) ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	out := bytes.TrimSpace(b.Bytes())
	if indent == "" {
		return out, nil
	}
	var ind bytes.Buffer
	if err := json.Indent(&ind, out, "", indent); err != nil {
		return nil, err
	}
	return ind.Bytes(), nil
}

func add(o obj, k string, v any, keep bool) obj {
	if keep {
		return append(o, field{k, v})
	}
	return o
}

// oldPlan is the diagram as the plan schema before the short form made a model write it: the
// required kind, nodes, edges and summary first, then the optional direction and groups (the
// grammar's order); nodes and edges as objects. It could not say a group's parent or an arrow's
// heads, so those are left out. The summary is the sentence the program writes itself.
func oldPlan(in corpusInput) obj {
	var nodes, edges, groups []obj
	for _, n := range in.g.Nodes {
		o := obj{{"id", n.ID}, {"label", n.Label}}
		o = add(o, "shape", n.Shape, n.Shape != "")
		o = add(o, "color", n.Color, n.Color != "")
		nodes = append(nodes, add(o, "group", n.Group, n.Group != ""))
	}
	for _, e := range in.g.Edges {
		o := obj{{"from", e.From}, {"to", e.To}}
		o = add(o, "label", e.Label, e.Label != "")
		edges = append(edges, add(o, "style", e.Style, e.Style != "" && e.Style != "solid"))
	}
	for _, g := range in.g.Groups {
		groups = append(groups, obj{{"id", g.ID}, {"title", g.Title}})
	}
	var labels []string
	for _, n := range in.g.Nodes[:min(3, len(in.g.Nodes))] {
		labels = append(labels, strings.Join(strings.Fields(n.Label), " "))
	}
	summary := fmt.Sprintf("Drew %s; %d boxes, %d arrows.", strings.Join(labels, ", "), len(in.g.Nodes), len(in.g.Edges))
	p := obj{{"kind", kindOfInput(in)}, {"nodes", nodes}, {"edges", edges}, {"summary", summary}}
	p = add(p, "direction", planDirection(in), true)
	return add(p, "groups", groups, len(groups) > 0)
}

func kindOfInput(in corpusInput) string {
	if in.g.Direction == "mindmap" {
		return "mindmap"
	}
	return "architecture"
}

func planDirection(in corpusInput) string {
	if in.g.Direction == "LR" {
		return "LR"
	}
	return "TB"
}

// maxNameRunes is the longest label a short plan names a node by; a longer one gets an id,
// which edges use instead (fewer tokens than the label each time).
const maxNameRunes = 24

// shortNames decides how the short form names each node: by its label, where the label is
// unique, on one line, short, and free of what an edge's string cannot hold; else by its id.
func shortNames(in corpusInput) map[string]string {
	count := map[string]int{}
	for _, n := range in.g.Nodes {
		count[norm(n.Label)]++
	}
	ids := map[string]bool{}
	for _, n := range in.g.Nodes {
		ids[norm(n.ID)] = true
	}
	names := map[string]string{}
	for _, n := range in.g.Nodes {
		l := n.Label
		_, arrowErr := tools.ParseEdge("x "+l+" y", nil)
		byLabel := count[norm(l)] == 1 && !strings.ContainsAny(l, "\"\\\n") && len([]rune(l)) <= maxNameRunes &&
			arrowErr != nil && !strings.Contains(l, ": ") && (!ids[norm(l)] || norm(l) == norm(n.ID))
		if byLabel {
			names[n.ID] = l
		} else {
			names[n.ID] = n.ID
		}
	}
	return names
}

// shortNode is a node in the short form: its label alone, or an object.
func shortNode(n struct{ ID, Label, Shape, Color, Group string }, names map[string]string) any {
	if names[n.ID] == n.Label && n.Shape == "" && n.Color == "" {
		return n.Label
	}
	o := obj{{"label", n.Label}}
	o = add(o, "id", n.ID, names[n.ID] != n.Label)
	o = add(o, "shape", n.Shape, n.Shape != "")
	return add(o, "color", n.Color, n.Color != "")
}

var shortArrows = map[[2]string]string{
	{"solid", "end"}: "->", {"solid", "both"}: "<->", {"solid", "none"}: "---",
	{"dashed", "end"}: "-.->", {"dashed", "both"}: "<-.->", {"dashed", "none"}: "-.-",
	{"dotted", "end"}: "..>", {"dotted", "both"}: "<..>", {"dotted", "none"}: "...",
}

// shortGraph is the diagram in the short form shared by the plan and the graph tools: groups
// holding their nodes, the other nodes, the edges as strings.
func shortGraph(in corpusInput) (groups []obj, nodes []any, edges []string) {
	names := shortNames(in)
	members := map[string][]any{}
	titles := map[string]int{}
	for _, g := range in.g.Groups {
		titles[norm(g.Title)]++
	}
	nameOf := map[string]string{} // a group is named by its title, or by its id when the title is not unique
	for _, g := range in.g.Groups {
		nameOf[g.ID] = g.Title
		if titles[norm(g.Title)] > 1 {
			nameOf[g.ID] = g.ID
		}
	}
	for _, n := range in.g.Nodes {
		if n.Group != "" {
			members[n.Group] = append(members[n.Group], shortNode(n, names))
		} else {
			nodes = append(nodes, shortNode(n, names))
		}
	}
	for _, g := range in.g.Groups {
		o := obj{{"title", g.Title}, {"nodes", orEmpty(members[g.ID])}}
		o = add(o, "parent", nameOf[g.Parent], g.Parent != "")
		groups = append(groups, add(o, "id", g.ID, nameOf[g.ID] == g.ID))
	}
	for _, e := range in.g.Edges {
		style, head := e.Style, e.Arrow
		if style == "" {
			style = "solid"
		}
		if head == "" {
			head = "end"
		}
		s := names[e.From] + " " + shortArrows[[2]string{style, head}] + " " + names[e.To]
		if e.Label != "" {
			s += ": " + strings.Join(strings.Fields(e.Label), " ")
		}
		edges = append(edges, s)
	}
	return orEmpty(groups), orEmpty(nodes), orEmpty(edges)
}

func orEmpty[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}

// newPlan is the diagram as the plan schema now makes a model write it.
func newPlan(in corpusInput) obj {
	groups, nodes, edges := shortGraph(in)
	return obj{{"kind", kindOfInput(in)}, {"direction", planDirection(in)}, {"title", ""}, {"groups", groups}, {"nodes", nodes}, {"edges", edges}}
}

// newArgs is the diagram as create_graph's arguments in the short form.
func newArgs(in corpusInput) obj {
	groups, nodes, edges := shortGraph(in)
	o := add(obj{}, "direction", in.g.Direction, in.g.Direction != "")
	o = add(o, "groups", groups, len(groups) > 0)
	return append(o, field{"nodes", nodes}, field{"edges", edges})
}

// mermaidOf is the diagram as a Mermaid flowchart, the yardstick: ids as the corpus gives them,
// subgraphs for groups (nested by parent), shapes, a style line per coloured node, Mermaid's
// arrows for the line styles and heads.
func mermaidOf(in corpusInput) string {
	var b strings.Builder
	dir := "TD"
	if in.g.Direction == "LR" {
		dir = "LR"
	}
	fmt.Fprintf(&b, "flowchart %s\n", dir)
	text := func(s string) string {
		s = strings.ReplaceAll(s, "\n", "<br>")
		if strings.ContainsAny(s, `()[]{}"<>|#;:`) || strings.Contains(s, "<br>") {
			return `"` + strings.ReplaceAll(s, `"`, "#quot;") + `"`
		}
		return s
	}
	node := func(n struct{ ID, Label, Shape, Color, Group string }) string {
		switch n.Shape {
		case "ellipse":
			return n.ID + "([" + text(n.Label) + "])"
		case "diamond":
			return n.ID + "{" + text(n.Label) + "}"
		}
		return n.ID + "[" + text(n.Label) + "]"
	}
	var write func(group, indent string)
	write = func(group, indent string) {
		for _, g := range in.g.Groups {
			if g.Parent == group {
				fmt.Fprintf(&b, "%ssubgraph %s[%s]\n", indent, g.ID, text(g.Title))
				write(g.ID, indent+"    ")
				fmt.Fprintf(&b, "%send\n", indent)
			}
		}
		for _, n := range in.g.Nodes {
			if n.Group == group {
				fmt.Fprintf(&b, "%s%s\n", indent, node(n))
			}
		}
	}
	write("", "    ")
	arrows := map[[2]string]string{
		{"solid", "end"}: "-->", {"solid", "both"}: "<-->", {"solid", "none"}: "---",
		{"dashed", "end"}: "-.->", {"dashed", "both"}: "<-.->", {"dashed", "none"}: "-.-",
		{"dotted", "end"}: "-.->", {"dotted", "both"}: "<-.->", {"dotted", "none"}: "-.-",
	}
	for _, e := range in.g.Edges {
		style, head := e.Style, e.Arrow
		if style == "" {
			style = "solid"
		}
		if head == "" {
			head = "end"
		}
		a := arrows[[2]string{style, head}]
		if e.Label != "" {
			a += "|" + text(e.Label) + "|"
		}
		fmt.Fprintf(&b, "    %s %s %s\n", e.From, a, e.To)
	}
	for _, n := range in.g.Nodes {
		if n.Color != "" {
			fmt.Fprintf(&b, "    style %s fill:%s\n", n.ID, n.Color)
		}
	}
	return b.String()
}

// tokenCounts are one diagram's output tokens per protocol.
type tokenCounts struct {
	name                     string
	nodes, edges             int
	mermaid                  int
	oldPlan, oldPlanIndented int
	oldArgs                  int
	newPlan, newPlanIndented int
	newArgs                  int
}

func TestTokensPerDiagram(t *testing.T) {
	enc, err := tokenizer.Get(tokenizer.Cl100kBase)
	if err != nil {
		t.Fatal(err)
	}
	count := func(s string) int {
		ids, _, err := enc.Encode(s)
		if err != nil {
			t.Fatal(err)
		}
		return len(ids)
	}
	js := func(v any, indent string) string {
		b, err := marshal(v, indent)
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	var rows []tokenCounts
	for _, in := range loadCorpus(t) {
		var args bytes.Buffer
		if err := json.Compact(&args, in.args); err != nil {
			t.Fatal(err)
		}
		np := js(newPlan(in), "")
		if errs := validPlan(t, np); len(errs) > 0 {
			t.Errorf("%s: the short plan does not fit the schema: %v", in.name, errs[:min(3, len(errs))])
		}
		checkSameGraph(t, in, np)
		// The short plan and the short create_graph arguments draw the same scene.
		short, err := marshal(newArgs(in), "")
		if err != nil {
			t.Fatal(err)
		}
		cp, _ := Read(np, IndexScene("scene: empty"), tools.Limits{MaxBatch: 1000, MaxLabel: 1000})
		if a, b := drawn(t, in.name, Expand(cp, IndexScene("scene: empty"))), drawn(t, in.name, []Call{{tools.CreateGraph, short}}); !slices.Equal(a, b) {
			t.Errorf("%s: the plan and create_graph's short arguments draw different scenes:\n%v\n%v", in.name, a, b)
		}
		rows = append(rows, tokenCounts{
			name: in.name, nodes: len(in.g.Nodes), edges: len(in.g.Edges),
			mermaid: count(mermaidOf(in)),
			oldPlan: count(js(oldPlan(in), "")), oldPlanIndented: count(js(oldPlan(in), "  ")),
			oldArgs: count(unescapeHTML(args.String())),
			newPlan: count(np), newPlanIndented: count(js(newPlan(in), "  ")),
			newArgs: count(js(newArgs(in), "")),
		})
	}
	var seqs []tokenCounts
	for _, in := range loadSequences(t) {
		np := js(seqNewPlan(in), "")
		if errs := validPlan(t, np); len(errs) > 0 {
			t.Errorf("%s: the short plan does not fit the schema: %v", in.name, errs[:min(3, len(errs))])
		}
		checkSameSequence(t, in, np)
		seqs = append(seqs, tokenCounts{
			name: in.name, nodes: len(in.actors), edges: len(in.msgs),
			mermaid: count(seqMermaid(in)),
			oldPlan: count(js(seqOldPlan(in), "")), oldPlanIndented: count(js(seqOldPlan(in), "  ")),
			oldArgs: count(js(seqOldArgs(in), "")),
			newPlan: count(np), newPlanIndented: count(js(seqNewPlan(in), "  ")),
			newArgs: count(js(seqNewArgs(in), "")),
		})
	}
	golden(t, "testdata/tokens.golden.md", []byte(tokenTable(rows, seqs)))
	for _, set := range []struct {
		what string
		rows []tokenCounts
	}{{"graphs", rows}, {"sequences", seqs}} {
		all := sum(set.rows)
		if ratio := float64(all.newPlan) / float64(all.mermaid); ratio > 1.2 {
			t.Errorf("a plan of the %s takes %.2f× the tokens of Mermaid; the target is 1.2×", set.what, ratio)
		}
		if ratio := float64(all.newArgs) / float64(all.mermaid); ratio > 1.2 {
			t.Errorf("the tool arguments of the %s take %.2f× the tokens of Mermaid; the target is 1.2×", set.what, ratio)
		}
	}
}

func sum(rows []tokenCounts) tokenCounts {
	var t tokenCounts
	for _, r := range rows {
		t.nodes += r.nodes
		t.edges += r.edges
		t.mermaid += r.mermaid
		t.oldPlan += r.oldPlan
		t.oldPlanIndented += r.oldPlanIndented
		t.oldArgs += r.oldArgs
		t.newPlan += r.newPlan
		t.newPlanIndented += r.newPlanIndented
		t.newArgs += r.newArgs
	}
	return t
}

// unescapeHTML undoes the escapes json.Compact keeps from the file (none are there today).
func unescapeHTML(s string) string {
	return strings.NewReplacer(`\u003e`, ">", `\u003c`, "<", `\u0026`, "&").Replace(s)
}

func tokenTable(graphs, seqs []tokenCounts) string {
	var b strings.Builder
	b.WriteString("# Output tokens per diagram\n\n")
	b.WriteString("What a model writes to draw each diagram, counted with cl100k_base (github.com/tiktoken-go/tokenizer),\n")
	b.WriteString("against the Mermaid of the same diagram. Graphs: the create_graph calls of internal/corpus/testdata/graph;\n")
	b.WriteString("sequences: the participants and messages of internal/corpus/testdata/mermaid/*-seq-*.mmd (their notes\n")
	b.WriteString("and blocks, which a plan does not carry, left out of the Mermaid too). Before: the plan schema of\n")
	b.WriteString("objects with a summary, and the tool's arguments as objects. After: the short form. Indented: two\n")
	b.WriteString("spaces, which Ollama's grammar allows. Tool: create_graph for graphs, create_sequence for sequences.\n")
	b.WriteString("Written by TestTokensPerDiagram (go test ./agent/plan -run TestTokensPerDiagram -update).\n\n")
	b.WriteString("| diagram | nodes | edges | Mermaid | plan before | indented | tool before | plan after | indented | tool after |\n")
	b.WriteString("|---|---|---|---|---|---|---|---|---|---|\n")
	row := func(name string, r tokenCounts) {
		fmt.Fprintf(&b, "| %s | %d | %d | %d | %d | %d | %d | %d | %d | %d |\n", name, r.nodes, r.edges, r.mermaid,
			r.oldPlan, r.oldPlanIndented, r.oldArgs, r.newPlan, r.newPlanIndented, r.newArgs)
	}
	for _, set := range []struct {
		what string
		rows []tokenCounts
	}{{"graphs", graphs}, {"sequences", seqs}} {
		for _, r := range set.rows {
			row(r.name, r)
		}
		row(fmt.Sprintf("**all %d %s**", len(set.rows), set.what), sum(set.rows))
	}
	b.WriteString("\nAgainst Mermaid, all diagrams of a kind together (median and range of the diagrams):\n\n")
	b.WriteString("| kind | protocol | before | after |\n|---|---|---|---|\n")
	for _, set := range []struct {
		what string
		rows []tokenCounts
	}{{"graphs", graphs}, {"sequences", seqs}} {
		t := sum(set.rows)
		ratio := func(f func(tokenCounts) int) string {
			var rs []float64
			for _, r := range set.rows {
				rs = append(rs, float64(f(r))/float64(r.mermaid))
			}
			sort.Float64s(rs)
			return fmt.Sprintf("%.2f× (median %.2f×, %.2f–%.2f×)", float64(f(t))/float64(t.mermaid), rs[len(rs)/2], rs[0], rs[len(rs)-1])
		}
		fmt.Fprintf(&b, "| %s | plan, compact | %s | %s |\n", set.what, ratio(func(r tokenCounts) int { return r.oldPlan }), ratio(func(r tokenCounts) int { return r.newPlan }))
		fmt.Fprintf(&b, "| %s | plan, indented | %s | %s |\n", set.what, ratio(func(r tokenCounts) int { return r.oldPlanIndented }), ratio(func(r tokenCounts) int { return r.newPlanIndented }))
		fmt.Fprintf(&b, "| %s | tool arguments | %s | %s |\n", set.what, ratio(func(r tokenCounts) int { return r.oldArgs }), ratio(func(r tokenCounts) int { return r.newArgs }))
	}
	return b.String()
}

// checkSameGraph reads the short plan back (Read, Expand) and checks that it draws the corpus's
// diagram: the same nodes with their shapes, colours and groups (by title, nesting kept), the
// same edges with their labels, styles and heads.
func checkSameGraph(t *testing.T, in corpusInput, src string) {
	t.Helper()
	cp, probs := Read(src, IndexScene("scene: empty"), tools.Limits{MaxBatch: 1000, MaxLabel: 1000})
	if len(probs) > 0 {
		t.Errorf("%s: the short plan is refused: %v", in.name, probs)
		return
	}
	calls := Expand(cp, IndexScene("scene: empty"))
	if len(calls) != 1 || calls[0].Name != tools.CreateGraph {
		t.Errorf("%s: expanded into %d calls", in.name, len(calls))
		return
	}
	var got corpusGraph
	if err := json.Unmarshal(calls[0].Args, &got); err != nil {
		t.Fatal(err)
	}
	if a, b := describeGraph(in.g), describeGraph(got); !slices.Equal(a, b) {
		for i := range min(len(a), len(b)) {
			if a[i] != b[i] {
				t.Errorf("%s: the plan draws another diagram; first difference:\n corpus %s\n plan   %s", in.name, a[i], b[i])
				return
			}
		}
		t.Errorf("%s: the plan draws %d parts, the corpus %d", in.name, len(b), len(a))
	}
}

// describeGraph lists a graph's parts by what a person sees: labels, not ids.
func describeGraph(g corpusGraph) []string {
	label, group := map[string]string{}, map[string]struct{ title, parent string }{}
	for _, n := range g.Nodes {
		label[n.ID] = n.Label
		if n.Label == "" {
			label[n.ID] = n.ID
		}
	}
	for _, gr := range g.Groups {
		group[gr.ID] = struct{ title, parent string }{gr.Title, gr.Parent}
	}
	path := func(id string) string {
		var p []string
		for ; id != ""; id = group[id].parent {
			p = append([]string{group[id].title}, p...)
		}
		return strings.Join(p, "/")
	}
	def := func(s, d string) string {
		if s == "" {
			return d
		}
		return s
	}
	var nodes, edges []string
	for _, n := range g.Nodes {
		nodes = append(nodes, fmt.Sprintf("node %q %s %s in %q", label[n.ID], def(n.Shape, "rectangle"), n.Color, path(n.Group)))
	}
	for _, e := range g.Edges {
		edges = append(edges, fmt.Sprintf("edge %q -> %q %q %s %s", label[e.From], label[e.To], strings.Join(strings.Fields(e.Label), " "),
			def(e.Style, "solid"), def(e.Arrow, "end")))
	}
	slices.Sort(nodes)
	slices.Sort(edges)
	return append(nodes, slices.Compact(edges)...) // an arrow given twice is drawn once
}

// drawn is what the tools draw for calls on an empty canvas, as get_scene shows it (all of it):
// each node's label and shape with its group's title, each arrow by its ends' labels with its
// label, style and heads.
func drawn(t *testing.T, name string, calls []Call) []string {
	t.Helper()
	set := tools.New(scene.New(), tools.Limits{MaxBatch: 1000, SceneBudget: 1 << 20})
	for _, c := range calls {
		if r := set.Call(t.Context(), c.Name, c.Args); r.IsError {
			t.Errorf("%s: %s refused %s", name, c.Name, r.Text)
			return nil
		}
	}
	ix := IndexScene(set.Call(t.Context(), tools.GetScene, nil).Text)
	var out []string
	for _, id := range ix.order {
		n := ix.nodes[id]
		out = append(out, fmt.Sprintf("node %q %s in %q", n.label, n.typ, ix.groups[n.group]))
	}
	for _, e := range ix.edges {
		out = append(out, fmt.Sprintf("edge %q -> %q %q %s %s", ix.nodes[e.from].label, ix.nodes[e.to].label, e.label, e.style, e.arrow))
	}
	slices.Sort(out)
	return slices.Compact(out) // the plan draws an arrow given twice once, the tool twice
}
