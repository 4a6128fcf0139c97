package plan

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/excalibot/excalibot/internal/clip"
	"github.com/excalibot/excalibot/tools"
)

// Read takes the plan out of a model's answer (its thinking already stripped) and checks it
// against the canvas ix and the limits its tool calls will meet, so that a plan the tools would
// refuse is refused here, where the retry can say why. Problems is empty when the plan can be
// drawn.
func Read(answer string, ix *Index, lim tools.Limits) (Checked, Problems) {
	var probs Problems
	src, why := objectIn(answer)
	if why != "" {
		probs.Add("", "%s", why)
		return Checked{}, probs
	}
	p := decode(src, ix, &probs)
	if len(probs) > 0 {
		return Checked{}, probs
	}
	return check(p, ix, lim, &probs), probs
}

// objectIn takes the JSON object out of an answer: the whole answer, a ```json fence, or the
// first whole {…} in prose. Some models wrap the object in text even when asked for a format,
// and some thinking models ignore the format when thinking is off. When there is none, it says
// why in a phrase for the model. The answer comes with its thinking already stripped.
func objectIn(answer string) (string, string) {
	s := strings.TrimSpace(answer)
	if body, ok := fenced(s, "json"); ok && strings.HasPrefix(strings.TrimSpace(body), "{") {
		s = strings.TrimSpace(body)
	}
	why := ""
	for i := strings.IndexByte(s, '{'); i >= 0; {
		end := objectEnd(s[i:])
		if end == 0 {
			if why == "" {
				why = "the JSON object is cut off: it has no closing }"
			}
			break
		}
		var v any
		err := json.Unmarshal([]byte(s[i:i+end]), &v)
		if err == nil {
			return s[i : i+end], ""
		}
		if why == "" {
			why = fmt.Sprintf("the answer is not valid JSON (%v)", err)
		}
		// Objects nested in this one are parts of it, not the plan: look after it.
		next := strings.IndexByte(s[i+end:], '{')
		if next < 0 {
			break
		}
		i += end + next
	}
	if why == "" {
		if s == "" {
			return "", "the answer was empty"
		}
		why = fmt.Sprintf("the answer holds no JSON object; it began %q", clip.Runes(strings.Join(strings.Fields(s), " "), 80))
	}
	return "", why
}

// fenced returns the body of the first ``` fence whose info string is lang (or any fence when
// lang is "" and the fence has none).
func fenced(s, lang string) (string, bool) {
	rest := s
	for {
		i := strings.Index(rest, "```")
		if i < 0 {
			return "", false
		}
		rest = rest[i+3:]
		nl := strings.IndexByte(rest, '\n')
		if nl < 0 {
			return "", false
		}
		info := strings.ToLower(strings.TrimSpace(rest[:nl]))
		body := rest[nl+1:]
		end := strings.Index(body, "```")
		if end < 0 {
			end = len(body) // an answer cut short still has its start
		}
		if info == lang {
			return body[:end], true
		}
		if end == len(body) {
			return "", false
		}
		rest = body[end+3:]
	}
}

// objectEnd returns the length of the balanced JSON object s starts with, or 0.
func objectEnd(s string) int {
	depth, inStr, esc := 0, false, false
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case inStr && esc:
			esc = false
		case inStr && c == '\\':
			esc = true
		case inStr && c == '"':
			inStr = false
		case inStr:
		case c == '"':
			inStr = true
		case c == '{' || c == '[':
			depth++
		case c == '}' || c == ']':
			depth--
			if depth == 0 {
				return i + 1
			}
		}
	}
	return 0
}

// mermaidWords start a Mermaid diagram.
var mermaidWords = []string{"flowchart", "graph", "sequenceDiagram", "classDiagram", "stateDiagram", "erDiagram", "mindmap"}

// FromMermaid finds Mermaid in an answer (its thinking already stripped): a ```mermaid fence, a
// bare fence or the text itself starting with a diagram keyword. It returns the
// create_from_mermaid call that draws it, replacing the diagram when the canvas ix has one
// (Mermaid describes the whole diagram; the tool keeps a snapshot).
func FromMermaid(answer string, ix *Index) (Call, bool) {
	src, ok := mermaidIn(answer)
	if !ok {
		return Call{}, false
	}
	args := map[string]any{"mermaid": src}
	if ix.content {
		args["replace"] = true
	}
	return callOf(tools.CreateFromMermaid, args), true
}

func mermaidIn(answer string) (string, bool) {
	s := strings.TrimSpace(answer)
	for _, cand := range []string{"mermaid", ""} {
		if body, ok := fenced(s, cand); ok && startsMermaid(body) {
			return strings.TrimSpace(body), true
		}
	}
	if startsMermaid(s) {
		return s, true
	}
	return "", false
}

func startsMermaid(s string) bool {
	s = strings.TrimSpace(s)
	for _, k := range mermaidWords {
		if strings.HasPrefix(s, k) {
			return true
		}
	}
	return false
}
