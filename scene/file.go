package scene

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
)

// MaxFileSize is the largest input Decode accepts. Real diagrams are well under 1 MB; anything near
// this is not a diagram an agent should edit, and refusing it early keeps a bad upload cheap.
const MaxFileSize = 50 << 20

// MaxDepth bounds how deeply a file's JSON may nest. Real files nest about six levels (envelope,
// elements, element, points, point); unknown fields are kept as they are and written back
// indented, so a few kilobytes of "[[[[…" would grow quadratically, to hundreds of megabytes,
// on every save.
const MaxDepth = 64

// tooDeep reports whether data nests objects and arrays more than max levels deep, in one pass
// that skips strings, before anything is parsed.
func tooDeep(data []byte, max int) bool {
	depth, inString, escaped := 0, false, false
	for _, c := range data {
		switch {
		case inString:
			switch {
			case escaped:
				escaped = false
			case c == '\\':
				escaped = true
			case c == '"':
				inString = false
			}
		case c == '"':
			inString = true
		case c == '{' || c == '[':
			if depth++; depth > max {
				return true
			}
		case c == '}' || c == ']':
			depth--
		}
	}
	return false
}

// Source is written in the envelope's "source" field.
const Source = "https://github.com/excalibot/excalibot"

// viewportKey is the appState key under which the scene's viewport is stored. Excalidraw's
// restoreAppState keeps only the keys it knows, so the key is harmless to it.
const viewportKey = "excalibotViewport"

// ErrFormat is wrapped by every error Decode returns for input that is not a usable .excalidraw file.
var ErrFormat = errors.New("not a valid .excalidraw file")

// Decode reads a .excalidraw file (or Excalidraw clipboard JSON) tolerantly:
//   - current excalidraw.com files (v2 bindings with fixedPoint/mode), 0.18 files (v1 bindings) and
//     legacy fields (strokeSharpness, boundElementIds) are accepted and migrated like Excalidraw's
//     restore does;
//   - freedraw, image and unknown element types, unknown fields, appState and files are kept;
//   - deleted elements (isDeleted) are kept as tombstones;
//   - invalid or non-increasing index keys are repaired like syncInvalidIndices;
//   - dangling references (containerId, frameId, bindings, boundElements) are removed, and one-sided
//     text and arrow bindings are completed on the other side, like restore's repairBindings;
//   - links other than http(s) are dropped (SafeLink), and so are files that are not inline
//     data:image/ URLs: every upload, editor save and stored scene passes through here.
//
// Errors wrap ErrFormat and say what is wrong and where (element position and id).
func Decode(data []byte, opts ...Option) (*Scene, error) {
	if len(data) > MaxFileSize {
		return nil, fmt.Errorf("%w: %d bytes is over the %d MB limit", ErrFormat, len(data), MaxFileSize>>20)
	}
	if tooDeep(data, MaxDepth) {
		return nil, fmt.Errorf("%w: JSON nested more than %d levels deep", ErrFormat, MaxDepth)
	}
	var env map[string]json.RawMessage
	if err := json.Unmarshal(data, &env); err != nil {
		var se *json.SyntaxError
		var te *json.UnmarshalTypeError
		switch {
		case errors.As(err, &se):
			return nil, fmt.Errorf("%w: not JSON: %v at byte %d", ErrFormat, se, se.Offset)
		case errors.As(err, &te):
			return nil, fmt.Errorf("%w: the top level must be a JSON object, got %s", ErrFormat, te.Value)
		}
		return nil, fmt.Errorf("%w: not JSON: %v", ErrFormat, err)
	}
	if env == nil {
		return nil, fmt.Errorf("%w: the top level must be a JSON object, got null", ErrFormat)
	}
	var typ string
	if raw, ok := env["type"]; !ok {
		return nil, fmt.Errorf(`%w: "type" is missing (want "excalidraw")`, ErrFormat)
	} else if json.Unmarshal(raw, &typ) != nil || (typ != "excalidraw" && typ != "excalidraw/clipboard") {
		return nil, fmt.Errorf(`%w: "type" is %s, want "excalidraw"`, ErrFormat, clip(raw))
	}
	var rawElems []json.RawMessage
	if raw, ok := env["elements"]; !ok || isNull(raw) {
		return nil, fmt.Errorf(`%w: "elements" is missing`, ErrFormat)
	} else if err := json.Unmarshal(raw, &rawElems); err != nil {
		return nil, fmt.Errorf(`%w: "elements" must be an array, got %s`, ErrFormat, clip(raw))
	}

	s := New(opts...)
	if raw := env["appState"]; !isNull(raw) {
		if err := json.Unmarshal(raw, &s.appState); err != nil {
			return nil, fmt.Errorf(`%w: "appState" must be an object, got %s`, ErrFormat, clip(raw))
		}
		if vp, ok := s.appState[viewportKey]; ok {
			delete(s.appState, viewportKey)
			var r struct{ X, Y, Width, Height float64 }
			if json.Unmarshal(vp, &r) == nil && r.Width > 0 && r.Height > 0 {
				s.viewport = &Rect{r.X, r.Y, r.Width, r.Height}
			}
		}
	}
	if raw := env["files"]; !isNull(raw) {
		if err := json.Unmarshal(raw, &s.files); err != nil {
			return nil, fmt.Errorf(`%w: "files" must be an object, got %s`, ErrFormat, clip(raw))
		}
		safeFiles(s.files)
	}

	s.elems = make([]*Element, 0, len(rawElems))
	for i, raw := range rawElems {
		e, err := decodeElement(raw)
		if err != nil {
			return nil, fmt.Errorf("%w: elements[%d]%s: %v", ErrFormat, i, idHint(e), err)
		}
		if _, dup := s.pos.m[e.ID]; dup {
			// Excalidraw gives duplicates a fresh id; a readable suffix keeps the element findable.
			e.ID = s.freeID(e.ID)
		}
		s.pos.m[e.ID] = len(s.elems)
		s.elems = append(s.elems, e)
	}
	idx := make([]string, len(s.elems))
	for i, e := range s.elems {
		idx[i] = e.Index
	}
	for _, i := range syncIndices(idx) {
		s.elems[i].Index = idx[i]
	}
	s.repairReferences()
	return s, nil
}

func idHint(e *Element) string {
	if e == nil || e.ID == "" {
		return ""
	}
	return fmt.Sprintf(" (id %q)", e.ID)
}

func clip(raw json.RawMessage) string {
	s := string(raw)
	if len(s) > 40 {
		s = s[:40] + "…"
	}
	return s
}

// decodeElement parses one element. The returned element is non-nil when at least its id was read,
// so that errors can name it.
func decodeElement(raw json.RawMessage) (*Element, error) {
	var m map[string]json.RawMessage
	if err := json.Unmarshal(raw, &m); err != nil || m == nil {
		return nil, fmt.Errorf("an element must be a JSON object, got %s", clip(raw))
	}
	r := &fieldReader{m: m}
	e := &Element{ID: r.str("id"), Type: Type(r.str("type"))}
	if r.err != nil {
		return e, r.err
	}
	if e.ID == "" {
		return e, errors.New(`"id" is missing or empty`)
	}
	if e.Type == "" {
		return e, errors.New(`"type" is missing or empty`)
	}
	e.X, e.Y = r.num("x", 0), r.num("y", 0)
	e.Width, e.Height = r.num("width", 0), r.num("height", 0)
	e.Angle = r.num("angle", 0)
	e.StrokeColor = r.str("strokeColor")
	e.BackgroundColor = r.str("backgroundColor")
	e.FillStyle = r.str("fillStyle")
	e.StrokeWidth = r.num("strokeWidth", 2)
	e.StrokeStyle = r.str("strokeStyle")
	e.Roughness = r.num("roughness", 1)
	e.Opacity = r.num("opacity", 100)
	e.GroupIDs = r.strList("groupIds")
	e.FrameID = r.str("frameId")
	e.Index = r.str("index")
	e.Seed = r.integer("seed", 1)
	e.Version = r.integer("version", 1)
	e.VersionNonce = r.integer("versionNonce", 0)
	e.IsDeleted = r.boolean("isDeleted", false)
	e.Updated = r.integer("updated", 1)
	e.Link = SafeLink(r.str("link")) // untrusted: see SafeLink
	e.Locked = r.boolean("locked", false)
	fillDefaultStrings(e)
	if raw := m["roundness"]; !isNull(raw) {
		var rd Roundness
		if json.Unmarshal(raw, &rd) != nil {
			r.fail("roundness", `{"type": 1|2|3}`, raw)
		} else {
			e.Roundness = &rd
		}
	} else if sharp := m["strokeSharpness"]; !isNull(sharp) {
		// Legacy: strokeSharpness "round" became roundness (restore.ts).
		var v string
		if json.Unmarshal(sharp, &v) == nil && v == "round" {
			t := RoundnessProportional
			if e.Type == Rectangle || e.Type == Image || e.Type == "embeddable" || e.Type == "iframe" {
				t = RoundnessAdaptive
			}
			e.Roundness = &Roundness{Type: t}
		}
	}
	if raw := m["boundElements"]; !isNull(raw) {
		if json.Unmarshal(raw, &e.BoundElements) != nil {
			r.fail("boundElements", `an array of {"id", "type"}`, raw)
		}
	}
	if raw := m["boundElementIds"]; !isNull(raw) {
		// Legacy: boundElementIds were arrows.
		var ids []string
		if json.Unmarshal(raw, &ids) == nil {
			for _, id := range ids {
				addBound(e, BoundElement{ID: id, Type: Arrow})
			}
		}
	}
	switch e.Type {
	case Text:
		e.Text = r.str("text")
		e.FontSize = r.num("fontSize", DefaultFontSize)
		e.FontFamily = int(r.integer("fontFamily", DefaultFontFamily))
		e.TextAlign = r.str("textAlign")
		e.VerticalAlign = r.str("verticalAlign")
		e.ContainerID = r.str("containerId")
		e.OriginalText = r.str("originalText")
		e.AutoResize = r.boolean("autoResize", true)
		e.LineHeight = r.num("lineHeight", 0)
		if _, ok := m["originalText"]; !ok {
			e.OriginalText = e.Text
		}
		if e.TextAlign == "" {
			e.TextAlign = "left"
		}
		if e.VerticalAlign == "" {
			e.VerticalAlign = "top"
		}
		if e.FontSize <= 0 {
			e.FontSize = DefaultFontSize
		}
		if e.LineHeight <= 0 {
			e.LineHeight = lineHeightOf(e.FontFamily)
		}
	case Arrow, Line:
		e.Points = r.points("points")
		e.StartBinding = r.binding("startBinding")
		e.EndBinding = r.binding("endBinding")
		e.StartArrowhead = r.str("startArrowhead")
		e.EndArrowhead = r.str("endArrowhead")
		if e.Type == Arrow {
			e.Elbowed = r.boolean("elbowed", false)
		}
		if len(e.Points) == 0 {
			// restore() in 0.18.1 throws on this; a straight line across the box loses nothing.
			e.Points = []Point{{0, 0}, {e.Width, e.Height}}
		}
		normalizePoints(e)
	case Frame:
		e.Name = r.str("name")
	}
	if r.err != nil {
		return e, r.err
	}
	if !finite(e.X, e.Y, e.Width, e.Height, e.Angle) {
		return e, errors.New("coordinates must be finite numbers")
	}
	for k, v := range m {
		if isKnownKey(e.Type, k) || k == "strokeSharpness" || k == "boundElementIds" {
			continue
		}
		if e.extra == nil {
			e.extra = map[string]json.RawMessage{}
		}
		e.extra[k] = compact(v)
	}
	return e, nil
}

func fillDefaultStrings(e *Element) {
	for _, f := range []struct {
		v  *string
		dv string
	}{{&e.StrokeColor, DefaultStrokeColor}, {&e.BackgroundColor, DefaultBackgroundColor},
		{&e.FillStyle, "solid"}, {&e.StrokeStyle, "solid"}} {
		if *f.v == "" {
			*f.v = f.dv
		}
	}
}

func compact(raw json.RawMessage) json.RawMessage {
	var b bytes.Buffer
	if json.Compact(&b, raw) != nil {
		return raw
	}
	return b.Bytes()
}

func (r *fieldReader) points(k string) []Point {
	raw := r.m[k]
	if isNull(raw) {
		return nil
	}
	var ps [][]float64
	if json.Unmarshal(raw, &ps) != nil {
		r.fail(k, "an array of [x, y] pairs", raw)
		return nil
	}
	out := make([]Point, 0, len(ps))
	for i, p := range ps {
		if len(p) < 2 || !finite(p[0], p[1]) {
			r.fail(fmt.Sprintf("%s[%d]", k, i), "an [x, y] pair", raw)
			return nil
		}
		out = append(out, Point{p[0], p[1]})
	}
	return out
}

func (r *fieldReader) binding(k string) *Binding {
	raw := r.m[k]
	if isNull(raw) {
		return nil
	}
	var m map[string]json.RawMessage
	if json.Unmarshal(raw, &m) != nil || m == nil {
		r.fail(k, "an object {elementId, focus, gap}", raw)
		return nil
	}
	br := &fieldReader{m: m}
	b := &Binding{ElementID: br.str("elementId")}
	_, b.hasFocus = m["focus"]
	_, b.hasGap = m["gap"]
	b.Focus = br.num("focus", 0)
	b.Gap = br.num("gap", 0)
	b.Mode = br.str("mode")
	if fp := m["fixedPoint"]; !isNull(fp) {
		var v [2]float64
		if json.Unmarshal(fp, &v) != nil {
			br.fail("fixedPoint", "an [x, y] pair", fp)
		} else {
			b.FixedPoint = &v
		}
	}
	if br.err != nil {
		r.fail(k, "a binding: "+br.err.Error(), raw)
		return nil
	}
	if b.ElementID == "" {
		return nil // a binding to nothing is no binding
	}
	for key, v := range m {
		switch key {
		case "elementId", "focus", "gap", "mode", "fixedPoint":
			continue
		}
		if b.extra == nil {
			b.extra = map[string]json.RawMessage{}
		}
		b.extra[key] = compact(v)
	}
	return b
}

// repairReferences removes references to missing or deleted elements and completes one-sided
// bindings, like restore's repairBindings. Deleted elements (tombstones) are left as they are.
func (s *Scene) repairReferences() {
	for i, e := range s.elems {
		if e.IsDeleted {
			continue
		}
		c := e.clone()
		if c.FrameID != "" {
			if f := s.get(c.FrameID); f == nil || f.Type != Frame || f.ID == c.ID {
				c.FrameID = ""
			}
		}
		if c.ContainerID != "" {
			if k := s.get(c.ContainerID); k == nil || !(k.Type.IsShape() || k.Type.IsLinear()) {
				c.ContainerID = ""
			}
		}
		for _, bp := range []**Binding{&c.StartBinding, &c.EndBinding} {
			if *bp != nil {
				if t := s.get((*bp).ElementID); t == nil || t.ID == c.ID || t.Type.IsLinear() {
					*bp = nil
				}
			}
		}
		s.elems[i] = c
	}
	// boundElements, once every containerId and binding above is settled: keep entries whose
	// element exists and points back at us; one text only.
	for i, c := range s.elems {
		if c.IsDeleted {
			continue
		}
		var kept []BoundElement
		hasText := false
		for _, b := range c.BoundElements {
			o := s.get(b.ID)
			switch {
			case o == nil || containsID(kept, b.ID):
			case o.Type == Text && o.ContainerID == c.ID && !hasText:
				kept = append(kept, BoundElement{ID: b.ID, Type: Text})
				hasText = true
			case o.Type.IsLinear() && ((o.StartBinding != nil && o.StartBinding.ElementID == c.ID) ||
				(o.EndBinding != nil && o.EndBinding.ElementID == c.ID)):
				kept = append(kept, BoundElement{ID: b.ID, Type: o.Type})
			}
		}
		if kept == nil && c.BoundElements != nil {
			kept = []BoundElement{}
		}
		c.BoundElements = kept
		s.elems[i] = c
	}
	// Complete the other side: containers list their texts, targets list their arrows.
	for _, e := range s.elems {
		if e.IsDeleted {
			continue
		}
		if e.ContainerID != "" {
			k := s.elems[s.pos.m[e.ContainerID]]
			if l := k.Label(); l == "" {
				addBound(k, BoundElement{ID: e.ID, Type: Text})
			} else if l != e.ID {
				e.ContainerID = "" // a second label for the same container: keep it as free text
			}
		}
		for _, b := range []*Binding{e.StartBinding, e.EndBinding} {
			if b != nil {
				addBound(s.elems[s.pos.m[b.ElementID]], BoundElement{ID: e.ID, Type: e.Type})
			}
		}
	}
}

func containsID(bs []BoundElement, id string) bool {
	for _, b := range bs {
		if b.ID == id {
			return true
		}
	}
	return false
}

// Encode writes the scene as a .excalidraw file: the standard envelope
// {type, version 2, source, elements, appState, files}, indented like Excalidraw's own files.
// Elements are written in z-order with the full field set; output is deterministic.
func (s *Scene) Encode() ([]byte, error) {
	var b bytes.Buffer
	b.Grow(600 * (len(s.elems) + 1))
	b.WriteString(`{"type":"excalidraw","version":2,"source":`)
	b.Write(appendString(nil, Source))
	b.WriteString(`,"elements":[`)
	for i, e := range s.elems {
		if i > 0 {
			b.WriteByte(',')
		}
		b.Write(encodeElement(e))
	}
	b.WriteString(`],"appState":`)
	app := map[string]json.RawMessage{}
	if s.appState == nil {
		app["gridSize"] = json.RawMessage("20")
		app["gridStep"] = json.RawMessage("5")
		app["gridModeEnabled"] = json.RawMessage("false")
		app["viewBackgroundColor"] = json.RawMessage(`"#ffffff"`)
	}
	for k, v := range s.appState {
		app[k] = v
	}
	if s.viewport != nil {
		v := s.viewport
		app[viewportKey] = json.RawMessage(fmt.Sprintf(`{"x":%s,"y":%s,"width":%s,"height":%s}`,
			appendFloat(nil, v.X), appendFloat(nil, v.Y), appendFloat(nil, v.Width), appendFloat(nil, v.Height)))
	}
	ab, err := json.Marshal(app)
	if err != nil {
		return nil, fmt.Errorf("encode appState: %w", err)
	}
	b.Write(ab)
	b.WriteString(`,"files":`)
	files := s.files
	if files == nil {
		files = map[string]json.RawMessage{}
	}
	fb, err := json.Marshal(files)
	if err != nil {
		return nil, fmt.Errorf("encode files: %w", err)
	}
	b.Write(fb)
	b.WriteByte('}')
	var out bytes.Buffer
	out.Grow(b.Len() * 2)
	if err := json.Indent(&out, b.Bytes(), "", "  "); err != nil {
		return nil, fmt.Errorf("indent: %w", err)
	}
	out.WriteByte('\n')
	return out.Bytes(), nil
}
