// Package tools gives the agent's model its tools over a scene: JSON schemas written for small
// local models, strict validation of arguments, limits, and results the model can act on.
package tools

import "encoding/json"

// Spec describes one tool to the model.
type Spec struct {
	// Name is the tool name the model calls, e.g. "batch_create_elements".
	Name string
	// Description tells a small model what the tool does and when to use it.
	Description string
	// Parameters is a JSON Schema object for the tool's arguments.
	Parameters json.RawMessage
}

// Result is the answer to one tool call. Every call gets one, also a failed call.
type Result struct {
	// Text is what the model reads: the outcome, or an error saying which field was wrong,
	// what was wrong, and what would be right.
	Text string
	// IsError is true when the call changed nothing because its arguments were refused.
	IsError bool
	// Done is true when the model called the done tool: the run should end.
	Done bool
}
