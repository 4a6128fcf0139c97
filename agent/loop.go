package agent

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"sort"
	"strings"
	"time"

	"github.com/excalibot/excalibot/agent/ollama"
	"github.com/excalibot/excalibot/agent/textcall"
	"github.com/excalibot/excalibot/internal/clip"
	"github.com/excalibot/excalibot/internal/logkey"
	"github.com/excalibot/excalibot/internal/plural"
	"github.com/excalibot/excalibot/tools"
)

// Config configures an Agent. Zero fields take defaults.
type Config struct {
	Limits Limits
	// ContextTokens is the model's context window (default 16384); a run keeps its conversation
	// within three quarters of it, leaving room for the reply.
	ContextTokens int
	// MemoryTokens is the budget for earlier exchanges of the thread (default 1500).
	MemoryTokens int
	// AllTools offers the model every tool of the toolbox. By default only CoreTools are offered
	// (when the toolbox has them): fewer, flatter tools suit small models and keep the prompt
	// near 9 KB. Calls to tools of the toolbox that were not offered still run.
	AllTools bool
	// Now is the clock (default time.Now).
	Now func() time.Time
	// Protocol is how the model is asked to draw (default ProtocolAuto; see plan_run.go).
	Protocol Protocol
	// VisionModel is the model (usually of the same server) that runs requests carrying pictures
	// (Request.Images); requests without pictures keep the Agent's model. Nil, or the Agent's
	// model by name: the Agent's model reads the pictures itself, if it can (see vision.go).
	VisionModel Model
}

// CoreTools are the tools offered by default: enough to draw, check, fix and finish. The graph
// tools take the place of align_elements and distribute_elements, which placing by hand needed:
// with both the prompt would pass 9 KB (see BenchmarkPromptSize). Those two still run if called.
var CoreTools = []string{tools.GetScene, tools.CreateGraph, tools.AddToGraph, tools.BatchCreateElements, tools.UpdateElement,
	tools.DeleteElements, tools.Done}

// offered picks the specs sent to the model.
func offered(all []tools.Spec, everything bool) []tools.Spec {
	if everything {
		return all
	}
	core := make(map[string]bool, len(CoreTools))
	for _, n := range CoreTools {
		core[n] = true
	}
	var out []tools.Spec
	for _, s := range all {
		if core[s.Name] {
			out = append(out, s)
		}
	}
	if len(out) == 0 { // a toolbox of other tools: offer what it has
		return all
	}
	return out
}

// Agent runs requests against one model, and those that carry pictures against its vision model
// when Config names one. It holds no per-thread state and is safe for concurrent runs if its
// models are.
type Agent struct {
	main   *seat
	vision *seat // nil: pictures go to main
	cfg    Config
	log    *slog.Logger
}

// seat is one model the Agent runs, with what it learnt about that model across runs.
type seat struct {
	model Model
	plan  planState
}

// New returns an Agent over model, and over Config.VisionModel for requests with pictures.
func New(model Model, cfg Config, log *slog.Logger) *Agent {
	cfg.Limits = cfg.Limits.withDefaults()
	if cfg.ContextTokens <= 0 {
		cfg.ContextTokens = 16384
	}
	if cfg.MemoryTokens <= 0 {
		cfg.MemoryTokens = 1500
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	a := &Agent{main: &seat{model: model}, cfg: cfg, log: log.With("component", "agent")}
	if v := cfg.VisionModel; v != nil && (modelName(v) == "" || modelName(v) != modelName(model)) {
		a.vision = &seat{model: v}
	}
	return a
}

// nudgeText is sent once when the model repeats a failing call unchanged.
const nudgeText = "Your last call failed again with the same arguments. Read the error message, then change the arguments or call a different tool. Repeating the same call will end the run."

// textCallID marks a call read from the reply's text until it gets its id.
const textCallID = "\x00text"

// badCallText is sent once when Ollama could not parse the model's tool call.
const badCallText = "Your last tool call could not be read. Call the tool again with its arguments as one valid JSON object."

// run is the state of one Run.
type run struct {
	a         *Agent
	model     Model // the model this run asks (see Agent.Run)
	req       Request
	res       Result
	specs     map[string]tools.Spec
	known     textcall.Types // every tool of the toolbox, with its parameters' types
	names     []string
	start     time.Time
	failed    string // key of the last failing call
	fails     int    // times it failed in a row
	nudgedKey string // the failing call already nudged about
	final     string // the model's last text, as a person reads it
	raw       string // the model's last text as written, for telling a garbled call
	turnText  string // what people read of the last reply, calls taken out
	turnCalls int    // calls read from the last reply's text
	doneAt    string // the summary given to done, if any
	// What the plan fallback of unreadable turns needs (fallback.go): what a person changed since
	// the last run (DiffScenes, told in the opening), why the last unreadable turn was so.
	changes  string
	unread   unreadable
	fallback fallbackState
	// The scene when the run started: what the summary's words are measured against.
	before []ElementState
	// corrected holds the course corrections already sent (correction); each is sent once.
	corrected map[string]bool
}

// Run carries out one request. It returns a Result in every case; the error is non-nil only when
// the model failed (see Model) or ctx ended, and then Result.Reason is StopError and the scene may
// be partly changed: the caller decides whether to keep it. Limits end a run without an error.
//
// A request with Images runs on the vision model (Config.VisionModel, else the model itself) once
// it is known to read pictures; one that cannot fails with a *NoVisionError (ErrNoVision).
func (a *Agent) Run(ctx context.Context, req Request) (Result, error) {
	if req.Tools == nil {
		return Result{}, errors.New("agent run: no tools")
	}
	s := a.main
	if len(req.Images) > 0 {
		var err error
		if s, err = a.seeing(ctx); err != nil {
			return Result{Reason: StopError, Memory: req.Memory}, err
		}
		if strings.TrimSpace(req.Prompt) == "" {
			req.Prompt = pictureRequest
		}
	}
	res, err := a.byProtocol(ctx, s, req)
	var nv *NoVisionError
	if errors.Is(err, ollama.ErrNoVision) && !errors.As(err, &nv) {
		err = a.noVision(ctx, s, err) // the server refused the pictures: say which models can read them
	}
	return res, err
}

// runTools is the tool loop: the model calls tools turn by turn until it is done or a limit ends
// the run.
func (a *Agent) runTools(ctx context.Context, s *seat, req Request) (Result, error) {
	r := &run{a: a, model: s.model, req: req, start: a.cfg.Now(), specs: map[string]tools.Spec{}, corrected: map[string]bool{}}
	all := req.Tools.Specs()
	for _, s := range all {
		r.specs[s.Name] = s
	}
	r.known = textcall.TypesOf(all)
	specs := offered(all, a.cfg.AllTools)
	for _, s := range specs {
		r.names = append(r.names, s.Name)
	}
	sort.Strings(r.names)
	runCtx, cancel := context.WithTimeout(ctx, a.cfg.Limits.Wall)
	defer cancel()

	msgs, err := r.opening(runCtx)
	if err != nil {
		return r.finish(StopError), err
	}
	head := len(msgs)
	window := a.cfg.ContextTokens * 3 / 4 // the rest is room for the reply
	budget := window - schemaTokens(specs)
	for turn := 1; ; turn++ {
		if turn > a.cfg.Limits.Turns {
			return r.finish(StopTurnLimit), nil
		}
		msgs = trimConversation(msgs, head, budget)
		sent := schemaTokens(specs)
		for _, m := range msgs {
			sent += messageTokens(m)
		}
		reply, err := r.ask(runCtx, turn, msgs, specs)
		if err == nil && reply.PromptTokens > sent {
			// The estimate ran low for this model's tokenizer: shrink the budget by the same factor.
			budget = int(float64(window)*float64(sent)/float64(reply.PromptTokens)) - schemaTokens(specs)
		}
		if err != nil {
			switch {
			case ctx.Err() != nil:
				return r.finish(StopError), fmt.Errorf("agent run: %w", ctx.Err())
			case runCtx.Err() != nil:
				return r.finish(StopWallTime), nil
			case errors.Is(err, ollama.ErrBadToolCall):
				// The model's calls are broken, not the server (see fallback.go).
				var stop StopReason
				if msgs, stop, err = r.onUnreadable(ctx, runCtx, &turn, msgs, nil, badCall); stop != "" {
					return r.finish(stop), err
				}
				continue
			}
			return r.finish(StopError), err
		}
		msg := r.toolCallsOf(reply.Message)
		msgs = append(msgs, msg)
		if len(msg.ToolCalls) == 0 {
			if why := r.unreadableReply(); why != readable {
				// onUnreadable places the reply itself: shown with a nudge, replaced by a plan.
				var stop StopReason
				if msgs, stop, err = r.onUnreadable(ctx, runCtx, &turn, msgs[:len(msgs)-1], &msg, why); stop != "" {
					return r.finish(stop), err
				}
				continue
			}
			if text := r.correction(); text != "" {
				msgs = r.nudge(msgs, turn, text)
				continue
			}
			return r.finish(r.ended(StopNoToolCalls)), nil
		}
		var stop StopReason
		nudge := false
		for _, c := range msg.ToolCalls {
			if stop != "" {
				// Every call gets an answer, also those after the run decided to stop.
				msgs = append(msgs, toolMessage(c, "Not run: the run stopped before this call."))
				continue
			}
			if r.res.ToolCalls >= a.cfg.Limits.ToolCalls {
				stop = StopToolCallLimit
				msgs = append(msgs, toolMessage(c, "Not run: the limit of tool calls per run is reached."))
				continue
			}
			res := r.call(runCtx, turn, c)
			msgs = append(msgs, toolMessage(c, res.Text))
			switch {
			case res.Done:
				stop = StopDone
			case r.repeated(c, res):
				// One nudge per failing call; the same call failing after it ends the run.
				if r.nudgedKey == r.failed {
					stop = StopRepeatedFailure
				} else {
					r.nudgedKey, nudge = r.failed, true
				}
			}
		}
		if stop == StopDone {
			if text := r.correction(); text != "" {
				stop = ""
				msgs = r.nudge(msgs, turn, text)
			} else {
				stop = r.ended(StopDone)
			}
		}
		if nudge && stop == "" {
			msgs = r.nudge(msgs, turn, nudgeText)
		}
		if stop == "" && runCtx.Err() != nil {
			stop = StopWallTime
		}
		if stop != "" {
			return r.finish(stop), nil
		}
	}
}

// opening builds the system prompt, the thread's memory and the request with the current scene.
func (r *run) opening(ctx context.Context) ([]ollama.Message, error) {
	sceneText, changes, err := r.startScene(ctx)
	if err != nil {
		return nil, err
	}
	msgs := []ollama.Message{{Role: ollama.RoleSystem, Content: withPictures(SystemPrompt(), len(r.req.Images))}}
	msgs = append(msgs, r.req.Memory.History(r.a.cfg.MemoryTokens)...)
	return append(msgs, r.requestMessage(sceneText, changes)), nil
}

// startScene records the scene the run starts from (what "changed" and the summary are measured
// against) and returns it as get_scene shows it, with what a person changed since the last run.
func (r *run) startScene(ctx context.Context) (sceneText, changes string, err error) {
	if r.req.Scene != nil {
		r.before = r.req.Scene.State()
		if r.req.Memory.HasScene {
			changes = DiffScenes(r.req.Memory.Scene, r.before)
		}
	}
	r.changes = changes
	return r.sceneText(ctx), changes, nil
}

// sceneText is the scene as get_scene shows it now, or "" without get_scene.
func (r *run) sceneText(ctx context.Context) string {
	if _, ok := r.specs[tools.GetScene]; ok {
		if res := r.req.Tools.Call(ctx, tools.GetScene, json.RawMessage("{}")); !res.IsError {
			return res.Text
		}
	}
	return ""
}

// ask sends one request bounded by the per-request limit and records it as a step.
func (r *run) ask(ctx context.Context, turn int, msgs []ollama.Message, specs []tools.Spec) (ollama.Reply, error) {
	reply, d, err := r.a.timedRequest(ctx, turn, &r.res, func(ctx context.Context) (ollama.Reply, error) {
		return r.model.Chat(ctx, msgs, specs)
	})
	if err != nil {
		return reply, err
	}
	r.step(Step{Kind: StepModel, Turn: turn, PromptTokens: reply.PromptTokens, OutputTokens: reply.OutputTokens,
		Duration: d, Result: clip.Runes(oneLine(textcall.Visible(reply.Message.Content)), 160)})
	return reply, nil
}

// timedRequest makes one model request bounded by the per-request limit and counts it in res: the
// turn, the model's time and, when it answered, the tokens. A request that hit the limit returns
// an error naming it, since the model client cannot know it.
func (a *Agent) timedRequest(ctx context.Context, turn int, res *Result, request func(context.Context) (ollama.Reply, error)) (ollama.Reply, time.Duration, error) {
	reqCtx, cancel := context.WithTimeout(ctx, a.cfg.Limits.Request)
	defer cancel()
	t0 := a.cfg.Now()
	reply, err := request(reqCtx)
	d := a.cfg.Now().Sub(t0)
	res.ModelTime += d
	res.Turns = turn
	if err != nil {
		if errors.Is(reqCtx.Err(), context.DeadlineExceeded) && ctx.Err() == nil {
			err = &timeoutError{limit: a.cfg.Limits.Request, cause: err}
		}
		a.log.Warn("model request failed", "turn", turn, logkey.Err, err)
		return reply, d, err
	}
	res.PromptTokens += reply.PromptTokens
	res.OutputTokens += reply.OutputTokens
	return reply, d, nil
}

// timeoutError is a model request that hit Limits.Request: words for the person who asked
// (UserMessage) that match ollama.ErrModelTimeout, keeping the client's error for operators.
type timeoutError struct {
	limit time.Duration
	cause error
}

func (e *timeoutError) Error() string {
	return fmt.Sprintf("the model did not answer within %s; a smaller model or a longer model timeout may help", e.limit)
}

func (e *timeoutError) UserMessage() string { return e.Error() }
func (e *timeoutError) Unwrap() []error     { return []error{ollama.ErrModelTimeout, e.cause} }

// toolCallsOf returns the assistant message with its calls in the tool-call field: the calls
// Ollama parsed and those written in the text (a model may do both in one reply), in the order the
// model wrote them, a call sent twice running once, each with an id.
func (r *run) toolCallsOf(m ollama.Message) ollama.Message {
	m.Role = ollama.RoleAssistant
	r.raw = m.Content
	textCalls, rest := textcall.Parse(m.Content, r.known)
	if len(textCalls) > 0 && len(m.ToolCalls) == 0 && rest != "" && !asksForDrawing(r.req.Prompt) {
		// A question answered with words around a call quotes an example; it is not a call to run.
		textCalls, rest = nil, textcall.Visible(m.Content)
	}
	m.Content, r.turnText, r.turnCalls = rest, rest, len(textCalls)
	if rest != "" {
		r.final = rest
	}
	fieldCalls := len(m.ToolCalls)
	calls := append([]ollama.ToolCall(nil), m.ToolCalls...)
	if len(textCalls) > 0 {
		r.a.log.Info("tool calls recovered from reply text", "count", len(textCalls), "beside_tool_calls", fieldCalls)
	}
	for _, c := range textCalls {
		calls = append(calls, ollama.ToolCall{ID: textCallID, Name: c.Name, Args: c.Args, ArgsErr: c.ArgsErr, At: c.At})
	}
	// Where each call was written: a field call where it arrived in the stream (before the text
	// that came with it), a text call where it starts.
	sort.SliceStable(calls, func(i, j int) bool {
		if calls[i].At != calls[j].At {
			return calls[i].At < calls[j].At
		}
		return calls[i].ID != textCallID && calls[j].ID == textCallID
	})
	seen := map[string]int{} // a call's key → its place in m.ToolCalls
	m.ToolCalls = calls[:0]
	for i, c := range calls {
		fromText := c.ID == textCallID
		c.Name = textcall.Name(c.Name)
		if c.ArgsErr == "" {
			c.Args = r.known.Coerce(c.Name, unwrapArgs(c.Args, r.specs[c.Name].Parameters))
			if len(c.Args) == 0 {
				c.Args = json.RawMessage("{}")
			}
		}
		// The same call sent twice in one reply (in the field, in the text, or both) runs once:
		// drawing the same thing twice is never what the model meant.
		key := c.Name + "\x00" + canonicalJSON(c.Args) + "\x00" + c.ArgsErr
		if at, dup := seen[key]; dup {
			if kept := &m.ToolCalls[at]; !fromText && strings.HasSuffix(kept.ID, "_text") {
				kept.ID = c.ID // Ollama parsed it too: it keeps Ollama's id
				if kept.ID == "" {
					kept.ID = fmt.Sprintf("call_%d_%d", r.res.Turns, i+1)
				}
			}
			continue
		}
		seen[key] = len(m.ToolCalls)
		if c.ID == "" || fromText {
			c.ID = fmt.Sprintf("call_%d_%d", r.res.Turns, i+1)
		}
		if fromText {
			c.ID += "_text"
		}
		m.ToolCalls = append(m.ToolCalls, c)
	}
	return m
}

// call runs one tool call, answering bad names and bad arguments itself.
func (r *run) call(ctx context.Context, turn int, c ollama.ToolCall) tools.Result {
	t0 := r.a.cfg.Now()
	var res tools.Result
	switch {
	case c.ArgsErr != "":
		res = tools.Result{IsError: true, Text: fmt.Sprintf(
			"Error: %s. Nothing was done. Send the arguments of %s as one JSON object that matches its schema.",
			strings.TrimSuffix(c.ArgsErr, "."), orUnnamed(c.Name))}
	case r.specs[c.Name].Name == "":
		res = tools.Result{IsError: true, Text: fmt.Sprintf(
			"Error: there is no tool named %q. Nothing was done. The tools are: %s.", c.Name, strings.Join(r.names, ", "))}
	default:
		res = r.req.Tools.Call(ctx, c.Name, c.Args)
	}
	r.res.ToolCalls++
	r.res.Changed = r.res.Changed || res.Changed && !res.IsError
	if res.IsError {
		r.res.ToolErrors++
	}
	if res.Done {
		if s := summaryArg(c.Args); s != "" {
			r.doneAt = s
		}
	}
	r.step(Step{Kind: StepTool, Turn: turn, Tool: orUnnamed(c.Name), Args: clip.Runes(oneLine(argsText(c)), 120),
		Result: clip.Runes(oneLine(res.Text), 160), IsError: res.IsError, FromText: strings.HasSuffix(c.ID, "_text"),
		Duration: r.a.cfg.Now().Sub(t0)})
	return res
}

// repeated tracks identical failing calls in a row and reports the second and later repeats.
func (r *run) repeated(c ollama.ToolCall, res tools.Result) bool {
	if !res.IsError {
		r.failed, r.fails = "", 0
		return false
	}
	key := c.Name + "\x00" + string(c.Args) + "\x00" + c.ArgsErr
	if key == r.failed {
		r.fails++
	} else {
		r.failed, r.fails = key, 1
	}
	return r.fails >= 2
}

func (r *run) step(s Step) {
	r.res.Steps = append(r.res.Steps, s)
	if r.req.OnStep != nil {
		r.req.OnStep(s)
	}
}

// finish fills in the scene, warnings, summary and memory.
func (r *run) finish(reason StopReason) Result {
	res := r.res
	res.Reason = reason
	change := ""
	if r.req.Scene != nil {
		res.State, res.Warnings = r.req.Scene.State(), r.req.Scene.Warnings()
		if res.Changed {
			change = ChangeSummary(r.before, res.State)
		}
	}
	res.Summary = r.summary(reason, res.Warnings, change)
	res.Finished = (reason == StopDone || reason == StopNoToolCalls) && len(res.Warnings) == 0
	res.Duration = r.a.cfg.Now().Sub(r.start)
	mem := r.req.Memory
	if reason != StopError {
		mem = mem.Add(Exchange{Request: clip.Runes(rememberedRequest(r.req), 1000), Summary: res.Summary, At: r.start})
		if r.req.Scene != nil {
			mem.Scene, mem.HasScene = res.State, true
		}
	}
	res.Memory = mem
	r.a.log.Info("run finished", "reason", reason, "turns", res.Turns, "tool_calls", res.ToolCalls,
		"tool_errors", res.ToolErrors, "prompt_tokens", res.PromptTokens, "output_tokens", res.OutputTokens,
		"duration", res.Duration)
	return res
}

var stopSentences = map[StopReason]string{
	StopTurnLimit:       "Stopped before finishing: it reached the limit of %s.",
	StopToolCallLimit:   "Stopped before finishing: it reached the limit of %s.",
	StopWallTime:        "Stopped before finishing: it ran out of time (%s).",
	StopRepeatedFailure: "Stopped before finishing: the model kept repeating a call that failed.",
	StopUnreadableCalls: "Stopped before finishing: the model kept writing tool calls that Ollama could not read.",
	StopError:           "Failed: the model stopped answering.",
}

// summary says what happened in a sentence or three, honestly. change is what the run changed in
// a person's words (ChangeSummary); it stands in when the model wrote no summary of its own.
func (r *run) summary(reason StopReason, warnings []string, change string) string {
	body := r.doneAt
	if body == "" {
		body = r.final
	}
	body = clip.Runes(oneLine(textcall.Visible(body)), 300)
	var parts []string
	switch reason {
	case StopDone, StopNoToolCalls:
		switch {
		case body != "":
		case change != "":
			body = change
		default:
			body = "Nothing in the diagram changed."
		}
		parts = append(parts, body)
	case StopNoChange:
		if body != "" {
			parts = append(parts, "The model answered without drawing: "+body)
		} else {
			parts = append(parts, "The model answered without drawing anything.")
		}
	default:
		l := r.a.cfg.Limits
		var s string
		switch reason {
		case StopTurnLimit:
			s = fmt.Sprintf(stopSentences[reason], plural.Count(l.Turns, "model turn", ""))
		case StopToolCallLimit:
			s = fmt.Sprintf(stopSentences[reason], plural.Count(l.ToolCalls, "tool call", ""))
		case StopWallTime:
			s = fmt.Sprintf(stopSentences[reason], l.Wall)
		case StopUnreadableCalls:
			s = r.unreadableSummary()
		default:
			s = stopSentences[reason]
		}
		parts = append(parts, s)
		switch {
		case change != "":
			parts = append(parts, "So far: "+change)
		case r.res.ToolCalls > 0:
			parts = append(parts, fmt.Sprintf("The diagram may be incomplete (%s made).", plural.Count(r.res.ToolCalls, "tool call", "")))
		case reason == StopUnreadableCalls:
			parts = append(parts, "Nothing in the diagram changed.")
		}
	}
	if n := len(warnings); n > 0 {
		parts = append(parts, fmt.Sprintf("%s %s in the drawing: %s.", plural.Count(n, "problem", ""), plural.Word(n, "remains", "remain"),
			clip.Runes(strings.Join(warnings, "; "), 200)))
	}
	return strings.Join(parts, " ")
}

func toolMessage(c ollama.ToolCall, text string) ollama.Message {
	return ollama.Message{Role: ollama.RoleTool, ToolCallID: c.ID, ToolName: orUnnamed(c.Name), Content: text}
}

func orUnnamed(name string) string {
	if name == "" {
		return "(unnamed tool)"
	}
	return name
}

func argsText(c ollama.ToolCall) string {
	if c.ArgsErr != "" {
		return "invalid: " + c.ArgsErr
	}
	return string(c.Args)
}

func summaryArg(args json.RawMessage) string {
	var v struct {
		Summary string `json:"summary"`
	}
	if json.Unmarshal(args, &v) != nil {
		return ""
	}
	return v.Summary
}

func schemaTokens(specs []tools.Spec) int {
	n := 0
	for _, s := range specs {
		n += estimateTokens(s.Name) + estimateTokens(s.Description) + (len(s.Parameters)+3)/4 + 10
	}
	return n
}

func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }
