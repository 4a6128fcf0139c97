package bot

import (
	"fmt"
	"strings"
)

// CommandKind names what a message asks the bot to do.
type CommandKind int

const (
	CmdDraw    CommandKind = iota // anything else: a drawing request for the agent
	CmdHelp                       // help
	CmdUndo                       // undo
	CmdRedo                       // redo
	CmdReset                      // reset / new: start a fresh diagram
	CmdHistory                    // history
	CmdExport                     // export svg|png|excalidraw
	CmdTheme                      // theme dark|light
)

// Command is a parsed chat message.
type Command struct {
	Kind CommandKind
	Arg  string // export format or theme; for CmdDraw the request text
	// Err is set when the message is a command with a wrong argument; the reply says what is right.
	Err string
}

// ParseCommand reads a message already stripped of the bot mention. Commands are whole messages,
// in plain words ("undo") or slash form ("/undo", "/undo@excalibot"), in any case, with trailing
// punctuation tolerated; any other text is a drawing request, so "undo the colour change and
// add a cache" goes to the agent.
func ParseCommand(text string) Command {
	t := strings.TrimSpace(text)
	fields := strings.Fields(strings.ToLower(t))
	if len(fields) == 0 {
		return Command{Kind: CmdHelp}
	}
	word := fields[0]
	slash := strings.HasPrefix(word, "/")
	word = strings.TrimPrefix(word, "/")
	if i := strings.IndexByte(word, '@'); i >= 0 && slash {
		word = word[:i] // Telegram's /cmd@botname in groups
	}
	word = strings.TrimRight(word, "!.?")
	args := fields[1:]
	for i := range args {
		args[i] = strings.TrimRight(args[i], "!.?")
	}
	if slash && word == "draw" { // Telegram groups: "/draw request"
		rest := strings.TrimSpace(t[len(strings.Fields(t)[0]):])
		if rest == "" {
			return Command{Kind: CmdHelp}
		}
		return Command{Kind: CmdDraw, Arg: rest}
	}
	simple := map[string]CommandKind{
		"help": CmdHelp, "start": CmdHelp, "undo": CmdUndo, "redo": CmdRedo,
		"reset": CmdReset, "new": CmdReset, "history": CmdHistory,
	}
	if k, ok := simple[word]; ok && len(args) == 0 {
		return Command{Kind: k}
	}
	switch word {
	case "export":
		if len(args) == 0 {
			return Command{Kind: CmdExport, Arg: "png"}
		}
		if len(args) == 1 {
			switch args[0] {
			case "png", "svg", "excalidraw":
				return Command{Kind: CmdExport, Arg: args[0]}
			}
			return Command{Kind: CmdExport, Err: fmt.Sprintf("I can export png, svg or excalidraw, not %q.", args[0])}
		}
	case "theme":
		if len(args) == 1 {
			switch args[0] {
			case "dark", "light":
				return Command{Kind: CmdTheme, Arg: args[0]}
			}
			return Command{Kind: CmdTheme, Err: fmt.Sprintf("The theme is dark or light, not %q.", args[0])}
		}
		if len(args) == 0 {
			return Command{Kind: CmdTheme, Err: "Say `theme dark` or `theme light`."}
		}
	}
	if slash && !strings.Contains(t, " ") {
		return Command{Kind: CmdHelp, Err: fmt.Sprintf("I don't know the command /%s.", word)}
	}
	return Command{Kind: CmdDraw, Arg: t}
}

// HelpText is the reply to help: what the bot does and the commands of a thread.
const HelpText = `I draw diagrams. Describe one ("draw how a request flows from the browser through the API to Postgres") and I reply with a picture, the .excalidraw file and a link to edit it. Reply in the same thread to change it.

Commands in a thread:
• undo / redo — step back or forward through the diagram's revisions
• reset (or new) — start a fresh diagram
• history — list the revisions
• export png | svg | excalidraw — send the diagram in that format
• theme dark | light — picture theme for this thread
• help — this text

Post a .excalidraw file (or a PNG exported from Excalidraw with the scene embedded) to continue from it.`
