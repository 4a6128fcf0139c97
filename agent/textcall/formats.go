package textcall

import (
	"bytes"
	"encoding/json"
	"regexp"
	"strings"

	"github.com/excalibot/excalibot/tools"
)

// The call formats below are not JSON values of their own: each model family's markers say where
// the name ends and the arguments begin. They run before the JSON pass, which then skips what they
// took.

var (
	// DeepSeek R1 writes "function<sep>NAME\n```json\n{…}\n```", V3.1 "NAME<sep>{…}"; the markers
	// use full-width bars and U+2581, which some templates render in ASCII.
	deepSeekCall = regexp.MustCompile(`(?s)<[|｜]tool[▁_]call[▁_]begin[|｜]>(.*?)(?:<[|｜]tool[▁_]call[▁_]end[|｜]>|$)`)
	deepSeekSep  = regexp.MustCompile(`<[|｜]tool[▁_]sep[|｜]>`)
	// Kimi K2: <|tool_call_begin|>functions.NAME:0<|tool_call_argument_begin|>{…}<|tool_call_end|>.
	kimiArgs = regexp.MustCompile(`<\|tool_call_argument_begin\|>`)
	// Functionary, Llama 3.1's custom format and Qwen3-Coder: <function=NAME>…</function>.
	functionEqOpen = regexp.MustCompile(`<function(?:=([^>\s]{1,64})|\s+name\s*=\s*["']([^"'>]{1,64})["'])\s*>`)
	functionClose  = regexp.MustCompile(`</function>`)
	parameterTag   = regexp.MustCompile(`(?s)<parameter=([^>\s]{1,64})>(.*?)(?:</parameter>|(?:<parameter=)|$)`)
	// Mistral's v11+ template: [TOOL_CALLS]NAME[ARGS]{…}, optionally with [CALL_ID]id.
	mistralCall = regexp.MustCompile(`([A-Za-z0-9_.\-]{1,64})\s*(?:\[CALL_ID\][A-Za-z0-9_\-]*)?\s*\[ARGS\]`)
	// GLM 4.5: <tool_call>NAME<arg_key>k</arg_key><arg_value>v</arg_value>…</tool_call>.
	glmPair = regexp.MustCompile(`(?s)<arg_key>(.*?)</arg_key>\s*<arg_value>(.*?)</arg_value>`)
	// FunctionGemma: <start_function_call>call:NAME{k:<escape>v<escape>}<end_function_call>.
	gemmaCall   = regexp.MustCompile(`(?:<start_function_call>|<\|tool_call>|^|\s)\s*call:([A-Za-z0-9_.\-]{1,64})\s*\{`)
	gemmaEnd    = regexp.MustCompile(`<end_function_call>|<tool_call\|>|<\|tool_call\|>`)
	gemmaEscape = regexp.MustCompile(`(?s)<escape>(.*?)<escape>|<\|"\|>(.*?)<\|"\|>`)
	// MiniMax-M2, Step 3 and DeepSeek-V3.2 (DSML): <invoke name="NAME"><parameter name="K">v</parameter>,
	// each tag with a namespace of its own (minimax:, steptml:, ｜DSML｜) or none.
	invokeOpen  = regexp.MustCompile(`<[^<>"\s]{0,24}?\s*invoke\s+name\s*=\s*["']([^"'<>]{1,64})["']\s*>`)
	invokeClose = regexp.MustCompile(`</[^<>"\s]{0,24}?\s*invoke\s*>`)
	// A parameter in either dialect: <parameter name="K" string="true">v</parameter> (DSML, MiniMax) or
	// MiniCPM5's <param name="K">v</param>.
	paramTag = regexp.MustCompile(`(?s)<[^<>"/\s]{0,24}?\s*param(?:eter)?\s+name\s*=\s*["']([^"'<>]{1,64})["'][^<>]*>(.*?)</[^<>"\s]{0,24}?\s*param(?:eter)?\s*>`)
	// Laguna and GLM write the name, then its arguments as JSON, inside <tool_call>.
	nameThenJSON = regexp.MustCompile(`<tool_call>\s*([A-Za-z_][A-Za-z0-9_.\-]{0,63})\s*\{`)
	// A Python-style call: the name of a tool followed by an opening parenthesis.
	pythonCall = regexp.MustCompile(`([A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)?)\s*\(`)
)

func (r *callReader) deepSeek() {
	for _, m := range deepSeekCall.FindAllStringSubmatchIndex(r.s, -1) {
		inner := r.s[m[2]:m[3]]
		if kimiArgs.MatchString(inner) {
			continue // Kimi's markers; kimi reads them
		}
		if calls := r.invokeCalls(inner); len(calls) > 0 { // Step 3: an invoke inside DeepSeek's tokens
			r.take(span{m[0], m[1]}, calls...)
			continue
		}
		parts := deepSeekSep.Split(inner, 2)
		if len(parts) != 2 {
			continue
		}
		name, args := strings.TrimSpace(parts[0]), parts[1]
		if name == "function" { // R1: the type first, then the name on the line after the separator
			n, a, _ := strings.Cut(args, "\n")
			name, args = strings.TrimSpace(n), a
		}
		r.take(span{m[0], m[1]}, r.callWithArgs(toolName(name), unfence(args)))
	}
}

func (r *callReader) kimi() {
	for _, m := range deepSeekCall.FindAllStringSubmatchIndex(r.s, -1) {
		inner := r.s[m[2]:m[3]]
		parts := kimiArgs.Split(inner, 2)
		if len(parts) != 2 || r.overlaps(span{m[0], m[1]}) {
			continue
		}
		name, _, _ := strings.Cut(strings.TrimSpace(parts[0]), ":") // functions.NAME:0
		r.take(span{m[0], m[1]}, r.callWithArgs(toolName(name), strings.TrimSpace(parts[1])))
	}
}

// unfence returns the inside of a ``` fence, or s.
func unfence(s string) string {
	t := strings.TrimSpace(s)
	if !strings.HasPrefix(t, "```") {
		return t
	}
	t = strings.TrimPrefix(t, "```")
	if i := strings.IndexByte(t, '\n'); i >= 0 && !strings.ContainsAny(t[:i], "{[") {
		t = t[i+1:] // the fence's language
	}
	return strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(t), "```"))
}

func (r *callReader) functionEq() {
	opens := functionEqOpen.FindAllStringSubmatchIndex(r.s, -1)
	for k, m := range opens {
		end := len(r.s)
		if k+1 < len(opens) {
			end = opens[k+1][0]
		}
		bodyEnd, stop := end, end
		if c := functionClose.FindStringIndex(r.s[m[1]:end]); c != nil {
			bodyEnd, stop = m[1]+c[0], m[1]+c[1]
		}
		at := span{m[0], stop}
		if r.overlaps(at) {
			continue
		}
		name := ""
		if m[2] >= 0 {
			name = toolName(r.s[m[2]:m[3]])
		} else {
			name = toolName(r.s[m[4]:m[5]]) // <function name="NAME">
		}
		body := strings.TrimSpace(r.s[m[1]:bodyEnd])
		if !strings.Contains(body, "<parameter=") && paramTag.MatchString(body) { // MiniCPM5's <param name=…>
			r.take(at, r.callWithArgs(name, r.params(name, body)))
			continue
		}
		if strings.Contains(body, "<parameter=") {
			args := map[string]any{}
			for _, p := range parameterTag.FindAllStringSubmatch(body, -1) {
				args[p[1]] = r.known.value(name, p[1], p[2])
			}
			r.take(at, r.callWithArgs(name, args))
			continue
		}
		r.take(at, r.callWithArgs(name, unfence(body)))
	}
}

// Types maps each tool of the toolbox to the JSON Schema types of its parameters: a call is
// read only for a tool it names where the text alone would be a guess, and an argument written
// between tags is read as its parameter's type.
type Types map[string]map[string]string

func (t Types) has(name string) bool { return t[name] != nil }

// TypesOf reads the parameters' types from the tools' schemas.
func TypesOf(specs []tools.Spec) Types {
	out := make(Types, len(specs))
	for _, s := range specs {
		var schema struct {
			Properties map[string]struct {
				Type any `json:"type"`
			} `json:"properties"`
		}
		_ = json.Unmarshal(s.Parameters, &schema)
		params := map[string]string{}
		for k, p := range schema.Properties {
			if ty, ok := p.Type.(string); ok {
				params[k] = ty
			}
		}
		out[s.Name] = params
	}
	return out
}

// value reads an argument written between XML-style tags as its parameter's type says: numbers
// and booleans for such parameters, a list or object when the text is one in JSON, else the text.
// The spaces and newlines around it are the model's layout, not the value: `<parameter=id> r1`
// means the element r1 (the tools read "160" as 160 anyway).
func (t Types) value(tool, param, s string) any {
	trim := strings.TrimSpace(s)
	text := trim
	switch t[tool][param] {
	case "number", "integer":
		if v, n, err := readLiteral(trim); err == nil && n == len(trim) {
			if _, ok := v.(json.Number); ok {
				return v
			}
		}
	case "boolean":
		switch strings.ToLower(trim) {
		case "true":
			return true
		case "false":
			return false
		}
	case "string":
		return text
	}
	if trim != "" && (trim[0] == '[' || trim[0] == '{') {
		if v, n, err := readLiteral(trim); err == nil && strings.TrimSpace(trim[n:]) == "" {
			return v
		}
	}
	return text
}

func (r *callReader) mistral() {
	for _, marker := range allIndex(r.s, "[TOOL_CALLS]") {
		i := marker + len("[TOOL_CALLS]")
		for {
			m := mistralCall.FindStringSubmatchIndex(r.s[i:])
			if m == nil || strings.TrimSpace(r.s[i:i+m[0]]) != "" {
				break // the next call must follow at once
			}
			name := r.s[i+m[2] : i+m[3]]
			argsAt := i + m[1]
			v, n, err := readLiteral(r.s[argsAt:])
			end := argsAt + n
			c := Call{Name: toolName(name)}
			if err != nil {
				c.ArgsErr, end = "the arguments after [ARGS] are not valid JSON: "+err.Error(), len(r.s)
			} else {
				c.Args, c.ArgsErr = argsJSON(v)
			}
			if r.overlaps(span{i, end}) {
				break
			}
			r.take(span{i, end}, c)
			i = end
			if next := strings.TrimLeft(r.s[i:], " \n\t"); strings.HasPrefix(next, "[TOOL_CALLS]") {
				break // the outer loop handles the next marker
			}
		}
	}
}

func allIndex(s, sub string) []int {
	var out []int
	for i := 0; ; {
		j := strings.Index(s[i:], sub)
		if j < 0 {
			return out
		}
		out = append(out, i+j)
		i += j + len(sub)
	}
}

func (r *callReader) glm() {
	for _, m := range taggedBlock.FindAllStringSubmatchIndex(r.s, -1) {
		inner := r.s[m[2]:m[3]]
		k := strings.Index(inner, "<arg_key>")
		at := span{m[0], m[1]}
		if r.overlaps(at) {
			continue
		}
		if k < 0 { // GLM writes a call without arguments as the tool's name alone
			if name := toolName(inner); r.known.has(name) {
				r.take(at, r.callWithArgs(name, map[string]any{}))
			}
			continue
		}
		name := strings.TrimSpace(inner[:k])
		if name == "" || strings.ContainsAny(name, " {<\n") {
			continue
		}
		args := map[string]any{}
		for _, p := range glmPair.FindAllStringSubmatch(inner, -1) {
			args[strings.TrimSpace(p[1])] = r.known.value(toolName(name), strings.TrimSpace(p[1]), p[2])
		}
		r.take(at, r.callWithArgs(toolName(name), args))
	}
}

// functionGemma reads Gemma's call:NAME{k:<escape>v<escape>} (FunctionGemma) and
// call:NAME{k:<|"|>v<|"|>} (Gemma 4): bare keys, strings between escape markers.
func (r *callReader) functionGemma() {
	for _, m := range gemmaCall.FindAllStringSubmatchIndex(r.s, -1) {
		bodyAt := m[1] - 1 // the opening brace
		end := len(r.s)
		if e := gemmaEnd.FindStringIndex(r.s[bodyAt:]); e != nil {
			end = bodyAt + e[0]
		}
		stop := end
		if e := gemmaEnd.FindStringIndex(r.s[end:]); e != nil && e[0] == 0 {
			stop = end + e[1]
		}
		at := span{m[0], stop}
		if r.overlaps(at) {
			continue
		}
		body := strings.TrimSpace(gemmaEscape.ReplaceAllStringFunc(r.s[bodyAt:end], func(e string) string {
			sm := gemmaEscape.FindStringSubmatch(e)
			q, _ := json.Marshal(sm[1] + sm[2])
			return string(q)
		}))
		if strings.HasPrefix(body, "{{") && strings.HasSuffix(body, "}}") {
			body = body[1 : len(body)-1] // the braces written twice
		}
		r.take(at, r.callWithArgs(toolName(r.s[m[2]:m[3]]), body))
	}
}

// python takes name(key=value, …) calls of known tools, alone, in a [list] or inside print(…).
func (r *callReader) python() {
	for _, m := range pythonCall.FindAllStringSubmatchIndex(r.s, -1) {
		// Llama 3.1 calls its built-in tools as TOOL.call(…).
		name := toolName(strings.TrimSuffix(r.s[m[2]:m[3]], ".call"))
		if !r.known.has(name) || r.isTaken(m[0]) || (m[0] > 0 && isIdentByte(r.s[m[0]-1])) {
			continue
		}
		args, end, errText := pythonArgs(r.s, m[1])
		if end < 0 {
			continue // no closing parenthesis: not a call
		}
		start := m[0]
		if strings.HasSuffix(r.s[:start], "print(") && strings.HasPrefix(r.s[end:], ")") {
			start, end = start-len("print("), end+1
		}
		at := span{start, end}
		if r.overlaps(at) {
			continue
		}
		c := Call{Name: name}
		if errText != "" {
			c.ArgsErr = errText
		} else {
			c.Args, c.ArgsErr = argsJSON(args)
		}
		r.take(at, c)
	}
}

// pythonArgs reads key=value arguments from s at i (just after the opening parenthesis) and
// returns them with the index after the closing parenthesis (-1 when there is none). Models also
// write key: value (name(id: r1, text: Antwerp)), where a value may be a bare word, and one
// JavaScript object as the only argument (name({id: "r1"})), which names its arguments too.
func pythonArgs(s string, i int) (map[string]any, int, string) {
	p := &literal{s: s, i: i}
	args := map[string]any{}
	var positional []any
	for {
		p.space()
		if p.i >= len(s) {
			return nil, -1, ""
		}
		if s[p.i] == ')' {
			p.i++
			break
		}
		key, colon := "", false
		j := p.i
		for j < len(s) && isIdentByte(s[j]) {
			j++
		}
		k := strings.TrimLeft(s[j:], " ")
		switch {
		case j > p.i && strings.HasPrefix(k, "=") && !strings.HasPrefix(k, "=="):
			key, p.i = s[p.i:j], len(s)-len(k)+1
		case j > p.i && strings.HasPrefix(k, ":"):
			key, p.i, colon = s[p.i:j], len(s)-len(k)+1, true
		}
		v, err := p.value()
		if err != nil && colon {
			v, err = p.bareWord()
		}
		if err != nil {
			return nil, -1, ""
		}
		if key == "" {
			positional = append(positional, v)
		} else {
			args[key] = v
		}
		p.space()
		if p.i < len(s) && s[p.i] == ',' {
			p.i++
		}
	}
	if len(positional) == 1 && len(args) == 0 {
		if obj, ok := positional[0].(map[string]any); ok {
			return obj, p.i, ""
		}
	}
	if len(positional) > 0 {
		return nil, p.i, "arguments must be named (name=value), not given by position"
	}
	return args, p.i, ""
}

// bareWord reads an unquoted value after "key:" up to the next comma or closing parenthesis: a
// word or words without quotes, brackets or parentheses, so nothing about it is ambiguous.
func (p *literal) bareWord() (any, error) {
	j := p.i
	for j < len(p.s) && !strings.ContainsRune(",)\n", rune(p.s[j])) {
		if strings.ContainsRune("\"'()[]{}=<>", rune(p.s[j])) {
			return nil, p.fail("not a plain word")
		}
		j++
	}
	w := strings.TrimSpace(p.s[p.i:j])
	if w == "" || j >= len(p.s) {
		return nil, p.fail("no value")
	}
	p.i = j
	return w, nil
}

var (
	xmlAttr  = regexp.MustCompile(`([A-Za-z_][\w\-]*)\s*=\s*(?:"([^"]*)"|'([^']*)')`)
	xmlChild = regexp.MustCompile(`(?s)<([A-Za-z_][\w\-]*)>(.*?)</([A-Za-z_][\w\-]*)>`)
)

// xmlTool reads a call written as an XML element named after a known tool, its arguments as
// attributes (<run_command command="ls" />) or as child elements (<k>v</k>), as Qwen2.5-Coder
// writes when a client's prompt showed it XML.
func (r *callReader) xmlTool() {
	for name := range r.known {
		open := regexp.MustCompile(`<` + regexp.QuoteMeta(name) + `((?:\s+[A-Za-z_][\w\-]*\s*=\s*(?:"[^"]*"|'[^']*'))*)\s*(/?)>`)
		for _, m := range open.FindAllStringSubmatchIndex(r.s, -1) {
			args := map[string]any{}
			for _, a := range xmlAttr.FindAllStringSubmatch(r.s[m[2]:m[3]], -1) {
				args[a[1]] = a[2] + a[3]
			}
			end := m[1]
			if m[4] == m[5] { // not self-closing: children up to the closing tag
				closeTag := "</" + name + ">"
				c := strings.Index(r.s[m[1]:], closeTag)
				if c < 0 {
					continue
				}
				for _, ch := range xmlChild.FindAllStringSubmatch(r.s[m[1]:m[1]+c], -1) {
					if ch[1] == ch[3] {
						args[ch[1]] = r.known.value(name, ch[1], ch[2])
					}
				}
				end = m[1] + c + len(closeTag)
			}
			at := span{m[0], end}
			if !r.overlaps(at) {
				r.take(at, r.callWithArgs(name, args))
			}
		}
	}
}

// invoke reads <invoke name="NAME"> calls (MiniMax-M2, Step 3, DeepSeek-V3.2's DSML), each up to its
// closing tag, or to the next invoke or the end of the reply when the model stopped early. The
// wrappers around them (<minimax:tool_call>, <｜DSML｜function_calls>) are left for Visible.
func (r *callReader) invoke() {
	opens := invokeOpen.FindAllStringSubmatchIndex(r.s, -1)
	for k, m := range opens {
		end := len(r.s)
		if k+1 < len(opens) {
			end = opens[k+1][0]
		}
		bodyEnd, stop := end, end
		if c := invokeClose.FindStringIndex(r.s[m[1]:end]); c != nil {
			bodyEnd, stop = m[1]+c[0], m[1]+c[1]
		}
		at := span{m[0], stop}
		if r.overlaps(at) {
			continue
		}
		name := toolName(r.s[m[2]:m[3]])
		r.take(at, r.callWithArgs(name, r.params(name, r.s[m[1]:bodyEnd])))
	}
}

// invokeCalls reads the invokes of s (the inside of another wrapper).
func (r *callReader) invokeCalls(s string) []Call {
	sub := &callReader{s: s, known: r.known}
	sub.invoke()
	var out []Call
	for _, f := range sub.found {
		out = append(out, f.call)
	}
	return out
}

// params reads <parameter name="K">v</parameter> (or <param …>) pairs, each value typed by the
// tool's schema.
func (r *callReader) params(tool, body string) map[string]any {
	args := map[string]any{}
	for _, p := range paramTag.FindAllStringSubmatch(body, -1) {
		args[p[1]] = r.known.value(tool, p[1], p[2])
	}
	return args
}

// nameJSON reads <tool_call>NAME {…}: the name of a tool of the toolbox, then its arguments as JSON.
func (r *callReader) nameJSON() {
	for _, m := range nameThenJSON.FindAllStringSubmatchIndex(r.s, -1) {
		name := toolName(r.s[m[2]:m[3]])
		if !r.known.has(name) || r.isTaken(m[0]) {
			continue
		}
		v, n, err := readLiteral(r.s[m[1]-1:])
		if err != nil {
			continue
		}
		end := m[1] - 1 + n
		if rest := strings.TrimLeft(r.s[end:], " \t\n"); strings.HasPrefix(rest, "</tool_call>") {
			end = len(r.s) - len(rest) + len("</tool_call>")
		}
		at := span{m[0], end}
		if !r.overlaps(at) {
			r.take(at, r.callWithArgs(name, v))
		}
	}
}

// Coerce gives array and object arguments written as a string (Python's "['r2']", JSON's
// "[\"r2\"]") the type the tool's schema declares. Other values are left to the tools, which read
// "160" as 160.
func (t Types) Coerce(tool string, args json.RawMessage) json.RawMessage {
	params := t[tool]
	if len(params) == 0 || !bytes.Contains(args, []byte(`"`)) {
		return args
	}
	var obj map[string]any
	if json.Unmarshal(args, &obj) != nil {
		return args
	}
	changed := false
	for k, v := range obj {
		str, ok := v.(string)
		ty := params[k]
		if !ok || (ty != "array" && ty != "object") {
			continue
		}
		trim := strings.TrimSpace(str)
		lit, n, err := readLiteral(trim)
		if err != nil || n != len(trim) {
			continue
		}
		_, isList := lit.([]any)
		_, isObj := lit.(map[string]any)
		if ty == "array" && isList || ty == "object" && isObj {
			obj[k], changed = lit, true
		}
	}
	if !changed {
		return args
	}
	b, err := json.Marshal(obj)
	if err != nil {
		return args
	}
	return b
}
