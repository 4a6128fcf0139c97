package agent

import (
	"context"
	_ "embed"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/excalibot/excalibot/agent/ollama"
	"github.com/excalibot/excalibot/internal/logkey"
)

// Pictures: a request may carry images (a whiteboard photo, a screenshot of a diagram). They go
// with the user's opening message to a model that has Ollama's vision capability, which answers
// with the same tool calls or typed plan as for words, so the layout engine draws a clean diagram
// rather than a tracing.

// ErrNoVision matches the error of a run with pictures whose model cannot read them: the model
// reports no vision capability, or the server refused the pictures (ollama.ErrNoVision). The error
// is a *NoVisionError, whose UserMessage names the models that can.
var ErrNoVision = errors.New("model cannot read pictures")

// VisionExamples are models known to read pictures through Ollama; the error for a model without
// names them.
const VisionExamples = "qwen2.5vl, gemma3, llama3.2-vision"

// NoVisionError says which model cannot read pictures and which models on the same server can.
type NoVisionError struct {
	Model string
	// Pulled are models pulled into the same server that report the vision capability; Listed
	// says whether the server could list them in time.
	Pulled []string
	Listed bool
	cause  error
}

func (e *NoVisionError) Error() string {
	switch {
	case len(e.Pulled) > 0:
		return fmt.Sprintf("%s cannot read pictures; models that can: %s (pulled here), or pull one such as %s",
			e.Model, strings.Join(e.Pulled, ", "), VisionExamples)
	case e.Listed:
		return fmt.Sprintf("%s cannot read pictures; models that can: %s (none is pulled here: ollama pull qwen2.5vl)", e.Model, VisionExamples)
	}
	return fmt.Sprintf("%s cannot read pictures; models that can: %s", e.Model, VisionExamples)
}

// UserMessage is the error's text: which model cannot read pictures and which can.
func (e *NoVisionError) UserMessage() string { return e.Error() }

func (e *NoVisionError) Is(target error) bool { return target == ErrNoVision }
func (e *NoVisionError) Unwrap() error        { return e.cause }

// ModelLister is a Model that can name the server's models that have a capability; the error
// for a model without vision uses it. *ollama.Client implements it.
type ModelLister interface {
	ModelsWith(ctx context.Context, capability string) ([]string, error)
}

// listTimeout bounds asking the server which models read pictures: the answer only improves an
// error message.
const listTimeout = 5 * time.Second

// seeing returns the seat that reads pictures, once it is known to: the vision model when one is
// configured, else the Agent's model.
func (a *Agent) seeing(ctx context.Context) (*seat, error) {
	s := a.main
	if a.vision != nil {
		s = a.vision
	}
	d, ok := s.model.(Describer)
	if !ok {
		return s, nil // nothing to ask: a refusal from the server still says so
	}
	info, err := d.Describe(ctx)
	switch {
	case errors.Is(err, ollama.ErrUnreachable) || errors.Is(err, ollama.ErrModelNotFound):
		return nil, err
	case err != nil:
		a.log.Warn("describe the vision model; sending the pictures anyway", logkey.Model, modelName(s.model), logkey.Err, err)
	case info.Known() && !info.Has(ollama.CapVision):
		return nil, a.noVision(ctx, s, nil)
	}
	return s, nil
}

// noVision is the error for s's model not reading pictures, naming the models that do.
func (a *Agent) noVision(ctx context.Context, s *seat, cause error) error {
	e := &NoVisionError{Model: modelName(s.model), cause: cause}
	if e.Model == "" {
		e.Model = "the model"
	}
	if l, ok := s.model.(ModelLister); ok {
		lctx, cancel := context.WithTimeout(ctx, listTimeout)
		defer cancel()
		names, err := l.ModelsWith(lctx, ollama.CapVision)
		if err != nil {
			a.log.Info("list the models that read pictures", logkey.Err, err)
		}
		e.Pulled, e.Listed = names, err == nil
	}
	return e
}

// modelName is the model's name when it has one (*ollama.Client has), else "".
func modelName(m Model) string {
	if n, ok := m.(interface{ Name() string }); ok {
		return n.Name()
	}
	return ""
}

//go:embed prompts/picture.txt
var pictureText string

// pictureRequest stands in for the words of a request that is only a picture.
const pictureRequest = "Redraw this picture as a diagram."

// withPictures adds to a system prompt what to do with pictures, when the request has some.
func withPictures(system string, n int) string {
	if n == 0 {
		return system
	}
	return system + "\n\n" + strings.TrimSpace(pictureText)
}

// requestMessage is the user message that opens a run, with the request's pictures.
func (r *run) requestMessage(sceneText, changes string) ollama.Message {
	m := ollama.Message{Role: ollama.RoleUser, Content: requestMessage(r.req.Prompt, sceneText, changes, r.req.Discussion, len(r.req.Images))}
	for _, img := range r.req.Images {
		m.Images = append(m.Images, img.Data)
	}
	return m
}

// rememberedRequest is the request as the thread's memory keeps it: the pictures are not kept,
// only that there were some.
func rememberedRequest(req Request) string {
	switch n := len(req.Images); {
	case req.Discussion != "":
		return "(from the discussion above) " + req.Prompt
	case n == 1:
		return "(with a picture) " + req.Prompt
	case n > 1:
		return fmt.Sprintf("(with %d pictures) %s", n, req.Prompt)
	}
	return req.Prompt
}

// imageTokens is what one picture of about 1024 px is estimated to cost in the prompt: Gemma 3
// takes 256 tokens, Qwen2.5-VL about a thousand.
const imageTokens = 1024
