package tools

import (
	"context"
	"fmt"
	"strings"

	"github.com/excalibot/excalibot/scene"
)

func (s *Set) groupElements(_ context.Context, w *scene.Scene, o *object) (string, error) {
	gid, hasGID := s.lim.id(o, "groupId")
	ids, err := s.idList(w, o, 2, `["r1","r2"]`, "groupId")
	if err != nil {
		return "", err
	}
	if hasGID {
		for _, g := range w.Groups() {
			if g == gid {
				return "", refuse("groupId: %q is already a group (members: %s); pick another id or ungroup it first",
					gid, strings.Join(w.GroupMembers(gid), ", "))
			}
		}
	} else {
		gid = freeGroupID(w)
	}
	got, err := w.Group(gid, ids...)
	if err != nil {
		return "", refuse("%s", sceneErrText(err))
	}
	return fmt.Sprintf("grouped %s as %q; they now move together. To undo: ungroup_elements {\"groupId\":%q}.",
		strings.Join(ids, ", "), got, got), nil
}

// freeGroupID picks g1, g2, ... so the model sees short group ids it can type back.
func freeGroupID(w *scene.Scene) string {
	used := map[string]bool{}
	for _, g := range w.Groups() {
		used[g] = true
	}
	for i := 1; ; i++ {
		if g := fmt.Sprintf("g%d", i); !used[g] {
			return g
		}
	}
}

func (s *Set) ungroupElements(_ context.Context, w *scene.Scene, o *object) (string, error) {
	gid, hasGID := o.str("groupId")
	ids, hasIDs := o.strList("ids")
	o.finish("groupId", "ids")
	if !o.p.ok() {
		return "", o.p
	}
	groups := w.Groups()
	var dissolve []string
	switch {
	case hasGID && hasIDs:
		return "", refuse("give either groupId or ids, not both")
	case hasIDs:
		// The groups the elements are in, as a model that knows only element ids means it.
		if err := unknownIDs(w, "ids", ids); err != nil {
			return "", err
		}
		seen := map[string]bool{}
		for _, id := range ids {
			e, _ := w.Get(id)
			for _, g := range e.GroupIDs {
				if !seen[g] {
					seen[g] = true
					dissolve = append(dissolve, g)
				}
			}
		}
		if len(dissolve) == 0 {
			return "", refuse("ids: %s %s not in any group", strings.Join(ids, ", "), map[bool]string{true: "is", false: "are"}[len(ids) == 1])
		}
	case hasGID:
		found := false
		for _, g := range groups {
			found = found || g == gid
		}
		if !found {
			if len(groups) == 0 {
				return "", refuse("groupId: no group %q; there are no groups on the canvas", gid)
			}
			return "", refuse("groupId: no group %q%s; groups: %s", gid, didYouMean(gid, groups), strings.Join(groups, ", "))
		}
		dissolve = []string{gid}
	default:
		return "", refuse("groupId: missing; give the group's id as get_scene shows it (group=g1), e.g. {\"groupId\":\"g1\"}, or the ids of its elements")
	}
	var parts []string
	for _, g := range dissolve {
		members, err := w.Ungroup(g)
		if err != nil {
			return "", refuse("%s", sceneErrText(err))
		}
		parts = append(parts, fmt.Sprintf("%q: %s", g, strings.Join(visibleOnly(w, members), ", ")))
	}
	return "ungrouped " + strings.Join(parts, "; ") + ".", nil
}

// visibleOnly drops label ids, which the model never addresses.
func visibleOnly(w *scene.Scene, ids []string) []string {
	var out []string
	for _, id := range ids {
		if e, ok := w.Get(id); ok && !(e.Type == scene.Text && e.ContainerID != "") {
			out = append(out, id)
		}
	}
	return out
}

func (s *Set) alignElements(_ context.Context, w *scene.Scene, o *object) (string, error) {
	how, _ := o.enum("alignment", alignments, map[string]string{"centre": "center", "vertical": "center", "horizontal": "middle"})
	if !o.has("alignment") {
		o.p.add("alignment", "missing; use one of %s", quoteList(alignments))
	}
	ids, err := s.idList(w, o, 2, `["r1","r2"]`, "alignment")
	if err != nil {
		return "", err
	}
	if err := w.Align(ids, scene.Alignment(how)); err != nil {
		return "", refuse("%s", sceneErrText(err))
	}
	return fmt.Sprintf("aligned %s on their %s; attached arrows followed.%s", strings.Join(ids, ", "), how, positions(w, ids)), nil
}

func (s *Set) distributeElements(_ context.Context, w *scene.Scene, o *object) (string, error) {
	dir, _ := o.enum("direction", directions, map[string]string{"horizontally": "horizontal", "vertically": "vertical", "x": "horizontal", "y": "vertical"})
	if !o.has("direction") {
		o.p.add("direction", "missing; use \"horizontal\" or \"vertical\"")
	}
	ids, err := s.idList(w, o, 3, `["r1","r2","r3"]`, "direction")
	if err != nil {
		return "", err
	}
	if err := w.Distribute(ids, scene.Direction(dir)); err != nil {
		return "", refuse("%s", sceneErrText(err))
	}
	return fmt.Sprintf("distributed %s %sly with equal gaps.%s", strings.Join(ids, ", "), dir, positions(w, ids)), nil
}

// positions lists where the elements ended up, so the model need not call get_scene to know.
func positions(w *scene.Scene, ids []string) string {
	v := newView(w)
	var b strings.Builder
	for _, id := range ids {
		if e, ok := v.byID[id]; ok {
			b.WriteString("\n" + v.elementLine(e))
		}
	}
	return b.String()
}
