package tools

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"

	"github.com/excalibot/excalibot/diagram"
	"github.com/excalibot/excalibot/internal/plural"
	"github.com/excalibot/excalibot/scene"
)

func (s *Set) batchCreate(ctx context.Context, w *scene.Scene, o *object) (string, error) {
	if !o.has("elements") && o.has("type") {
		// One element sent without the list around it: small models do this; take it as meant.
		return s.createElement(ctx, w, o)
	}
	items, ok := o.objList("elements")
	if !ok && !o.has("elements") {
		o.p.add("elements", "missing; give a list like [{\"id\":\"r1\",\"type\":\"rectangle\",\"x\":0,\"y\":0,\"text\":\"API\"}]")
	}
	o.finish("elements")
	if ok && len(items) == 0 && o.p.ok() {
		return "", refuse("elements: the list is empty; give at least one element")
	}
	if len(items) > s.lim.MaxBatch {
		return "", refuse("elements: %d elements in one call; the limit is %d, split them over several calls", len(items), s.lim.MaxBatch)
	}
	specs := make([]elemArgs, len(items))
	for i, it := range items {
		specs[i] = decodeElement(it, s.lim, true)
	}
	if !o.p.ok() {
		return "", o.p
	}
	created, err := s.create(w, specs)
	if err != nil {
		return "", err
	}
	return createdText(w, created, s.lim), nil
}

func (s *Set) createElement(ctx context.Context, w *scene.Scene, o *object) (string, error) {
	if o.has("elements") && !o.has("type") {
		// A list sent to the one-element tool: do what batch_create_elements would.
		return s.batchCreate(ctx, w, o)
	}
	a := decodeElement(o, s.lim, true)
	if !o.p.ok() {
		return "", o.p
	}
	created, err := s.create(w, []elemArgs{a})
	if err != nil {
		return "", err
	}
	return createdText(w, created, s.lim), nil
}

// create adds the elements to w. Frames go first and arrows last, so that children and arrows can
// name frames and shapes given later in the same batch; within each kind the model's order is kept.
func (s *Set) create(w *scene.Scene, specs []elemArgs) ([]string, error) {
	if err := s.checkNewIDs(w, specs); err != nil {
		return nil, err
	}
	labels := 0
	for _, a := range specs {
		if a.Text != nil && *a.Text != "" && a.Type != "text" && a.Type != "frame" {
			labels++
		}
	}
	if n := w.Len() + len(specs) + labels; n > s.lim.MaxElements {
		return nil, refuse("the canvas would hold %d elements (labels count); the limit is %d. Delete elements or draw fewer (now %d)",
			n, s.lim.MaxElements, w.Len())
	}
	rank := func(t string) int {
		switch t {
		case "frame":
			return 0
		case "arrow", "line":
			return 2
		}
		return 1
	}
	order := make([]int, len(specs))
	for i := range order {
		order[i] = i
	}
	sort.SliceStable(order, func(x, y int) bool { return rank(specs[order[x]].Type) < rank(specs[order[y]].Type) })

	p := &problems{}
	refs := refsOf(w)
	for _, i := range order {
		a := specs[i]
		if err := s.checkRefs(w, refs, a, p); err != nil {
			continue
		}
		if err := addOne(w, a); err != nil {
			p.add(where(a), "%s", sceneErrText(err))
			continue
		}
		refs[a.ID] = refInfo{ID: a.ID, Type: scene.Type(a.Type)}
	}
	if !p.ok() {
		return nil, p
	}
	ids := make([]string, len(specs))
	for i, a := range specs {
		ids[i] = a.ID
	}
	return ids, nil
}

// where names an element in messages: its path in the call and its id.
func where(a elemArgs) string {
	if a.path == "" {
		return fmt.Sprintf("element %q", a.ID)
	}
	return fmt.Sprintf("%s (id %q)", a.path, a.ID)
}

func at(a elemArgs, field string) string {
	if a.path == "" {
		return field
	}
	return a.path + "." + field
}

// checkNewIDs refuses ids used twice in the call or already on the canvas.
func (s *Set) checkNewIDs(w *scene.Scene, specs []elemArgs) error {
	p := &problems{}
	first := map[string]string{}
	for _, a := range specs {
		if prev, dup := first[a.ID]; dup {
			p.add(at(a, "id"), "%q is already used by %s in this call; give each element its own id", a.ID, prev)
			continue
		}
		first[a.ID] = a.path
		if first[a.ID] == "" {
			first[a.ID] = "another element"
		}
		if e, exists := w.Get(a.ID); exists {
			p.add(at(a, "id"), "%q is already on the canvas (%s); pick another id, or use update_element to change it", a.ID, withArticle(e.Type))
		}
	}
	if !p.ok() {
		return p
	}
	return nil
}

// refInfo is what checking a reference needs to know about the element referred to.
type refInfo struct {
	ID, ContainerID string
	Type            scene.Type
}

// refsOf indexes the scene's elements for checkRefs: a batch checks hundreds of references, and
// scene.Get would deep-copy the target each time.
func refsOf(w *scene.Scene) map[string]refInfo {
	m := make(map[string]refInfo, w.Len())
	w.Each(func(e *scene.Element) bool {
		m[e.ID] = refInfo{e.ID, e.ContainerID, e.Type}
		return true
	})
	return m
}

// checkRefs checks the ids an element names (arrow ends, frame) exist in refs and fit, with the
// closest ids when they do not. Problems go to p; the returned error only says "skip this element".
func (s *Set) checkRefs(w *scene.Scene, refs map[string]refInfo, a elemArgs, p *problems) error {
	bad := false
	ref := func(field string, id *string, check func(refInfo) string) {
		if id == nil || *id == "" {
			return
		}
		e, ok := refs[*id]
		if !ok {
			p.add("", "%s", unknownIDText(w, at(a, field), []string{*id}))
			bad = true
			return
		}
		if msg := check(e); msg != "" {
			p.add(at(a, field), "%s", msg)
			bad = true
		}
	}
	target := func(e refInfo) string {
		if e.Type.IsShape() || e.Type == scene.Text && e.ContainerID == "" {
			return ""
		}
		if e.ContainerID != "" {
			return fmt.Sprintf("%q is the label of %q; attach the arrow to %q", e.ID, e.ContainerID, e.ContainerID)
		}
		return fmt.Sprintf("%q is %s; arrows attach to rectangles, ellipses, diamonds and texts", e.ID, withArticle(e.Type))
	}
	ref("startElementId", a.StartID, target)
	ref("endElementId", a.EndID, target)
	if a.StartID != nil && a.EndID != nil && *a.StartID != "" && *a.StartID == *a.EndID {
		p.add(at(a, "endElementId"), "start and end are both %q; an arrow needs two different shapes", *a.StartID)
		bad = true
	}
	ref("frameId", a.FrameID, func(e refInfo) string {
		if e.Type != scene.Frame {
			return fmt.Sprintf("%q is %s, not a frame; create a frame (type \"frame\") first", e.ID, withArticle(e.Type))
		}
		return ""
	})
	if bad {
		return errors.New("bad reference")
	}
	return nil
}

// addOne builds the element from the model's fields and adds it with its label.
func addOne(w *scene.Scene, a elemArgs) error {
	e := scene.NewElement(scene.Type(a.Type))
	e.ID = a.ID
	if a.X != nil {
		e.X = *a.X
	}
	if a.Y != nil {
		e.Y = *a.Y
	}
	if dw, dh, ok := diagram.DefaultSize(scene.Type(a.Type)); ok {
		e.Width, e.Height = dw, dh
	}
	if a.Width != nil {
		e.Width = *a.Width
	}
	if a.Height != nil {
		e.Height = *a.Height
	}
	applyStyle(&e, a)
	if a.FrameID != nil {
		e.FrameID = *a.FrameID
	}
	label := ""
	switch a.Type {
	case "text":
		e.Text = *a.Text
		if a.FontSize != nil {
			e.FontSize = *a.FontSize
		}
		if a.FontFamily != nil {
			e.FontFamily = *a.FontFamily
			e.LineHeight = 0 // the scene sets the family's line height
		}
		if a.Width != nil {
			e.AutoResize = false // a given width wraps the text
		}
	case "frame":
		if a.Text != nil {
			e.Name = *a.Text
		}
	default:
		if a.Text != nil {
			label = *a.Text
		}
	}
	if e.Type.IsLinear() {
		if err := setLinearGeometry(&e, a); err != nil {
			return err
		}
	}
	if _, err := w.Add(e); err != nil {
		return err
	}
	if label != "" {
		if _, err := w.SetLabel(e.ID, label, labelStyle(a)); err != nil {
			return err
		}
	}
	if a.Locked != nil && *a.Locked {
		return w.Lock(e.ID)
	}
	return nil
}

// setLinearGeometry sets an arrow's or line's bindings and points. Both ends bound: the scene
// routes it border to border and any points are ignored. Otherwise x, y and points place it.
func setLinearGeometry(e *scene.Element, a elemArgs) error {
	if a.StartID != nil && *a.StartID != "" {
		e.StartBinding = &scene.Binding{ElementID: *a.StartID, Gap: scene.DefaultGap}
	}
	if a.EndID != nil && *a.EndID != "" {
		e.EndBinding = &scene.Binding{ElementID: *a.EndID, Gap: scene.DefaultGap}
	}
	if e.StartBinding != nil && e.EndBinding != nil {
		return nil
	}
	if a.Points == nil {
		return refuse("%s: a %s with a free end needs x, y and points like [[0,0],[200,0]] (or both startElementId and endElementId)", at(a, "points"), a.Type)
	}
	if a.X == nil || a.Y == nil {
		return refuse("%s: give x and y: points are relative to them", at(a, "x"))
	}
	e.Points = make([]scene.Point, len(a.Points))
	for i, p := range a.Points {
		e.Points[i] = scene.Point{X: p.X, Y: p.Y}
	}
	return nil
}

// applyStyle copies the style fields the model gave onto e.
func applyStyle(e *scene.Element, a elemArgs) {
	if a.StrokeColor != nil {
		e.StrokeColor = *a.StrokeColor
	}
	if a.BackgroundColor != nil {
		e.BackgroundColor = *a.BackgroundColor
	}
	if a.FillStyle != nil {
		e.FillStyle = *a.FillStyle
	}
	if a.StrokeStyle != nil {
		e.StrokeStyle = *a.StrokeStyle
	}
	if a.StrokeWidth != nil {
		e.StrokeWidth = *a.StrokeWidth
	}
	if a.Roughness != nil {
		e.Roughness = *a.Roughness
	}
	if a.Opacity != nil {
		e.Opacity = *a.Opacity
	}
	if a.StartHead != nil {
		e.StartArrowhead = *a.StartHead
	}
	if a.EndHead != nil {
		e.EndArrowhead = *a.EndHead
	}
}

// labelStyle is the font the model gave for a container's label (zero fields keep the scene's).
func labelStyle(a elemArgs) scene.TextStyle {
	var st scene.TextStyle
	if a.FontSize != nil {
		st.FontSize = *a.FontSize
	}
	if a.FontFamily != nil {
		st.FontFamily = *a.FontFamily
	}
	return st
}

// sceneErrText turns a scene error into advice the model can follow.
func sceneErrText(err error) string {
	var r *refusal
	if errors.As(err, &r) {
		return r.msg
	}
	msg := err.Error()
	switch {
	case errors.Is(err, scene.ErrLocked):
		return msg + "; call unlock_elements first"
	case errors.Is(err, scene.ErrNotFound):
		return msg + "; call get_scene to see the ids"
	}
	return msg
}

// createdText reports what a create call made, with the warnings that concern the new elements.
func createdText(w *scene.Scene, ids []string, lim Limits) string {
	var b strings.Builder
	shown := ids
	if len(shown) > 30 {
		shown = shown[:30]
	}
	fmt.Fprintf(&b, "created %d: %s", len(ids), strings.Join(shown, ", "))
	if len(ids) > len(shown) {
		fmt.Fprintf(&b, ", … (%d more)", len(ids)-len(shown))
	}
	fmt.Fprintf(&b, ". The canvas has %s (limit %d).", plural.Count(w.Len(), "element", ""), lim.MaxElements)
	b.WriteString(warningsAbout(w, ids))
	return b.String()
}

// warningsAbout returns the lint warnings that involve any of ids, so a create or update call
// tells the model at once what it just broke.
func warningsAbout(w *scene.Scene, ids []string) string {
	focus := make(map[string]bool, len(ids))
	for _, id := range ids {
		focus[id] = true
	}
	mine := lintScoped(newView(w), lintScope{focus: focus})
	if len(mine) == 0 {
		return ""
	}
	return "\n" + formatWarnings(mine, 8)
}

func withArticle(t scene.Type) string {
	switch t {
	case scene.Arrow, scene.Ellipse, scene.Image:
		return "an " + string(t)
	}
	return "a " + string(t)
}
