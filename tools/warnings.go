package tools

import "github.com/excalibot/excalibot/scene"

// Warnings returns the lint warnings get_scene would show for sc: what still looks broken. The
// agent loop uses it to say plainly when a run ends with problems left.
func Warnings(sc *scene.Scene) []string { return lint(newView(sc)) }
