package render

import (
	"fmt"
	"io/fs"
)

// Fonts returns the CJK fallback font chunks (Xiaolai/*.woff2) this package embeds for its render
// page, so the hosted editor (package web) serves the same files instead of embedding a second
// 13 MB copy. Paths look like "Xiaolai/<chunk>.woff2".
func Fonts() fs.FS {
	sub, err := fs.Sub(dist, "web/dist/fonts")
	if err != nil {
		// fs.Sub fails only for an invalid path, which a constant is not.
		panic(fmt.Sprintf("render: embedded fonts: %v", err))
	}
	return sub
}
