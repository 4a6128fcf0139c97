package textcall

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/excalibot/excalibot/internal/clip"
)

// Models write the values of a call in JSON, in Python (single quotes, True/None, trailing
// commas: Llama 3.2's and LFM2's [name(k="v")] calls, Python dicts in <tool_call> tags) or in a
// mixture. readLiteral reads one such value. It is strict about structure, so prose that merely
// starts with a brace or bracket is not taken for a value.

// literal reads values from s starting at i.
type literal struct {
	s     string
	i     int
	depth int
}

// maxLiteralDepth bounds nesting; model output deeper than this is not a tool call.
const maxLiteralDepth = 64

// readLiteral reads one value at the start of s (after spaces) and returns it with the number of
// bytes it took. Objects are map[string]any, arrays []any, numbers json.Number.
func readLiteral(s string) (any, int, error) {
	p := &literal{s: s}
	v, err := p.value()
	if err != nil {
		return nil, 0, err
	}
	return v, p.i, nil
}

func (p *literal) space() {
	for p.i < len(p.s) {
		r, n := utf8.DecodeRuneInString(p.s[p.i:])
		if !unicode.IsSpace(r) {
			return
		}
		p.i += n
	}
}

// literalError says where reading stopped; AtEnd tells a value cut short by the end of the text
// from one that is wrong inside.
type literalError struct {
	what  string
	at    int
	AtEnd bool
}

func (e *literalError) Error() string { return fmt.Sprintf("%s at byte %d", e.what, e.at) }

func (p *literal) fail(what string) error {
	return &literalError{what: what, at: p.i, AtEnd: p.i >= len(p.s)}
}

func (p *literal) value() (any, error) {
	p.space()
	if p.i >= len(p.s) {
		return nil, p.fail("unexpected end")
	}
	switch c := p.s[p.i]; {
	case c == '{':
		return p.object()
	case c == '[':
		return p.array()
	case c == '"' || c == '\'':
		return p.str()
	case c == '-' || c == '+' || c == '.' || (c >= '0' && c <= '9'):
		return p.number()
	default:
		w := p.word()
		switch w {
		case "true", "True":
			return true, nil
		case "false", "False":
			return false, nil
		case "null", "None", "nil":
			return nil, nil
		}
		return nil, p.fail(fmt.Sprintf("unexpected %q", clip.Runes(strings.ToValidUTF8(p.s[p.i:min(len(p.s), p.i+48)], ""), 12)))
	}
}

// word reads an identifier and advances past it only when it is one of the literal words.
func (p *literal) word() string {
	j := p.i
	for j < len(p.s) && (isIdentByte(p.s[j])) {
		j++
	}
	w := p.s[p.i:j]
	switch w {
	case "true", "True", "false", "False", "null", "None", "nil":
		p.i = j
	}
	return w
}

func isIdentByte(c byte) bool {
	return c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9'
}

func (p *literal) nest() error {
	p.depth++
	if p.depth > maxLiteralDepth {
		return p.fail("nested too deeply")
	}
	return nil
}

func (p *literal) object() (any, error) {
	if err := p.nest(); err != nil {
		return nil, err
	}
	defer func() { p.depth-- }()
	p.i++ // {
	out := map[string]any{}
	for {
		p.space()
		if p.i >= len(p.s) {
			return nil, p.fail("unterminated object")
		}
		if p.s[p.i] == '}' {
			p.i++
			return out, nil
		}
		var key string
		if c := p.s[p.i]; c == '"' || c == '\'' {
			k, err := p.str()
			if err != nil {
				return nil, err
			}
			key = k.(string)
		} else {
			// A bare key (JavaScript style) only when it is an identifier followed by a colon.
			j := p.i
			for j < len(p.s) && isIdentByte(p.s[j]) {
				j++
			}
			if j == p.i {
				return nil, p.fail("expected a key")
			}
			key, p.i = p.s[p.i:j], j
		}
		p.space()
		if p.i >= len(p.s) || p.s[p.i] != ':' {
			return nil, p.fail("expected ':' after a key")
		}
		p.i++
		v, err := p.value()
		if err != nil {
			return nil, err
		}
		out[key] = v
		p.space()
		if p.i >= len(p.s) {
			return nil, p.fail("unterminated object")
		}
		switch p.s[p.i] {
		case ',':
			p.i++
		case '}':
		default:
			return nil, p.fail("expected ',' or '}'")
		}
	}
}

func (p *literal) array() (any, error) {
	if err := p.nest(); err != nil {
		return nil, err
	}
	defer func() { p.depth-- }()
	p.i++ // [
	out := []any{}
	for {
		p.space()
		if p.i >= len(p.s) {
			return nil, p.fail("unterminated array")
		}
		if p.s[p.i] == ']' {
			p.i++
			return out, nil
		}
		v, err := p.value()
		if err != nil {
			return nil, err
		}
		out = append(out, v)
		p.space()
		if p.i >= len(p.s) {
			return nil, p.fail("unterminated array")
		}
		switch p.s[p.i] {
		case ',':
			p.i++
		case ']':
		default:
			return nil, p.fail("expected ',' or ']'")
		}
	}
}

func (p *literal) str() (any, error) {
	q := p.s[p.i]
	if strings.HasPrefix(p.s[p.i:], `"""`) || strings.HasPrefix(p.s[p.i:], `'''`) {
		end := strings.Index(p.s[p.i+3:], p.s[p.i:p.i+3])
		if end < 0 {
			return nil, p.fail("unterminated string")
		}
		v := p.s[p.i+3 : p.i+3+end]
		p.i += 3 + end + 3
		return v, nil
	}
	p.i++
	var b strings.Builder
	for p.i < len(p.s) {
		c := p.s[p.i]
		switch {
		case c == q:
			p.i++
			return b.String(), nil
		case c == '\\':
			if err := p.escape(&b); err != nil {
				return nil, err
			}
		default:
			b.WriteByte(c)
			p.i++
		}
	}
	return nil, p.fail("unterminated string")
}

func (p *literal) escape(b *strings.Builder) error {
	if p.i+1 >= len(p.s) {
		return p.fail("unterminated escape")
	}
	c := p.s[p.i+1]
	p.i += 2
	switch c {
	case 'n':
		b.WriteByte('\n')
	case 't':
		b.WriteByte('\t')
	case 'r':
		b.WriteByte('\r')
	case 'b':
		b.WriteByte('\b')
	case 'f':
		b.WriteByte('\f')
	case 'u', 'x':
		n := 4
		if c == 'x' {
			n = 2
		}
		if p.i+n > len(p.s) {
			return p.fail("short escape")
		}
		r, err := strconv.ParseUint(p.s[p.i:p.i+n], 16, 32)
		if err != nil {
			return p.fail("bad escape")
		}
		p.i += n
		cp := rune(r)
		// A UTF-16 surrogate pair, as JSON writes characters outside the basic plane.
		if c == 'u' && cp >= 0xD800 && cp < 0xDC00 && strings.HasPrefix(p.s[p.i:], `\u`) && p.i+6 <= len(p.s) {
			if lo, err := strconv.ParseUint(p.s[p.i+2:p.i+6], 16, 32); err == nil && lo >= 0xDC00 && lo < 0xE000 {
				cp = (cp-0xD800)<<10 + (rune(lo) - 0xDC00) + 0x10000
				p.i += 6
			}
		}
		b.WriteRune(cp)
	default: // \" \' \\ \/ and anything else stands for itself
		b.WriteByte(c)
	}
	return nil
}

func (p *literal) number() (any, error) {
	j := p.i
	for j < len(p.s) && strings.IndexByte("+-.0123456789eE_", p.s[j]) >= 0 {
		j++
	}
	tok := strings.ReplaceAll(strings.TrimPrefix(p.s[p.i:j], "+"), "_", "")
	f, err := strconv.ParseFloat(tok, 64)
	if err != nil {
		return nil, p.fail("bad number")
	}
	p.i = j
	if !json.Valid([]byte(tok)) { // Python spellings such as 1., .5 or 007
		tok = strconv.FormatFloat(f, 'g', -1, 64)
	}
	return json.Number(tok), nil
}
