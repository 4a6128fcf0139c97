// Package agent runs the drawing loop: it sends a model the conversation and the tool schemas,
// executes the tool calls the model asks for, answers every one of them, and stops when the drawing
// is done or a limit is reached. The conversation is Ollama's (package agent/ollama, whose Client
// is the Model the program runs); calls written in the reply text are read by agent/textcall and
// typed plans by agent/plan. The tools themselves (and the scene they edit) belong to the caller,
// seen here only through Toolbox.
package agent

import (
	"context"
	"encoding/json"
	"time"

	"github.com/excalibot/excalibot/agent/ollama"
	"github.com/excalibot/excalibot/tools"
)

// Model is one chat turn with a language model. Implementations stream internally if they like,
// but Chat returns only once the whole reply has arrived.
//
// Chat returns an error when no complete reply arrived: the server is unreachable, the model is
// missing or cannot call tools, the stream was cut short, or ctx ended. Errors that a user can fix
// match ollama.ErrUnreachable, ollama.ErrModelNotFound or ollama.ErrNoToolSupport with errors.Is.
type Model interface {
	Chat(ctx context.Context, msgs []ollama.Message, specs []tools.Spec) (ollama.Reply, error)
}

// Toolbox is the set of tools one run may call. The loop never sees the scene behind it.
//
// Call must answer every call, also unknown names and bad arguments, with a Result; it never
// panics on model input. *tools.Set satisfies it.
type Toolbox interface {
	Specs() []tools.Spec
	Call(ctx context.Context, name string, args json.RawMessage) tools.Result
}

// Limits bound one run. Zero fields take the defaults of DefaultLimits.
type Limits struct {
	Turns     int           // model requests per run
	ToolCalls int           // tool calls per run
	Wall      time.Duration // wall time per run
	Request   time.Duration // time for one model request
}

// DefaultLimits are the limits used for zero fields.
var DefaultLimits = Limits{Turns: 20, ToolCalls: 100, Wall: 3 * time.Minute, Request: 90 * time.Second}

func (l Limits) withDefaults() Limits {
	if l.Turns <= 0 {
		l.Turns = DefaultLimits.Turns
	}
	if l.ToolCalls <= 0 {
		l.ToolCalls = DefaultLimits.ToolCalls
	}
	if l.Wall <= 0 {
		l.Wall = DefaultLimits.Wall
	}
	if l.Request <= 0 {
		l.Request = DefaultLimits.Request
	}
	return l
}

// StopReason says why a run ended.
type StopReason string

// Stop reasons. Only StopDone and StopNoToolCalls are a normal end.
const (
	StopDone            StopReason = "done"            // the model called the done tool
	StopNoToolCalls     StopReason = "no_tool_calls"   // the model answered without calling a tool
	StopTurnLimit       StopReason = "turn_limit"      // Limits.Turns reached
	StopToolCallLimit   StopReason = "tool_call_limit" // Limits.ToolCalls reached
	StopWallTime        StopReason = "wall_time"       // Limits.Wall reached
	StopRepeatedFailure StopReason = "repeated_failure"
	StopUnreadableCalls StopReason = "unreadable_calls" // the model's turns could not be read, also after a correction and a plan
	StopNoChange        StopReason = "no_change"        // asked to draw, the model answered without changing the scene
	StopError           StopReason = "error"            // the model failed; Run also returns the error
)

// StepKind tells what a Step records.
type StepKind string

// Step kinds.
const (
	StepModel StepKind = "model" // one model reply
	StepTool  StepKind = "tool"  // one tool call and its result
	StepNudge StepKind = "nudge" // the loop told the model to change course
	// StepFallback: a turn the loop could not read was asked again as a typed plan.
	StepFallback StepKind = "fallback"
)

// Step is one thing that happened during a run, reported through Request.OnStep as it happens.
type Step struct {
	Kind StepKind
	Turn int // 1-based model request the step belongs to
	// Tool, Args and Result describe a tool step; Args and Result are shortened for display.
	Tool    string
	Args    string
	Result  string
	IsError bool
	// FromText is true when the call was recovered from the reply text, not the tool-call field.
	FromText bool
	// PromptTokens and OutputTokens are set on model steps.
	PromptTokens int
	OutputTokens int
	Duration     time.Duration
}

// Request is one run: a user's message about the diagram of a thread.
type Request struct {
	// Prompt is what the user asked, verbatim.
	Prompt string
	// Tools are the tools over the thread's scene.
	Tools Toolbox
	// Memory is the thread's memory from earlier runs (zero for a new thread).
	Memory Memory
	// Scene is what the run sees of the scene the tools edit (SetRequest's view over a tool set).
	// Optional: without it the run cannot tell what a person changed, nor say in words what it
	// changed itself.
	Scene SceneView
	// OnStep is called synchronously for every step as it happens. Optional.
	OnStep func(Step)
	// Images are pictures sent with the request (a whiteboard photo, a screenshot): the run
	// goes to a model that can read them (Config.VisionModel, or the model itself) and asks it to
	// redraw what they show. Optional.
	Images []Image
	// Discussion is what was said in the chat before the request ("draw this thread"), one
	// "Author: text" line per message, oldest first; the model gets it fenced as data. Optional.
	Discussion string
}

// Image is a picture for the model, already checked and scaled (package picture does it).
type Image struct {
	Data   []byte // PNG or JPEG
	Width  int
	Height int
}

// SceneView is what a run reads of the scene its tools edit: its elements, for what a person
// changed since the last run and for the reply's words, and the warnings still open. Whether the
// scene changed is known from the tools' results, not from comparing scenes.
type SceneView interface {
	State() []ElementState
	Warnings() []string
}

// Result is what a run did.
type Result struct {
	// State is the scene's elements at the end (nil without Request.Scene).
	State []ElementState
	// Changed is true when a tool call changed the scene.
	Changed bool
	// Summary is a short text for the user. It says plainly when the run hit a limit or left
	// warnings open instead of claiming success.
	Summary string
	// Finished is true when the run ended normally with no warnings left.
	Finished bool
	Reason   StopReason
	Steps    []Step
	// Warnings are the lint warnings open at the end.
	Warnings     []string
	Turns        int
	ToolCalls    int
	ToolErrors   int
	PromptTokens int // summed over all requests
	OutputTokens int
	Duration     time.Duration // wall time of the run
	ModelTime    time.Duration // time spent waiting for the model
	// Corrections counts the course corrections the run needed, for comparing models and protocols.
	Corrections Corrections
	// Memory is the thread's memory with this run added; store it for the next run.
	Memory Memory
}

// Corrections counts the times a run changed the model's course (see correct.go, fallback.go and
// plan_run.go). Each field counts requests the correction cost.
type Corrections struct {
	// Nudges: the model was told what was wrong with its turn (an empty reply, a call that could
	// not be read, nothing drawn, the same failing call again) and asked again.
	Nudges int
	// Retries: a turn asked again after Ollama could not parse the model's call (tool loop), or
	// after a plan with problems (plan protocol).
	Retries int
	// PlanFallbacks: a tool-loop turn that could not be read, also after its correction, asked
	// again as one typed plan; PlanFallbacksFailed of them gave no plan that could be drawn.
	PlanFallbacks       int
	PlanFallbacksFailed int
	// WithoutSchema: the plan protocol's last request, without the schema (Mermaid or a fenced plan).
	WithoutSchema int
}
