package render

import (
	"fmt"
	"regexp"
	"strings"
)

// Relations that belong to one kind of Mermaid diagram, written in another: `||--o{` in a
// flowchart, `-->` in an erDiagram. Mermaid only says it found an unexpected token; the error
// names the relation and the kind it belongs to.

type diagramKind struct {
	name    string // as the error names it
	keyword string // the keyword that starts it
	arrows  string // how this kind writes a relation, for the hint
}

var (
	kindFlowchart = diagramKind{"a flowchart", "flowchart", "a flowchart arrow is written `A --> B` (-->, ---, -.->, ==>; a label as `A -->|text| B`)"}
	kindER        = diagramKind{"an erDiagram", "erDiagram", "an erDiagram relation is written with both cardinalities, e.g. `CUSTOMER ||--o{ ORDER : places`"}
	kindClass     = diagramKind{"a classDiagram", "classDiagram", "a classDiagram relation is written `Animal <|-- Duck` (<|--, *--, o--, -->, ..>, ..|>)"}
	kindSequence  = diagramKind{"a sequenceDiagram", "sequenceDiagram", "a message is written `Alice->>Bob: text` (->>, -->>, ->, -->, -x, -))"}
	kindState     = diagramKind{"a stateDiagram", "stateDiagram-v2", "a transition is written `Idle --> Running : start`"}
)

// foreignRelations are the relations worth naming, each with the kinds it belongs to. The
// patterns are tried in order; the first found in the line counts.
var foreignRelations = []struct {
	re    *regexp.Regexp
	kinds []diagramKind
}{
	{regexp.MustCompile(`[|}][|o]\s*(?:--|\.\.)\s*[|o][|{]`), []diagramKind{kindER}},
	{regexp.MustCompile(`<\|--|--\|>|<\|\.\.|\.\.\|>|\*--|--\*`), []diagramKind{kindClass}},
	{regexp.MustCompile(`<<-->>|<<->>|--?>>`), []diagramKind{kindSequence}},
	{regexp.MustCompile(`==>|-\.->|-\.-`), []diagramKind{kindFlowchart}},
	{regexp.MustCompile(`\.\.>`), []diagramKind{kindClass}},
	{regexp.MustCompile(`-->|->|---`), []diagramKind{kindFlowchart, kindSequence, kindClass, kindState}},
}

// kindOf returns the kind a diagram keyword starts, if it is one of those above.
func kindOf(keyword string) (diagramKind, bool) {
	switch k := strings.TrimSuffix(keyword, ";"); {
	case k == "flowchart" || k == "graph":
		return kindFlowchart, true
	case k == "erDiagram":
		return kindER, true
	case k == "classDiagram" || k == "classDiagram-v2":
		return kindClass, true
	case k == "sequenceDiagram":
		return kindSequence, true
	case k == "stateDiagram" || k == "stateDiagram-v2":
		return kindState, true
	}
	return diagramKind{}, false
}

// foreignRelation says what is wrong when lineText, which Mermaid refused in a diagram started by
// keyword, holds a relation of another kind of diagram: the message and the hint; ok is false when
// it holds none.
func foreignRelation(keyword, lineText string) (msg, hint string, ok bool) {
	here, known := kindOf(keyword)
	if !known {
		return "", "", false
	}
	for _, r := range foreignRelations {
		tok := r.re.FindString(lineText)
		if tok == "" {
			continue
		}
		for _, k := range r.kinds {
			if k == here {
				return "", "", false // a relation this kind has: the mistake is elsewhere
			}
		}
		names := make([]string, len(r.kinds))
		for i, k := range r.kinds {
			names[i] = strings.TrimPrefix(strings.TrimPrefix(k.name, "an "), "a ")
		}
		msg = fmt.Sprintf("`%s` is a relation of %s, not of %s", tok, orList(names), strings.TrimPrefix(strings.TrimPrefix(here.name, "an "), "a "))
		hint = fmt.Sprintf("%s; to draw %s, start the diagram with `%s`", here.arrows, r.kinds[0].name, r.kinds[0].keyword)
		return msg, hint, true
	}
	return "", "", false
}

// orList joins names as "a", "a or b", "a, b or c".
func orList(names []string) string {
	if len(names) <= 1 {
		return strings.Join(names, "")
	}
	return strings.Join(names[:len(names)-1], ", ") + " or " + names[len(names)-1]
}
