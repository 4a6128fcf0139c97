package ollama

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"sync"

	"github.com/ollama/ollama/api"

	"github.com/excalibot/excalibot/internal/logkey"
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

// describeCache holds the first successful answer of /api/show: what a model can do does not
// change while it stays pulled, and a run asks before each request it plans.
type describeCache struct {
	mu   sync.Mutex
	info *ModelInfo
}

// Describe asks the server what the model can do (POST /api/show). The first successful answer
// is kept, so later calls cost nothing; a failure is not kept. Its errors are actionable like
// Chat's: ErrUnreachable when the server does not answer, ErrModelNotFound when the model is not
// pulled. A server too old to report capabilities gives a ModelInfo whose Known is false.
func (o *Client) Describe(ctx context.Context) (ModelInfo, error) {
	o.describe.mu.Lock()
	cached := o.describe.info
	o.describe.mu.Unlock()
	if cached != nil {
		return *cached, nil
	}
	info, err := o.Inspect(ctx)
	if err != nil {
		return info, err
	}
	o.describe.mu.Lock()
	if o.describe.info == nil {
		o.describe.info = &info
	}
	o.describe.mu.Unlock()
	return info, nil
}

// Inspect is Describe asked again: the server's answer now, not the one kept. A health view
// uses it, as a model may be removed or pulled while the program runs.
func (o *Client) Inspect(ctx context.Context) (ModelInfo, error) {
	resp, err := o.client.Show(ctx, &api.ShowRequest{Model: o.cfg.Model})
	if err != nil {
		return ModelInfo{}, o.explainShow(ctx, err)
	}
	return infoFrom(o.cfg.Model, resp), nil
}

// Version is the server's version (GET /api/version), with Describe's errors.
func (o *Client) Version(ctx context.Context) (string, error) {
	v, err := o.client.Version(ctx)
	if err != nil {
		return "", o.explainShow(ctx, err)
	}
	return v, nil
}

// NumCtx is the context window sent with every request.
func (o *Client) NumCtx() int { return o.cfg.NumCtx }

func infoFrom(name string, r *api.ShowResponse) ModelInfo {
	info := ModelInfo{Name: name, Family: r.Details.Family, ParameterSize: r.Details.ParameterSize,
		Quantization: r.Details.QuantizationLevel}
	for _, c := range r.Capabilities {
		info.Capabilities = append(info.Capabilities, string(c))
	}
	// The context length is a key named after the architecture, e.g. "qwen3.context_length".
	if arch, ok := r.ModelInfo["general.architecture"].(string); ok && arch != "" {
		info.ContextLength = toInt(r.ModelInfo[arch+".context_length"])
	}
	if info.Family == "" {
		info.Family, _ = r.ModelInfo["general.architecture"].(string)
	}
	return info
}

// toInt reads a JSON number decoded into any; anything else is 0 (unknown).
func toInt(v any) int {
	switch n := v.(type) {
	case float64:
		if n > 0 && n < math.MaxInt32 {
			return int(n)
		}
	case json.Number:
		if i, err := strconv.Atoi(n.String()); err == nil && i > 0 {
			return i
		}
	case int:
		return max(n, 0)
	case int64:
		return int(max(n, 0))
	}
	return 0
}

// explainShow is explain for the routes that are not a chat: the same sentences for a server
// that does not answer or a model not pulled, and the step named otherwise.
func (o *Client) explainShow(ctx context.Context, err error) error {
	if ctx.Err() != nil {
		if errors.Is(ctx.Err(), context.DeadlineExceeded) {
			return &actionable{kind: ErrUnreachable, msg: fmt.Sprintf(
				"Ollama at %s did not answer in time; check that it runs (`ollama serve`) and that OLLAMA_HOST points at it",
				o.base), cause: err}
		}
		return fmt.Errorf("ollama show: %w", ctx.Err())
	}
	var a *actionable
	if e := o.explain(ctx, err); errors.As(e, &a) && (errors.Is(a, ErrUnreachable) || errors.Is(a, ErrModelNotFound)) {
		return e
	}
	var se api.StatusError
	if errors.As(err, &se) {
		return fmt.Errorf("ollama show: server answered %d: %s", se.StatusCode, se.ErrorMessage)
	}
	return fmt.Errorf("ollama show: %w", err)
}

// ForModel is a client for another model of the same server, with the same settings and HTTP
// client; what Describe learns is kept per model, what ModelsWith learns is shared.
func (o *Client) ForModel(name string) *Client {
	cfg := o.cfg
	cfg.Model = name
	return &Client{cfg: cfg, base: o.base, client: o.client, log: o.log.With(logkey.Model, name), caps: o.caps}
}

// maxListed bounds the models ModelsWith asks /api/show about: a server with more is listed
// in part, which is enough to name a few that can.
const maxListed = 32

// capsCache keeps what /api/show said each pulled model can do, by the model's digest: a model
// pulled again under the same name has a new digest and is asked again, and one that is not
// changes nothing, so a second listing costs one GET /api/tags.
type capsCache struct {
	mu   sync.Mutex
	seen map[string][]string // name + "@" + digest → capabilities
}

func (c *capsCache) get(key string) ([]string, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	caps, ok := c.seen[key]
	return caps, ok
}

func (c *capsCache) put(key string, caps []string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.seen == nil {
		c.seen = map[string][]string{}
	}
	c.seen[key] = caps
}

// ModelsWith names the models pulled into the server (GET /api/tags) whose /api/show reports
// capability, in the server's order (the most recently pulled first). What a model can do is
// kept by its digest, so only models new since the last call are asked about. A model that
// cannot be described is left out. When ctx ends first, it returns the models found so far with
// the error.
func (o *Client) ModelsWith(ctx context.Context, capability string) ([]string, error) {
	list, err := o.client.List(ctx)
	if err != nil {
		return nil, o.explainShow(ctx, err)
	}
	var out []string
	for i, m := range list.Models {
		if i == maxListed {
			break
		}
		name := m.Name
		if name == "" {
			name = m.Model
		}
		key := name + "@" + m.Digest
		caps, ok := o.caps.get(key)
		if !ok {
			resp, err := o.client.Show(ctx, &api.ShowRequest{Model: name})
			if err != nil {
				if ctx.Err() != nil {
					return out, o.explainShow(ctx, err)
				}
				continue
			}
			caps = infoFrom(name, resp).Capabilities
			if m.Digest != "" {
				o.caps.put(key, caps)
			}
		}
		if slices.Contains(caps, capability) {
			out = append(out, name)
		}
	}
	return out, nil
}
