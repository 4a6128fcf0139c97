package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"time"

	"github.com/excalibot/excalibot/agent"
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

// describeTimeout bounds each start-up question to Ollama: a server that is up answers
// /api/version and /api/show in milliseconds.
const describeTimeout = 5 * time.Second

// checkModel asks Ollama once, at start, what the model can do, and logs it: the model's
// capabilities, context length, family and size at Info, and a warning for each setting that
// does not fit it. When Ollama is down or the model not pulled it returns the sentence to act on,
// for the caller to show: a one-shot command (draw, chat, eval) stops. serve asks more, through
// inspectModels.
func checkModel(ctx context.Context, m *ollama.Client, proto agent.Protocol, log *slog.Logger) (ollama.ModelInfo, error) {
	ctx, cancel := context.WithTimeout(ctx, describeTimeout)
	defer cancel()
	info, err := m.Describe(ctx)
	if err != nil {
		return info, err
	}
	logModel(log, "model", info, proto.For(info))
	for _, w := range modelWarnings(info, m.NumCtx(), proto) {
		log.Warn("model check: "+w, logkey.Model, info.Name)
	}
	return info, nil
}

// logModel writes what Ollama said of a model at Info.
func logModel(log *slog.Logger, msg string, info ollama.ModelInfo, proto agent.Protocol) {
	caps := strings.Join(info.Capabilities, ",")
	if !info.Known() {
		caps = "not reported"
	}
	attrs := []any{logkey.Model, info.Name, "capabilities", caps, "context_length", info.ContextLength,
		"family", info.Family, "size", info.ParameterSize, "quantization", info.Quantization}
	if proto != "" {
		attrs = append(attrs, "protocol", string(proto))
	}
	log.Info(msg, attrs...)
}

// modelWarnings are the sentences for settings that do not fit the model; doctor prints the same.
func modelWarnings(info ollama.ModelInfo, numCtx int, proto agent.Protocol) []string {
	var out []string
	if w := numCtxWarning(info, numCtx); w != "" {
		out = append(out, w)
	}
	if w := toolsWarning(info, proto); w != "" {
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

// toolsWarning is for a model that cannot call tools in auto: it draws through plans, which is
// worth knowing.
func toolsWarning(info ollama.ModelInfo, proto agent.Protocol) string {
	switch {
	case proto == agent.ProtocolPlan:
		return ""
	case !info.Known():
		return "Ollama did not say what the model can do (a version before 0.6.4 does not); upgrade Ollama so runs can pick how to draw"
	case info.Has(ollama.CapTools), proto == agent.ProtocolTools: // doctor's protocol line fails then
		return ""
	}
	return fmt.Sprintf("%s cannot call tools: it will draw through typed plans (EXCALIBOT_PROTOCOL=plan); models that call tools: %s",
		info.Name, ollama.ToolModels)
}

// modelReport is what Ollama says of the models the settings name, asked in one place: serve
// logs it at start, doctor prints it, and the home page shows it.
type modelReport struct {
	url     string
	version string
	down    error // Ollama did not answer: the sentence to act on; nothing more was asked
	main    modelFacts
	// vision is the model that reads pictures: EXCALIBOT_VISION_MODEL, or the main model (its
	// facts) when that names none; named says which.
	vision modelFacts
	named  bool
	proto  agent.Protocol // the setting: auto, tools or plan
	numCtx int
	// seeing are the pulled models that read pictures, asked only when the vision model cannot;
	// listed says the server listed them in time.
	seeing []string
	listed bool
}

// modelFacts is what /api/show said of one model; info.Name is set either way.
type modelFacts struct {
	info ollama.ModelInfo
	err  error
}

// sees reports whether the model is pulled and says it reads pictures.
func (f modelFacts) sees() bool { return f.err == nil && f.info.Has(ollama.CapVision) }

// inspectModels asks the server of m about the settings' models: its version (whether it
// answers), the main model, the vision model, and when that cannot read pictures the models
// pulled that can. Each question has describeTimeout; ctx may bound the whole. fresh asks
// /api/show again (a health view); otherwise the answers are kept for the runs that follow.
func inspectModels(ctx context.Context, cfg config.Config, m *ollama.Client, fresh bool) modelReport {
	proto, err := oneProtocol(cfg)
	if err != nil {
		proto = agent.ProtocolAuto // the settings' check names the mistake
	}
	r := modelReport{url: m.URL(), proto: proto, numCtx: m.NumCtx()}
	r.main.info.Name = m.Name()
	vctx, cancel := context.WithTimeout(ctx, describeTimeout)
	r.version, r.down = m.Version(vctx)
	cancel()
	if r.down != nil {
		return r
	}
	r.main = describe(ctx, m, fresh)
	r.vision = r.main
	if name := cfg.VisionModel; name != "" && name != cfg.Model {
		r.named = true
		r.vision = describe(ctx, m.ForModel(name), fresh)
	}
	if r.wantsSeeing() {
		lctx, cancel := context.WithTimeout(ctx, describeTimeout)
		r.seeing, err = m.ModelsWith(lctx, ollama.CapVision)
		cancel()
		r.listed = err == nil
	}
	return r
}

func describe(ctx context.Context, m *ollama.Client, fresh bool) modelFacts {
	ctx, cancel := context.WithTimeout(ctx, describeTimeout)
	defer cancel()
	ask := m.Describe
	if fresh {
		ask = m.Inspect
	}
	info, err := ask(ctx)
	info.Name = m.Name()
	return modelFacts{info: info, err: err}
}

// wantsSeeing reports whether the report should name the models that read pictures: the vision
// model is named but not there, or it says it cannot read them.
func (r modelReport) wantsSeeing() bool {
	v := r.vision
	if r.named && errors.Is(v.err, ollama.ErrModelNotFound) {
		return true
	}
	return v.err == nil && v.info.Known() && !v.info.Has(ollama.CapVision)
}

// protocol is the protocol runs of the main model use.
func (r modelReport) protocol() agent.Protocol { return r.proto.For(r.main.info) }

// findings are the report as doctor prints it, one line per part: Ollama, the model, the
// protocol, the vision model.
func (r modelReport) findings() []finding {
	if r.down != nil {
		return []finding{failure("ollama", r.down), {statusSkip, "model", "needs Ollama", ""},
			{statusSkip, "vision", "needs Ollama", ""}}
	}
	out := []finding{{statusOK, "ollama", fmt.Sprintf("Ollama %s at %s", r.version, r.url), ""}}
	if r.main.err != nil {
		out = append(out, failure("model", r.main.err))
	} else {
		out = append(out, finding{statusOK, "model", describeModel(r.main.info, r.numCtx), ""})
		for _, w := range modelWarnings(r.main.info, r.numCtx, r.proto) {
			out = append(out, finding{statusWarn, "model", w, ""})
		}
		out = append(out, r.protocolFinding())
	}
	return append(out, r.visionFinding())
}

// describeModel is the model's line: capabilities, context, num_ctx, family and size.
func describeModel(info ollama.ModelInfo, numCtx int) string {
	caps := strings.Join(info.Capabilities, ", ")
	if !info.Known() {
		caps = "capabilities not reported"
	}
	desc := fmt.Sprintf("%s: %s; %d tokens of context; num_ctx %d", info.Name, caps, info.ContextLength, numCtx)
	if info.ContextLength == 0 {
		desc = fmt.Sprintf("%s: %s; context length not reported; num_ctx %d", info.Name, caps, numCtx)
	}
	if details := strings.TrimSpace(strings.Join([]string{info.Family, info.ParameterSize, info.Quantization}, " ")); details != "" {
		desc += " (" + details + ")"
	}
	return desc
}

// protocolFinding says how the model will draw, and why.
func (r modelReport) protocolFinding() finding {
	info, p := r.main.info, r.protocol()
	setting := fmt.Sprintf("EXCALIBOT_PROTOCOL=%s", r.proto)
	switch {
	case r.proto == agent.ProtocolTools && info.Known() && !info.Has(ollama.CapTools):
		return finding{statusFail, "protocol", fmt.Sprintf("tools (%s), but %s cannot call tools: Ollama refuses every drawing request", setting, info.Name),
			"set EXCALIBOT_PROTOCOL to auto or plan, or use a model that calls tools: " + ollama.ToolModels}
	case r.proto != agent.ProtocolAuto:
		return finding{statusOK, "protocol", fmt.Sprintf("%s (%s)", p, setting), ""}
	case !info.Known():
		return finding{statusOK, "protocol", fmt.Sprintf("tools (%s: Ollama did not say whether %s calls tools; a refusal turns runs to plans)", setting, info.Name), ""}
	case p == agent.ProtocolPlan:
		return finding{statusOK, "protocol", fmt.Sprintf("plan (%s: %s cannot call tools, so it answers with typed plans)", setting, info.Name), ""}
	}
	return finding{statusOK, "protocol", fmt.Sprintf("tools (%s: %s calls tools)", setting, info.Name), ""}
}

// visionFinding says whether the model that reads pictures can, and when not, which models
// pulled into the same server can.
func (r modelReport) visionFinding() finding {
	v := r.vision
	which := v.info.Name + " (EXCALIBOT_VISION_MODEL)"
	if !r.named {
		which = v.info.Name + " (the model itself)"
	}
	switch {
	case !r.named && v.err != nil:
		return finding{statusSkip, "vision", "needs the model", ""}
	case v.sees():
		return finding{statusOK, "vision", which + " reads pictures", ""}
	case errors.Is(v.err, ollama.ErrModelNotFound):
		f := failure("vision", v.err)
		f.status = statusWarn
		f.detail += ", so pictures sent with a request are refused" + r.seeingClause()
		f.fix += ", or set EXCALIBOT_VISION_MODEL to a model that reads pictures"
		return f
	case v.err != nil:
		f := failure("vision", v.err)
		f.status = statusWarn
		return f
	case !v.info.Known():
		return finding{statusWarn, "vision", fmt.Sprintf("Ollama did not say whether %s reads pictures; pictures are sent to it, and Ollama refuses them if it cannot", which), ""}
	}
	no := &agent.NoVisionError{Model: v.info.Name, Pulled: r.seeing, Listed: r.listed}
	return finding{statusWarn, "vision", no.Error() + "; pictures sent with a request are refused",
		"set EXCALIBOT_VISION_MODEL to a model that reads pictures"}
}

// seeingClause names the pulled models that read pictures, when the server listed some.
func (r modelReport) seeingClause() string {
	switch {
	case len(r.seeing) > 0:
		return "; models here that read pictures: " + strings.Join(r.seeing, ", ")
	case r.listed:
		return "; no model here reads pictures (e.g. ollama pull qwen2.5vl)"
	}
	return ""
}

// log writes the report at serve's start: the models' figures at Info, a warning for each
// setting that does not fit, and the sentence to act on as an Error when Ollama is down or the
// model not pulled; serve goes on, as Ollama may come up later and each request reports the same.
func (r modelReport) log(log *slog.Logger) {
	if r.down != nil {
		log.Error("model check: "+r.down.Error(), logkey.Model, r.main.info.Name, "ollama", r.url)
		return
	}
	if r.main.err == nil {
		logModel(log, "model", r.main.info, r.protocol())
	}
	if r.named && r.vision.err == nil {
		logModel(log, "vision model", r.vision.info, "")
	}
	for _, f := range r.findings() {
		msg, name := "model check: "+f.detail, r.main.info.Name
		if f.name == "vision" {
			msg, name = "vision check: "+f.detail, r.vision.info.Name
		}
		if f.fix != "" {
			msg += "; " + f.fix
		}
		switch f.status {
		case statusWarn:
			log.Warn(msg, logkey.Model, name)
		case statusFail:
			log.Error(msg, logkey.Model, name, "ollama", r.url)
		}
	}
}
