package bot

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/excalibot/excalibot/internal/clip"
	"github.com/excalibot/excalibot/scene"
	"github.com/excalibot/excalibot/store"
)

// emptyScene is the document of a thread after reset.
var emptyScene = []byte(`{"type":"excalidraw","version":2,"source":"excalibot","elements":[],"appState":{"viewBackgroundColor":"#ffffff"},"files":{}}`)

// draw runs one drawing turn for consecutive requests of a thread (merged into one run), after
// importing a file the first of them carried. Nothing is saved unless the step that made it succeeded.
//
// On the way from message to picture the store commits three times (the claim in Handle, the run's
// start, its revision with its end), the working signs go up beside the run, and the picture renders
// while the revision commits and while the editor links are made.
func (b *Bot) draw(ctx context.Context, jobs []job) {
	last := jobs[len(jobs)-1]
	a, msg := last.a, last.msg
	key := msg.Key
	log := b.log.With("thread", msg.Key.String())
	ctx, cancel := context.WithTimeout(ctx, b.opt.RunTimeout)
	defer cancel()

	status := b.working(ctx, a, msg)
	defer status.finish()
	fail := func(text string) {
		if err := a.Send(ctx, msg.Key, Reply{Text: text, Error: true}); err != nil {
			log.Warn("send error reply", "err", err)
		}
	}
	storeFail := func(step string, err error) { fail(b.friendlyStore(msg.Key, step, err)) }

	var prompts []string
	for _, j := range jobs {
		if t := strings.TrimSpace(j.cmd.Arg); t != "" {
			prompts = append(prompts, t)
		}
	}
	run, release, err := b.startRun(ctx, key, clip.Runes(strings.Join(prompts, " | "), 200))
	if err != nil {
		step := "starting the run"
		if ctx.Err() != nil {
			step = "waiting for this thread"
		}
		storeFail(step, err)
		return
	}
	defer release()
	status.attach(run.ID)
	started := b.opt.Now()
	observe := func(state store.RunState, detail string) {
		outcome := string(state)
		if detail == "conflict" {
			outcome = "conflict"
		}
		b.opt.Observer.RunFinished(outcome, b.opt.Now().Sub(started))
	}
	// end records a run that ends without a new revision.
	end := func(state store.RunState, detail string) {
		observe(state, detail)
		done, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
		defer cancel()
		if _, _, err := b.store.FinishRun(done, store.FinishRunRequest{ID: run.ID, State: state, Detail: clip.Runes(detail, 200)}); err != nil {
			log.Warn("record run state", "run", run.ID, "state", state, "err", err)
		}
	}

	th, err := b.load(ctx, key)
	if err != nil {
		end(store.RunFailed, err.Error())
		storeFail("loading this thread's diagram", err)
		return
	}
	summary := ""
	if files := jobs[0].msg.Files; len(files) > 0 {
		status.update("importing " + files[0].Name + "…")
		doc, err := b.importFile(ctx, files)
		if err != nil {
			end(store.RunFailed, err.Error())
			fail(err.Error() + " Nothing in the diagram changed.")
			return
		}
		th, err = b.store.Save(ctx, store.SaveRequest{Key: key, Base: th.Rev, Scene: doc, Author: store.AuthorImport, Reason: "imported " + files[0].Name})
		if err != nil {
			end(store.RunFailed, err.Error())
			storeFail("saving the imported diagram", err)
			return
		}
		summary = fmt.Sprintf("Imported %s as revision %d.", files[0].Name, th.Rev)
	}
	if len(prompts) == 0 { // an import alone
		status.update("rendering…")
		b.post(ctx, a, msg.Key, th, summary)
		end(store.RunDone, fmt.Sprintf("revision %d", th.Rev))
		return
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
		end(store.RunFailed, err.Error())
		fail(err.Error())
		return
	}
	status.update("drawing…")
	res, err := b.drawerFor(prompts).Draw(ctx, DrawRequest{
		Prompt: prompt, Scene: current, Memory: th.Memory, Model: th.Settings.Model,
		Progress: func(p Progress) { status.update(progressLine(p)) },
	})
	if err != nil {
		state := store.RunFailed
		if errors.Is(err, context.Canceled) {
			state = store.RunInterrupted
		}
		end(state, err.Error())
		log.Warn("drawing failed", "err", err)
		fail(drawFailure(err))
		return
	}
	memory := res.Memory
	if memory == nil {
		memory = []byte{}
	}
	if !res.Changed {
		if err := b.store.SetMemory(ctx, key, memory); err != nil {
			log.Warn("store agent memory", "err", err)
		}
		end(store.RunDone, "no change")
		text := strings.TrimSpace(summary + " " + res.Summary)
		if summary != "" { // an import happened: show it
			b.post(ctx, a, msg.Key, th, text)
			return
		}
		if err := a.Send(ctx, msg.Key, Reply{Text: text}); err != nil {
			log.Warn("send reply", "err", err)
		}
		return
	}
	doc, err := encodeScene(res.Scene)
	if err != nil {
		end(store.RunFailed, err.Error())
		fail(friendly("saving the diagram", err))
		return
	}
	status.update("rendering…")
	// The picture renders while the revision and the run's end commit together; it is posted only
	// once that commit succeeded, so a posted picture is always a durable revision.
	pic := b.startRender(ctx, res.Scene, doc, th.Settings.Theme == "dark")
	saved, err := b.finishWith(ctx, run.ID, store.SaveRequest{Key: key, Base: th.Rev, Scene: doc,
		Author: store.AuthorAgent, Reason: clip.Runes(prompts[len(prompts)-1], 200), Memory: memory})
	if err != nil {
		pic.discard()
		if errors.Is(err, store.ErrConflict) {
			end(store.RunFailed, "conflict")
			fail("The diagram was changed elsewhere (in the editor?) while I was drawing, so I did not overwrite it. Please send your request again to build on the new version.")
			return
		}
		end(store.RunFailed, err.Error())
		storeFail("saving the diagram", err)
		return
	}
	b.postPicture(ctx, a, msg.Key, saved, strings.TrimSpace(summary+" "+res.Summary), pic)
	observe(store.RunDone, "")
}

// finishWith ends run id as done together with its revision, in one commit.
func (b *Bot) finishWith(ctx context.Context, id int64, save store.SaveRequest) (*store.Thread, error) {
	_, th, err := b.store.FinishRun(ctx, store.FinishRunRequest{ID: id, State: store.RunDone, Detail: "saved a revision", Save: &save})
	return th, err
}

// startRun records the run as started. When other processes share the database it first waits for
// the thread's lease (another replica may be working on it), taken in the same commit; the returned
// release gives the lease back once the reply is out. A single process needs no lease: the thread's
// queue already runs its work one at a time.
func (b *Bot) startRun(ctx context.Context, key store.ThreadKey, detail string) (store.Run, func(), error) {
	req := store.StartRunRequest{Key: key, Owner: b.opt.Owner, Detail: detail}
	if b.store.SingleProcess() {
		run, err := b.store.StartRun(ctx, req)
		return run, func() {}, err
	}
	req.Lease = b.opt.RunTimeout + time.Minute
	for {
		run, err := b.store.StartRun(ctx, req)
		if err == nil {
			return run, func() {
				rel, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
				defer cancel()
				if err := b.store.ReleaseLease(rel, key, b.opt.Owner); err != nil {
					b.log.Warn("release lease", "thread", key.String(), "err", err)
				}
			}, nil
		}
		if !errors.Is(err, store.ErrLeaseHeld) {
			return store.Run{}, nil, err
		}
		select {
		case <-ctx.Done():
			return store.Run{}, nil, ctx.Err()
		case <-time.After(time.Second):
		}
	}
}

// picture is a rendering under way in its own goroutine; wait or discard collects it.
type picture struct {
	cancel context.CancelFunc
	done   chan struct{}
	png    []byte
	err    error
}

// startRender renders sc in the background.
func (b *Bot) startRender(ctx context.Context, sc *scene.Scene, doc []byte, dark bool) *picture {
	ctx, cancel := context.WithCancel(ctx)
	p := &picture{cancel: cancel, done: make(chan struct{})}
	go func() {
		defer close(p.done)
		start := b.opt.Now()
		p.png, p.err = b.render.Render(ctx, sc, doc, "png", dark)
		b.opt.Observer.Rendered("png", b.opt.Now().Sub(start), p.err)
	}()
	return p
}

func (p *picture) wait() ([]byte, error) {
	<-p.done
	p.cancel()
	return p.png, p.err
}

// discard stops a rendering whose picture will not be posted.
func (p *picture) discard() {
	p.cancel()
	<-p.done
}

// post sends the thread's current scene: picture, summary, file and links.
func (b *Bot) post(ctx context.Context, a Adapter, chatKey ThreadKey, th *store.Thread, text string) {
	// A stored scene that cannot be read still goes out as its file; the reply says why there is
	// no picture.
	sc, err := storedScene(th)
	if err == nil && sc == nil {
		err = errors.New("there is no diagram to render")
	}
	if err != nil {
		p := &picture{cancel: func() {}, done: make(chan struct{}), err: err}
		close(p.done)
		b.postPicture(ctx, a, chatKey, th, text, p)
		return
	}
	b.postPicture(ctx, a, chatKey, th, text, b.startRender(ctx, sc, th.Scene, th.Settings.Theme == "dark"))
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

// postPicture sends th with the picture pic renders of it; the editor links are made meanwhile.
func (b *Bot) postPicture(ctx context.Context, a Adapter, chatKey ThreadKey, th *store.Thread, text string, pic *picture) {
	r := Reply{Text: text, Files: []File{sceneFile(th.Scene)}}
	if links := b.links; links != nil {
		if edit, view, err := links.ThreadLinks(ctx, th); err != nil {
			b.log.Warn("make editor links", "thread", chatKey.String(), "err", err)
		} else {
			r.EditURL, r.ViewURL = edit, view
		}
	}
	png, err := pic.wait()
	if err != nil {
		b.log.Warn("render failed", "thread", chatKey.String(), "rev", th.Rev, "err", err)
		// The drawing is saved; only its picture is missing, and "export png" renders it again.
		r.Text = strings.TrimSpace(r.Text + "\n\n" + "I could not render the picture (" + strings.TrimSpace(err.Error()) +
			"). The diagram is saved and the .excalidraw file is attached (it opens in Excalidraw); send \"export png\" to try the picture again.")
	} else {
		r.Image = &File{Name: "diagram.png", MIME: "image/png", Content: png}
	}
	if err := a.Send(ctx, chatKey, r); err != nil {
		b.log.Warn("send reply", "thread", chatKey.String(), "err", err)
	}
}

func sceneFile(doc []byte) File {
	return File{Name: "diagram.excalidraw", MIME: "application/vnd.excalidraw+json", Content: doc}
}

// load returns the thread, or an empty one at revision 0 when it does not exist yet.
func (b *Bot) load(ctx context.Context, key store.ThreadKey) (*store.Thread, error) {
	th, err := b.store.Load(ctx, key)
	if errors.Is(err, store.ErrNotFound) {
		return &store.Thread{Key: key}, nil
	}
	return th, err
}

func progressLine(p Progress) string {
	parts := []string{}
	if p.Shapes > 0 {
		parts = append(parts, plural(p.Shapes, "shape"))
	}
	if p.Arrows > 0 {
		parts = append(parts, plural(p.Arrows, "arrow"))
	}
	line := "drawing…"
	if len(parts) > 0 {
		line += " " + strings.Join(parts, ", ")
	}
	if p.Step > 0 {
		line += fmt.Sprintf(" (step %d)", p.Step)
	}
	return line
}

func plural(n int, word string) string {
	if n == 1 {
		return "1 " + word
	}
	return fmt.Sprintf("%d %ss", n, word)
}
