// Package mermaid puts Mermaid diagrams on a scene: the Converter a browser provides (Mermaid itself
// runs in the renderer's page), the Error a diagram Mermaid refuses comes back as, and Import, which
// adds converted elements to a scene beside what is there.
//
// The package links no layout engine: the bot and the renderer use it without paying Graphviz's
// start-up.
package mermaid

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/excalibot/excalibot/internal/clip"
)

// Converter turns Mermaid text into Excalidraw elements. A diagram Mermaid refuses returns an
// *Error (possibly wrapped); any other error means the conversion itself failed.
type Converter interface {
	Mermaid(ctx context.Context, src string) (Diagram, error)
}

// Diagram is a converted diagram: complete Excalidraw elements (labels bound to their shapes,
// arrows to the shapes they join) at Mermaid's coordinates, and the files of image elements.
type Diagram struct {
	Elements []json.RawMessage
	Files    map[string]json.RawMessage
	// Type is Mermaid's name of the diagram type ("flowchart-v2", "sequence", "class", "pie" …).
	Type string
	// Image is true when the type has no Excalidraw shapes and came as one picture.
	Image bool
	// Fixes lists what was repaired in the text before Mermaid accepted it.
	Fixes []string
}

// Error is Mermaid text Mermaid refused: the failing line and what to write instead.
type Error struct {
	// Line is the failing line in the text as given (1-based, counting lines before a ``` fence);
	// 0 when Mermaid did not say.
	Line int
	// LineText is that line's text.
	LineText string
	// Message is Mermaid's own message, without the source excerpt it repeats.
	Message string
	// Hint says what is probably wrong and how to write it.
	Hint string
	// Fixes lists what was repaired automatically before giving up.
	Fixes []string
}

// UserMessage is the refusal in words for the person who sent the diagram: which line, what is
// wrong and what to write instead.
func (e *Error) UserMessage() string {
	var b strings.Builder
	b.WriteString("I could not read that Mermaid diagram")
	if e.Line > 0 {
		fmt.Fprintf(&b, " (line %d", e.Line)
		if t := strings.TrimSpace(e.LineText); t != "" {
			fmt.Fprintf(&b, ": `%s`", clip.Runes(t, 80))
		}
		b.WriteString(")")
	}
	if e.Message != "" {
		b.WriteString(": " + e.Message)
	}
	if e.Hint != "" {
		b.WriteString(". Hint: " + e.Hint)
	}
	return b.String()
}

func (e *Error) Error() string {
	var b strings.Builder
	b.WriteString("Mermaid syntax error")
	if e.Line > 0 {
		fmt.Fprintf(&b, " on line %d", e.Line)
		if t := strings.TrimSpace(e.LineText); t != "" {
			fmt.Fprintf(&b, ": %s", t)
		}
	}
	if e.Message != "" {
		b.WriteString(" — " + e.Message)
	}
	if e.Hint != "" {
		b.WriteString(". Hint: " + e.Hint)
	}
	return b.String()
}
