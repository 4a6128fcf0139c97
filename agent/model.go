package agent

import (
	"context"
	"encoding/json"

	"github.com/excalibot/excalibot/agent/ollama"
)

// The Ollama client is the Model the program runs, with every optional interface of one.
var (
	_ Model       = (*ollama.Client)(nil)
	_ Describer   = (*ollama.Client)(nil)
	_ Formatter   = (*ollama.Client)(nil)
	_ ModelLister = (*ollama.Client)(nil)
)

// Describer is a Model that can say what it can do. *ollama.Client implements it.
type Describer interface {
	Describe(ctx context.Context) (ollama.ModelInfo, error)
}

// Formatter is a Model that can be asked for one answer constrained to a JSON schema (Ollama's
// structured outputs, the request's "format"), without tools. *ollama.Client implements it.
type Formatter interface {
	ChatFormat(ctx context.Context, msgs []ollama.Message, format json.RawMessage) (ollama.Reply, error)
}

// Protocol is the way a run asks the model to draw.
type Protocol string

// Protocols. ProtocolAuto uses tools when the model has them and a plan otherwise.
const (
	ProtocolAuto  Protocol = "auto"
	ProtocolTools Protocol = "tools"
	ProtocolPlan  Protocol = "plan"
)

// For is the protocol a run of the model info describes uses under p: auto is tools unless the
// model reports what it can do and tools is not among it (a server too old to say gets tools);
// tools and plan stay as they are. A run in auto also turns to plans when the server refuses tools.
func (p Protocol) For(info ollama.ModelInfo) Protocol {
	if p != ProtocolAuto && p != "" {
		return p
	}
	if info.Known() && !info.Has(ollama.CapTools) {
		return ProtocolPlan
	}
	return ProtocolTools
}
