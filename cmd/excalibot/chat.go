package main

import (
	"bufio"
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/excalibot/excalibot/agent"
	"github.com/excalibot/excalibot/internal/logkey"
	"github.com/excalibot/excalibot/internal/plural"
	"github.com/excalibot/excalibot/scene"
	"github.com/excalibot/excalibot/tools"
)

// cmdChat is a thread in the terminal: every line is a request about the same diagram.
//
//	excalibot chat [--in start.excalidraw] [-o diagram.png] [--model NAME]
func cmdChat(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("chat", flag.ContinueOnError)
	fs.SetOutput(stderr)
	out := fs.String("o", "diagram.png", "where save writes the PNG; the .excalidraw file goes beside it")
	in := fs.String("in", "", "start from this .excalidraw file")
	verbose := fs.Bool("v", false, "log what the agent and the renderer do")
	allTools := fs.Bool("all-tools", false, "offer the model every tool, not only the core ones (a longer prompt)")
	fs.Usage = func() {
		fmt.Fprint(stderr, "usage: excalibot chat [flags]\n\nA drawing thread in the terminal. "+chatHelp+"\n")
		fs.PrintDefaults()
	}
	l, pos, code := loadConfig(fs, args, stderr, "chat")
	if l == nil {
		return code
	}
	if len(pos) > 0 {
		fmt.Fprintf(stderr, "excalibot chat: unexpected argument %q; type requests after it starts\n", pos[0])
		return 2
	}
	k, err := newKit(l.Config, stderr, *verbose, *allTools)
	if err != nil {
		fmt.Fprintf(stderr, "excalibot chat: %v\n", err)
		return 2
	}
	defer k.close()
	defer useDotWorker(ctx, k.log)()
	if err := k.checkModel(ctx, false); err != nil {
		fmt.Fprintf(stderr, "excalibot chat: %v\n", err)
		return 1
	}
	sc := scene.New()
	if *in != "" {
		if sc, err = readScene(*in); err != nil {
			fmt.Fprintf(stderr, "excalibot chat: %v\n", err)
			return 1
		}
	}
	t := &thread{k: k, out: stdout, png: *out, set: k.tools(sc)}
	fmt.Fprintf(stdout, "excalibot chat with %s at %s. %s\n", k.model.Name(), k.model.URL(), chatHelp)
	if err := t.loop(ctx, os.Stdin); err != nil {
		fmt.Fprintf(stderr, "excalibot chat: %v\n", err)
		return 1
	}
	return 0
}

const chatHelp = "Type a request per line; commands: undo, reset, save [FILE.png], help, quit."

// thread is the state of a terminal thread: the scene's tools, the agent's memory and the
// revisions for undo. A failed run leaves the scene as it was.
type thread struct {
	k    *kit
	out  io.Writer
	png  string
	set  *tools.Set
	mem  agent.Memory
	undo []revision
}

type revision struct {
	doc []byte
	mem agent.Memory
}

// loop reads lines until EOF, quit or ctx ends.
func (t *thread) loop(ctx context.Context, in io.Reader) error {
	lines := bufio.NewScanner(in)
	lines.Buffer(make([]byte, 0, 64<<10), 1<<20)
	for {
		fmt.Fprint(t.out, "> ")
		if !lines.Scan() {
			fmt.Fprintln(t.out)
			return lines.Err()
		}
		if ctx.Err() != nil {
			return nil
		}
		line := strings.TrimSpace(lines.Text())
		cmd, arg, _ := strings.Cut(line, " ")
		switch strings.ToLower(cmd) {
		case "":
		case "quit", "exit":
			return nil
		case "help":
			fmt.Fprintln(t.out, chatHelp)
		case "undo":
			t.doUndo()
		case "reset":
			t.push()
			t.set, t.mem = t.k.tools(scene.New()), agent.Memory{}
			fmt.Fprintln(t.out, "Started over with an empty canvas (undo brings the diagram back).")
		case "save":
			t.save(ctx, strings.TrimSpace(arg))
		default:
			t.draw(ctx, line)
			if ctx.Err() != nil { // interrupted (Ctrl-C): do not wait for another line
				return nil
			}
		}
	}
}

func (t *thread) doc() []byte {
	b, err := t.set.Scene().Encode()
	if err != nil {
		t.k.log.Error("encode scene", logkey.Err, err)
	}
	return b
}

func (t *thread) push() { t.undo = append(t.undo, revision{doc: t.doc(), mem: t.mem}) }

func (t *thread) doUndo() {
	if len(t.undo) == 0 {
		fmt.Fprintln(t.out, "Nothing to undo.")
		return
	}
	r := t.undo[len(t.undo)-1]
	sc, err := scene.Decode(r.doc)
	if err != nil {
		fmt.Fprintf(t.out, "Cannot undo: %v\n", err)
		return
	}
	t.undo = t.undo[:len(t.undo)-1]
	t.set, t.mem = t.k.tools(sc), r.mem
	fmt.Fprintf(t.out, "Undone (%s now).\n", plural.Count(sc.Len(), "element", ""))
}

func (t *thread) draw(ctx context.Context, prompt string) {
	before := revision{doc: t.doc(), mem: t.mem}
	set := t.k.tools(t.set.Scene().Clone())
	res, err := t.k.agent.Run(ctx, t.k.request(set, prompt, t.mem, func(s agent.Step) { printStep(t.out, s) }))
	if err != nil {
		fmt.Fprintf(t.out, "That did not work: %v\nThe diagram is unchanged.\n", err)
		return
	}
	t.undo = append(t.undo, before)
	t.set, t.mem = set, res.Memory
	fmt.Fprintln(t.out, res.Summary)
	fmt.Fprintln(t.out, runFigures(res))
}

// save writes the .excalidraw file and, when Chromium is available, the PNG.
func (t *thread) save(ctx context.Context, png string) {
	if png == "" {
		png = t.png
	}
	doc := t.doc()
	sceneFile := strings.TrimSuffix(png, filepath.Ext(png)) + ".excalidraw"
	if err := os.WriteFile(sceneFile, doc, 0o644); err != nil {
		fmt.Fprintf(t.out, "Cannot save: %v\n", err)
		return
	}
	fmt.Fprintf(t.out, "Wrote %s.\n", sceneFile)
	if t.set.Scene().Len() == 0 {
		fmt.Fprintln(t.out, nothingToDraw)
		return
	}
	pic, err := t.k.renderPNG(ctx, doc)
	if err != nil {
		fmt.Fprintf(t.out, "No PNG: %v\n", err)
		return
	}
	if err := os.WriteFile(png, pic, 0o644); err != nil {
		fmt.Fprintf(t.out, "Cannot save: %v\n", err)
		return
	}
	fmt.Fprintf(t.out, "Wrote %s (%d bytes).\n", png, len(pic))
}
