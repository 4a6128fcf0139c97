package bot

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/excalibot/excalibot/diagram/outline"
	"github.com/excalibot/excalibot/internal/clip"
	"github.com/excalibot/excalibot/internal/logkey"
	"github.com/excalibot/excalibot/internal/plural"
	"github.com/excalibot/excalibot/render/export"
	"github.com/excalibot/excalibot/scene"
	"github.com/excalibot/excalibot/store"
)

// emptyScene is the document of a thread after reset.
var emptyScene = []byte(`{"type":"excalidraw","version":2,"source":"excalibot","elements":[],"appState":{"viewBackgroundColor":"#ffffff"},"files":{}}`)

func failed(state store.RunState, detail, text string) Outcome {
	return Outcome{State: state, Detail: detail, Reply: Reply{Text: text, Error: true}}
}

// drawing is a drawing turn: consecutive requests of a thread, merged into one run, after
// importing a file the first of them carried. Nothing is saved unless the step that made it
// succeeded: the import alone, or the drawing's revision with the turn's outcome.
func (b *Bot) drawing(ctx context.Context, t Turn, status func(string)) Outcome {
	key, jobs := t.Key, t.jobs
	var prompts []string
	for _, j := range jobs {
		if p := strings.TrimSpace(j.cmd.Arg); p != "" {
			prompts = append(prompts, p)
		}
	}
	storeFail := func(step string, err error) Outcome {
		return failed(store.RunFailed, err.Error(), b.tell(key, step, fromStore(err)))
	}
	th, err := b.load(ctx, key)
	if err != nil {
		return storeFail("loading this thread's diagram", err)
	}
	// A request to draw the discussion reads it first (before an import saves anything): what was
	// said before that request.
	var talk discussion
	for _, j := range jobs {
		if AsksForDiscussion(j.cmd.Arg) {
			status("reading the thread…")
			if talk, err = b.readDiscussion(ctx, t.Adapter, j.msg); err != nil {
				return failed(store.RunFailed, err.Error(), b.tell(key, "reading the thread", err))
			}
			break
		}
	}

	summary := ""
	var images []Image
	if files := jobs[0].msg.Files; len(files) > 0 {
		status("reading " + files[0].Called() + "…")
		up, err := b.readUpload(ctx, files)
		if err != nil {
			return failed(store.RunFailed, err.Error(), b.tell(key, "reading "+files[0].Called(), err))
		}
		if up.picture != nil {
			images = []Image{*up.picture}
			if len(prompts) == 0 {
				prompts = []string{""} // the agent asks for the picture to be redrawn
			}
		} else {
			save := store.SaveRequest{Key: key, Base: th.Rev, Scene: up.doc, Author: store.AuthorImport, Reason: "imported " + files[0].Name}
			if len(prompts) == 0 { // an import alone: its revision is the run's
				next := predicted(th, up.doc, th.Memory)
				status("rendering…")
				return Outcome{State: store.RunDone, Detail: "imported " + files[0].Name, Save: &save,
					Reply: b.postReply(ctx, next, fmt.Sprintf("Imported %s as revision %d.", files[0].Name, next.Rev))}
			}
			// A redo finds the import its cut-short run saved, if it got that far: it is not saved twice.
			if !jobs[0].redo || !bytes.Equal(th.Scene, up.doc) {
				if th, err = b.store.Save(ctx, save); err != nil {
					return storeFail("saving the imported diagram", err)
				}
			}
			summary = fmt.Sprintf("Imported %s as revision %d.", files[0].Name, th.Rev)
		}
	}

	prompt := prompts[0]
	if len(prompts) > 1 {
		var sb strings.Builder
		sb.WriteString("These requests arrived one after another; carry them all out, in order:\n")
		for i, p := range prompts {
			fmt.Fprintf(&sb, "%d. %s\n", i+1, p)
		}
		prompt = sb.String()
	}
	// The thread's scene is decoded once here and encoded once before it is saved.
	current, err := storedScene(th)
	if err != nil {
		return failed(store.RunFailed, err.Error(), b.tell(key, "reading the stored diagram", err))
	}
	status("drawing…")
	res, err := b.drawer.Draw(ctx, DrawRequest{
		Prompt: prompt, Scene: current, Memory: th.Memory, Model: th.Settings.Model, Images: images, Discussion: talk.text,
		Mermaid:  len(prompts) == 1 && isMermaid(prompts[0]),
		Progress: func(p Progress) { status(progressLine(p)) },
	})
	if err != nil {
		state := store.RunFailed
		if errors.Is(err, context.Canceled) {
			state = store.RunInterrupted
		}
		return failed(state, err.Error(), b.tell(key, "drawing", err))
	}
	memory := res.Memory
	if memory == nil {
		memory = []byte{}
	}
	text := strings.TrimSpace(summary + " " + res.Summary)
	if talk.n > 0 {
		text = strings.TrimSpace(talk.used() + " " + text)
	}
	if !res.Changed {
		if err := b.store.SetMemory(ctx, key, memory); err != nil {
			b.log.Warn("store agent memory", logkey.Thread, key.String(), logkey.Err, err)
		}
		if summary != "" { // an import happened: show it
			return Outcome{State: store.RunDone, Detail: "no change", Reply: b.postReply(ctx, th, text)}
		}
		return Outcome{State: store.RunDone, Detail: "no change", Reply: Reply{Text: text}}
	}
	doc, err := encodeScene(res.Scene)
	if err != nil {
		return failed(store.RunFailed, err.Error(), b.tell(key, "saving the diagram", err))
	}
	status("rendering…")
	// The reply is complete before the revision commits with it: a picture in the outbox is
	// always of a durable revision, and a run cut short before the commit changed nothing.
	reply := b.pictureReply(ctx, predicted(th, doc, memory), res.Scene, text)
	return Outcome{State: store.RunDone, Detail: "saved a revision", Reply: reply, Save: &store.SaveRequest{Key: key, Base: th.Rev,
		Scene: doc, Author: store.AuthorAgent, Reason: clip.Runes(prompts[len(prompts)-1], 200), Memory: memory}}
}

// predicted is th as it will be once a save of doc on it commits (its new revision is the next
// number; a save that finds the thread moved fails instead).
func predicted(th *store.Thread, doc, memory []byte) *store.Thread {
	next := *th
	next.Rev, next.Head, next.Scene, next.Memory = th.Head+1, th.Head+1, doc, memory
	return &next
}

// rendering is a rendering under way in its own goroutine; wait collects it.
type rendering struct {
	cancel context.CancelFunc
	done   chan struct{}
	png    []byte
	err    error
}

// startRender renders sc in the background.
func (b *Bot) startRender(ctx context.Context, sc *scene.Scene, doc []byte, dark bool) *rendering {
	ctx, cancel := context.WithCancel(ctx)
	p := &rendering{cancel: cancel, done: make(chan struct{})}
	go func() {
		defer close(p.done)
		start := b.opt.Now()
		p.png, p.err = b.render.Render(ctx, sc, doc, export.PNG, dark)
		b.opt.Observer.Rendered("png", b.opt.Now().Sub(start), p.err)
	}()
	return p
}

func (p *rendering) wait() ([]byte, error) {
	<-p.done
	p.cancel()
	return p.png, p.err
}

// postReply is the reply that posts th, the thread at its current revision: picture, summary,
// file and links.
func (b *Bot) postReply(ctx context.Context, th *store.Thread, text string) Reply {
	// A stored scene that cannot be read still goes out as its file; the reply says why there is
	// no picture.
	sc, err := storedScene(th)
	if err == nil && sc == nil {
		err = errors.New("there is no diagram to render")
	}
	if err != nil {
		return b.withPicture(ctx, th, nil, text, failedRendering(err))
	}
	return b.pictureReply(ctx, th, sc, text)
}

// errNothingDrawn is the picture of a scene with no element left (after reset, or a run that
// deleted everything): there is nothing to render, and that is not a failure.
var errNothingDrawn = errors.New("nothing to draw")

// failedRendering is a rendering that ended with err without starting.
func failedRendering(err error) *rendering {
	p := &rendering{cancel: func() {}, done: make(chan struct{}), err: err}
	close(p.done)
	return p
}

// pictureReply renders sc, the scene th holds, while the editor links are made, and is the reply
// with both.
func (b *Bot) pictureReply(ctx context.Context, th *store.Thread, sc *scene.Scene, text string) Reply {
	if sc.Len() == 0 { // the renderer refuses an empty scene
		return b.withPicture(ctx, th, sc, text, failedRendering(errNothingDrawn))
	}
	return b.withPicture(ctx, th, sc, text, b.startRender(ctx, sc, th.Scene, th.Settings.Theme == "dark"))
}

// storedScene decodes a thread's stored scene (nil for a thread without one yet).
func storedScene(th *store.Thread) (*scene.Scene, error) {
	if th.Scene == nil {
		return nil, nil
	}
	sc, err := scene.Decode(th.Scene)
	if err != nil {
		return nil, refuse(fmt.Errorf("decode the stored scene: %w", err), "The stored diagram could not be read; say reset to start over", "")
	}
	return sc, nil
}

// encodeScene is a run's scene as the store keeps it.
func encodeScene(sc *scene.Scene) ([]byte, error) {
	if sc == nil {
		return nil, errors.New("the drawing run returned no scene")
	}
	doc, err := sc.Encode()
	if err != nil {
		return nil, fmt.Errorf("encode the diagram: %w", err)
	}
	return doc, nil
}

// withPicture is the reply of th with the picture pic renders of sc, its scene (nil when it
// could not be read); the editor links are made and the diagram described meanwhile. Its files
// are named after the diagram's title and revision.
func (b *Bot) withPicture(ctx context.Context, th *store.Thread, sc *scene.Scene, text string, pic *rendering) Reply {
	var o outline.Outline
	if sc != nil {
		o = outline.Of(sc)
	}
	base := outline.FileBase(o.Title, th.Rev)
	r := Reply{Text: text, Files: []File{sceneFile(base, th.Scene)}, Title: o.Title}
	if sc != nil {
		r.Alt = altText(o)
	}
	if links := b.links; links != nil {
		if edit, view, err := links.ThreadLinks(ctx, th); err != nil {
			b.log.Warn("make editor links", logkey.Thread, th.Key.String(), logkey.Err, err)
		} else {
			r.EditURL, r.ViewURL = edit, view
		}
	}
	png, err := pic.wait()
	switch {
	case errors.Is(err, errNothingDrawn):
		r.Text = strings.TrimSpace(r.Text + "\n\n" + fmt.Sprintf("Revision %d is empty: there is nothing to draw yet. Say what to draw, or \"undo\" to go back.", th.Rev))
	case err != nil:
		// The drawing is saved; only its picture is missing, and "export png" renders it again.
		why := ""
		if msg := userMessage(err); msg != "" {
			why = " (" + msg + ")"
			b.log.Warn("render failed", logkey.Thread, th.Key.String(), "rev", th.Rev, logkey.Err, err)
		} else {
			b.log.Error("render failed", logkey.Thread, th.Key.String(), "rev", th.Rev, logkey.Err, err)
		}
		r.Text = strings.TrimSpace(r.Text + "\n\n" + "I could not render the picture" + why +
			". The diagram is saved and the .excalidraw file is attached (it opens in Excalidraw); send \"export png\" to try the picture again.")
	default:
		r.Image = &File{Name: base + ".png", MIME: "image/png", Content: png}
	}
	return r
}

// sceneFile is doc as the .excalidraw file named base.
func sceneFile(base string, doc []byte) File {
	return File{Name: base + ".excalidraw", MIME: "application/vnd.excalidraw+json", Content: doc}
}

// maxAlt bounds a picture's alt text: Slack takes 1000 characters of it, and a screen reader
// reads a sentence or two; the full outline is what describe answers.
const maxAlt = 600

// altText is what a picture says to those who cannot see it: the diagram's kind and title and
// a sentence naming its nodes and connections.
func altText(o outline.Outline) string { return o.Summary(maxAlt) }

// load returns the thread, or an empty one at revision 0 when it does not exist yet.
func (b *Bot) load(ctx context.Context, key store.ThreadKey) (*store.Thread, error) {
	th, err := b.store.Load(ctx, key)
	if errors.Is(err, store.ErrNotFound) {
		return &store.Thread{Key: key}, nil
	}
	return th, err
}

// progressLine is the status line during a drawing run, in the words of what the reader will
// see ("drawing 4 boxes and 3 arrows…"), not of the agent's steps.
func progressLine(p Progress) string {
	var parts []string
	if p.Shapes > 0 {
		parts = append(parts, plural.Count(p.Shapes, "box", "boxes"))
	}
	if p.Arrows > 0 {
		parts = append(parts, plural.Count(p.Arrows, "arrow", "arrows"))
	}
	if len(parts) == 0 {
		return "drawing…"
	}
	return "drawing " + strings.Join(parts, " and ") + "…"
}

// titleOf is the title of th's current diagram, "" when it has none or cannot be read.
func titleOf(th *store.Thread) string {
	sc, err := storedScene(th)
	if err != nil || sc == nil {
		return ""
	}
	return outline.Of(sc).Title
}
