package main

import (
	"context"
	"errors"
	"strings"
	"sync"
	"time"

	"github.com/excalibot/excalibot/agent"
	"github.com/excalibot/excalibot/agent/ollama"
	"github.com/excalibot/excalibot/config"
	"github.com/excalibot/excalibot/web"
)

// Bounds of the home page's question about the model: the whole report within a few seconds
// (the page's own checks have five), and asked again at most every modelHealthTTL, so a page
// reloaded again and again, or by many, does not ask Ollama each time.
const (
	modelHealthTimeout = 3 * time.Second
	modelHealthTTL     = 10 * time.Second
)

// modelWatch is the home page's view of the model: inspectModels asked afresh (a model may be
// pulled or removed while serve runs), kept for modelHealthTTL. Callers that come while it asks
// wait for that answer rather than ask again.
type modelWatch struct {
	cfg config.Config
	m   *ollama.Client
	now func() time.Time

	mu   sync.Mutex
	at   time.Time
	last web.ModelHealth
}

func newModelWatch(cfg config.Config, m *ollama.Client) *modelWatch {
	return &modelWatch{cfg: cfg, m: m, now: time.Now}
}

// Health is the model's health as the home page shows it.
func (w *modelWatch) Health(ctx context.Context) web.ModelHealth {
	w.mu.Lock()
	defer w.mu.Unlock()
	if !w.at.IsZero() && w.now().Sub(w.at) < modelHealthTTL {
		return w.last
	}
	// The answer is shared by every page load for a while: it must not end with the request of
	// the visitor who happened to ask first (a closed tab would read as Ollama not answering).
	ictx, cancel := context.WithTimeout(context.WithoutCancel(ctx), modelHealthTimeout)
	defer cancel()
	w.last, w.at = inspectModels(ictx, w.cfg, w.m, true).health(), w.now()
	return w.last
}

// health is the report in the home page's words: what is wrong and what to do, naming models and
// settings but, as anyone may open the page, not the server's address (doctor and the log give it).
func (r modelReport) health() web.ModelHealth {
	h := web.ModelHealth{Model: r.main.info.Name}
	if r.down != nil {
		h.Problem = "Ollama does not answer"
		h.Fix = "start it (`ollama serve`) or set OLLAMA_HOST to where it runs; `excalibot doctor` names the address it tried"
		return h
	}
	h.Reachable, h.Version = true, r.version
	main := r.main
	switch {
	case errors.Is(main.err, ollama.ErrModelNotFound):
		h.Problem = "the model " + main.info.Name + " is not pulled into Ollama"
		h.Fix = "run `ollama pull " + main.info.Name + "`, or set EXCALIBOT_MODEL to a model that is"
	case main.err != nil:
		h.Problem = "Ollama did not say what " + main.info.Name + " can do"
		h.Fix = "`excalibot doctor` shows what it answered"
	default:
		h.Pulled, h.Capabilities, h.Protocol = true, main.info.Capabilities, string(r.protocol())
		if r.proto == agent.ProtocolTools && main.info.Known() && !main.info.Has(ollama.CapTools) {
			h.Problem = main.info.Name + " cannot call tools, and EXCALIBOT_PROTOCOL=tools"
			h.Fix = "set EXCALIBOT_PROTOCOL to auto or plan"
		}
	}
	if !r.named && main.err != nil {
		return h // nothing is known of pictures either
	}
	h.Vision, h.VisionOwn, h.VisionReady = r.vision.info.Name, !r.named, r.vision.sees()
	v := r.vision
	switch {
	case h.VisionReady:
	case errors.Is(v.err, ollama.ErrModelNotFound):
		h.VisionProblem = v.info.Name + " (EXCALIBOT_VISION_MODEL) is not pulled into Ollama, so pictures are refused"
		h.VisionFix = "run `ollama pull " + v.info.Name + "`" + r.seeingAdvice()
	case v.err != nil:
		h.VisionProblem = "Ollama did not say what " + v.info.Name + " can do"
		h.VisionFix = "`excalibot doctor` shows what it answered"
	case !v.info.Known():
		h.VisionProblem = "Ollama did not say whether " + v.info.Name + " reads pictures"
		h.VisionFix = "upgrade Ollama"
	default:
		h.VisionProblem = v.info.Name + " cannot read pictures, so pictures are refused"
		h.VisionFix = strings.TrimPrefix(r.seeingAdvice(), ", or ")
	}
	return h
}

// seeingAdvice is ", or " and what to set EXCALIBOT_VISION_MODEL to: a pulled model that reads
// pictures, or one to pull.
func (r modelReport) seeingAdvice() string {
	if len(r.seeing) > 0 {
		return ", or set EXCALIBOT_VISION_MODEL to a pulled model that reads pictures: " + strings.Join(r.seeing, ", ")
	}
	return ", or pull a model that reads pictures (" + agent.VisionExamples + ") and set EXCALIBOT_VISION_MODEL to it"
}
