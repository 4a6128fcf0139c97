package agent

import (
	"context"
	"errors"
	"fmt"

	"github.com/excalibot/excalibot/agent/ollama"
	"github.com/excalibot/excalibot/agent/plan"
	"github.com/excalibot/excalibot/agent/textcall"
	"github.com/excalibot/excalibot/internal/clip"
	"github.com/excalibot/excalibot/internal/logkey"
)

// A tool-loop turn can end unreadable: an empty reply, a reply that looks like a call but holds
// none that can be read, or a call Ollama itself could not parse. The first such turn of a run
// gets its correction (a nudge, or a retry with a hint); a later one is asked again as one typed
// plan (plan_run.go) for the request over the scene as it is now, drawn through the same tools,
// and the loop goes on. Many small models that garble tool calls still answer a JSON schema, which
// Ollama constrains token by token. Only when the plan fails too does the run end, keeping what
// was drawn and saying so.

// unreadable is why a turn could not be read.
type unreadable int

const (
	readable     unreadable = iota
	emptyReply              // neither words nor calls
	garbledReply            // looks like a call written as text, but none could be read
	badCall                 // Ollama could not parse the call (an HTTP 500, or an error line in the stream)
)

// emptyAnswerText is the empty-reply correction for a message that asks for no drawing (a
// question, thanks): the model may answer in words.
const emptyAnswerText = "Your reply was empty. Answer the user's message in words, or call the tools if it asks for a change of the diagram."

// partlyDrawnText follows the plan fallback's request when the run has already changed the scene.
const partlyDrawnText = "Part of this request is drawn already: the scene above shows it. Plan only what is still missing or wrong, using the ids in the scene."

// unreadableReply tells whether the reply just read (toolCallsOf), which carried no calls, could
// not be read. An empty reply after calls is the model ending its turn, not a failure.
func (r *run) unreadableReply() unreadable {
	switch {
	case r.turnText == "" && r.res.ToolCalls == 0:
		return emptyReply
	case r.turnCalls == 0 && asksForDrawing(r.req.Prompt) && textcall.LooksLikeCall(r.raw, r.known):
		// Only a request for a change makes a call-like reply a broken call; a question answered
		// with an example call is an answer.
		return garbledReply
	}
	return readable
}

// onUnreadable decides what follows an unreadable turn: its correction for the first of the run,
// the plan fallback (once, for a request to draw or change something) for a later one, and after
// that the end of the run. reply is the unreadable reply (nil when Ollama could not parse it):
// a correction shows it to the model, the fallback puts the calls of its plan in its place. turn
// advances when the fallback asks the model. A non-empty StopReason ends the run.
func (r *run) onUnreadable(ctx, runCtx context.Context, turn *int, msgs []ollama.Message, reply *ollama.Message,
	why unreadable) ([]ollama.Message, StopReason, error) {
	r.unread = why
	// What is left of a reply that could not be read (a garbled call's text) is no answer for
	// people: the run's summary must not quote it.
	r.final = ""
	if !r.corrected["unreadable"] {
		r.corrected["unreadable"] = true
		if why == badCall {
			r.res.Corrections.Retries++
			r.step(Step{Kind: StepNudge, Turn: *turn, Result: badCallText})
			return append(msgs, ollama.Message{Role: ollama.RoleUser, Content: badCallText}), "", nil
		}
		text := garbledText
		switch {
		case why == emptyReply && asksForDrawing(r.req.Prompt):
			text = emptyReplyText
		case why == emptyReply:
			text = emptyAnswerText
		}
		return r.nudge(append(msgs, *reply), *turn, text), "", nil
	}
	if r.fallback.drew {
		// The plan drew the request; a garbled turn after it ends the run with that drawing.
		return msgs, r.ended(StopNoToolCalls), nil
	}
	f, canPlan := r.model.(Formatter)
	if r.fallback.tried || !canPlan || !asksForDrawing(r.req.Prompt) {
		// A question is never answered with a drawing, and a plan is asked for once.
		return msgs, StopUnreadableCalls, nil
	}
	if *turn >= r.a.cfg.Limits.Turns {
		return msgs, StopTurnLimit, nil
	}
	*turn++
	r.fallback.tried = true
	r.res.Corrections.PlanFallbacks++
	r.step(Step{Kind: StepFallback, Turn: *turn, Result: "asking for the change as a typed plan: " + unreadableWords[why]})
	made, stop, err := r.planFallback(runCtx, *turn, f)
	switch {
	case err != nil && ctx.Err() != nil:
		return msgs, StopError, fmt.Errorf("agent run: %w", ctx.Err())
	case err != nil && runCtx.Err() != nil:
		return msgs, StopWallTime, nil
	case err != nil:
		return msgs, StopError, fmt.Errorf("plan fallback: %w", err)
	case stop == "":
		r.res.Corrections.PlanFallbacksFailed++
		return msgs, StopUnreadableCalls, nil
	case stop != StopDone:
		return msgs, stop, nil
	}
	r.fallback.drew = true
	// The model's next turn sees the calls its plan became and their results, as if it had made
	// them, and may finish or go on.
	m := ollama.Message{Role: ollama.RoleAssistant}
	for _, c := range made {
		m.ToolCalls = append(m.ToolCalls, c.call)
	}
	msgs = append(msgs, m)
	for _, c := range made {
		msgs = append(msgs, toolMessage(c.call, c.text))
	}
	return msgs, "", nil
}

// planFallback asks the model for the request as one typed plan over the scene as it is now, and
// draws it through the loop's dispatcher. stop is StopDone when the plan was drawn (perhaps in
// part: doneAt says so), a limit's reason, or "" when the answer was no plan that could be drawn
// (fallback.problems says why).
func (r *run) planFallback(ctx context.Context, turn int, f Formatter) ([]madeCall, StopReason, error) {
	p := &planRun{run: r, f: f, lim: toolLimits(r.req.Tools)}
	var msgs []ollama.Message
	msgs, p.ix = r.planMessages(r.sceneText(ctx), r.changes)
	if r.res.Changed {
		// Asked for the whole request again, a model might draw what is there a second time.
		msgs = append(msgs, ollama.Message{Role: ollama.RoleUser, Content: partlyDrawnText})
	}
	reply, err := p.ask(ctx, turn, msgs, plan.Schema())
	var cp plan.Checked
	var probs plan.Problems
	switch {
	case errors.Is(err, ollama.ErrBadToolCall):
		// The server failed on what the model wrote, not on its own: the plan failed like an answer.
		probs.Add("", "Ollama could not read it")
		r.a.log.Info("plan fallback: Ollama could not read the answer", "turn", turn, logkey.Err, err)
	case err != nil:
		return nil, "", err
	default:
		cp, probs = plan.Read(textcall.StripThinking(reply.Message.Content), p.ix, p.lim)
	}
	if len(probs) == 0 {
		if stop, ok := p.draw(ctx, turn, cp, &probs); ok {
			return p.made, stop, nil
		}
	}
	r.fallback.problems = probs
	r.a.log.Info("plan fallback gave no plan that could be drawn", "turn", turn, "problems", probs.Error())
	return nil, "", nil
}

// fallbackState is what a run knows of its plan fallback.
type fallbackState struct {
	tried    bool
	drew     bool
	problems plan.Problems // why the plan could not be drawn
}

// unreadableWords say what the model kept doing, for the step and the summary.
var unreadableWords = map[unreadable]string{
	emptyReply:   "the model kept answering with nothing",
	garbledReply: "the model kept writing tool calls that could not be read",
	badCall:      "the model kept writing tool calls that Ollama could not read",
}

// unreadableSummary is the sentence of a run that ended unreadable.
func (r *run) unreadableSummary() string {
	s := "Stopped before finishing: " + unreadableWords[r.unread] + "."
	if r.unread == readable {
		s = stopSentences[StopUnreadableCalls]
	}
	if r.fallback.tried && len(r.fallback.problems) > 0 {
		s += " Asked for a diagram plan instead, its answer could not be drawn either: " + clip.Runes(oneLine(r.fallback.problems.Error()), 200) + "."
	}
	return s
}

// nudge asks the model to change course with text, and counts it.
func (r *run) nudge(msgs []ollama.Message, turn int, text string) []ollama.Message {
	r.res.Corrections.Nudges++
	r.step(Step{Kind: StepNudge, Turn: turn, Result: text})
	return append(msgs, ollama.Message{Role: ollama.RoleUser, Content: text})
}
