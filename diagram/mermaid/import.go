package mermaid

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"sort"
	"strings"

	"github.com/excalibot/excalibot/diagram"
	"github.com/excalibot/excalibot/internal/plural"
	"github.com/excalibot/excalibot/scene"
)

// Imported says what Import added.
type Imported struct {
	Type    string
	Image   bool
	Shapes  []string // "A \"Start\"": id and label of each shape, in order
	Arrows  int
	Renamed int // ids changed because the scene already used them
	Fixes   []string
	At      scene.Point // top-left corner of the diagram on the canvas
}

// String tells the model (or the user) what was drawn.
func (m Imported) String() string {
	var b strings.Builder
	kind := strings.TrimSuffix(m.Type, "-v2")
	if m.Image {
		fmt.Fprintf(&b, "Mermaid %s diagrams cannot become Excalidraw shapes, so it was inserted as one picture at (%.0f,%.0f), as Excalidraw itself does; it cannot be edited shape by shape. Flowchart, sequence, class, state and ER diagrams become editable shapes.", kind, m.At.X, m.At.Y)
	} else {
		fmt.Fprintf(&b, "Drew the Mermaid %s diagram at (%.0f,%.0f): %s, %s.", kind, m.At.X, m.At.Y,
			plural.Count(len(m.Shapes), "shape", ""), plural.Count(m.Arrows, "arrow", ""))
		if len(m.Shapes) > 0 {
			list := m.Shapes
			if len(list) > 20 {
				list = append(list[:20:20], fmt.Sprintf("… %d more", len(m.Shapes)-20))
			}
			b.WriteString(" Shapes: " + strings.Join(list, ", ") + ".")
		}
		if m.Renamed > 0 {
			fmt.Fprintf(&b, " %s already used on the canvas and got a suffix.", plural.Count(m.Renamed, "id was", "ids were"))
		}
	}
	if len(m.Fixes) > 0 {
		b.WriteString(" Repaired in the Mermaid text: " + strings.Join(m.Fixes, "; ") + ".")
	}
	return b.String()
}

// Import returns a new scene: sc with the diagram placed where the other builders place a new
// diagram (diagram.Beside: right of the drawing, tops aligned), or the diagram alone when replace
// is set. Ids the scene already uses are renamed
// in every reference. The result is loaded with scene.Decode, which checks and repairs references
// the way Excalidraw's restore does, so labels stay bound to their shapes and arrows to theirs.
// sc is not changed.
func Import(sc *scene.Scene, d Diagram, replace bool) (*scene.Scene, Imported, error) {
	info := Imported{Type: d.Type, Image: d.Image, Fixes: d.Fixes}
	if len(d.Elements) == 0 {
		return nil, info, errors.New("the Mermaid diagram has nothing to draw")
	}
	var env map[string]json.RawMessage
	base, err := sc.Encode()
	if err == nil {
		err = json.Unmarshal(base, &env)
	}
	if err != nil {
		return nil, info, fmt.Errorf("read the current scene: %w", err)
	}
	var old []json.RawMessage
	if !replace {
		if err := json.Unmarshal(env["elements"], &old); err != nil {
			return nil, info, fmt.Errorf("read the current elements: %w", err)
		}
	}
	files := map[string]json.RawMessage{}
	if !replace {
		if raw := env["files"]; len(raw) > 0 && string(raw) != "null" {
			if err := json.Unmarshal(raw, &files); err != nil {
				return nil, info, fmt.Errorf("read the current files: %w", err)
			}
		}
	}

	elems := make([]map[string]any, len(d.Elements))
	for i, raw := range d.Elements {
		if err := json.Unmarshal(raw, &elems[i]); err != nil || elems[i] == nil {
			return nil, info, fmt.Errorf("converted element %d is not an object", i)
		}
	}
	used := map[string]bool{}
	usedGroups := map[string]bool{}
	if !replace {
		sc.Each(func(e *scene.Element) bool {
			used[e.ID] = true
			for _, g := range e.GroupIDs {
				usedGroups[g] = true
			}
			return true
		})
	}
	info.Renamed = renameIDs(elems, used, usedGroups)

	// Place the diagram: beside the drawing, or where Mermaid put it on an empty canvas.
	minX, minY := math.Inf(1), math.Inf(1)
	for _, e := range elems {
		x, _ := e["x"].(float64)
		y, _ := e["y"].(float64)
		minX, minY = math.Min(minX, x), math.Min(minY, y)
	}
	at := scene.Point{X: minX, Y: minY}
	if _, ok := diagram.Bounds(sc, nil); ok && !replace {
		at = diagram.Beside(sc)
	}
	dx, dy := at.X-minX, at.Y-minY
	info.At = at
	for _, e := range elems {
		x, _ := e["x"].(float64)
		y, _ := e["y"].(float64)
		e["x"], e["y"] = x+dx, y+dy
		delete(e, "index") // the scene numbers the new elements after the old ones
		t, _ := e["type"].(string)
		switch {
		case t == "arrow" || t == "line":
			info.Arrows++
		case t == "rectangle" || t == "ellipse" || t == "diamond":
			id, _ := e["id"].(string)
			info.Shapes = append(info.Shapes, shapeName(id, e, elems))
		}
	}
	for id, f := range d.Files {
		files[id] = f
	}

	all := make([]any, 0, len(old)+len(elems))
	for _, o := range old {
		all = append(all, o)
	}
	for _, e := range elems {
		all = append(all, e)
	}
	env["elements"], err = json.Marshal(all)
	if err == nil {
		env["files"], err = json.Marshal(files)
	}
	var doc []byte
	if err == nil {
		doc, err = json.Marshal(env)
	}
	if err != nil {
		return nil, info, fmt.Errorf("encode the scene with the diagram: %w", err)
	}
	next, err := scene.Decode(doc)
	if err != nil {
		return nil, info, fmt.Errorf("load the converted diagram: %w", err)
	}
	if vp, ok := sc.Viewport(); ok && !replace {
		// The picture should show the new diagram too: the old viewport alone would hide it.
		b, _ := next.Bounds()
		_ = next.SetViewport(b.Union(vp))
	}
	return next, info, nil
}

// shapeName is `id "label"` for a shape, with the text bound to it.
func shapeName(id string, shape map[string]any, elems []map[string]any) string {
	bound, _ := shape["boundElements"].([]any)
	for _, b := range bound {
		ref, _ := b.(map[string]any)
		if ref["type"] != "text" {
			continue
		}
		for _, e := range elems {
			if e["id"] == ref["id"] {
				if t, _ := e["originalText"].(string); t != "" {
					return fmt.Sprintf("%s %q", id, strings.ReplaceAll(t, "\n", " "))
				}
				if t, _ := e["text"].(string); t != "" {
					return fmt.Sprintf("%s %q", id, strings.ReplaceAll(t, "\n", " "))
				}
			}
		}
	}
	return id
}

// renameIDs gives the new elements ids and group ids the scene does not use yet, and rewrites every
// reference to them. It returns how many element ids changed.
func renameIDs(elems []map[string]any, used, usedGroups map[string]bool) int {
	ids := map[string]string{}
	for _, e := range elems {
		id, _ := e["id"].(string)
		if id == "" || !used[id] {
			used[id] = true
			continue
		}
		n := id
		for i := 2; used[n]; i++ {
			n = fmt.Sprintf("%s_%d", id, i)
		}
		used[n] = true
		ids[id] = n
		e["id"] = n
	}
	groups := map[string]string{}
	var names []string
	for _, e := range elems {
		gs, _ := e["groupIds"].([]any)
		for _, g := range gs {
			if s, ok := g.(string); ok && usedGroups[s] {
				if _, seen := groups[s]; !seen {
					names = append(names, s)
					groups[s] = ""
				}
			}
		}
	}
	sort.Strings(names)
	for _, g := range names {
		n := g
		for i := 2; usedGroups[n]; i++ {
			n = fmt.Sprintf("%s_%d", g, i)
		}
		usedGroups[n] = true
		groups[g] = n
	}
	if len(ids) == 0 && len(groups) == 0 {
		return 0
	}
	re := func(v any) any {
		if s, ok := v.(string); ok {
			if n, ok := ids[s]; ok {
				return n
			}
		}
		return v
	}
	for _, e := range elems {
		for _, k := range []string{"containerId", "frameId"} {
			if v, ok := e[k]; ok {
				e[k] = re(v)
			}
		}
		for _, k := range []string{"startBinding", "endBinding"} {
			if b, ok := e[k].(map[string]any); ok {
				b["elementId"] = re(b["elementId"])
			}
		}
		if bs, ok := e["boundElements"].([]any); ok {
			for _, b := range bs {
				if m, ok := b.(map[string]any); ok {
					m["id"] = re(m["id"])
				}
			}
		}
		if gs, ok := e["groupIds"].([]any); ok {
			for i, g := range gs {
				if s, ok := g.(string); ok && groups[s] != "" {
					gs[i] = groups[s]
				}
			}
		}
	}
	return len(ids)
}
