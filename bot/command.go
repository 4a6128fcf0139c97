package bot

import (
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"strings"
)

// CommandKind names what a message asks the bot to do.
type CommandKind int

const (
	CmdDraw     CommandKind = iota // anything else: a drawing request for the agent
	CmdHelp                        // help
	CmdUndo                        // undo
	CmdRedo                        // redo
	CmdReset                       // reset / new: start a fresh diagram
	CmdHistory                     // history
	CmdExport                      // export svg|png|excalidraw
	CmdTheme                       // theme dark|light
	CmdShow                        // show [N]: post a revision's picture, changing nothing
	CmdRevert                      // revert N: make revision N the current diagram again
	CmdDescribe                    // describe [N]: the diagram as a text outline
)

// Command is a parsed chat message.
type Command struct {
	Kind CommandKind
	Arg  string // export format or theme; for CmdDraw the request text
	// Rev is the revision show, revert and describe name, as history numbers them; 0 for the
	// current one.
	Rev int64
	// Err is set when the message is a command with a wrong argument: its UserMessage says what is
	// right.
	Err error
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
	case "show", "describe":
		kind := map[string]CommandKind{"show": CmdShow, "describe": CmdDescribe}[word]
		if len(args) == 0 {
			return Command{Kind: kind}
		}
		// "show the database in red" is a drawing request; only a revision number is a command.
		if rev, ok, bad := revisionArg(args); ok {
			return Command{Kind: kind, Rev: rev, Err: bad}
		}
	case "revert":
		if len(args) == 0 {
			return Command{Kind: CmdRevert, Err: badCommand("revert: no revision named",
				"Say which revision to go back to, e.g. `revert 3`; history lists them")}
		}
		rev, ok, bad := revisionArg(args)
		if ok {
			return Command{Kind: CmdRevert, Rev: rev, Err: bad}
		}
		if len(args) == 1 { // "revert it", "revert last": a revert without its number
			return Command{Kind: CmdRevert, Err: badCommand(fmt.Sprintf("revert: %q is not a revision number", args[0]),
				"I revert to a revision by its number (`revert 3`), not %q; history lists them, and undo steps back one", args[0])}
		}
	case "export":
		if len(args) == 0 {
			return Command{Kind: CmdExport, Arg: "png"}
		}
		if len(args) == 1 {
			switch args[0] {
			case "png", "svg", "excalidraw":
				return Command{Kind: CmdExport, Arg: args[0]}
			}
			return Command{Kind: CmdExport, Err: badCommand(fmt.Sprintf("export: unknown format %q", args[0]),
				"I can export png, svg or excalidraw, not %q", args[0])}
		}
	case "theme":
		if len(args) == 1 {
			switch args[0] {
			case "dark", "light":
				return Command{Kind: CmdTheme, Arg: args[0]}
			}
			return Command{Kind: CmdTheme, Err: badCommand(fmt.Sprintf("theme: unknown theme %q", args[0]),
				"The theme is dark or light, not %q", args[0])}
		}
		if len(args) == 0 {
			return Command{Kind: CmdTheme, Err: badCommand("theme: no theme named", "Say `theme dark` or `theme light`")}
		}
	}
	if slash && !strings.Contains(t, " ") {
		return Command{Kind: CmdHelp, Err: badCommand("unknown command /"+word, "I don't know the command /%s", word)}
	}
	return Command{Kind: CmdDraw, Arg: t}
}

// reRevision is a revision as people write it: "3", "r3", "#3", "v3" (a sign is read, to be refused).
var reRevision = regexp.MustCompile(`^(?:r|#|v)?([-+]?[0-9]+)$`)

// badCommand is the refusal of a command with a wrong argument: why in Go's words, then what is
// right in the person's (msg, formatted).
func badCommand(why, format string, args ...any) error {
	return refuse(errors.New(why), fmt.Sprintf(format, args...), "Say help to see what I understand.")
}

// revisionArg reads the revision number of show, revert and describe: "3", "r3", "#3",
// "revision 3", "to revision 3". ok is false when args are not a revision (then the message is a
// drawing request); bad says why a revision that was meant is not one.
func revisionArg(args []string) (rev int64, ok bool, bad error) {
	if len(args) > 1 && args[0] == "to" {
		args = args[1:]
	}
	if len(args) == 2 && (args[0] == "revision" || args[0] == "rev" || args[0] == "version") {
		args = args[1:]
	}
	if len(args) != 1 {
		return 0, false, nil
	}
	m := reRevision.FindStringSubmatch(args[0])
	if m == nil {
		return 0, false, nil
	}
	n, err := strconv.ParseInt(m[1], 10, 64)
	switch {
	case err != nil:
		return 0, true, badCommand(fmt.Sprintf("revision %s: %v", args[0], err), "%s is not a revision number I have; history lists them", args[0])
	case n < 1:
		return 0, true, badCommand("revision "+m[1]+" is below 1", "Revisions are numbered from 1, so there is no revision %s; history lists them", m[1])
	}
	return n, true, nil
}

// CommandInfo is one command of a thread as a platform's command menu lists it.
type CommandInfo struct {
	Name        string // without the slash
	Description string
}

// Commands are the thread's commands, for a platform that lists them (Telegram's command menu)
// or must tell its bare "/command" in a group from another bot's. Every name here is understood
// by ParseCommand.
var Commands = []CommandInfo{
	{"draw", "Draw a diagram: /draw how a request reaches Postgres"},
	{"undo", "Step back to the previous revision"},
	{"redo", "Step forward again"},
	{"new", "Start a fresh diagram"},
	{"history", "List the revisions: who made each, what changed"},
	{"show", "Post a revision's picture: /show 3"},
	{"revert", "Make an older revision current again: /revert 3"},
	{"describe", "The diagram as a text outline"},
	{"export", "Send the diagram as png, svg or excalidraw"},
	{"theme", "Picture theme: dark or light"},
	{"help", "What the bot does and how to use it"},
}

// HelpText is the reply to help: what the bot does and the commands of a thread.
const HelpText = `I draw diagrams. Describe one ("draw how a request flows from the browser through the API to Postgres") and I reply with a picture, the .excalidraw file and a link to edit it. Reply in the same thread to change it.

Commands in a thread:
• undo / redo — step back or forward through the diagram's revisions
• reset (or new) — start a fresh diagram
• history — list the revisions: who made each and what changed
• show 3 — post revision 3's picture and file (changes nothing); show alone: the current one
• revert 3 — make revision 3 the current diagram again, as a new revision
• describe — the diagram as a text outline, for screen readers or for pasting into docs
• export png | svg | excalidraw — send the diagram in that format
• theme dark | light — picture theme for this thread
• help — this text

Post a .excalidraw file (or a PNG exported from Excalidraw with the scene embedded) to continue from it.
Post a photo of a whiteboard or a screenshot of a diagram ("redraw this") to get it as an editable diagram.
Say "draw this thread" to get a diagram of the discussion above.`
