package scene

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"strconv"
	"unicode/utf8"
)

// JSON codec of one element. Encoding writes every field in a fixed order (base fields, then the
// type's fields, then unmodelled fields sorted by key) so that output is deterministic; decoding is
// tolerant of nulls, missing fields and legacy names, and strict about wrong JSON types.

var baseKeys = []string{"id", "type", "x", "y", "width", "height", "angle", "strokeColor",
	"backgroundColor", "fillStyle", "strokeWidth", "strokeStyle", "roughness", "opacity", "groupIds",
	"frameId", "index", "roundness", "seed", "version", "versionNonce", "isDeleted", "boundElements",
	"updated", "link", "locked"}

var typeKeys = map[Type][]string{
	Text: {"text", "fontSize", "fontFamily", "textAlign", "verticalAlign", "containerId",
		"originalText", "autoResize", "lineHeight"},
	Arrow: {"points", "startBinding", "endBinding", "startArrowhead", "endArrowhead", "elbowed"},
	Line:  {"points", "startBinding", "endBinding", "startArrowhead", "endArrowhead"},
	Frame: {"name"},
}

func isKnownKey(t Type, k string) bool {
	if slices.Contains(baseKeys, k) {
		return true
	}
	if !t.modeled() {
		return false
	}
	return slices.Contains(typeKeys[t], k)
}

// MarshalJSON writes the element exactly as Encode writes it in a file (full field set, fixed key
// order, unmodelled fields kept).
func (e Element) MarshalJSON() ([]byte, error) { return encodeElement(&e), nil }

// encodeElement writes e as compact JSON.
func encodeElement(e *Element) []byte {
	w := objWriter{b: make([]byte, 0, 640)}
	w.b = append(w.b, '{')
	w.str("id", e.ID)
	w.str("type", string(e.Type))
	w.num("x", e.X)
	w.num("y", e.Y)
	w.num("width", e.Width)
	w.num("height", e.Height)
	w.num("angle", e.Angle)
	w.str("strokeColor", e.StrokeColor)
	w.str("backgroundColor", e.BackgroundColor)
	w.str("fillStyle", e.FillStyle)
	w.num("strokeWidth", e.StrokeWidth)
	w.str("strokeStyle", e.StrokeStyle)
	w.num("roughness", e.Roughness)
	w.num("opacity", e.Opacity)
	w.key("groupIds")
	w.strList(e.GroupIDs)
	w.nullStr("frameId", e.FrameID)
	w.nullStr("index", e.Index)
	w.key("roundness")
	if e.Roundness == nil {
		w.b = append(w.b, "null"...)
	} else {
		w.b = append(w.b, `{"type":`...)
		w.b = strconv.AppendInt(w.b, int64(e.Roundness.Type), 10)
		if e.Roundness.Value != nil {
			w.b = append(w.b, `,"value":`...)
			w.b = appendFloat(w.b, *e.Roundness.Value)
		}
		w.b = append(w.b, '}')
	}
	w.int("seed", e.Seed)
	w.int("version", e.Version)
	w.int("versionNonce", e.VersionNonce)
	w.boolean("isDeleted", e.IsDeleted)
	w.key("boundElements")
	if e.BoundElements == nil && !e.Type.modeled() {
		w.b = append(w.b, "null"...)
	} else {
		w.b = append(w.b, '[')
		for i, b := range e.BoundElements {
			if i > 0 {
				w.b = append(w.b, ',')
			}
			w.b = append(w.b, `{"id":`...)
			w.b = appendString(w.b, b.ID)
			w.b = append(w.b, `,"type":`...)
			w.b = appendString(w.b, string(b.Type))
			w.b = append(w.b, '}')
		}
		w.b = append(w.b, ']')
	}
	w.int("updated", e.Updated)
	w.nullStr("link", e.Link)
	w.boolean("locked", e.Locked)
	switch e.Type {
	case Text:
		w.str("text", e.Text)
		w.num("fontSize", e.FontSize)
		w.int("fontFamily", int64(e.FontFamily))
		w.str("textAlign", e.TextAlign)
		w.str("verticalAlign", e.VerticalAlign)
		w.nullStr("containerId", e.ContainerID)
		w.str("originalText", e.OriginalText)
		w.boolean("autoResize", e.AutoResize)
		w.num("lineHeight", e.LineHeight)
	case Arrow, Line:
		w.key("points")
		w.b = append(w.b, '[')
		for i, p := range e.Points {
			if i > 0 {
				w.b = append(w.b, ',')
			}
			w.b = append(w.b, '[')
			w.b = appendFloat(w.b, p.X)
			w.b = append(w.b, ',')
			w.b = appendFloat(w.b, p.Y)
			w.b = append(w.b, ']')
		}
		w.b = append(w.b, ']')
		w.binding("startBinding", e.StartBinding)
		w.binding("endBinding", e.EndBinding)
		w.nullStr("startArrowhead", e.StartArrowhead)
		w.nullStr("endArrowhead", e.EndArrowhead)
		if e.Type == Arrow {
			w.boolean("elbowed", e.Elbowed)
		}
	case Frame:
		w.nullStr("name", e.Name)
	}
	w.extras(e.extra)
	w.b = append(w.b, '}')
	return w.b
}

type objWriter struct {
	b []byte
	n int
}

func (w *objWriter) key(k string) {
	if w.n > 0 {
		w.b = append(w.b, ',')
	}
	w.n++
	w.b = appendString(w.b, k)
	w.b = append(w.b, ':')
}

func (w *objWriter) str(k, v string) { w.key(k); w.b = appendString(w.b, v) }
func (w *objWriter) num(k string, v float64) {
	w.key(k)
	w.b = appendFloat(w.b, v)
}
func (w *objWriter) int(k string, v int64) { w.key(k); w.b = strconv.AppendInt(w.b, v, 10) }
func (w *objWriter) boolean(k string, v bool) {
	w.key(k)
	w.b = strconv.AppendBool(w.b, v)
}

func (w *objWriter) nullStr(k, v string) {
	w.key(k)
	if v == "" {
		w.b = append(w.b, "null"...)
		return
	}
	w.b = appendString(w.b, v)
}

func (w *objWriter) strList(vs []string) {
	w.b = append(w.b, '[')
	for i, v := range vs {
		if i > 0 {
			w.b = append(w.b, ',')
		}
		w.b = appendString(w.b, v)
	}
	w.b = append(w.b, ']')
}

func (w *objWriter) binding(k string, b *Binding) {
	w.key(k)
	if b == nil {
		w.b = append(w.b, "null"...)
		return
	}
	bw := objWriter{b: w.b}
	bw.b = append(bw.b, '{')
	bw.str("elementId", b.ElementID)
	if b.hasFocus || b.FixedPoint == nil {
		bw.num("focus", b.Focus)
	}
	if b.hasGap || b.FixedPoint == nil {
		bw.num("gap", b.Gap)
	}
	if b.FixedPoint != nil {
		bw.key("fixedPoint")
		bw.b = append(bw.b, '[')
		bw.b = appendFloat(bw.b, b.FixedPoint[0])
		bw.b = append(bw.b, ',')
		bw.b = appendFloat(bw.b, b.FixedPoint[1])
		bw.b = append(bw.b, ']')
	}
	if b.Mode != "" {
		bw.str("mode", b.Mode)
	}
	bw.extras(b.extra)
	w.b = append(bw.b, '}')
}

func (w *objWriter) extras(m map[string]json.RawMessage) {
	if len(m) == 0 {
		return
	}
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		w.key(k)
		w.b = append(w.b, m[k]...)
	}
}

// appendFloat formats like encoding/json (and JavaScript for the usual range).
func appendFloat(b []byte, f float64) []byte {
	abs := math.Abs(f)
	format := byte('f')
	if abs != 0 && (abs < 1e-6 || abs >= 1e21) {
		format = 'e'
	}
	b = strconv.AppendFloat(b, f, format, -1, 64)
	if format == 'e' {
		// Clean up e-09 to e-9, as encoding/json does.
		n := len(b)
		if n >= 4 && b[n-4] == 'e' && b[n-3] == '-' && b[n-2] == '0' {
			b[n-2] = b[n-1]
			b = b[:n-1]
		}
	}
	return b
}

// appendString writes s as a JSON string without HTML escaping (labels often contain < and &).
func appendString(b []byte, s string) []byte {
	const hex = "0123456789abcdef"
	b = append(b, '"')
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			switch {
			case c == '"' || c == '\\':
				b = append(b, '\\', c)
			case c == '\n':
				b = append(b, '\\', 'n')
			case c == '\r':
				b = append(b, '\\', 'r')
			case c == '\t':
				b = append(b, '\\', 't')
			case c < 0x20:
				b = append(b, '\\', 'u', '0', '0', hex[c>>4], hex[c&0xF])
			default:
				b = append(b, c)
			}
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			b = append(b, `\ufffd`...)
		case r == '\u2028' || r == '\u2029':
			b = append(b, '\\', 'u', '2', '0', '2', hex[r&0xF])
		default:
			b = append(b, s[i:i+size]...)
		}
		i += size
	}
	return append(b, '"')
}

// fieldReader decodes the known fields of one element, remembering the first error.
type fieldReader struct {
	m   map[string]json.RawMessage
	err error
}

func isNull(raw json.RawMessage) bool { return raw == nil || string(raw) == "null" }

func (r *fieldReader) fail(k, want string, raw json.RawMessage) {
	if r.err == nil {
		v := string(raw)
		if len(v) > 40 {
			v = v[:40] + "…"
		}
		r.err = fmt.Errorf("field %q: want %s, got %s", k, want, v)
	}
}

func (r *fieldReader) str(k string) string {
	raw := r.m[k]
	if isNull(raw) {
		return ""
	}
	// Fast path: a plain string without escapes (nearly all of them) needs no decoder.
	if n := len(raw); n >= 2 && raw[0] == '"' && raw[n-1] == '"' && bytes.IndexByte(raw[1:n-1], '\\') < 0 &&
		bytes.IndexByte(raw[1:n-1], '"') < 0 && utf8.Valid(raw[1:n-1]) {
		return string(raw[1 : n-1])
	}
	var s string
	if json.Unmarshal(raw, &s) != nil {
		r.fail(k, "a string", raw)
	}
	return s
}

func (r *fieldReader) num(k string, def float64) float64 {
	raw := r.m[k]
	if isNull(raw) {
		return def
	}
	// raw is one valid JSON value: if it is a number, ParseFloat reads it exactly as
	// encoding/json would; anything else (a string, an object) fails to parse.
	if c := raw[0]; c == '-' || (c >= '0' && c <= '9') {
		if f, err := strconv.ParseFloat(string(raw), 64); err == nil {
			return f
		}
	}
	r.fail(k, "a number", raw)
	return def
}

func (r *fieldReader) integer(k string, def int64) int64 {
	f := r.num(k, float64(def))
	if f != math.Trunc(f) || math.Abs(f) > 1<<53 {
		r.fail(k, "an integer", r.m[k])
		return def
	}
	return int64(f)
}

func (r *fieldReader) boolean(k string, def bool) bool {
	raw := r.m[k]
	if isNull(raw) {
		return def
	}
	switch string(raw) {
	case "true":
		return true
	case "false":
		return false
	}
	r.fail(k, "true or false", raw)
	return def
}

func (r *fieldReader) strList(k string) []string {
	raw := r.m[k]
	if isNull(raw) {
		return nil
	}
	var v []string
	if json.Unmarshal(raw, &v) != nil {
		r.fail(k, "an array of strings", raw)
	}
	return v
}
