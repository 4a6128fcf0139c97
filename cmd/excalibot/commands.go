package main

import (
	"fmt"
	"io"
	"strings"
)

// command is one subcommand: its line in the usage text and the settings it takes as flags.
type command struct {
	name, summary string
	// settings are the names of the settings the command takes as flags (--help lists them);
	// allSettings: every one. A command with neither reads no settings.
	settings    []string
	allSettings bool
}

// drawing are the settings of the commands that run the agent and render its picture on this
// machine (draw, chat, eval): the model, the run's limits, the tools' limits and Chromium.
var drawing = []string{
	"ollama-host", "model", "num-ctx", "temperature", "keep-alive", "think", "model-timeout",
	"max-turns", "max-tool-calls", "run-timeout", "protocol",
	"max-elements", "max-batch", "max-label-length",
	"chrome", "render-timeout", "render-scale",
}

// commands is the one table of subcommands, in the order usage lists them.
var commands = []command{
	{name: "help", summary: "show this text; help COMMAND shows a command's flags"},
	{name: "serve", summary: "run the bot: chat adapters with credentials, the HTTP server, the store", allSettings: true},
	{name: "render", summary: "render a .excalidraw file to PNG or SVG in headless Chromium"},
	{name: "tools", summary: "run a script of the model's tool calls and write the .excalidraw file (--list: schemas)"},
	{name: "draw", summary: "draw a diagram from a prompt or a picture with the model: writes the PNG and the .excalidraw file",
		settings: append(drawing[:len(drawing):len(drawing)], "vision-model", "image-size", "max-image-size")},
	{name: "chat", summary: "a drawing thread in the terminal: each line changes the same diagram (undo, reset, save)", settings: drawing},
	{name: "mermaid", summary: "convert a Mermaid diagram into an .excalidraw file (and a PNG/SVG) in headless Chromium"},
	{name: "eval", summary: "run the suite of diagram requests against a real model and report how each went", settings: drawing},
	{name: "config", summary: "print the effective settings (secrets redacted) and what is missing or invalid", allSettings: true},
	{name: "doctor", summary: "check everything a deployment needs: Ollama and the model, Chromium, the store, tokens, public URL", allSettings: true},
}

func lookupCommand(name string) (command, bool) {
	for _, c := range commands {
		if c.name == name {
			return c, true
		}
	}
	return command{}, false
}

// settingsOf returns the setting flags of a command for config.Load: nil for every setting.
func settingsOf(name string) []string {
	c, ok := lookupCommand(name)
	if !ok || c.allSettings {
		return nil
	}
	return c.settings
}

func commandNames() string {
	var names []string
	for _, c := range commands {
		names = append(names, c.name)
	}
	return strings.Join(names, ", ")
}

func usage(w io.Writer) {
	fmt.Fprint(w, "usage: excalibot <command> [flags]\n\ncommands:\n")
	for _, c := range commands {
		fmt.Fprintf(w, "  %-9s %s\n", c.name, c.summary)
	}
}
