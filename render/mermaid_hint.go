package render

import (
	"fmt"
	"regexp"
	"strings"

	"github.com/excalibot/excalibot/diagram/mermaid"
)

// tokenNames turns the token names of Mermaid's parsers into what a person typed.
var tokenNames = map[string]string{
	"PS": "'('", "PE": "')'", "SQS": "'['", "SQE": "']'", "DIAMOND_START": "'{'", "DIAMOND_STOP": "'}'",
	"PIPE": "'|'", "NEWLINE": "the end of the line", "EOF": "the end of the diagram", "SEMI": "';'",
	"COLON": "':'", "AMP": "'&'", "STR": "a quoted string", "MINUS": "'-'", "TAGEND": "'>'",
	"TAGSTART": "'<'", "UP": "'^'", "DOWN": "'v'", "COMMA": "','", "QUOTE": "'\"'", "SPACE": "a space",
	"NODE_STRING": "a name", "TEXT": "text", "UNICODE_TEXT": "text", "LINK": "an arrow", "ARROW": "an arrow",
	"START_LINK": "an arrow", "STYLE_SEPARATOR": "':::'", "ACTOR": "a participant name", "SOLID_ARROW": "'->>'",
	"EDGE_TEXT": "edge text", "INVALID": "something Mermaid does not know", "1": "the end of the diagram",
	"TXT": "':' and the message text",
}

var (
	reGot       = regexp.MustCompile(`Expecting (.*), got '([^']+)'`)
	reExpecting = regexp.MustCompile(`'([^']+)'`)
	reLexer     = regexp.MustCompile(`(?i)(unexpected character: ->(.)<-|Lexical error on line \d+\. Unrecognized text\.)`)
)

func tokenName(t string) string {
	if n, ok := tokenNames[t]; ok {
		return n
	}
	return "'" + strings.ToLower(t) + "'"
}

// syntaxError builds the error for a diagram Mermaid refused: the failing line of the text as the
// user gave it, Mermaid's message said plainly, and a hint.
func syntaxError(message string, line *int, source string, offset int, fixes []string) *mermaid.Error {
	e := &mermaid.Error{Fixes: fixes}
	lines := strings.Split(source, "\n")
	if line != nil && *line > 0 {
		e.Line = *line
		i := *line - offset - 1
		if i >= len(lines) {
			// Mermaid counts a line past the end when the text ends inside a bracket or a block:
			// point at the bracket left open, else at the last line.
			i = len(lines) - 1
			for i > 0 && strings.TrimSpace(lines[i]) == "" {
				i--
			}
			for j, l := range lines {
				if !balanced(l) {
					i = j
					break
				}
			}
			e.Line = i + offset + 1
		}
		if i >= 0 && i < len(lines) {
			e.LineText = lines[i]
		}
	}
	if msg, hint, ok := foreignRelation(firstKeyword(source), e.LineText); ok {
		e.Message, e.Hint = msg, hint
		return e
	}
	context := e.LineText
	if !balanced(context) || !balanced(source) {
		context = source // an unclosed bracket further up is the likelier cause
	}
	e.Message, e.Hint = explain(message, context, firstKeyword(source))
	return e
}

// firstKeyword returns the diagram keyword of source: its first word that is not in a comment or
// a --- front matter block.
func firstKeyword(source string) string {
	lines := strings.Split(source, "\n")
	for i := 0; i < len(lines); i++ {
		l := strings.TrimSpace(lines[i])
		if l == "---" && i == 0 {
			for i++; i < len(lines) && strings.TrimSpace(lines[i]) != "---"; i++ {
			}
			continue
		}
		if l == "" || strings.HasPrefix(l, "%%") || l == "---" {
			continue
		}
		w, _, _ := strings.Cut(l, " ")
		return w
	}
	return ""
}

// explain rewrites Mermaid's message in words and picks a hint for it.
func explain(message, lineText, keyword string) (msg, hint string) {
	message = strings.TrimSpace(message)
	switch {
	case message == "the Mermaid diagram is empty":
		return "the diagram is empty", "start with a diagram type, e.g. `flowchart TD`, then one line per node or arrow, e.g. `A --> B`"
	case strings.Contains(message, "No diagram type detected") || strings.Contains(message, "UnknownDiagramError"):
		return fmt.Sprintf("%q is not a Mermaid diagram type", keyword),
			"the first line must name the diagram type: `flowchart TD` (or LR), `sequenceDiagram`, `classDiagram`, `stateDiagram-v2`, `erDiagram`, `mindmap`, `pie` …"
	case strings.Contains(message, "inactivate an inactive participant"):
		return firstLine(message), "every `deactivate X` needs an earlier `activate X` (or a message to X ending in +)"
	}
	if m := reGot.FindStringSubmatch(message); m != nil {
		var want []string
		seen := map[string]bool{}
		var toks []string
		for _, w := range reExpecting.FindAllStringSubmatch(m[1], -1) {
			if _, ok := tokenNames[w[1]]; ok {
				toks = append(toks, w[1])
			}
		}
		if len(toks) == 0 { // only internal token names: show the first few as they are
			for _, w := range reExpecting.FindAllStringSubmatch(m[1], -1) {
				toks = append(toks, w[1])
			}
		}
		for _, w := range toks {
			n := tokenName(w)
			if !seen[n] && len(want) < 5 {
				seen[n] = true
				want = append(want, n)
			}
		}
		got := tokenName(m[2])
		msg = fmt.Sprintf("found %s where Mermaid expected %s", got, strings.Join(want, ", "))
		return msg, hintFor(m[2], lineText, keyword)
	}
	if m := reLexer.FindStringSubmatch(message); m != nil {
		msg = "a character Mermaid does not accept here"
		if m[2] != "" {
			msg = fmt.Sprintf("the character %q is not accepted here", m[2])
		}
		return msg, "put labels with special characters in double quotes, e.g. A[\"Price: 5$ (net)\"]; node ids are letters, digits and _ only"
	}
	// Mermaid's messages start with "Parse error on line N:" and repeat the source; keep the rest.
	msg = firstLine(message)
	if strings.HasPrefix(msg, "Parse error on line") {
		msg = "Mermaid could not parse this line"
	}
	return msg, generalHint(keyword)
}

// balanced reports whether every [, ( and { of s is closed.
func balanced(s string) bool {
	return strings.Count(s, "[") == strings.Count(s, "]") && strings.Count(s, "(") == strings.Count(s, ")") &&
		strings.Count(s, "{") == strings.Count(s, "}")
}

func hintFor(got, lineText, keyword string) string {
	quoted := `put a label containing brackets, quotes or punctuation in double quotes, e.g. A["Call f(x)"]`
	switch got {
	case "PS", "PE", "SQS", "SQE", "DIAMOND_START", "DIAMOND_STOP", "TAGEND", "TAGSTART", "STR", "QUOTE":
		return quoted
	case "NEWLINE", "EOF", "1":
		if !balanced(lineText) {
			return "a bracket is not closed on this line; every [ needs its ], every ( its )"
		}
		if strings.Contains(keyword, "sequence") {
			return "a message is written `Alice->>Bob: text`, with a colon before the text"
		}
		return "the line ends too early: an arrow needs a node on both sides (`A --> B`), a label needs its closing bracket"
	case "MINUS", "ARROW", "LINK", "START_LINK", "SOLID_ARROW":
		if strings.Contains(keyword, "sequence") {
			return "sequence arrows are ->> (solid), -->> (dotted), -> and --> (no head), -x, -)"
		}
		return "flowchart arrows are -->, ---, -.->, ==> and --text-->; a label goes as -->|text|"
	case "SPACE", "NODE_STRING", "TEXT", "UNICODE_TEXT":
		return "node ids cannot contain spaces: write the id, then the label in brackets, e.g. web[Web server]"
	case "COLON", "SEMI", "COMMA", "AMP", "PIPE":
		return quoted
	}
	return generalHint(keyword)
}

func generalHint(keyword string) string {
	switch {
	case strings.HasPrefix(keyword, "sequence"):
		return "each line is a participant (`participant A as Alice`) or a message (`A->>B: text`)"
	case strings.HasPrefix(keyword, "class"):
		return "each line is a class (`class Animal { +name: string }`) or a relation (`Animal <|-- Dog`)"
	case keyword == "flowchart" || keyword == "graph":
		return "each line is a node (`A[Label]`) or an arrow (`A --> B` or `A -->|text| B`); quote labels with punctuation"
	}
	return "compare the line with Mermaid's syntax for this diagram type; quote labels with punctuation"
}
