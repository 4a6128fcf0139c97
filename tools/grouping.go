package tools

import "github.com/excalibot/excalibot/scene"

func (s *Set) groupElements(w *scene.Scene, o *object) (string, error) {
	return "", refuse("group_elements is not available yet")
}

func (s *Set) ungroupElements(w *scene.Scene, o *object) (string, error) {
	return "", refuse("ungroup_elements is not available yet")
}

func (s *Set) alignElements(w *scene.Scene, o *object) (string, error) {
	return "", refuse("align_elements is not available yet")
}

func (s *Set) distributeElements(w *scene.Scene, o *object) (string, error) {
	return "", refuse("distribute_elements is not available yet")
}
