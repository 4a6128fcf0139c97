package tools

import (
	"errors"
	"strings"
)

// An edge written as one string, the short form a model writes in a plan and in the graph
// tools' arguments: "API -> DB", "API -> DB: reads". The arrow says the line: -> solid,
// -.-> dashed, ..> dotted, with < in front for a head at both ends (<-> <-.-> <..>) and ---,
// -.-, ... for none. The forms Mermaid writes are read too (-->, ==>, -->|label|), since models
// know them.

// EdgeText is an edge or a sequence message read from its short form.
type EdgeText struct {
	From, To, Label string
	Style           string // solid, dashed or dotted
	Arrow           string // end, both or none
	Reply           bool   // written -->, -->> or -.->: a sequence's dashed answer
}

// edgeArrow is one way of writing the line between the two ends.
type edgeArrow struct {
	tok          string
	style, arrow string
	reply        bool // in a sequence, a dashed answer
}

// edgeArrows are tried longest first at each position, so "-.->" is not read as "->". Every
// style goes with every head: -> <-> --- solid, -.-> <-.-> -.- dashed, ..> <..> ... dotted.
var edgeArrows = []edgeArrow{
	{"<-.->", "dashed", "both", true}, {"-->>", "solid", "end", true}, {"<-->", "solid", "both", false},
	{"-.->", "dashed", "end", true}, {"<..>", "dotted", "both", true}, {"<->", "solid", "both", false},
	{"..>", "dotted", "end", true}, {"-->", "solid", "end", true}, {"==>", "solid", "end", false},
	{"->>", "solid", "end", false}, {"---", "solid", "none", false}, {"-.-", "dashed", "none", false},
	{"...", "dotted", "none", false}, {"->", "solid", "end", false}, {"→", "solid", "end", false},
}

// EdgePattern is the pattern of an edge's short form in a JSON schema: two names and one of the
// taught arrows between spaces, an optional label after ": ". Ollama's grammar converter
// applies a pattern to the string as the JSON text writes it, escapes and all, so the pattern
// is written for that text: names hold no quote, backslash or control character, and a label
// may hold JSON's escapes (\" for a quote), so the grammar always writes a valid JSON string.
const EdgePattern = `^` + nameChars + `+ (->|<->|---|-\.->|<-\.->|-\.-|\.\.>|<\.\.>|\.\.\.) ` + nameChars + `+(: ` + labelChars + `+)?$`

// MessagePattern is a sequence message's short form: "A -> B: label", a reply "B --> A: label".
const MessagePattern = `^` + nameChars + `+ (->|-->) ` + nameChars + `+: ` + labelChars + `+$`

const (
	nameChars  = `[^"\\\x00-\x1F]`
	labelChars = `([^"\\\x00-\x1F]|\\["\\/bfnrt])`
)

// errNoArrow says how to write an edge, for a string that has no arrow.
var errNoArrow = errors.New(`write an edge as "A -> B" or "A -> B: label" (-.-> dashed, ..> dotted, <-> both ways, --- no arrow)`)

// ParseEdge reads an edge's short form. isNode, when not nil, tells whether a name is a node's
// id or label; it decides where the second name ends when the text after the arrow holds ": "
// more than once (a label "Step: 2" as the target). Without it the first ": " ends the name.
func ParseEdge(s string, isNode func(string) bool) (EdgeText, error) {
	at, a := findArrow(s)
	if at < 0 {
		return EdgeText{}, errNoArrow
	}
	e := EdgeText{From: strings.TrimSpace(s[:at]), Style: a.style, Arrow: a.arrow, Reply: a.reply}
	rest := strings.TrimSpace(s[at+len(a.tok):])
	if strings.HasPrefix(rest, "|") { // Mermaid's A -->|label| B
		if end := strings.Index(rest[1:], "|"); end >= 0 {
			e.Label = strings.TrimSpace(rest[1 : 1+end])
			rest = strings.TrimSpace(rest[end+2:])
		}
	}
	e.To = rest
	if e.Label == "" {
		e.To, e.Label = splitLabel(rest, isNode)
	}
	if e.From == "" || e.To == "" {
		return EdgeText{}, errNoArrow
	}
	return e, nil
}

// findArrow finds the first arrow in s, the longest one at its position: first one with a space
// on each side, as the short form writes it (so "Loading..." or "a->b" in a name is no arrow),
// else one without ("A->B"; never "...", which names hold).
func findArrow(s string) (int, edgeArrow) {
	for i := 0; i < len(s); i++ {
		if s[i] != ' ' {
			continue
		}
		for _, a := range edgeArrows {
			if strings.HasPrefix(s[i+1:], a.tok+" ") {
				return i + 1, a
			}
		}
	}
	for i := 0; i < len(s); i++ {
		for _, a := range edgeArrows {
			if a.tok != "..." && strings.HasPrefix(s[i:], a.tok) {
				return i, a
			}
		}
	}
	return -1, edgeArrow{}
}

// maxNameColons is how many ": " in a row splitLabel tries as the end of the name.
const maxNameColons = 8

// splitLabel splits "B: label" into the name and the label.
func splitLabel(rest string, isNode func(string) bool) (string, string) {
	if isNode != nil && isNode(rest) {
		return rest, ""
	}
	first, tried := -1, 0
	for i := 0; i+1 < len(rest); i++ {
		if rest[i] != ':' || rest[i+1] != ' ' {
			continue
		}
		if first < 0 {
			first = i
		}
		// A name holds ": " a few times at most; looking up every one of a hostile string's
		// thousands would cost a lookup among the canvas's nodes each.
		if tried++; tried <= maxNameColons && isNode != nil && isNode(strings.TrimSpace(rest[:i])) {
			return strings.TrimSpace(rest[:i]), strings.TrimSpace(rest[i+2:])
		}
	}
	if first < 0 {
		return strings.TrimSuffix(rest, ":"), ""
	}
	return strings.TrimSpace(rest[:first]), strings.TrimSpace(rest[first+2:])
}
