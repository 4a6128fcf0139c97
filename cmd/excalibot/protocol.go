package main

import (
	"fmt"
	"strings"

	"github.com/excalibot/excalibot/agent"
	"github.com/excalibot/excalibot/config"
)

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

// agentConfig is the agent's configuration from the settings.
func agentConfig(cfg config.Config, allTools bool, proto agent.Protocol) agent.Config {
	return agent.Config{ContextTokens: cfg.NumCtx, AllTools: allTools, Protocol: proto, Limits: agent.Limits{
		Turns: cfg.MaxTurns, ToolCalls: cfg.MaxToolCalls, Wall: cfg.RunTimeout, Request: cfg.ModelTimeout}}
}
