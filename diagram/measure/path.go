package measure

import (
	"math"

	"github.com/excalibot/excalibot/scene"
)

// drawnPath is the line Excalidraw draws for an arrow (scene.Element.DrawnPath).
func drawnPath(e *scene.Element) []scene.Point { return e.DrawnPath() }

func dist(a, b scene.Point) float64 { return math.Hypot(b.X-a.X, b.Y-a.Y) }

func pathLength(pts []scene.Point) float64 {
	l := 0.0
	for i := 1; i < len(pts); i++ {
		l += dist(pts[i-1], pts[i])
	}
	return l
}
