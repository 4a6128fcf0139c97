package agent

import (
	"context"
	"encoding/json"
	"slices"
)

// ModelInfo is what the server says of a model before the first request: what it can do and how
// much context it takes. Ollama reports it through /api/show.
type ModelInfo struct {
	Name string
	// Capabilities as the server names them: "completion", "tools", "thinking", "vision",
	// "insert", "embedding". Empty when the server is too old to report them.
	Capabilities []string
	// ContextLength is the model's trained context window in tokens (0 when unknown).
	ContextLength int
	Family        string // e.g. "qwen3", "gemma3"
	ParameterSize string // e.g. "8.2B"
	Quantization  string // e.g. "Q4_K_M"
}

// Capability names reported by Ollama.
const (
	CapCompletion = "completion"
	CapTools      = "tools"
	CapThinking   = "thinking"
	CapVision     = "vision"
)

// Has reports whether the model has capability c.
func (m ModelInfo) Has(c string) bool { return slices.Contains(m.Capabilities, c) }

// Known reports whether the server reported capabilities at all.
func (m ModelInfo) Known() bool { return len(m.Capabilities) > 0 }

// Describer is a Model that can say what it can do. *Ollama implements it.
type Describer interface {
	Describe(ctx context.Context) (ModelInfo, error)
}

// Formatter is a Model that can be asked for one answer constrained to a JSON schema (Ollama's
// structured outputs, the request's "format"), without tools. *Ollama implements it.
type Formatter interface {
	ChatFormat(ctx context.Context, msgs []Message, format json.RawMessage) (Reply, error)
}

// Protocol is the way a run asks the model to draw.
type Protocol string

// Protocols. ProtocolAuto uses tools when the model has them and a plan otherwise.
const (
	ProtocolAuto  Protocol = "auto"
	ProtocolTools Protocol = "tools"
	ProtocolPlan  Protocol = "plan"
)
