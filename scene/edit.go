package scene

import (
	"fmt"
	"slices"
)

// Add inserts a new element on top of the z-order and returns it as stored.
//
// Build e with NewElement to get Excalidraw's UI defaults; empty string style fields, a zero
// opacity, stroke width, font size or font family are filled with those defaults too. The scene
// assigns seed (if zero), version, versionNonce, updated and index; an empty ID gets a random one.
//
// Texts are measured (auto-resizing) from Text. Arrows and lines need at least two points, except an
// arrow with both StartBinding and EndBinding set: it is routed from border to border. Bindings only
// need ElementID; the scene lists the arrow in its targets' boundElements and puts the bound ends on
// the targets' borders (see RerouteArrows). Labels are added with SetLabel, not with ContainerID;
// BoundElements is managed by the scene and must be empty.
func (s *Scene) Add(e Element) (Element, error) {
	var out Element
	err := s.atomically(func(w *Scene) error {
		n, err := w.add(e)
		if err == nil {
			out = *w.get(n).clone()
		}
		return err
	})
	return out, err
}

func (s *Scene) add(in Element) (string, error) {
	e := in.clone()
	e.owner = s.tok
	if e.ID == "" {
		e.ID = s.newID()
	}
	name := fmt.Sprintf("element %q", e.ID)
	if !e.Type.modeled() {
		return "", fmt.Errorf("%s: %w: type %q cannot be created (use rectangle, ellipse, diamond, text, arrow, line or frame)", name, ErrInvalid, e.Type)
	}
	if i, used := s.pos.m[e.ID]; used {
		if !s.elems[i].IsDeleted {
			return "", fmt.Errorf("%s: %w", name, ErrExists)
		}
		s.remove(i) // a tombstone from a loaded file gives way to the new element
	}
	fillDefaults(e)
	if err := validateGeometry(e); err != nil {
		return "", fmt.Errorf("%s: %w", name, err)
	}
	if len(e.BoundElements) > 0 {
		return "", fmt.Errorf("%s: %w: boundElements is managed by the scene; bind arrows with StartBinding/EndBinding and labels with SetLabel", name, ErrInvalid)
	}
	if e.ContainerID != "" {
		return "", fmt.Errorf("%s: %w: containerId: add labels with SetLabel", name, ErrInvalid)
	}
	if err := s.checkFrame(e); err != nil {
		return "", err
	}
	for _, g := range e.GroupIDs {
		if g == "" {
			return "", fmt.Errorf("%s: %w: empty group id", name, ErrInvalid)
		}
	}
	if err := s.checkBinding(e, e.StartBinding, "startBinding"); err != nil {
		return "", err
	}
	if err := s.checkBinding(e, e.EndBinding, "endBinding"); err != nil {
		return "", err
	}
	if e.StartBinding != nil && e.EndBinding != nil && e.StartBinding.ElementID == e.EndBinding.ElementID && len(e.Points) < 3 {
		return "", fmt.Errorf("%s: %w: an arrow from %q back to itself needs at least 3 points to go around", name, ErrInvalid, e.StartBinding.ElementID)
	}
	if e.Type.IsLinear() {
		if len(e.Points) < 2 {
			if e.StartBinding == nil || e.EndBinding == nil {
				return "", fmt.Errorf("%s: %w: an %s needs at least 2 points unless both ends are bound", name, ErrInvalid, e.Type)
			}
			st, en := s.get(e.StartBinding.ElementID), s.get(e.EndBinding.ElementID)
			setAbsPoints(e, []Point{st.Center(), en.Center()})
		}
		normalizePoints(e)
	}
	if e.Type == Text {
		if e.Text == "" {
			return "", fmt.Errorf("%s: %w: text is empty", name, ErrInvalid)
		}
		e.OriginalText = e.Text
		layoutFreeText(e)
	}
	e.IsDeleted = false
	if e.Seed == 0 || e.Seed == 1 {
		e.Seed = s.randInt()
	}
	e.Version = 0
	s.touch(e)
	s.insert(len(s.elems), e)
	if e.StartBinding != nil {
		e.StartBinding.hasGap, e.StartBinding.hasFocus = true, true
		s.listArrow(e.StartBinding.ElementID, e.ID)
	}
	if e.EndBinding != nil {
		e.EndBinding.hasGap, e.EndBinding.hasFocus = true, true
		s.listArrow(e.EndBinding.ElementID, e.ID)
	}
	s.routeArrow(e.ID)
	return e.ID, nil
}

// fillDefaults gives zero-valued style fields Excalidraw's defaults.
func fillDefaults(e *Element) {
	d := Element{StrokeColor: DefaultStrokeColor, BackgroundColor: DefaultBackgroundColor,
		FillStyle: "solid", StrokeStyle: "solid", StrokeWidth: 2, TextAlign: "left", VerticalAlign: "top",
		FontSize: DefaultFontSize, FontFamily: DefaultFontFamily}
	def := func(v *string, dv string) {
		if *v == "" {
			*v = dv
		}
	}
	def(&e.StrokeColor, d.StrokeColor)
	def(&e.BackgroundColor, d.BackgroundColor)
	def(&e.FillStyle, d.FillStyle)
	def(&e.StrokeStyle, d.StrokeStyle)
	if e.Opacity == 0 {
		e.Opacity = 100
	}
	if e.StrokeWidth == 0 {
		e.StrokeWidth = d.StrokeWidth
	}
	if e.Type == Text {
		def(&e.TextAlign, d.TextAlign)
		def(&e.VerticalAlign, d.VerticalAlign)
		if e.FontSize == 0 {
			e.FontSize = d.FontSize
		}
		if e.FontFamily == 0 {
			e.FontFamily = d.FontFamily
		}
		if e.LineHeight == 0 {
			e.LineHeight = lineHeightOf(e.FontFamily)
		}
	}
}

// validateGeometry checks numbers are finite and sizes sensible for the element's type.
func validateGeometry(e *Element) error {
	if !finite(e.X, e.Y, e.Width, e.Height, e.Angle, e.StrokeWidth, e.Opacity, e.Roughness, e.FontSize) {
		return fmt.Errorf("%w: coordinates, sizes and style numbers must be finite", ErrInvalid)
	}
	for i, p := range e.Points {
		if !finite(p.X, p.Y) {
			return fmt.Errorf("%w: points[%d] is not finite", ErrInvalid, i)
		}
	}
	if e.Type.IsShape() || e.Type == Frame {
		if e.Width <= 0 || e.Height <= 0 {
			return fmt.Errorf("%w: width and height must be positive (got %gx%g)", ErrInvalid, e.Width, e.Height)
		}
	}
	if e.Type == Text && e.FontSize <= 0 {
		return fmt.Errorf("%w: fontSize must be positive (got %g)", ErrInvalid, e.FontSize)
	}
	if e.Opacity < 0 || e.Opacity > 100 {
		return fmt.Errorf("%w: opacity must be 0..100 (got %g)", ErrInvalid, e.Opacity)
	}
	return nil
}

// layoutFreeText sizes a text that is not a label: auto-resizing texts take their text's size;
// fixed-width texts wrap to their width.
func layoutFreeText(e *Element) {
	if e.LineHeight <= 0 {
		e.LineHeight = lineHeightOf(e.FontFamily)
	}
	if e.AutoResize || e.Width <= 0 {
		e.Text = e.OriginalText
		measureText(e)
		return
	}
	e.Text = wrapText(e.FontFamily, e.FontSize, e.OriginalText, e.Width)
	e.Height = textHeight(e)
}

func (s *Scene) checkFrame(e *Element) error {
	if e.FrameID == "" {
		return nil
	}
	f := s.get(e.FrameID)
	if f == nil {
		return fmt.Errorf("element %q: frameId: frame %q: %w", e.ID, e.FrameID, ErrNotFound)
	}
	if f.Type != Frame {
		return fmt.Errorf("element %q: %w: frameId %q is a %s, not a frame", e.ID, ErrInvalid, f.ID, f.Type)
	}
	if e.Type == Frame {
		return fmt.Errorf("element %q: %w: frames cannot be nested", e.ID, ErrInvalid)
	}
	return nil
}

// Update changes the element with the given id through fn, which edits a copy; nothing changes if
// fn or the validation after it fails. Then the scene keeps everything consistent:
//   - version, versionNonce and updated are bumped (on the element and on everything that follows);
//   - a text's size is re-measured, a label is re-wrapped and re-centred in its container, which
//     grows when the label no longer fits;
//   - a shape that moved, was resized or rotated carries its label, and its arrows follow;
//   - a frame that moved carries its children;
//   - an arrow's points are normalised, its bindings re-listed on its targets and its bound ends
//     put back on the targets' borders.
//
// fn must not change ID, Type, Seed, Version, VersionNonce, Updated, Index, IsDeleted,
// BoundElements, ContainerID or GroupIDs (use Delete, Group, Ungroup, SetLabel and the z-order
// methods). A locked element refuses every change except Locked = false (ErrLocked), and so does the
// label of a locked container. Freedraw and unknown element types cannot be resized.
func (s *Scene) Update(id string, fn func(e *Element) error) error {
	return s.atomically(func(w *Scene) error { return w.update(id, fn) })
}

func (s *Scene) update(id string, fn func(e *Element) error) error {
	old, err := s.mustGet(id)
	if err != nil {
		return err
	}
	e := old.clone()
	if err := fn(e); err != nil {
		return fmt.Errorf("element %q: %w", id, err)
	}
	if err := s.checkUpdate(old, e); err != nil {
		return err
	}
	e.owner = s.tok
	if old.Type == Text && e.Text != old.Text {
		e.OriginalText = e.Text
	}
	if e.Type.IsLinear() {
		if len(e.Points) < 2 {
			return fmt.Errorf("element %q: %w: an %s needs at least 2 points", id, ErrInvalid, e.Type)
		}
		normalizePoints(e)
	}
	if e.Type == Text && e.ContainerID == "" {
		layoutFreeText(e)
	}
	s.touch(e)
	s.put(e)

	// Bindings that changed: the old targets stop listing the arrow, the new ones list it.
	for _, pair := range [][2]*Binding{{old.StartBinding, e.StartBinding}, {old.EndBinding, e.EndBinding}} {
		o, n := pair[0], pair[1]
		if o != nil && (n == nil || n.ElementID != o.ElementID) {
			s.unlistArrow(o.ElementID, id)
		}
		if n != nil && (o == nil || n.ElementID != o.ElementID) {
			n.hasGap, n.hasFocus = true, true
			s.listArrow(n.ElementID, id)
		}
	}
	// A label shares its container's frame and lock.
	if l := s.get(e.Label()); l != nil && (l.FrameID != e.FrameID || l.Locked != e.Locked) &&
		(e.FrameID != old.FrameID || e.Locked != old.Locked) {
		c := s.edit(l)
		c.FrameID, c.Locked = e.FrameID, e.Locked
		s.touch(c)
		s.put(c)
	}
	s.afterGeometryChange(old, e)
	return nil
}

// afterGeometryChange propagates a change of one element: labels, arrows, frame children.
func (s *Scene) afterGeometryChange(old, e *Element) {
	moved := old.X != e.X || old.Y != e.Y
	geom := moved || old.Width != e.Width || old.Height != e.Height || old.Angle != e.Angle
	switch {
	case e.Type == Text && e.ContainerID != "":
		s.layoutLabel(e.ContainerID)
	case e.Type.IsLinear():
		s.routeArrow(e.ID)
		s.layoutLabel(e.ID)
	default:
		if geom || old.FontSize != e.FontSize {
			s.layoutLabel(e.ID)
		}
	}
	if e.Type == Frame && moved {
		dx, dy := e.X-old.X, e.Y-old.Y
		for _, c := range s.frameChildren(e.ID) {
			s.shift(c, dx, dy)
		}
	}
	if geom || e.Type == Text {
		s.RerouteArrows(e.ID)
	}
}

// shift moves one element by (dx, dy) with its label, and re-routes its arrows.
func (s *Scene) shift(id string, dx, dy float64) {
	old := s.get(id)
	if old == nil || (dx == 0 && dy == 0) {
		return
	}
	e := s.edit(old)
	e.X += dx
	e.Y += dy
	s.touch(e)
	s.put(e)
	if e.Type.IsLinear() {
		s.routeArrow(e.ID)
	}
	s.layoutLabel(e.ID)
	s.RerouteArrows(e.ID)
}

func (s *Scene) frameChildren(frameID string) []string {
	var out []string
	for _, c := range s.elems {
		if !c.IsDeleted && c.FrameID == frameID && c.ContainerID == "" {
			out = append(out, c.ID)
		}
	}
	return out
}

// checkUpdate refuses changes Update does not allow.
func (s *Scene) checkUpdate(old, e *Element) error {
	name := fmt.Sprintf("element %q", old.ID)
	fixed := func(field string, changed bool, use string) error {
		if changed {
			return fmt.Errorf("%s: %w: %s cannot be changed by Update (%s)", name, ErrInvalid, field, use)
		}
		return nil
	}
	for _, err := range []error{
		fixed("id", e.ID != old.ID, "delete and add instead"),
		fixed("type", e.Type != old.Type, "delete and add instead"),
		fixed("seed", e.Seed != old.Seed, "it is fixed at creation"),
		fixed("version/versionNonce/updated", e.Version != old.Version || e.VersionNonce != old.VersionNonce || e.Updated != old.Updated, "the scene bumps them"),
		fixed("index", e.Index != old.Index, "use the z-order methods"),
		fixed("isDeleted", e.IsDeleted != old.IsDeleted, "use Delete"),
		fixed("boundElements", !slices.Equal(e.BoundElements, old.BoundElements), "bind arrows with their bindings and labels with SetLabel"),
		fixed("containerId", e.ContainerID != old.ContainerID, "use SetLabel"),
		fixed("groupIds", !slices.Equal(e.GroupIDs, old.GroupIDs), "use Group and Ungroup"),
	} {
		if err != nil {
			return err
		}
	}
	if s.lockedFor(old) {
		unlockOnly := old.clone()
		unlockOnly.Locked = e.Locked
		if !old.Locked || e.Locked || !sameElement(unlockOnly, e) {
			return s.lockedError(old)
		}
	}
	if err := validateGeometry(e); err != nil {
		return fmt.Errorf("%s: %w", name, err)
	}
	if e.Type == Text && e.Text == "" && e.OriginalText == "" {
		return fmt.Errorf("%s: %w: text is empty (delete the element instead)", name, ErrInvalid)
	}
	if !e.Type.modeled() && e.Type != Image && (e.Width != old.Width || e.Height != old.Height) {
		return fmt.Errorf("%s: %w: a %s element cannot be resized here", name, ErrInvalid, e.Type)
	}
	if e.FrameID != old.FrameID {
		if err := s.checkFrame(e); err != nil {
			return err
		}
	}
	if e.Type.IsLinear() {
		for _, b := range []*Binding{e.StartBinding, e.EndBinding} {
			if b != nil && b.ElementID == e.ID {
				return fmt.Errorf("%s: %w: an arrow cannot bind to itself", name, ErrInvalid)
			}
		}
		if err := s.checkBinding(e, e.StartBinding, "startBinding"); err != nil {
			return err
		}
		if err := s.checkBinding(e, e.EndBinding, "endBinding"); err != nil {
			return err
		}
	} else if e.StartBinding != nil || e.EndBinding != nil {
		return fmt.Errorf("%s: %w: only arrows have bindings", name, ErrInvalid)
	}
	return nil
}

// lockedFor reports whether e refuses edits: it is locked, or it is the label of a locked container.
func (s *Scene) lockedFor(e *Element) bool {
	if e.Locked {
		return true
	}
	if e.ContainerID != "" {
		if c := s.get(e.ContainerID); c != nil && c.Locked {
			return true
		}
	}
	return false
}

// mustGetUnlocked returns the element id, or an error when it is unknown or locked (itself, or
// the container of a label): what every edit checks first.
func (s *Scene) mustGetUnlocked(id string) (*Element, error) {
	e, err := s.mustGet(id)
	if err != nil {
		return nil, err
	}
	if s.lockedFor(e) {
		return nil, s.lockedError(e)
	}
	return e, nil
}

func (s *Scene) lockedError(e *Element) error {
	if e.ContainerID != "" {
		return fmt.Errorf("element %q is the label of %q: %w (unlock %q first)", e.ID, e.ContainerID, ErrLocked, e.ContainerID)
	}
	return fmt.Errorf("element %q: %w (unlock it first)", e.ID, ErrLocked)
}

// sameElement compares two elements field by field, through their JSON form (which covers every
// field, the unmodelled ones included).
func sameElement(a, b *Element) bool {
	return string(encodeElement(a)) == string(encodeElement(b))
}
