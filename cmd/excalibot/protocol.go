package main

import (
	"fmt"
	"log/slog"
	"strings"

	"github.com/excalibot/excalibot/agent"
	"github.com/excalibot/excalibot/agent/ollama"
	"github.com/excalibot/excalibot/config"
	"github.com/excalibot/excalibot/tools"
)

// newAgent is the drawing agent over the Ollama model the settings name, one protocol, as serve
// and the kit (draw, chat, eval) run it; requests with pictures go to the vision model when the
// settings name one. allTools offers every tool from the first turn.
func newAgent(cfg config.Config, allTools bool, log *slog.Logger) (*agent.Agent, *ollama.Client, error) {
	m, err := newModel(cfg, log)
	if err != nil {
		return nil, nil, fmt.Errorf("ollama client: %w", err)
	}
	proto, err := oneProtocol(cfg)
	if err != nil {
		return nil, nil, err
	}
	return agent.New(m, agentConfig(cfg, allTools, proto, visionModel(cfg, m)), log), m, nil
}

// visionModel is the model of m's server that reads pictures, when the settings name one; nil
// leaves them to m.
func visionModel(cfg config.Config, m *ollama.Client) agent.Model {
	if cfg.VisionModel == "" {
		return nil
	}
	return m.ForModel(cfg.VisionModel)
}

// toolLimits are the drawing tools' limits from the settings.
func toolLimits(cfg config.Config) tools.Limits {
	return tools.Limits{MaxElements: cfg.MaxElements, MaxBatch: cfg.MaxBatch, MaxLabel: cfg.MaxLabelLength}
}

// oneProtocol is the drawing protocol of a command that runs one agent (draw, chat, serve): the
// setting must name exactly one; a list compares protocols, which only eval does.
func oneProtocol(cfg config.Config) (agent.Protocol, error) {
	ps, err := cfg.Protocols()
	if err != nil {
		return "", fmt.Errorf("--protocol: %w", err)
	}
	if len(ps) > 1 {
		return "", fmt.Errorf("--protocol %s names %d protocols; give one of auto, tools or plan (lists are for excalibot eval)",
			strings.Join(ps, ","), len(ps))
	}
	return agent.Protocol(ps[0]), nil
}

// agentConfig is the agent's configuration from the settings, with the model that reads pictures
// (nil: the agent's model).
func agentConfig(cfg config.Config, allTools bool, proto agent.Protocol, vision agent.Model) agent.Config {
	return agent.Config{ContextTokens: cfg.NumCtx, AllTools: allTools, Protocol: proto, VisionModel: vision, Limits: agent.Limits{
		Turns: cfg.MaxTurns, ToolCalls: cfg.MaxToolCalls, Wall: cfg.RunTimeout, Request: cfg.ModelTimeout}}
}
