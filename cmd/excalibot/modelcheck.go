package main

import (
	"context"
	"fmt"
	"log/slog"
	"strings"
	"time"

	"github.com/excalibot/excalibot/agent/ollama"
	"github.com/excalibot/excalibot/config"
	"github.com/excalibot/excalibot/internal/logkey"
)

// newModel is the Ollama model as the settings describe it, for serve, the kit and doctor.
func newModel(cfg config.Config, log *slog.Logger) (*ollama.Client, error) {
	temp := cfg.Temperature
	return ollama.New(ollama.Config{Host: cfg.OllamaHost, Model: cfg.Model, NumCtx: cfg.NumCtx,
		Temperature: &temp, KeepAlive: cfg.KeepAlive, Think: cfg.Think}, log)
}

// describeTimeout bounds the start-up question to Ollama: a server that is up answers
// /api/show in milliseconds.
const describeTimeout = 5 * time.Second

// checkModel asks Ollama once, at start, what the model can do, and logs it: the model's
// capabilities, context length, family and size at Info, and a warning for each setting that
// does not fit it. When Ollama is down or the model not pulled it returns the sentence to act on,
// for the caller to show: a one-shot command stops; serve logs it and goes on, as Ollama may come
// up later and each request reports the same sentence.
func checkModel(ctx context.Context, m *ollama.Client, log *slog.Logger) (ollama.ModelInfo, error) {
	ctx, cancel := context.WithTimeout(ctx, describeTimeout)
	defer cancel()
	info, err := m.Describe(ctx)
	if err != nil {
		return info, err
	}
	caps := strings.Join(info.Capabilities, ",")
	if !info.Known() {
		caps = "not reported"
	}
	log.Info("model", logkey.Model, info.Name, "capabilities", caps, "context_length", info.ContextLength,
		"family", info.Family, "size", info.ParameterSize, "quantization", info.Quantization)
	for _, w := range modelWarnings(info, m.NumCtx()) {
		log.Warn("model check: "+w, logkey.Model, info.Name)
	}
	return info, nil
}

// modelWarnings are the sentences for settings that do not fit the model; doctor prints the same.
func modelWarnings(info ollama.ModelInfo, numCtx int) []string {
	var out []string
	if w := numCtxWarning(info, numCtx); w != "" {
		out = append(out, w)
	}
	if w := toolsWarning(info); w != "" {
		out = append(out, w)
	}
	return out
}

func numCtxWarning(info ollama.ModelInfo, numCtx int) string {
	if info.ContextLength <= 0 || numCtx <= info.ContextLength {
		return ""
	}
	return fmt.Sprintf("num_ctx %d is more than the %d tokens of context %s was trained for; set EXCALIBOT_NUM_CTX to %d or less",
		numCtx, info.ContextLength, info.Name, info.ContextLength)
}

func toolsWarning(info ollama.ModelInfo) string {
	switch {
	case !info.Known():
		return "Ollama did not say what the model can do (a version before 0.6.4 does not); upgrade Ollama so runs can pick how to draw"
	case !info.Has(ollama.CapTools):
		return fmt.Sprintf("%s cannot call tools: it will draw through typed plans (EXCALIBOT_PROTOCOL=plan); models that call tools: %s",
			info.Name, ollama.ToolModels)
	}
	return ""
}
