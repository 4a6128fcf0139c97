package agent

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/excalibot/excalibot/internal/clip"
	"github.com/excalibot/excalibot/tools"
)

// StopInvalidPlan ends a plan run whose model answered, but never with a plan that could be
// drawn (nor Mermaid to import): the scene is untouched and the summary says what was wrong.
const StopInvalidPlan StopReason = "invalid_plan"

// planState is what an Agent remembers about protocols across runs: in auto, a model that
// refused tools once draws with plans from then on.
type planState struct {
	noTools atomic.Bool
	logOnce sync.Once
}

// byProtocol runs req on seat s with the protocol of the Agent's Config: in auto, tools unless
// the model reports none or the server refuses them.
func (a *Agent) byProtocol(ctx context.Context, s *seat, req Request) (Result, error) {
	switch a.cfg.Protocol {
	case ProtocolTools:
		return a.runTools(ctx, s, req)
	case ProtocolPlan:
		return a.runPlan(ctx, s, req)
	case ProtocolAuto, "":
	default:
		return Result{}, fmt.Errorf("agent run: protocol %q is not one of auto, tools, plan", a.cfg.Protocol)
	}
	if _, canPlan := s.model.(Formatter); !canPlan {
		return a.runTools(ctx, s, req)
	}
	if s.plan.noTools.Load() {
		return a.runPlan(ctx, s, req)
	}
	if d, ok := s.model.(Describer); ok {
		info, err := d.Describe(ctx)
		switch {
		case err != nil:
			a.log.Debug("describe model; assuming it calls tools", "err", err)
		case info.Known() && !info.Has(CapTools):
			a.switchToPlans(s, "the model reports no tool capability", info.Capabilities)
			return a.runPlan(ctx, s, req)
		}
	}
	res, err := a.runTools(ctx, s, req)
	if errors.Is(err, ErrNoToolSupport) {
		a.switchToPlans(s, "the server refused tools for the model", nil)
		res, err = a.runPlan(ctx, s, req)
	}
	return res, err
}

func (a *Agent) switchToPlans(s *seat, why string, caps []string) {
	s.plan.noTools.Store(true)
	s.plan.logOnce.Do(func() {
		a.log.Info("model cannot call tools; drawing with typed plans", "model", modelName(s.model), "why", why, "capabilities", caps)
	})
}

// planRun is one run of the plan protocol.
type planRun struct {
	*run
	f     Formatter
	ix    *sceneIndex
	lim   tools.Limits
	steps int // tool steps of the accepted plan
}

// Retry and fallback texts. The retry names every problem; the fallback drops the schema, for
// models (and server versions) that ignore format, and accepts Mermaid.
const (
	planRetryText    = "Your answer was not a valid diagram plan:\n%s\nAnswer again with the whole corrected plan as one JSON object, nothing else."
	planFallbackJSON = "Your answers could not be drawn. Answer once more with the plan as one JSON object in a ```json fence, and nothing else."
)

// runPlan draws req with one structured-output request for a plan, one retry that says what was
// wrong, then a fallback without the schema that also takes Mermaid.
func (a *Agent) runPlan(ctx context.Context, s *seat, req Request) (Result, error) {
	f, ok := s.model.(Formatter)
	if !ok {
		return Result{}, errors.New("agent run: the plan protocol needs a model that can answer in a JSON format (Ollama's structured outputs); use protocol tools with this model")
	}
	r := &run{a: a, model: s.model, req: req, start: a.cfg.Now(), specs: map[string]tools.Spec{}}
	for _, s := range req.Tools.Specs() {
		r.specs[s.Name] = s
	}
	// The plan is checked against the limits its tool calls will meet, so a plan the tools would
	// refuse is refused here, where the retry can say why.
	lim := tools.DefaultLimits()
	if l, ok := req.Tools.(interface{ Limits() tools.Limits }); ok {
		lim = l.Limits()
	}
	p := &planRun{run: r, f: f, lim: lim}
	runCtx, cancel := context.WithTimeout(ctx, a.cfg.Limits.Wall)
	defer cancel()
	msgs, err := p.opening(runCtx)
	if err != nil {
		return r.finish(StopError), err
	}

	var probs planProblems
	last := "" // the previous answer, shown to the model with what was wrong with it
	for turn := 1; turn <= 3; turn++ {
		if turn > a.cfg.Limits.Turns {
			return r.finish(StopTurnLimit), nil
		}
		send, format := msgs, planSchema
		switch turn {
		case 2:
			send = append(append([]Message(nil), msgs...), Message{Role: RoleAssistant, Content: clip.Runes(last, 4000)},
				Message{Role: RoleUser, Content: fmt.Sprintf(planRetryText, planBullets(probs))})
		case 3:
			format = nil
			ask := planFallbackJSON
			if r.specs[tools.CreateFromMermaid].Name != "" {
				ask = strings.TrimSpace(planFallbackText)
			}
			send = append(append([]Message(nil), msgs...), Message{Role: RoleUser,
				Content: ask + "\n\nWhat was wrong before:\n" + planBullets(probs)})
		}
		reply, err := p.ask(runCtx, turn, send, format)
		if err != nil {
			switch {
			case ctx.Err() != nil:
				return r.finish(StopError), fmt.Errorf("agent run: %w", ctx.Err())
			case runCtx.Err() != nil:
				return r.finish(StopWallTime), nil
			}
			return r.finish(StopError), err
		}
		answer := stripThinking(reply.Message.Content)
		last = answer
		var cp checkedPlan
		cp, probs = p.read(answer)
		if len(probs) == 0 {
			if stop, ok := p.draw(runCtx, turn, cp, &probs); ok {
				return r.finish(stop), nil
			}
			continue
		}
		if turn == 3 {
			if src, ok := planMermaid(answer); ok && r.specs[tools.CreateFromMermaid].Name != "" {
				if stop, ok := p.mermaid(runCtx, turn, src, &probs); ok {
					return r.finish(stop), nil
				}
			}
		}
		a.log.Info("model answer is not a diagram plan", "turn", turn, "problems", probs.Error())
	}
	res := r.finish(StopInvalidPlan)
	res.Summary = "The model's answer was not a diagram plan: " + clip.Runes(probs.Error(), 300)
	res.Memory = req.Memory // nothing was drawn: nothing to remember
	return res, nil
}

// opening is the tool loop's opening with the plan prompt: the thread's memory and the request
// with the scene as get_scene shows it, fenced as data.
func (p *planRun) opening(ctx context.Context) ([]Message, error) {
	sceneText, changes, err := p.startScene(ctx)
	if err != nil {
		return nil, err
	}
	p.ix = indexScene(sceneText)
	if !p.ix.content {
		sceneText = "scene: empty" // without get_scene's advice on which tool to start with
	}
	msgs := []Message{{Role: RoleSystem, Content: withPictures(PlanPrompt(), len(p.req.Images))}}
	msgs = append(msgs, p.req.Memory.History(p.a.cfg.MemoryTokens)...)
	return append(msgs, p.requestMessage(sceneText, changes)), nil
}

// ask sends one plan request (format nil: a free answer), bounded by the per-request limit.
func (p *planRun) ask(ctx context.Context, turn int, msgs []Message, format json.RawMessage) (Reply, error) {
	reply, d, err := p.a.timedRequest(ctx, turn, &p.res, func(ctx context.Context) (Reply, error) {
		return p.f.ChatFormat(ctx, msgs, format)
	})
	if err != nil {
		return reply, err
	}
	p.step(Step{Kind: StepModel, Turn: turn, PromptTokens: reply.PromptTokens, OutputTokens: reply.OutputTokens,
		Duration: d, Result: clip.Runes(oneLine(stripThinking(reply.Message.Content)), 160)})
	return reply, nil
}

// read takes the plan out of an answer and checks it.
func (p *planRun) read(answer string) (checkedPlan, planProblems) {
	var probs planProblems
	src, why := planJSON(answer)
	if why != "" {
		probs.add("", "%s", why)
		return checkedPlan{}, probs
	}
	plan := decodePlan(src, &probs)
	if len(probs) > 0 {
		return checkedPlan{}, probs
	}
	return checkPlan(plan, p.ix, p.lim, &probs), probs
}

// draw makes the plan's tool calls. A refusal of the first call changed nothing, so it counts as
// a problem of the plan (the model may try again); ok is false then.
func (p *planRun) draw(ctx context.Context, turn int, cp checkedPlan, probs *planProblems) (StopReason, bool) {
	calls := expandPlan(cp, p.ix)
	cleared := false
	for i, c := range calls {
		if p.res.ToolCalls >= p.a.cfg.Limits.ToolCalls {
			return StopToolCallLimit, true
		}
		res := p.call(ctx, turn, c)
		if !res.IsError {
			cleared = cleared || c.name == tools.ClearCanvas
			continue
		}
		if cleared {
			p.call(ctx, turn, planCall{tools.RestoreSnapshot, json.RawMessage(`{"name":"before-clear"}`)})
		}
		if i == 0 || cleared {
			probs.add("", "%s refused the plan: %s", c.name, clip.Runes(oneLine(res.Text), 300))
			return "", false
		}
		p.doneAt = strings.TrimSpace(clip.Runes(oneLine(cp.summary), 300) + " Not everything could be changed: " + clip.Runes(oneLine(res.Text), 200))
		return StopDone, true
	}
	// Without a summary of the model's own, the run's summary says what changed in the scene.
	p.doneAt = clip.Runes(oneLine(cp.summary), 300)
	return StopDone, true
}

// mermaid imports a Mermaid answer, replacing the diagram on a follow-up.
func (p *planRun) mermaid(ctx context.Context, turn int, src string, probs *planProblems) (StopReason, bool) {
	args := map[string]any{"mermaid": src}
	if p.ix.content {
		args["replace"] = true // Mermaid describes the whole diagram; the tool keeps a snapshot
	}
	res := p.call(ctx, turn, planCallOf(tools.CreateFromMermaid, args))
	if res.IsError {
		probs.add("", "create_from_mermaid refused the Mermaid answer: %s", clip.Runes(oneLine(res.Text), 300))
		return "", false
	}
	p.doneAt = "Drew the diagram from the model's Mermaid answer."
	return StopDone, true
}

// call runs one expansion call through the toolbox and reports it as the loop does.
func (p *planRun) call(ctx context.Context, turn int, c planCall) tools.Result {
	t0 := p.a.cfg.Now()
	res := p.req.Tools.Call(ctx, c.name, c.args)
	p.res.ToolCalls++
	p.res.Changed = p.res.Changed || res.Changed && !res.IsError
	if res.IsError {
		p.res.ToolErrors++
	}
	p.step(Step{Kind: StepTool, Turn: turn, Tool: c.name, Args: clip.Runes(oneLine(string(c.args)), 120),
		Result: clip.Runes(oneLine(res.Text), 160), IsError: res.IsError, Duration: p.a.cfg.Now().Sub(t0)})
	return res
}

func planBullets(p planProblems) string {
	if len(p) > 12 {
		p = append(p[:12:12], fmt.Sprintf("and %d more", len(p)-12))
	}
	return "- " + strings.Join(p, "\n- ")
}

// planMermaidWords start a Mermaid diagram.
var planMermaidWords = []string{"flowchart", "graph", "sequenceDiagram", "classDiagram", "stateDiagram", "erDiagram", "mindmap"}

// planMermaid finds Mermaid in an answer: a ```mermaid fence, a bare fence or the text itself
// starting with a diagram keyword. The answer comes with its thinking already stripped.
func planMermaid(answer string) (string, bool) {
	s := strings.TrimSpace(answer)
	for _, cand := range []string{"mermaid", ""} {
		if body, ok := planFenced(s, cand); ok && planStartsMermaid(body) {
			return strings.TrimSpace(body), true
		}
	}
	if planStartsMermaid(s) {
		return s, true
	}
	return "", false
}

func planStartsMermaid(s string) bool {
	s = strings.TrimSpace(s)
	for _, k := range planMermaidWords {
		if strings.HasPrefix(s, k) {
			return true
		}
	}
	return false
}
