package agent

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/excalibot/excalibot/agent/ollama"
	"github.com/excalibot/excalibot/agent/plan"
	"github.com/excalibot/excalibot/agent/textcall"
	"github.com/excalibot/excalibot/internal/clip"
	"github.com/excalibot/excalibot/internal/logkey"
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
			a.log.Debug("describe model; assuming it calls tools", logkey.Err, err)
		case ProtocolAuto.For(info) == ProtocolPlan:
			a.switchToPlans(s, "the model reports no tool capability", info.Capabilities)
			return a.runPlan(ctx, s, req)
		}
	}
	res, err := a.runTools(ctx, s, req)
	if errors.Is(err, ollama.ErrNoToolSupport) {
		a.switchToPlans(s, "the server refused tools for the model", nil)
		res, err = a.runPlan(ctx, s, req)
	}
	return res, err
}

func (a *Agent) switchToPlans(s *seat, why string, caps []string) {
	s.plan.noTools.Store(true)
	s.plan.logOnce.Do(func() {
		a.log.Info("model cannot call tools; drawing with typed plans", logkey.Model, modelName(s.model), "why", why, "capabilities", caps)
	})
}

// planRun is one run of the plan protocol.
type planRun struct {
	*run
	f    Formatter
	ix   *plan.Index
	lim  tools.Limits
	made []madeCall // the calls drawn so far, with their results
}

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
	p := &planRun{run: r, f: f, lim: toolLimits(req.Tools)}
	runCtx, cancel := context.WithTimeout(ctx, a.cfg.Limits.Wall)
	defer cancel()
	msgs, err := p.opening(runCtx)
	if err != nil {
		return r.finish(StopError), err
	}

	var probs plan.Problems
	last := "" // the previous answer, shown to the model with what was wrong with it
	for turn := 1; turn <= 3; turn++ {
		if turn > a.cfg.Limits.Turns {
			return r.finish(StopTurnLimit), nil
		}
		send, format := msgs, plan.Schema()
		switch turn {
		case 2:
			r.res.Corrections.Retries++
			send = append(append([]ollama.Message(nil), msgs...), ollama.Message{Role: ollama.RoleAssistant, Content: clip.Runes(last, 4000)},
				ollama.Message{Role: ollama.RoleUser, Content: plan.Retry(probs)})
		case 3:
			r.res.Corrections.WithoutSchema++
			format = nil
			send = append(append([]ollama.Message(nil), msgs...), ollama.Message{Role: ollama.RoleUser,
				Content: plan.Fallback(probs, r.specs[tools.CreateFromMermaid].Name != "")})
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
		answer := textcall.StripThinking(reply.Message.Content)
		last = answer
		var cp plan.Checked
		cp, probs = plan.Read(answer, p.ix, p.lim)
		if len(probs) == 0 {
			if stop, ok := p.draw(runCtx, turn, cp, &probs); ok {
				return r.finish(stop), nil
			}
			continue
		}
		if turn == 3 {
			if c, ok := plan.FromMermaid(answer, p.ix); ok && r.specs[tools.CreateFromMermaid].Name != "" {
				if stop, ok := p.mermaid(runCtx, turn, c, &probs); ok {
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
func (p *planRun) opening(ctx context.Context) ([]ollama.Message, error) {
	sceneText, changes, err := p.startScene(ctx)
	if err != nil {
		return nil, err
	}
	var msgs []ollama.Message
	msgs, p.ix = p.planMessages(sceneText, changes)
	return msgs, nil
}

// planMessages are a plan request's messages over the scene as get_scene shows it, and the
// canvas the plan is checked against: the plan prompt, the thread's memory and the request.
// The plan protocol opens with them; the tool loop's plan fallback asks with them too.
func (r *run) planMessages(sceneText, changes string) ([]ollama.Message, *plan.Index) {
	ix := plan.IndexScene(sceneText)
	if ix.Empty() {
		sceneText = "scene: empty" // without get_scene's advice on which tool to start with
	}
	msgs := []ollama.Message{{Role: ollama.RoleSystem, Content: withPictures(plan.Prompt(), len(r.req.Images))}}
	msgs = append(msgs, r.req.Memory.History(r.a.cfg.MemoryTokens)...)
	return append(msgs, r.requestMessage(sceneText, changes)), ix
}

// toolLimits are the limits the toolbox's calls meet. A plan is checked against them, so a plan
// the tools would refuse is refused before drawing, where a retry can say why.
func toolLimits(tb Toolbox) tools.Limits {
	if l, ok := tb.(interface{ Limits() tools.Limits }); ok {
		return l.Limits()
	}
	return tools.DefaultLimits()
}

// ask sends one plan request (format nil: a free answer), bounded by the per-request limit.
func (p *planRun) ask(ctx context.Context, turn int, msgs []ollama.Message, format json.RawMessage) (ollama.Reply, error) {
	reply, d, err := p.a.timedRequest(ctx, turn, &p.res, func(ctx context.Context) (ollama.Reply, error) {
		return p.f.ChatFormat(ctx, msgs, format)
	})
	if err != nil {
		return reply, err
	}
	p.step(Step{Kind: StepModel, Turn: turn, PromptTokens: reply.PromptTokens, OutputTokens: reply.OutputTokens,
		Duration: d, Result: clip.Runes(oneLine(textcall.StripThinking(reply.Message.Content)), 160)})
	return reply, nil
}

// draw makes the plan's tool calls. A refusal of the first call changed nothing, so it counts as
// a problem of the plan (the model may try again); ok is false then.
func (p *planRun) draw(ctx context.Context, turn int, cp plan.Checked, probs *plan.Problems) (StopReason, bool) {
	calls := plan.Expand(cp, p.ix)
	cleared := false
	for i, c := range calls {
		if p.res.ToolCalls >= p.a.cfg.Limits.ToolCalls {
			return StopToolCallLimit, true
		}
		res := p.call(ctx, turn, c)
		if !res.IsError {
			cleared = cleared || c.Name == tools.ClearCanvas
			continue
		}
		if cleared {
			p.call(ctx, turn, plan.Call{Name: tools.RestoreSnapshot, Args: json.RawMessage(`{"name":"before-clear"}`)})
		}
		if i == 0 || cleared {
			probs.Add("", "%s refused the plan: %s", c.Name, clip.Runes(oneLine(res.Text), 300))
			return "", false
		}
		p.doneAt = strings.TrimSpace(clip.Runes(oneLine(cp.Summary()), 300) + " Not everything could be changed: " + clip.Runes(oneLine(res.Text), 200))
		return StopDone, true
	}
	// Without a summary of the model's own, the run's summary says what changed in the scene.
	p.doneAt = clip.Runes(oneLine(cp.Summary()), 300)
	return StopDone, true
}

// mermaid imports a Mermaid answer (plan.FromMermaid's call), replacing the diagram on a follow-up.
func (p *planRun) mermaid(ctx context.Context, turn int, c plan.Call, probs *plan.Problems) (StopReason, bool) {
	res := p.call(ctx, turn, c)
	if res.IsError {
		probs.Add("", "create_from_mermaid refused the Mermaid answer: %s", clip.Runes(oneLine(res.Text), 300))
		return "", false
	}
	p.doneAt = "Drew the diagram from the model's Mermaid answer."
	return StopDone, true
}

// call runs one expansion call through the tool loop's dispatcher and keeps it with its result
// (made), so the plan fallback can show the model the calls its plan became.
func (p *planRun) call(ctx context.Context, turn int, c plan.Call) tools.Result {
	tc := ollama.ToolCall{ID: fmt.Sprintf("plan_%d_%d", turn, len(p.made)+1), Name: c.Name, Args: c.Args}
	res := p.run.call(ctx, turn, tc)
	p.made = append(p.made, madeCall{call: tc, text: res.Text})
	return res
}

// madeCall is a call a plan was drawn with, and its result's text.
type madeCall struct {
	call ollama.ToolCall
	text string
}
