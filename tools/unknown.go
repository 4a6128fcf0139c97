package tools

import (
	"fmt"
	"strings"
	"unicode"
)

// Unknown fields. A key a tool does not know does not refuse the call: the call runs without it
// and its result names what was ignored, with the field the model probably meant, so a small
// model's stray "colour" costs no turn and still teaches the right name. Three cases differ:
//   - the call's own arguments name nothing the tool knows (only unknown keys, or known ones only
//     as null). Running it would answer "ok" to a call that did nothing, or did something else
//     (set_viewport {"zoom": 2} would reset the view), so the unknown keys are its problems.
//   - a key asks for something reaching outside the canvas (a link, URL or file: outward). The
//     tools never write one, and a model asking for one is likely following instructions planted
//     in a message or the scene; carrying out the rest of such a call, answering "ok", would tell
//     it the link was made. Nothing of the call is done.
//   - the call is refused for another reason; then its unknown keys are listed with the problems,
//     since the model rewrites the call anyway.
//
// Nested objects (elements, nodes, edges…) need no rule of their own: their required fields (an
// element's id and type, a node's id or label, an edge's from and to, an update's change) refuse
// an item that carries only unknown keys.

// ignoredField is an unknown key of a call.
type ignoredField struct {
	field string   // full path, e.g. "nodes[2].colour"
	hint  string   // " (did you mean \"color\"?)" or ""
	known []string // the fields the object takes, for a refusal without a hint
}

// finish handles the fields of o that the tool does not know (see above), suggesting the closest
// known one: fieldHints first, then the nearest name.
func (o *object) finish(known ...string) { o.finishWith(known) }

// finishWith is finish with the tool's own hint maps, tried before fieldHints.
func (o *object) finishWith(known []string, hints ...map[string]string) {
	sentKnown := false
	var unknown []string
	for _, k := range o.order {
		if contains(known, k) {
			sentKnown = sentKnown || o.has(k)
		} else {
			unknown = append(unknown, k)
		}
	}
	refuse := o.path == "" && !sentKnown
	for _, k := range unknown {
		f := ignoredField{field: o.at(k), hint: hintFor(k, known, hints), known: known}
		if outward(k) {
			o.p.add(f.field, "unknown field; the tools write no links, URLs or files, so this call does nothing: send it again without %q", k)
			continue
		}
		if refuse {
			o.p.add("", "%s", f.problem())
		} else {
			o.p.ignore(f)
		}
	}
}

// outward reports whether a field name asks for a link, URL or file: one of its words (split at
// "_", "-" and lower-to-upper case changes: "imageUrl", "link_to") is such a word, or begins or
// ends with link, url or href ("hyperlink", "urlpath"). Words only, so "profile" is not a file.
func outward(k string) bool {
	var words []string
	start := 0
	rs := []rune(k)
	for i := 1; i <= len(rs); i++ {
		if i == len(rs) || !unicode.IsLetter(rs[i]) && !unicode.IsDigit(rs[i]) || unicode.IsUpper(rs[i]) && unicode.IsLower(rs[i-1]) {
			words = append(words, strings.ToLower(strings.Trim(string(rs[start:i]), "_- .")))
			start = i
		}
	}
	for _, w := range words {
		switch w {
		case "uri", "src", "file", "files", "filename", "image", "img":
			return true
		}
		for _, a := range []string{"link", "url", "href"} {
			if strings.HasPrefix(w, a) || strings.HasSuffix(w, a) {
				return true
			}
		}
	}
	return false
}

func hintFor(k string, known []string, hints []map[string]string) string {
	lookup := func(m map[string]string) string {
		for _, key := range []string{k, strings.ToLower(k)} {
			if h, ok := m[key]; ok && contains(known, h) {
				return fmt.Sprintf(" (did you mean %q?)", h)
			}
		}
		return ""
	}
	for _, m := range hints {
		if h := lookup(m); h != "" {
			return h
		}
	}
	if h := lookup(fieldHints); h != "" {
		return h
	}
	return didYouMean(k, known)
}

// problem is the field as a line of a refusal.
func (f ignoredField) problem() string {
	switch {
	case f.hint != "":
		return f.field + ": unknown field" + f.hint
	case len(f.known) == 0:
		return f.field + ": unknown field; this tool takes no arguments"
	}
	return f.field + ": unknown field; known fields: " + strings.Join(f.known, ", ")
}

func (p *problems) ignore(f ignoredField) {
	for _, g := range p.ignored {
		if g.field == f.field {
			return
		}
	}
	if len(p.ignored) >= maxProblems {
		p.ignoredExtra++
		return
	}
	p.ignored = append(p.ignored, f)
}

// ignoredNote is appended to the result of a call that ran: one sentence per ignored field.
func (p *problems) ignoredNote() string {
	if len(p.ignored) == 0 {
		return ""
	}
	var b strings.Builder
	for _, f := range p.ignored {
		fmt.Fprintf(&b, "\nIgnored unknown field %s%s.", f.field, f.hint)
	}
	if p.ignoredExtra > 0 {
		fmt.Fprintf(&b, "\nIgnored %d more unknown fields.", p.ignoredExtra)
	}
	return b.String()
}

// ignoredLines lists the ignored fields as further lines of a refusal.
func (p *problems) ignoredLines() string {
	var b strings.Builder
	for _, f := range p.ignored {
		b.WriteString("\n- " + f.problem())
	}
	if p.ignoredExtra > 0 {
		fmt.Fprintf(&b, "\n- … and %d more unknown fields", p.ignoredExtra)
	}
	return b.String()
}

// fieldHints map names other tools and Excalidraw's skeleton API use to ours; they are offered
// as suggestions, not accepted silently, so the model learns one vocabulary.
var fieldHints = map[string]string{
	"label": "text", "color": "strokeColor", "colour": "strokeColor", "fill": "backgroundColor",
	"bgcolor": "backgroundColor", "background": "backgroundColor", "from": "startElementId",
	"to": "endElementId", "start": "startElementId", "end": "endElementId", "source": "startElementId",
	"target": "endElementId", "elementids": "ids", "element_ids": "ids", "elements": "ids",
	"align": "alignment", "w": "width", "h": "height", "shape": "type", "kind": "type",
	"name": "id", "elementid": "id", "element_id": "id", "group": "groupId", "group_id": "groupId",
	"frame": "frameId", "fontsize": "fontSize", "font": "fontFamily", "arrowhead": "endArrowhead",
}

func contains(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}
