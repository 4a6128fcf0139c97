// Package ollama is the client of an Ollama server's native API (github.com/ollama/ollama/api):
// chat with tools, answers constrained to a JSON schema, what a model can do (/api/show), and the
// models a server has. It speaks the agent's conversation (Message, Reply) and turns the server's
// failures into errors whose text says what to do.
package ollama

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/ollama/ollama/api"

	"github.com/excalibot/excalibot/internal/logkey"
	"github.com/excalibot/excalibot/tools"
)

// Errors a user can act on. Errors returned by Client.Chat match them with errors.Is; their
// UserMessage (and their text, which the command line prints) says what happened and what to do.
var (
	ErrUnreachable   = errors.New("ollama not reachable")
	ErrModelNotFound = errors.New("model not pulled")
	ErrNoToolSupport = errors.New("model cannot call tools")
	ErrStreamCut     = errors.New("stream ended before done")
	ErrModelTimeout  = errors.New("model request timed out")
	// ErrBadToolCall: Ollama could not parse a tool call the model wrote (it answers HTTP 500).
	// The agent retries once, telling the model to write the call again.
	ErrBadToolCall = errors.New("model wrote a tool call Ollama could not parse")
	// ErrNoVision: the server refused the pictures of a request, as the model has no vision data.
	ErrNoVision = errors.New("model cannot read pictures")
)

// noVisionSign is in what Ollama answers (HTTP 500) when pictures reach a model that has no
// vision data: "Failed to create new sequence: failed to process inputs: this model is missing
// data required for image input". A model of a text-only architecture ignores pictures instead,
// which is why a run asks /api/show before it sends any.
const noVisionSign = "missing data required for image input"

// ToolModels are models known to call tools through Ollama; named in the error for a model without.
const ToolModels = "qwen3, qwen2.5, llama3.1, llama3.2, mistral-nemo, mistral-small3.2, gpt-oss:20b"

// actionable is an error whose words say what to do, for the person who asked (UserMessage, found
// through any wrapping by errors.As) and for an operator at the command line (Error), matching a
// sentinel and keeping the underlying cause for the log.
type actionable struct {
	kind  error
	msg   string
	cause error
}

func (e *actionable) Error() string       { return e.msg }
func (e *actionable) UserMessage() string { return e.msg }
func (e *actionable) Unwrap() []error     { return []error{e.kind, e.cause} }

// Config configures a Client. Zero fields take the defaults noted.
type Config struct {
	// Host is the server as OLLAMA_HOST writes it: a URL or host[:port] (default
	// http://127.0.0.1:11434).
	Host  string
	Model string
	// NumCtx is the context window sent with every request (default 16384). Ollama silently cuts
	// longer prompts from the front, which loses the system prompt and tools first.
	NumCtx int
	// Temperature is sent when not nil.
	Temperature *float64
	// KeepAlive is how long Ollama keeps the model loaded after a request (default 10m).
	KeepAlive time.Duration
	// Think lets thinking models think (slower). Off by default.
	Think bool
	// DialTimeout bounds connecting to the server (default 5s); the time of a whole request is
	// bounded by the caller's context.
	DialTimeout time.Duration
	// Transport replaces the HTTP transport (tests). Optional.
	Transport http.RoundTripper
}

// Client is one model served by an Ollama server, over its native /api/chat route. It is safe for
// concurrent use.
type Client struct {
	cfg    Config
	base   *url.URL
	client *api.Client
	log    *slog.Logger

	// The tool list of the last request, converted: every turn of every run offers the same
	// tools, and converting them (api's ordered-map JSON) cost about 5% of a request's CPU with
	// an instant model. The converted value is only marshalled, so requests share it.
	toolsMu    sync.Mutex
	toolsSpecs []tools.Spec
	toolsAPI   api.Tools

	describe describeCache // see Describe
	caps     *capsCache    // see ModelsWith; shared with the clients ForModel makes
}

// New returns a client for cfg.Model at cfg.Host. It does not contact the server.
func New(cfg Config, log *slog.Logger) (*Client, error) {
	if strings.TrimSpace(cfg.Model) == "" {
		return nil, errors.New("ollama: no model named; pass one, e.g. qwen3:8b")
	}
	base, err := parseHost(cfg.Host)
	if err != nil {
		return nil, err
	}
	if cfg.NumCtx <= 0 {
		cfg.NumCtx = 16384
	}
	if cfg.KeepAlive <= 0 {
		cfg.KeepAlive = 10 * time.Minute
	}
	if cfg.DialTimeout <= 0 {
		cfg.DialTimeout = 5 * time.Second
	}
	tr := cfg.Transport
	if tr == nil {
		tr = &http.Transport{
			Proxy:               http.ProxyFromEnvironment,
			DialContext:         (&net.Dialer{Timeout: cfg.DialTimeout, KeepAlive: 30 * time.Second}).DialContext,
			TLSHandshakeTimeout: 10 * time.Second,
			MaxIdleConnsPerHost: 4,
			IdleConnTimeout:     90 * time.Second,
		}
	}
	// No Client.Timeout: a streamed reply may legitimately take minutes; the loop bounds each
	// request with its context instead.
	hc := &http.Client{Transport: lastLineTransport{next: tr}}
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &Client{cfg: cfg, base: base, client: api.NewClient(base, hc),
		log: log.With("component", "ollama", logkey.Model, cfg.Model), caps: &capsCache{}}, nil
}

// parseHost reads OLLAMA_HOST the way the ollama CLI does: empty means http://127.0.0.1:11434,
// "host" and "host:port" get the http scheme and the default port.
func parseHost(s string) (*url.URL, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return &url.URL{Scheme: "http", Host: "127.0.0.1:11434"}, nil
	}
	scheme, rest, ok := strings.Cut(s, "://")
	port := "11434"
	switch {
	case !ok:
		scheme, rest = "http", s
	case scheme == "http":
		port = "80"
	case scheme == "https":
		port = "443"
	default:
		return nil, fmt.Errorf("ollama host %q: scheme must be http or https", s)
	}
	hostport, path, _ := strings.Cut(rest, "/")
	host, p, err := net.SplitHostPort(hostport)
	if err != nil {
		host, p = strings.Trim(hostport, "[]"), port
	}
	if host == "" {
		host = "127.0.0.1"
	}
	if n, err := strconv.Atoi(p); err != nil || n <= 0 || n > 65535 {
		return nil, fmt.Errorf("ollama host %q: port %q is not a number from 1 to 65535", s, p)
	}
	u := &url.URL{Scheme: scheme, Host: net.JoinHostPort(host, p)}
	if path != "" {
		u.Path = "/" + path
	}
	return u, nil
}

// URL is the server's base URL.
func (o *Client) URL() string { return o.base.String() }

// Name is the model name.
func (o *Client) Name() string { return o.cfg.Model }

// Chat sends one request and gathers the streamed reply up to its final chunk.
func (o *Client) Chat(ctx context.Context, msgs []Message, specs []tools.Spec) (Reply, error) {
	req, err := o.request(msgs, specs)
	if err != nil {
		return Reply{}, err
	}
	return o.send(ctx, req)
}

// send streams one request's reply up to its final chunk; Chat and ChatFormat share it.
func (o *Client) send(ctx context.Context, req *api.ChatRequest) (Reply, error) {
	out := Reply{Message: Message{Role: RoleAssistant}}
	var content strings.Builder
	done := false
	tail := &lastLine{}
	err := o.client.Chat(withLastLine(ctx, tail), req, func(r api.ChatResponse) error {
		for _, tc := range r.Message.ToolCalls {
			c := fromAPICall(tc)
			c.At = content.Len() // the chunk's calls came before its text
			out.Message.ToolCalls = append(out.Message.ToolCalls, c)
		}
		content.WriteString(r.Message.Content)
		if r.Done {
			done = true
			out.PromptTokens, out.OutputTokens = r.PromptEvalCount, r.EvalCount
		}
		return nil
	})
	out.Message.Content = content.String()
	if err != nil {
		return out, o.explain(ctx, err)
	}
	// The client returns nil when the body ends early; only the done chunk proves a whole reply.
	// A stream that ends with an error under another key than "error" (Ollama 0.11.3 wrote
	// {"error parsing tool call": …}) reaches the client as an empty chunk: its last line tells.
	if !done {
		if msg := tail.errorText(); msg != "" {
			return out, o.explain(ctx, errors.New(msg))
		}
		return out, &actionable{kind: ErrStreamCut, msg: fmt.Sprintf(
			"the reply from Ollama at %s ended before it was complete (the server may have stopped or run out of memory); try again",
			o.base), cause: errors.New("no done chunk")}
	}
	if out.PromptTokens >= o.cfg.NumCtx*85/100 {
		o.log.Warn("prompt close to the context window; Ollama cuts longer prompts from the front",
			"prompt_tokens", out.PromptTokens, "num_ctx", o.cfg.NumCtx)
	}
	o.log.Debug("chat", "prompt_tokens", out.PromptTokens, "output_tokens", out.OutputTokens,
		"tool_calls", len(out.Message.ToolCalls))
	return out, nil
}

// request builds the wire request; num_ctx is always sent (see Config.NumCtx).
func (o *Client) request(msgs []Message, specs []tools.Spec) (*api.ChatRequest, error) {
	var ts api.Tools
	if len(specs) > 0 { // a structured-output request keeps the tools' cached conversion
		var err error
		if ts, err = o.apiTools(specs); err != nil {
			return nil, err
		}
	}
	opts := map[string]any{"num_ctx": o.cfg.NumCtx}
	if o.cfg.Temperature != nil {
		opts["temperature"] = *o.cfg.Temperature
	}
	am := make([]api.Message, 0, len(msgs))
	for _, m := range msgs {
		am = append(am, toAPIMessage(m))
	}
	return &api.ChatRequest{
		Model:     o.cfg.Model,
		Messages:  am,
		Tools:     ts,
		Options:   opts,
		KeepAlive: &api.Duration{Duration: o.cfg.KeepAlive},
		Think:     &api.ThinkValue{Value: o.cfg.Think},
	}, nil
}

// apiTools is APITools, remembering the last conversion.
func (o *Client) apiTools(specs []tools.Spec) (api.Tools, error) {
	o.toolsMu.Lock()
	defer o.toolsMu.Unlock()
	if o.toolsAPI != nil && slices.EqualFunc(o.toolsSpecs, specs, func(a, b tools.Spec) bool {
		return a.Name == b.Name && a.Description == b.Description && bytes.Equal(a.Parameters, b.Parameters)
	}) {
		return o.toolsAPI, nil
	}
	ts, err := APITools(specs)
	if err != nil {
		return nil, err
	}
	o.toolsSpecs, o.toolsAPI = slices.Clone(specs), ts
	return ts, nil
}

// APITools converts tool specs to Ollama's tool type. Schema keywords that Ollama's type has no
// field for (e.g. minimum) are dropped at the top level of each property, as Ollama itself would.
func APITools(specs []tools.Spec) (api.Tools, error) {
	ts := make(api.Tools, 0, len(specs))
	for _, s := range specs {
		params := api.ToolFunctionParameters{Type: "object", Properties: api.NewToolPropertiesMap()}
		if len(s.Parameters) > 0 {
			if err := json.Unmarshal(s.Parameters, &params); err != nil {
				return nil, fmt.Errorf("tool %s: parameters are not a JSON Schema object: %w", s.Name, err)
			}
			if params.Properties == nil { // nil marshals as null, which some templates reject
				params.Properties = api.NewToolPropertiesMap()
			}
		}
		ts = append(ts, api.Tool{Type: "function", Function: api.ToolFunction{
			Name: s.Name, Description: s.Description, Parameters: params}})
	}
	return ts, nil
}

func toAPIMessage(m Message) api.Message {
	am := api.Message{Role: m.Role, Content: m.Content, ToolName: m.ToolName, ToolCallID: m.ToolCallID}
	for _, img := range m.Images {
		am.Images = append(am.Images, api.ImageData(img)) // base64 on the wire
	}
	for i, tc := range m.ToolCalls {
		args := api.NewToolCallFunctionArguments()
		if len(tc.Args) > 0 {
			// Args is a valid object here (the loop checked it); an error leaves {}.
			_ = json.Unmarshal(tc.Args, &args)
		}
		am.ToolCalls = append(am.ToolCalls, api.ToolCall{ID: tc.ID,
			Function: api.ToolCallFunction{Index: i, Name: tc.Name, Arguments: args}})
	}
	return am
}

func fromAPICall(tc api.ToolCall) ToolCall {
	out := ToolCall{ID: tc.ID, Name: tc.Function.Name}
	b, err := json.Marshal(tc.Function.Arguments) // ordered map: key order survives
	if err != nil {
		out.ArgsErr = "arguments could not be read: " + err.Error()
		return out
	}
	out.Args = b
	return out
}

// explain turns a client error into a sentence a user can act on.
func (o *Client) explain(ctx context.Context, err error) error {
	if ctx.Err() != nil {
		if errors.Is(ctx.Err(), context.DeadlineExceeded) {
			return &actionable{kind: ErrModelTimeout, msg: fmt.Sprintf(
				"model %s did not answer in time; a smaller model or a longer model timeout may help", o.cfg.Model),
				cause: err}
		}
		return fmt.Errorf("ollama chat: %w", ctx.Err())
	}
	var se api.StatusError
	if errors.As(err, &se) {
		msg := strings.ToLower(se.ErrorMessage)
		switch {
		case se.StatusCode == http.StatusNotFound && strings.Contains(msg, "not found"):
			return &actionable{kind: ErrModelNotFound, msg: fmt.Sprintf(
				"model %s is not pulled into Ollama at %s; run `ollama pull %s`", o.cfg.Model, o.base, o.cfg.Model),
				cause: err}
		case se.StatusCode >= 500 && isBadCall(msg):
			return &actionable{kind: ErrBadToolCall, msg: fmt.Sprintf(
				"model %s wrote a tool call that Ollama could not read (%s)", o.cfg.Model, se.ErrorMessage), cause: err}
		case strings.Contains(msg, noVisionSign):
			return &actionable{kind: ErrNoVision, msg: fmt.Sprintf(
				"%s cannot read pictures (Ollama: %s)", o.cfg.Model, se.ErrorMessage), cause: err}
		case strings.Contains(msg, "does not support tools"):
			return &actionable{kind: ErrNoToolSupport, msg: fmt.Sprintf(
				"model %s cannot call tools; use a model that can, e.g. %s", o.cfg.Model, ToolModels), cause: err}
		}
		return fmt.Errorf("ollama chat: server answered %d: %s", se.StatusCode, se.ErrorMessage)
	}
	// While streaming, Ollama reports a tool call its parser could not read as an error line
	// inside a 200 response, which the client returns as a plain error.
	if isBadCall(strings.ToLower(err.Error())) {
		return &actionable{kind: ErrBadToolCall, msg: fmt.Sprintf(
			"model %s wrote a tool call that Ollama could not read (%s)", o.cfg.Model, err), cause: err}
	}
	var ne net.Error
	var oe *net.OpError
	if errors.As(err, &oe) || errors.As(err, &ne) {
		return &actionable{kind: ErrUnreachable, msg: fmt.Sprintf(
			"Ollama is not reachable at %s; start it with `ollama serve` or set OLLAMA_HOST to where it runs", o.base),
			cause: err}
	}
	return fmt.Errorf("ollama chat: %w", err)
}

// badCallSigns are what Ollama answers (HTTP 500, or an error line in the stream) when its parser
// cannot read a call the model wrote: the model's fault, worth one retry, not a broken server.
var badCallSigns = []string{"tool call", "failed to parse json", "invalid character", "unexpected end of json input",
	"empty function name", "cannot unmarshal", "looking for beginning of value", "error parsing"}

func isBadCall(lowerMsg string) bool {
	// Ollama answers a bare "EOF" (HTTP 500 or an error line) when its parser ran out of a call
	// the model cut short.
	if strings.TrimSpace(lowerMsg) == "eof" {
		return true
	}
	for _, s := range badCallSigns {
		if strings.Contains(lowerMsg, s) {
			return true
		}
	}
	return false
}
