// Package export says what a picture of a scene is made as (Format) and who makes it (Renderer).
// The conversation and the web server ask for pictures through it without linking the browser that
// draws them: package render, which satisfies Renderer, embeds Chromium's driver and the
// Excalidraw bundle.
package export

import (
	"context"

	"github.com/excalibot/excalibot/scene"
)

// Format is the kind of picture a scene is exported as; its value is the file extension.
type Format string

// The formats a Renderer makes.
const (
	PNG Format = "png" // with the scene embedded, so the picture opens editable in Excalidraw
	SVG Format = "svg" // with the diagram's alt text as its <title> and <desc>
)

// MIME is the format's media type.
func (f Format) MIME() string {
	if f == SVG {
		return "image/svg+xml"
	}
	return "image/png"
}

// Renderer turns a scene into a picture.
type Renderer interface {
	// Render returns sc as a picture of format, in a dark or light theme. doc is sc encoded as the
	// store keeps it: what the picture embeds, so nothing encodes it again.
	Render(ctx context.Context, sc *scene.Scene, doc []byte, format Format, dark bool) ([]byte, error)
}
