package tools

import (
	"context"
	"fmt"
	"strings"

	"github.com/excalibot/excalibot/internal/plural"
	"github.com/excalibot/excalibot/scene"
)

// idList reads the "ids" field every multi-element tool takes, checking the ids exist and are
// not labels (the model addresses a label through its shape).
// Other fields must have been read before: idList finishes the object, refusing unknown fields.
func (s *Set) idList(w *scene.Scene, o *object, minN int, example string, known ...string) ([]string, error) {
	ids, ok := o.strList("ids")
	if !ok && !o.has("ids") {
		o.p.add("ids", "missing; give element ids, e.g. %s", example)
	}
	o.finish(append([]string{"ids"}, known...)...)
	return s.checkIDs(w, o, ids, minN, example)
}

func (s *Set) checkIDs(w *scene.Scene, o *object, ids []string, minN int, example string) ([]string, error) {
	if !o.p.ok() {
		return nil, o.p
	}
	if len(ids) < minN {
		return nil, refuse("ids: give at least %d ids, e.g. %s", minN, example)
	}
	seen := map[string]bool{}
	var uniq []string
	for _, id := range ids {
		if !seen[id] {
			seen[id] = true
			uniq = append(uniq, id)
		}
	}
	if err := unknownIDs(w, "ids", uniq); err != nil {
		return nil, err
	}
	for i, id := range uniq {
		if e, _ := w.Get(id); e.Type == scene.Text && e.ContainerID != "" {
			if seen[e.ContainerID] {
				uniq[i] = "" // its container is listed; the label goes with it
				continue
			}
			return nil, refuse("ids: %q is the label of %q; use %q", id, e.ContainerID, e.ContainerID)
		}
	}
	out := uniq[:0]
	for _, id := range uniq {
		if id != "" {
			out = append(out, id)
		}
	}
	return out, nil
}

func (s *Set) deleteElements(_ context.Context, w *scene.Scene, o *object) (string, error) {
	ids, err := s.idList(w, o, 1, `["r1","a1"]`)
	if err != nil {
		return "", err
	}
	types := map[string]scene.Type{}
	w.Each(func(e *scene.Element) bool {
		types[e.ID] = e.Type
		return true
	})
	removed, err := w.Delete(ids...)
	if err != nil {
		return "", refuse("%s", sceneErrText(err))
	}
	asked := map[string]bool{}
	for _, id := range ids {
		asked[id] = true
	}
	var also []string
	for _, id := range removed {
		if !asked[id] && types[id] == scene.Arrow {
			also = append(also, id)
		}
	}
	msg := fmt.Sprintf("deleted %s", strings.Join(ids, ", "))
	if len(also) > 0 {
		msg += fmt.Sprintf("; also deleted the arrows attached to them: %s", strings.Join(also, ", "))
	}
	return msg + ". The canvas has " + plural.Count(w.Len(), "element", "") + ".", nil
}

func (s *Set) lockElements(_ context.Context, w *scene.Scene, o *object) (string, error) {
	ids, err := s.idList(w, o, 1, `["r1"]`)
	if err != nil {
		return "", err
	}
	if err := w.Lock(ids...); err != nil {
		return "", refuse("%s", sceneErrText(err))
	}
	return fmt.Sprintf("locked %s: they refuse changes until unlock_elements.", strings.Join(ids, ", ")), nil
}

func (s *Set) unlockElements(_ context.Context, w *scene.Scene, o *object) (string, error) {
	ids, err := s.idList(w, o, 1, `["r1"]`)
	if err != nil {
		return "", err
	}
	if err := w.Unlock(ids...); err != nil {
		return "", refuse("%s", sceneErrText(err))
	}
	return fmt.Sprintf("unlocked %s.", strings.Join(ids, ", ")), nil
}
