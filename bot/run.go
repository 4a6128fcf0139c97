package bot

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/excalibot/excalibot/store"
)

// emptyScene is the document of a thread after reset.
var emptyScene = []byte(`{"type":"excalidraw","version":2,"source":"excalibot","elements":[],"appState":{"viewBackgroundColor":"#ffffff"},"files":{}}`)

// draw runs one drawing turn for consecutive requests of a thread (merged into one run), after
// importing a file the first of them carried. Nothing is saved unless the step that made it succeeded.
func (b *Bot) draw(ctx context.Context, jobs []job) {
	last := jobs[len(jobs)-1]
	a, msg := last.a, last.msg
	key := storeKey(msg.Key)
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

	release, err := b.lease(ctx, key)
	if err != nil {
		fail(friendly("waiting for this thread", err))
		return
	}
	defer release()

	var prompts []string
	for _, j := range jobs {
		if t := strings.TrimSpace(j.cmd.Arg); t != "" {
			prompts = append(prompts, t)
		}
	}
	run, err := b.store.CreateRun(ctx, key, b.opt.Owner, clip(strings.Join(prompts, " | "), 200))
	if err != nil {
		fail(friendly("starting the run", err))
		return
	}
	started := b.opt.Now()
	finish := func(state store.RunState, detail string) {
		outcome := string(state)
		if detail == "conflict" {
			outcome = "conflict"
		}
		b.opt.Observer.RunFinished(outcome, b.opt.Now().Sub(started))
		done, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
		defer cancel()
		if _, err := b.store.SetRunState(done, run.ID, state, clip(detail, 200)); err != nil {
			log.Warn("record run state", "run", run.ID, "state", state, "err", err)
		}
	}
	if _, err := b.store.SetRunState(ctx, run.ID, store.RunRunning, ""); err != nil {
		log.Warn("record run start", "run", run.ID, "err", err)
	}

	th, err := b.load(ctx, key)
	if err != nil {
		finish(store.RunFailed, err.Error())
		fail(friendly("loading this thread's diagram", err))
		return
	}
	summary := ""
	if files := jobs[0].msg.Files; len(files) > 0 {
		status.update(ctx, "importing "+files[0].Name+"…")
		doc, err := b.importFile(ctx, files)
		if err != nil {
			finish(store.RunFailed, err.Error())
			fail(err.Error() + " Nothing in the diagram changed.")
			return
		}
		th, err = b.store.Save(ctx, store.SaveRequest{Key: key, Base: th.Rev, Scene: doc, Author: store.AuthorImport, Reason: "imported " + files[0].Name})
		if err != nil {
			finish(store.RunFailed, err.Error())
			fail(friendly("saving the imported diagram", err))
			return
		}
		summary = fmt.Sprintf("Imported %s as revision %d.", files[0].Name, th.Rev)
	}

	if len(prompts) > 0 {
		prompt := prompts[0]
		if len(prompts) > 1 {
			var sb strings.Builder
			sb.WriteString("These requests arrived one after another; carry them all out, in order:\n")
			for i, p := range prompts {
				fmt.Fprintf(&sb, "%d. %s\n", i+1, p)
			}
			prompt = sb.String()
		}
		status.update(ctx, "drawing…")
		res, err := b.drawer.Draw(ctx, DrawRequest{
			Prompt: prompt, Scene: th.Scene, Memory: th.Memory, Model: th.Settings.Model,
			Progress: func(p Progress) { status.update(ctx, progressLine(p)) },
		})
		if err != nil {
			state := store.RunFailed
			if errors.Is(err, context.Canceled) {
				state = store.RunInterrupted
			}
			finish(state, err.Error())
			log.Warn("drawing failed", "err", err)
			fail(friendly("drawing", err))
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
			finish(store.RunDone, "no change")
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
		th, err = b.store.Save(ctx, store.SaveRequest{Key: key, Base: th.Rev, Scene: res.Scene, Author: store.AuthorAgent, Reason: clip(prompts[len(prompts)-1], 200), Memory: memory})
		if errors.Is(err, store.ErrConflict) {
			finish(store.RunFailed, "conflict")
			fail("The diagram was changed elsewhere (in the editor?) while I was drawing, so I did not overwrite it. Please send your request again to build on the new version.")
			return
		}
		if err != nil {
			finish(store.RunFailed, err.Error())
			fail(friendly("saving the diagram", err))
			return
		}
		summary = strings.TrimSpace(summary + " " + res.Summary)
	}
	status.update(ctx, "rendering…")
	b.post(ctx, a, msg.Key, th, summary)
	finish(store.RunDone, fmt.Sprintf("revision %d", th.Rev))
}

// post sends the thread's current scene: picture, summary, file and links.
func (b *Bot) post(ctx context.Context, a Adapter, chatKey ThreadKey, th *store.Thread, text string) {
	r := Reply{Text: text, Files: []File{sceneFile(th.Scene)}}
	start := b.opt.Now()
	png, err := b.render.Render(ctx, th.Scene, "png", th.Settings.Theme == "dark")
	b.opt.Observer.Rendered("png", b.opt.Now().Sub(start), err)
	if err != nil {
		b.log.Warn("render failed", "thread", chatKey.String(), "rev", th.Rev, "err", err)
		r.Text = strings.TrimSpace(r.Text + "\n\n" + "I could not render the picture (" + err.Error() + "); the .excalidraw file is attached and opens in Excalidraw.")
	} else {
		r.Image = &File{Name: "diagram.png", MIME: "image/png", Content: png}
	}
	b.mu.Lock()
	links := b.links
	b.mu.Unlock()
	if links != nil {
		if edit, view, err := links.ThreadLinks(ctx, th.Key); err != nil {
			b.log.Warn("make editor links", "thread", chatKey.String(), "err", err)
		} else {
			r.EditURL, r.ViewURL = edit, view
		}
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

// lease waits for the thread's lease (another replica may be working on it) and returns its release.
func (b *Bot) lease(ctx context.Context, key store.ThreadKey) (func(), error) {
	ttl := b.opt.RunTimeout + time.Minute
	for {
		_, err := b.store.AcquireLease(ctx, key, b.opt.Owner, ttl)
		if err == nil {
			return func() {
				rel, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
				defer cancel()
				if err := b.store.ReleaseLease(rel, key, b.opt.Owner); err != nil {
					b.log.Warn("release lease", "thread", key.String(), "err", err)
				}
			}, nil
		}
		if !errors.Is(err, store.ErrLeaseHeld) {
			return nil, err
		}
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(time.Second):
		}
	}
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

func clip(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n-1]) + "…"
}

// statusLine wraps an adapter's Status: updates are throttled so a fast run does not hit the
// platform's rate limits, and a failed working sign never stops the run.
type statusLine struct {
	st   Status
	b    *Bot
	key  string
	mu   sync.Mutex
	last time.Time
	text string
}

func (b *Bot) working(ctx context.Context, a Adapter, msg Message) *statusLine {
	st, err := a.Working(ctx, msg)
	if err != nil {
		b.log.Warn("show working sign", "thread", msg.Key.String(), "err", err)
		st = nil
	}
	return &statusLine{st: st, b: b, key: msg.Key.String()}
}

const statusInterval = 1500 * time.Millisecond

func (s *statusLine) update(ctx context.Context, text string) {
	if s.st == nil {
		return
	}
	s.mu.Lock()
	now := s.b.opt.Now()
	if text == s.text || now.Sub(s.last) < statusInterval && s.text != "" {
		s.mu.Unlock()
		return
	}
	s.last, s.text = now, text
	s.mu.Unlock()
	if err := s.st.Update(ctx, text); err != nil {
		s.b.log.Debug("update status", "thread", s.key, "err", err)
	}
}

func (s *statusLine) finish() {
	if s.st == nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := s.st.Finish(ctx); err != nil {
		s.b.log.Debug("finish status", "thread", s.key, "err", err)
	}
}
