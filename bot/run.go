package bot

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/excalibot/excalibot/diagram/outline"
	"github.com/excalibot/excalibot/internal/clip"
	"github.com/excalibot/excalibot/internal/plural"
	"github.com/excalibot/excalibot/scene"
	"github.com/excalibot/excalibot/store"
)

// emptyScene is the document of a thread after reset.
var emptyScene = []byte(`{"type":"excalidraw","version":2,"source":"excalibot","elements":[],"appState":{"viewBackgroundColor":"#ffffff"},"files":{}}`)

// turn is one run of a thread: the kept messages it answers, the run recorded for them, and the
// working signs of a drawing run.
type turn struct {
	b      *Bot
	a      Adapter
	key    ThreadKey
	run    store.Run
	status *statusLine // nil for commands
	// replyTo is the platform id of the latest message the run answers; its reply quotes it.
	replyTo string
}

// outcome is how a run ended: its state, what the store keeps with it and the reply.
type outcome struct {
	state  store.RunState
	detail string
	save   *store.SaveRequest
	reply  Reply
}

func failed(state store.RunState, detail, text string) outcome {
	return outcome{state: state, detail: detail, reply: Reply{Text: text, Error: true}}
}

// begin records the run of jobs, taking their messages and renewing the thread's lease in the
// same commit; false when the thread is no longer this process's (another owner took it over) or
// the store failed, and then the messages stay where they are.
func (b *Bot) begin(ctx context.Context, key ThreadKey, a Adapter, jobs []job, detail string) (*turn, bool) {
	ids := make([]int64, len(jobs))
	for i, j := range jobs {
		ids[i] = j.inbox
	}
	run, err := b.store.StartRun(ctx, store.StartRunRequest{Key: key, Owner: b.opt.Owner, Detail: detail,
		Lease: b.opt.LeaseTTL, Inbox: ids})
	switch {
	case errors.Is(err, store.ErrLeaseHeld), errors.Is(err, store.ErrConflict):
		b.log.Info("thread taken over by another owner; its messages are theirs", "thread", key.String(), "err", err)
		return nil, false
	case err != nil:
		b.log.Warn("record a run; its messages wait for the store", "thread", key.String(), "err", err)
		return nil, false
	}
	return &turn{b: b, a: a, key: key, run: run, replyTo: jobs[len(jobs)-1].msg.ID}, true
}

// end records the run's end with its revision and its reply (and, for a drawing run, the taking
// down of its signs after the reply) in one commit; the send loop posts them. When the revision
// conflicts, the run ends failed with a reply that says so. false means this process should stop
// serving the thread.
func (t *turn) end(ctx context.Context, o outcome) (*store.Thread, bool) {
	b := t.b
	log := b.log.With("thread", t.key.String(), "run", t.run.ID)
	// The end is recorded even when the run's context is over (shutdown, timeout).
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
	defer cancel()
	holding := false
	if o.reply.ReplyTo == "" {
		o.reply.ReplyTo = t.replyTo
	}
	for {
		replies, err := t.replies(o.reply)
		if err != nil {
			log.Error("encode a reply", "err", err)
			o, replies = failed(store.RunFailed, err.Error(), "Sorry, I could not put my reply together. Nothing in the diagram changed; you can send the request again."), nil
			replies, _ = t.replies(o.reply)
		}
		if t.status != nil {
			t.status.settle()
			b.w.mu.Lock()
			b.w.live[t.run.ID] = t.status
			b.w.mu.Unlock()
		}
		if t.status != nil && !holding {
			// Normally the send loop takes the signs down after the reply. A reply that waits
			// long (the platform down) or is posted by another replica must not leave them up
			// (and Telegram's chat action repeating) for hours: they come down after signHold.
			holding = true
			id, st := t.run.ID, t.status
			time.AfterFunc(signHold, func() {
				b.w.mu.Lock()
				mine := b.w.live[id] == st
				if mine {
					delete(b.w.live, id)
				}
				b.w.mu.Unlock()
				if mine {
					st.finish()
				}
			})
		}
		_, th, err := b.store.FinishRun(ctx, store.FinishRunRequest{ID: t.run.ID, State: o.state,
			Detail: clip.Runes(o.detail, 200), Save: o.save, Replies: replies, Claim: b.opt.LeaseTTL})
		if err == nil {
			poke(b.w.sendWake)
			return th, true
		}
		if t.status != nil {
			b.w.mu.Lock()
			delete(b.w.live, t.run.ID)
			b.w.mu.Unlock()
		}
		switch {
		case o.save != nil && errors.Is(err, store.ErrConflict):
			o = failed(store.RunFailed, "conflict", "The diagram was changed elsewhere (in the editor?) while I was drawing, so I did not overwrite it. Please send your request again to build on the new version.")
			continue
		case errors.Is(err, store.ErrBadTransition):
			// Another owner took the thread over and told it; this run's result goes nowhere.
			log.Warn("run ended after its thread was taken over; its result is dropped", "err", err)
			t.finishSigns()
			return nil, false
		}
		// The store failed: the thread hears of it directly, best effort, and the run is left for
		// recovery, which then does not tell the thread again (in this process).
		log.Error("record the end of a run", "err", err)
		b.w.mu.Lock()
		if len(b.w.told) > 10_000 { // a bound: recovery usually comes within a lease
			clear(b.w.told)
		}
		b.w.told[t.run.ID] = true
		b.w.mu.Unlock()
		text := b.friendlyStore(t.key, "saving the diagram", err)
		if o.reply.Error {
			text = o.reply.Text
		}
		if serr := t.a.Send(ctx, t.key, Reply{Text: text, Error: true}); serr != nil {
			log.Warn("send the error reply", "err", serr)
		}
		t.finishSigns()
		return nil, false
	}
}

// signHold is the longest a run's working signs stay up waiting for its reply to be posted.
const signHold = 10 * time.Minute

// replies are the outbox rows of a reply and, for a drawing run, of its signs.
func (t *turn) replies(r Reply) ([]store.Outgoing, error) {
	body, err := EncodeReply(r)
	if err != nil {
		return nil, err
	}
	pin := ""
	if local(t.a) {
		pin = t.b.opt.Owner
	}
	out := []store.Outgoing{{Key: t.key, Kind: kindReply, Body: body, Pin: pin}}
	if t.status != nil {
		out = append(out, store.Outgoing{Key: t.key, Kind: kindSigns, Body: encodeSigns(t.status.sign()), Pin: pin})
	}
	return out, nil
}

func (t *turn) finishSigns() {
	if t.status != nil {
		t.status.finish()
	}
}

// unreadable answers a kept message that could not be read back.
func (b *Bot) unreadable(ctx context.Context, key ThreadKey, a Adapter, j job) bool {
	b.log.Error("a kept message could not be read; its thread is told", "thread", key.String(), "inbox", j.inbox, "err", j.broken)
	t, ok := b.begin(ctx, key, a, []job{j}, "unreadable message")
	if !ok {
		return false
	}
	_, ok = t.end(ctx, failed(store.RunFailed, j.broken.Error(),
		"Sorry, I could not read one of your messages back from my database. Nothing in the diagram changed; please send it again."))
	return ok
}

// draw runs one drawing turn for consecutive requests of a thread (merged into one run), after
// importing a file the first of them carried. Nothing is saved unless the step that made it
// succeeded.
//
// On the way from message to picture the store commits: the message (Handle), the thread's claim,
// the run's start, its revision with its end and its reply, then the reply's posting. The working
// signs go up beside the run, and the picture renders while the editor links are made.
func (b *Bot) draw(ctx context.Context, key ThreadKey, a Adapter, jobs []job) bool {
	msg := jobs[len(jobs)-1].msg
	var prompts []string
	for _, j := range jobs {
		if t := strings.TrimSpace(j.cmd.Arg); t != "" {
			prompts = append(prompts, t)
		}
	}
	t, ok := b.begin(ctx, key, a, jobs, clip.Runes(strings.Join(prompts, " | "), 200))
	if !ok {
		return false
	}
	// The signs stay up until the reply is posted, which may be after this run's context ended.
	t.status = b.working(context.WithoutCancel(ctx), a, msg)
	t.status.attach(t.run.ID)
	started := b.opt.Now()
	o := b.drawing(ctx, t, jobs, prompts)
	_, ok = t.end(ctx, o)
	outcome := string(o.state)
	if o.detail == "conflict" {
		outcome = "conflict"
	}
	b.opt.Observer.RunFinished(outcome, b.opt.Now().Sub(started))
	return ok
}

// drawing is the drawing run itself: what it saves and what it answers.
func (b *Bot) drawing(ctx context.Context, t *turn, jobs []job, prompts []string) outcome {
	key := t.key
	status := t.status
	storeFail := func(step string, err error) outcome {
		return failed(store.RunFailed, err.Error(), b.friendlyStore(key, step, err))
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
			status.update("reading the thread…")
			if talk, err = b.readDiscussion(ctx, t.a, j.msg); err != nil {
				return failed(store.RunFailed, "no discussion", err.Error())
			}
			break
		}
	}

	summary := ""
	var images []Image
	if files := jobs[0].msg.Files; len(files) > 0 {
		status.update("reading " + files[0].Name + "…")
		up, err := b.readUpload(ctx, files)
		if err != nil {
			return failed(store.RunFailed, err.Error(), err.Error()+" Nothing in the diagram changed.")
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
				status.update("rendering…")
				return outcome{state: store.RunDone, detail: "imported " + files[0].Name, save: &save,
					reply: b.postReply(ctx, next, fmt.Sprintf("Imported %s as revision %d.", files[0].Name, next.Rev))}
			}
			if th, err = b.store.Save(ctx, save); err != nil {
				return storeFail("saving the imported diagram", err)
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
		return failed(store.RunFailed, err.Error(), err.Error())
	}
	status.update("drawing…")
	res, err := b.drawerFor(prompts).Draw(ctx, DrawRequest{
		Prompt: prompt, Scene: current, Memory: th.Memory, Model: th.Settings.Model, Images: images, Discussion: talk.text,
		Progress: func(p Progress) { status.update(progressLine(p)) },
	})
	if err != nil {
		state := store.RunFailed
		if errors.Is(err, context.Canceled) {
			state = store.RunInterrupted
		}
		b.log.Warn("drawing failed", "thread", key.String(), "err", err)
		return failed(state, err.Error(), drawFailure(err))
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
			b.log.Warn("store agent memory", "thread", key.String(), "err", err)
		}
		if summary != "" { // an import happened: show it
			return outcome{state: store.RunDone, detail: "no change", reply: b.postReply(ctx, th, text)}
		}
		return outcome{state: store.RunDone, detail: "no change", reply: Reply{Text: text}}
	}
	doc, err := encodeScene(res.Scene)
	if err != nil {
		return failed(store.RunFailed, err.Error(), friendly("saving the diagram", err))
	}
	status.update("rendering…")
	// The reply is complete before the revision commits with it: a picture in the outbox is
	// always of a durable revision, and a run cut short before the commit changed nothing.
	reply := b.pictureReply(ctx, predicted(th, doc, memory), res.Scene, text)
	return outcome{state: store.RunDone, detail: "saved a revision", reply: reply, save: &store.SaveRequest{Key: key, Base: th.Rev,
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
		p.png, p.err = b.render.Render(ctx, sc, doc, "png", dark)
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
		return nil, fmt.Errorf("The stored diagram could not be read (%v); say reset to start over.", strings.TrimSuffix(err.Error(), "."))
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
	base := FileBase(o.Title, th.Rev)
	r := Reply{Text: text, Files: []File{sceneFile(base, th.Scene)}, Title: o.Title}
	if sc != nil {
		r.Alt = altText(o)
	}
	if links := b.links; links != nil {
		if edit, view, err := links.ThreadLinks(ctx, th); err != nil {
			b.log.Warn("make editor links", "thread", th.Key.String(), "err", err)
		} else {
			r.EditURL, r.ViewURL = edit, view
		}
	}
	png, err := pic.wait()
	switch {
	case errors.Is(err, errNothingDrawn):
		r.Text = strings.TrimSpace(r.Text + "\n\n" + fmt.Sprintf("Revision %d is empty: there is nothing to draw yet. Say what to draw, or \"undo\" to go back.", th.Rev))
	case err != nil:
		b.log.Warn("render failed", "thread", th.Key.String(), "rev", th.Rev, "err", err)
		// The drawing is saved; only its picture is missing, and "export png" renders it again.
		r.Text = strings.TrimSpace(r.Text + "\n\n" + "I could not render the picture (" + strings.TrimSpace(err.Error()) +
			"). The diagram is saved and the .excalidraw file is attached (it opens in Excalidraw); send \"export png\" to try the picture again.")
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
