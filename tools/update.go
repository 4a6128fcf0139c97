package tools

import (
	"context"
	"strings"

	"github.com/excalibot/excalibot/scene"
)

func (s *Set) updateElement(_ context.Context, w *scene.Scene, o *object) (string, error) {
	a := decodeElement(o, s.lim, false)
	e, ok := w.Get(a.ID)
	if !ok && a.ID != "" {
		// Reported with any field problems, so one answer lists everything to fix.
		o.p.add("", "%s", unknownIDText(w, "id", []string{a.ID}))
	}
	if !o.p.ok() {
		return "", o.p
	}
	if e.Type == scene.Text && e.ContainerID != "" {
		return "", refuse("id: %q is the label of %q; update %q instead (its text, fontSize, fontFamily)", e.ID, e.ContainerID, e.ContainerID)
	}
	a.Type = string(e.Type)
	checkFieldsForType(o, &a, false)
	if e.Type == scene.Text && a.Text != nil && strings.TrimSpace(*a.Text) == "" {
		o.p.add("text", "empty; to remove a text element use delete_elements")
	}
	if !o.p.ok() {
		return "", o.p
	}
	if !anyChange(a) {
		return "", refuse("nothing to change: give the fields to change besides id, e.g. {\"id\":%q,\"backgroundColor\":\"green\"}", a.ID)
	}
	if a.StartID != nil || a.EndID != nil || a.FrameID != nil {
		p := &problems{}
		if err := s.checkRefs(w, refsOf(w), a, p); err != nil {
			return "", p
		}
	}
	// Unlock first when asked, so that the same call can unlock and edit.
	if a.Locked != nil && !*a.Locked && e.Locked {
		if err := w.Unlock(a.ID); err != nil {
			return "", refuse("%s", sceneErrText(err))
		}
	} else if e.Locked {
		return "", refuse("%q is locked: call unlock_elements with {\"ids\":[%q]} first, or add \"locked\": false to this call", a.ID, a.ID)
	}
	if err := applyUpdate(w, e, a); err != nil {
		return "", refuse("%s", sceneErrText(err))
	}
	if a.Locked != nil && *a.Locked {
		if err := w.Lock(a.ID); err != nil {
			return "", refuse("%s", sceneErrText(err))
		}
	}
	after, _ := w.Get(a.ID)
	v := newView(w)
	line := v.elementLine(&after)
	if v.isConnection(&after) {
		line = v.connectionLine(&after)
	}
	return "updated: " + line + warningsAbout(w, []string{a.ID}), nil
}

// anyChange reports whether the update names anything besides the id.
func anyChange(a elemArgs) bool {
	return a.X != nil || a.Y != nil || a.Width != nil || a.Height != nil || a.Text != nil ||
		a.StrokeColor != nil || a.BackgroundColor != nil || a.FillStyle != nil || a.StrokeStyle != nil ||
		a.StrokeWidth != nil || a.Roughness != nil || a.Opacity != nil || a.FontSize != nil ||
		a.FontFamily != nil || a.StartID != nil || a.EndID != nil || a.StartHead != nil ||
		a.EndHead != nil || a.Points != nil || a.FrameID != nil || a.Locked != nil
}

// applyUpdate changes e in w: geometry and style through scene.Update (which moves labels and
// re-routes arrows), the label through SetLabel, its font on the label element.
func applyUpdate(w *scene.Scene, old scene.Element, a elemArgs) error {
	isLabelled := old.Type.IsShape() || old.Type == scene.Arrow
	err := w.Update(old.ID, func(e *scene.Element) error {
		if a.Points != nil {
			e.Points = make([]scene.Point, len(a.Points))
			for i, p := range a.Points {
				e.Points[i] = scene.Point{X: p.X, Y: p.Y}
			}
		}
		if a.X != nil {
			e.X = *a.X
		}
		if a.Y != nil {
			e.Y = *a.Y
		}
		if a.Width != nil {
			e.Width = *a.Width
			if e.Type == scene.Text {
				e.AutoResize = false
			}
		}
		if a.Height != nil {
			e.Height = *a.Height
		}
		applyStyle(e, a)
		if a.StartID != nil {
			e.StartBinding = binding(*a.StartID)
		}
		if a.EndID != nil {
			e.EndBinding = binding(*a.EndID)
		}
		switch e.Type {
		case scene.Text:
			if a.Text != nil {
				e.Text = *a.Text
				e.OriginalText = *a.Text
			}
			if a.FontSize != nil {
				e.FontSize = *a.FontSize
			}
			if a.FontFamily != nil {
				e.FontFamily = *a.FontFamily
				e.LineHeight = 0
			}
		case scene.Frame:
			if a.Text != nil {
				e.Name = *a.Text
			}
		}
		return nil
	})
	if err != nil {
		return err
	}
	if a.FrameID != nil && *a.FrameID != old.FrameID {
		// SetFrame moves the label into (or out of) the frame with its shape.
		if err := w.SetFrame(*a.FrameID, old.ID); err != nil {
			return err
		}
	}
	if isLabelled && (a.Text != nil || a.FontSize != nil || a.FontFamily != nil || a.StrokeColor != nil) {
		c, _ := w.Get(old.ID)
		text := w.LabelText(old.ID)
		if a.Text != nil {
			text = *a.Text
		}
		if text == "" && (a.FontSize != nil || a.FontFamily != nil) && a.Text == nil {
			return refuse("fontSize: %q has no text to size; give it text as well", old.ID)
		}
		st := labelStyle(a)
		if a.StrokeColor != nil {
			// The label is drawn in the shape's stroke colour, as Excalidraw does for new labels.
			st.StrokeColor = *a.StrokeColor
		}
		if text != "" || c.Label() != "" {
			if _, err := w.SetLabel(old.ID, text, st); err != nil {
				return err
			}
		}
	}
	return nil
}

func binding(id string) *scene.Binding {
	if id == "" {
		return nil
	}
	return &scene.Binding{ElementID: id, Gap: scene.DefaultGap}
}
