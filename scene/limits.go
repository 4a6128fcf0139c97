package scene

import (
	"encoding/json"
	"fmt"
	"unicode"
	"unicode/utf16"
	"unicode/utf8"
)

// Defaults for Limits fields left at zero: the caps a scene from outside (an imported file, an
// editor save) must meet. 500 elements is the agent's own limit; 5000 characters is far more than
// any label it writes; 5 MB is the largest scene the store keeps by default.
const (
	DefaultMaxBytes      = 5 << 20
	DefaultMaxElements   = 500
	DefaultMaxTextLength = 5000
)

// Limits are the caps on a document that comes from outside. Check tests them in one pass over
// the bytes, before Decode builds anything: decoding first is what makes a large document costly
// (100 000 bare elements are 3.4 MB of JSON but about 300 MB once decoded and encoded again).
type Limits struct {
	// MaxBytes bounds the document's size (default DefaultMaxBytes).
	MaxBytes int
	// MaxElements bounds the elements drawn (default DefaultMaxElements). Deleted elements
	// (isDeleted, the tombstones Excalidraw keeps for collaboration) are not drawn and do not
	// count, but at most as many again are accepted.
	MaxElements int
	// MaxTextLength bounds the characters of one text element's text (default
	// DefaultMaxTextLength); deleted elements are not checked.
	MaxTextLength int
}

// WithDefaults fills fields left at zero.
func (l Limits) WithDefaults() Limits {
	if l.MaxBytes <= 0 {
		l.MaxBytes = DefaultMaxBytes
	}
	if l.MaxElements <= 0 {
		l.MaxElements = DefaultMaxElements
	}
	if l.MaxTextLength <= 0 {
		l.MaxTextLength = DefaultMaxTextLength
	}
	return l
}

// Cap names one of the Limits.
type Cap string

const (
	CapBytes    Cap = "bytes"
	CapElements Cap = "elements"
	CapDeleted  Cap = "deleted elements"
	CapText     Cap = "text length"
)

// OverCapError says which cap a document is over, by how much, and for CapText which element.
type OverCapError struct {
	Cap      Cap
	Got, Max int
	ID       string // the element whose text is too long (CapText)
}

func (e *OverCapError) Error() string {
	switch e.Cap {
	case CapBytes:
		return fmt.Sprintf("the diagram is %s, over the %s limit", byteSize(e.Got), byteSize(e.Max))
	case CapElements:
		return fmt.Sprintf("the diagram has %d elements, over the limit of %d", e.Got, e.Max)
	case CapDeleted:
		return fmt.Sprintf("the diagram keeps %d deleted elements, over the limit of %d", e.Got, e.Max)
	}
	return fmt.Sprintf("the text of element %q is %d characters long, over the limit of %d", e.ID, e.Got, e.Max)
}

func byteSize(n int) string {
	switch {
	case n >= 1<<20:
		return fmt.Sprintf("%.1f MB", float64(n)/(1<<20))
	case n >= 1<<10:
		return fmt.Sprintf("%d KB", n>>10)
	}
	return fmt.Sprintf("%d bytes", n)
}

// Check returns an *OverCapError when data is over one of the limits (zero fields take the
// defaults): first its size, then the count of elements drawn, then of deleted ones, then the
// first text that is too long. It reads data once without copying any of it, so its cost is
// the same whatever the document holds. Input that is not an .excalidraw document passes: Decode
// says what is wrong with it. Where a key appears twice (Decode keeps the last), the larger
// figure counts.
func (l Limits) Check(data []byte) error {
	l = l.WithDefaults()
	if len(data) > l.MaxBytes {
		return &OverCapError{Cap: CapBytes, Got: len(data), Max: l.MaxBytes}
	}
	sc := capScan{data: data, maxText: l.MaxTextLength}
	sc.document()
	switch {
	case sc.live > l.MaxElements:
		return &OverCapError{Cap: CapElements, Got: sc.live, Max: l.MaxElements}
	case sc.deleted > l.MaxElements:
		return &OverCapError{Cap: CapDeleted, Got: sc.deleted, Max: l.MaxElements}
	case sc.longText > 0:
		return &OverCapError{Cap: CapText, Got: sc.longText, Max: l.MaxTextLength, ID: sc.unquote(sc.longID)}
	}
	return nil
}

// capScan walks the JSON of a document byte by byte, keeping positions and counts only: the
// elements of the largest "elements" array, and the first text over maxText.
type capScan struct {
	data          []byte
	i             int
	maxText       int
	live, deleted int
	longText      int  // characters of the first text over maxText; 0 when none is
	longID        span // its element's id
}

type span struct{ start, end int } // the raw bytes between a string's quotes

func (s *capScan) ws() {
	for s.i < len(s.data) {
		switch s.data[s.i] {
		case ' ', '\t', '\r', '\n':
			s.i++
		default:
			return
		}
	}
}

// peek is the next byte that is not white space, or 0 at the end.
func (s *capScan) peek() byte {
	s.ws()
	if s.i >= len(s.data) {
		return 0
	}
	return s.data[s.i]
}

// str reads a string at s.i (which is its opening quote) and returns its raw contents.
func (s *capScan) str() span {
	s.i++ // the opening quote
	start := s.i
	for s.i < len(s.data) {
		switch s.data[s.i] {
		case '\\':
			s.i += 2
			continue
		case '"':
			s.i++
			return span{start, s.i - 1}
		}
		s.i++
	}
	s.i = len(s.data)
	return span{start, start}
}

// skip passes over one value of any kind, nesting without recursion.
func (s *capScan) skip() {
	depth := 0
	for s.i < len(s.data) {
		switch c := s.data[s.i]; c {
		case '"':
			s.str()
			if depth == 0 {
				return
			}
			continue
		case '{', '[':
			depth++
		case '}', ']':
			depth--
			if depth <= 0 {
				s.i++
				return
			}
		case ',', ':':
			if depth == 0 {
				return
			}
		case ' ', '\t', '\r', '\n':
		default:
			if depth == 0 { // a number, true, false or null
				for s.i < len(s.data) && !isDelim(s.data[s.i]) {
					s.i++
				}
				return
			}
		}
		s.i++
	}
}

func isDelim(c byte) bool {
	switch c {
	case ',', ':', '}', ']', ' ', '\t', '\r', '\n':
		return true
	}
	return false
}

// object calls f for each key of the object at s.i, with s.i on the key's value; f must pass the
// value. It returns false when the input is not an object or ends early.
func (s *capScan) object(f func(key span)) bool {
	if s.peek() != '{' {
		return false
	}
	s.i++
	for {
		switch s.peek() {
		case '}':
			s.i++
			return true
		case '"':
		default:
			return false
		}
		key := s.str()
		if s.peek() != ':' {
			return false
		}
		s.i++
		s.ws()
		f(key)
		switch s.peek() {
		case ',':
			s.i++
		case '}':
			s.i++
			return true
		default:
			return false
		}
	}
}

func (s *capScan) document() {
	s.object(func(key span) {
		if s.is(key, "elements") && s.peek() == '[' {
			s.elements()
			return
		}
		s.skip()
	})
}

// elements counts one "elements" array; the largest array seen is the one kept, and a text
// over the limit in any of them counts.
func (s *capScan) elements() {
	s.i++ // [
	live, deleted := 0, 0
	for s.peek() != ']' && s.i < len(s.data) {
		var id, typ span
		isDeleted, runes := false, 0
		if !s.object(func(key span) {
			switch {
			case s.is(key, "isDeleted"):
				isDeleted = s.lit("true")
				s.skip()
			case s.is(key, "id") && s.peek() == '"':
				id = s.str()
			case s.is(key, "type") && s.peek() == '"':
				typ = s.str()
			case s.is(key, "text") && s.peek() == '"':
				t := s.str()
				runes = max(runes, jsonRunes(s.data[t.start:t.end]))
			default:
				s.skip()
			}
		}) {
			s.skip() // not an object: Decode refuses it; here it counts as drawn
		}
		switch {
		case isDeleted:
			deleted++
		default:
			live++
			if runes > s.maxText && s.longText == 0 && s.is(typ, string(Text)) {
				s.longText, s.longID = runes, id
			}
		}
		if s.peek() != ',' {
			break
		}
		s.i++
	}
	if s.peek() == ']' {
		s.i++
	}
	s.live, s.deleted = max(s.live, live), max(s.deleted, deleted)
}

// lit reports whether the value at s.i is exactly the literal word.
func (s *capScan) lit(word string) bool {
	end := s.i + len(word)
	return end <= len(s.data) && string(s.data[s.i:end]) == word && (end == len(s.data) || isDelim(s.data[end]))
}

// is reports whether the string sp holds, once unescaped, want. Keys and type names are short
// and almost never escaped, so the common case compares bytes.
func (s *capScan) is(sp span, want string) bool {
	raw := s.data[sp.start:sp.end]
	if string(raw) == want {
		return true
	}
	for _, c := range raw {
		if c == '\\' {
			return s.unquote(sp) == want
		}
	}
	return false
}

func (s *capScan) unquote(sp span) string {
	if sp.start == 0 { // never set: a string's contents start after its quote
		return ""
	}
	var v string
	if json.Unmarshal(s.data[sp.start-1:sp.end+1], &v) != nil {
		return string(s.data[sp.start:sp.end])
	}
	return v
}

// jsonRunes counts the characters of a JSON string's raw contents as encoding/json decodes them:
// an escape is one character, a surrogate pair one, and each invalid UTF-8 byte one (U+FFFD).
func jsonRunes(raw []byte) int {
	n := 0
	for i := 0; i < len(raw); n++ {
		c := raw[i]
		switch {
		case c == '\\' && i+1 < len(raw) && raw[i+1] == 'u':
			r := hex4(raw[i+2:])
			i += 6
			if utf16.IsSurrogate(r) && i+1 < len(raw) && raw[i] == '\\' && raw[i+1] == 'u' {
				if utf16.DecodeRune(r, hex4(raw[i+2:])) != unicode.ReplacementChar {
					i += 6
				}
			}
		case c == '\\':
			i += 2
		case c < utf8.RuneSelf:
			i++
		default:
			_, size := utf8.DecodeRune(raw[i:])
			i += size
		}
	}
	return n
}

// hex4 reads four hex digits, or returns -1.
func hex4(b []byte) rune {
	if len(b) < 4 {
		return -1
	}
	var r rune
	for _, c := range b[:4] {
		switch {
		case '0' <= c && c <= '9':
			c -= '0'
		case 'a' <= c && c <= 'f':
			c = c - 'a' + 10
		case 'A' <= c && c <= 'F':
			c = c - 'A' + 10
		default:
			return -1
		}
		r = r*16 + rune(c)
	}
	return r
}
