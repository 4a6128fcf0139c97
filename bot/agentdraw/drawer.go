// Package agentdraw is the bot's Drawer backed by the agent loop and the drawing tools. It lives
// apart from package bot so that the conversation core, the platform adapters and the web server do
// not link the tools' layout engine (go-graphviz compiles its WASM module at program start).
package agentdraw

import (
	"context"
	"errors"
	"log/slog"

	"github.com/excalibot/excalibot/agent"
	"github.com/excalibot/excalibot/bot"
	"github.com/excalibot/excalibot/diagram/mermaid"
	"github.com/excalibot/excalibot/internal/logkey"
	"github.com/excalibot/excalibot/scene"
	"github.com/excalibot/excalibot/tools"
)

// Options configure a Drawer. Zero fields are left out.
type Options struct {
	// Limits bound what the tools make; Limits.MaxElements also bounds a Mermaid import.
	Limits tools.Limits
	// Observer counts tool calls and model latency.
	Observer bot.Observer
	// Mermaid converts Mermaid text, for the create_from_mermaid tool and for requests that are a
	// Mermaid diagram, which are then drawn without the model. Without it the tool refuses and
	// such requests go to the agent like any other.
	Mermaid mermaid.Converter
}

// Drawer is the bot.Drawer of the running bot: a request that is a Mermaid diagram converted and
// imported beside the thread's drawing, anything else the agent loop with the drawing tools over
// the thread's scene.
type Drawer struct {
	agent *agent.Agent
	opt   Options
	log   *slog.Logger
}

var _ bot.Drawer = (*Drawer)(nil)

// The tool set is the agent's toolbox for a run.
var _ agent.Toolbox = (*tools.Set)(nil)

// New returns the drawer of a. log may be nil.
func New(a *agent.Agent, opt Options, log *slog.Logger) *Drawer {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &Drawer{agent: a, opt: opt, log: log}
}

// Draw carries out req on req.Scene. An agent error the person can act on has words for them
// (bot.UserMessager), found through the wrapping here.
func (d *Drawer) Draw(ctx context.Context, req bot.DrawRequest) (bot.DrawResult, error) {
	if req.Mermaid && d.opt.Mermaid != nil {
		return d.drawMermaid(ctx, req)
	}
	sc := scene.New()
	if req.Scene != nil {
		sc = req.Scene // the bot hands the drawer its own decoded copy
	}
	mem, err := agent.UnmarshalMemory(req.Memory)
	if err != nil {
		// A memory this program cannot read costs the conversation's context, not the diagram.
		d.log.Warn("agent memory unreadable; starting the conversation afresh", logkey.Err, err)
	}
	set := tools.New(sc, d.opt.Limits)
	if d.opt.Mermaid != nil {
		set.SetMermaid(d.opt.Mermaid)
	}
	obs := d.opt.Observer
	step := 0
	areq := agent.SetRequest(set, req.Prompt, mem, func(s agent.Step) {
		if obs != nil {
			switch s.Kind {
			case agent.StepModel:
				obs.ModelAnswered(s.Duration)
			case agent.StepTool:
				obs.ToolCalled(s.Tool, s.IsError)
			}
		}
		if s.Kind != agent.StepTool || req.Progress == nil {
			return
		}
		step++
		p := bot.Progress{Step: step, Tool: s.Tool}
		for _, e := range set.Scene().Elements() {
			switch {
			case e.Type == scene.Arrow:
				p.Arrows++
			case e.Type.IsShape():
				p.Shapes++
			}
		}
		req.Progress(p)
	})
	for _, im := range req.Images {
		areq.Images = append(areq.Images, agent.Image{Data: im.Data, Width: im.Width, Height: im.Height})
	}
	areq.Discussion = req.Discussion
	res, err := d.agent.Run(ctx, areq)
	if err != nil {
		if obs != nil {
			obs.Failed("model")
		}
		if errors.Is(err, agent.ErrNoVision) {
			// The bot knows no agent: it recognises this one by its own sentinel.
			return bot.DrawResult{}, cannotSee{err}
		}
		return bot.DrawResult{}, err
	}
	memory, err := res.Memory.Marshal()
	if err != nil {
		return bot.DrawResult{}, err
	}
	// Whether it changed, the tools said as they ran; the bot encodes the scene once, to save it.
	return bot.DrawResult{Scene: set.Scene(), Memory: memory, Summary: res.Summary, Changed: res.Changed}, nil
}

// cannotSee is the agent's refusal of pictures, in its own words, known to the bot as
// bot.ErrCannotSee.
type cannotSee struct{ err error }

func (e cannotSee) Error() string   { return e.err.Error() }
func (e cannotSee) Unwrap() []error { return []error{bot.ErrCannotSee, e.err} }
