package plan

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/excalibot/excalibot/tools"
)

// The sequences of TestTokensPerDiagram: the Mermaid corpus's sequence diagrams in each protocol.

// seqInput is a sequence of the Mermaid corpus (internal/corpus/testdata/mermaid/*-seq-*.mmd)
// as far as a plan carries it: its participants and messages (notes and blocks left out).
type seqInput struct {
	name   string
	actors []seqActor
	msgs   []seqMsg
}

type seqActor struct{ id, label string }

type seqMsg struct {
	from, to, text string
	reply          bool
}

var (
	seqParticipant = regexp.MustCompile(`^(?:participant|actor)\s+(\S+)(?:\s+as\s+(.+))?$`)
	seqMessageLine = regexp.MustCompile(`^([^-:]+?)\s*(-->>|->>|-->|->|--x|-x|--\)|-\))[+-]?\s*([^:]+?)\s*:(.*)$`)
	mermaidBreak   = regexp.MustCompile(`(?i)<br\s*/?>`)
)

func loadSequences(t *testing.T) []seqInput {
	t.Helper()
	files, err := filepath.Glob("../../internal/corpus/testdata/mermaid/*-seq-*.mmd")
	if err != nil || len(files) == 0 {
		t.Fatalf("no sequences: %v", err)
	}
	var out []seqInput
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		in := seqInput{name: strings.TrimSuffix(filepath.Base(f), ".mmd")}
		known := map[string]bool{}
		actor := func(id, label string) {
			if !known[id] {
				known[id] = true
				in.actors = append(in.actors, seqActor{id, label})
			}
		}
		for _, line := range strings.Split(string(b), "\n") {
			line = strings.TrimSpace(line)
			if m := seqParticipant.FindStringSubmatch(line); m != nil {
				actor(m[1], strings.TrimSpace(mermaidBreak.ReplaceAllString(cmpOr(m[2], m[1]), "\n")))
				continue
			}
			if m := seqMessageLine.FindStringSubmatch(line); m != nil && !strings.HasPrefix(line, "Note") {
				from, to := strings.TrimSpace(m[1]), strings.TrimSpace(m[3])
				actor(from, from)
				actor(to, to)
				text := strings.TrimSpace(mermaidBreak.ReplaceAllString(strings.TrimSpace(m[4]), "\n"))
				if text == "" {
					continue // a plan's message says something
				}
				in.msgs = append(in.msgs, seqMsg{from, to, text, strings.HasPrefix(m[2], "--")})
			}
		}
		out = append(out, in)
	}
	return out
}

func cmpOr(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

// seqMermaid is the yardstick: the participants as declared and the messages.
func seqMermaid(in seqInput) string {
	var b strings.Builder
	b.WriteString("sequenceDiagram\n")
	for _, a := range in.actors {
		if a.label != a.id {
			fmt.Fprintf(&b, "    participant %s as %s\n", a.id, strings.ReplaceAll(a.label, "\n", "<br/>"))
		} else {
			fmt.Fprintf(&b, "    participant %s\n", a.id)
		}
	}
	for _, m := range in.msgs {
		arrow := "->>"
		if m.reply {
			arrow = "-->>"
		}
		fmt.Fprintf(&b, "    %s%s%s: %s\n", m.from, arrow, m.to, strings.ReplaceAll(m.text, "\n", "<br/>"))
	}
	return b.String()
}

// seqNames names each participant by its label where it can, as for graph nodes.
func seqNames(in seqInput) map[string]string {
	g := corpusInput{}
	for _, a := range in.actors {
		g.g.Nodes = append(g.g.Nodes, struct{ ID, Label, Shape, Color, Group string }{ID: a.id, Label: a.label})
	}
	return shortNames(g)
}

func seqOldPlan(in seqInput) obj {
	var nodes, msgs []obj
	for _, a := range in.actors {
		nodes = append(nodes, obj{{"id", a.id}, {"label", a.label}})
	}
	for _, m := range in.msgs {
		msgs = append(msgs, add(obj{{"from", m.from}, {"to", m.to}, {"label", m.text}}, "reply", true, m.reply))
	}
	summary := fmt.Sprintf("Drew a sequence of %d messages between %d participants.", len(in.msgs), len(in.actors))
	return obj{{"kind", "sequence"}, {"nodes", nodes}, {"edges", []any{}}, {"summary", summary}, {"messages", msgs}}
}

func seqShort(in seqInput) (actors []any, msgs []string) {
	names := seqNames(in)
	for _, a := range in.actors {
		if names[a.id] == a.label {
			actors = append(actors, a.label)
		} else {
			actors = append(actors, obj{{"label", a.label}, {"id", a.id}})
		}
	}
	for _, m := range in.msgs {
		arrow := "->"
		if m.reply {
			arrow = "-->"
		}
		msgs = append(msgs, names[m.from]+" "+arrow+" "+names[m.to]+": "+m.text)
	}
	return actors, msgs
}

func seqNewPlan(in seqInput) obj {
	actors, msgs := seqShort(in)
	return obj{{"kind", "sequence"}, {"direction", "LR"}, {"title", ""}, {"groups", []any{}}, {"nodes", actors}, {"edges", []any{}}, {"messages", msgs}}
}

// seqOldArgs and seqNewArgs are create_sequence's arguments: actors only where a label differs
// from the id (the tool takes the others from the messages).
func seqOldArgs(in seqInput) obj {
	var actors, msgs []obj
	aliased := false
	for _, a := range in.actors {
		actors = append(actors, obj{{"id", a.id}, {"label", a.label}})
		aliased = aliased || a.id != a.label
	}
	for _, m := range in.msgs {
		msgs = append(msgs, add(obj{{"from", m.from}, {"to", m.to}, {"label", m.text}}, "return", true, m.reply))
	}
	return append(add(obj{}, "actors", actors, aliased), field{"messages", msgs})
}

func seqNewArgs(in seqInput) obj {
	actors, msgs := seqShort(in)
	aliased := false
	for _, a := range in.actors {
		aliased = aliased || a.id != a.label
	}
	return append(add(obj{}, "actors", actors, aliased), field{"messages", msgs})
}

// checkSameSequence reads the short plan back and checks that it sends create_sequence the same
// messages, by the participants' labels, in order.
func checkSameSequence(t *testing.T, in seqInput, src string) {
	t.Helper()
	cp, probs := Read(src, IndexScene("scene: empty"), tools.Limits{MaxBatch: 1000, MaxLabel: 1000})
	if len(probs) > 0 {
		t.Errorf("%s: the short plan is refused: %v", in.name, probs)
		return
	}
	calls := Expand(cp, IndexScene("scene: empty"))
	var args struct {
		Actors   []struct{ ID, Label string }
		Messages []struct {
			From, To, Label string
			Return          bool
		}
	}
	if len(calls) != 1 || json.Unmarshal(calls[0].Args, &args) != nil {
		t.Fatalf("%s: expanded into %v", in.name, calls)
	}
	label := map[string]string{}
	for _, a := range args.Actors {
		label[a.ID] = a.Label
	}
	want := map[string]string{}
	for _, a := range in.actors {
		want[a.id] = a.label
	}
	if len(args.Messages) != len(in.msgs) {
		t.Errorf("%s: %d messages, want %d", in.name, len(args.Messages), len(in.msgs))
		return
	}
	for i, m := range args.Messages {
		w := in.msgs[i]
		got := fmt.Sprintf("%s -> %s: %s %v", label[m.From], label[m.To], m.Label, m.Return)
		if exp := fmt.Sprintf("%s -> %s: %s %v", want[w.from], want[w.to], w.text, w.reply); got != exp {
			t.Errorf("%s: message %d is %q, want %q", in.name, i, got, exp)
			return
		}
	}
}
