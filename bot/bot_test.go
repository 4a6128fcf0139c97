package bot

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/excalibot/excalibot/internal/clip"
	"github.com/excalibot/excalibot/render/export"
	"github.com/excalibot/excalibot/scene"
	"github.com/excalibot/excalibot/store"
	"github.com/excalibot/excalibot/store/sqlite"
)

// recorder is an Adapter that keeps what the core sent, per thread, and serves the files of the
// messages it was given (FileFetcher).
type recorder struct {
	mu      sync.Mutex
	replies map[string][]Reply
	status  []string
	working int
	finish  int
	sent    chan struct{}
	files   map[string]func(ctx context.Context, max int64) ([]byte, error)
}

func newRecorder() *recorder {
	return &recorder{replies: map[string][]Reply{}, sent: make(chan struct{}, 100), files: map[string]func(context.Context, int64) ([]byte, error){}}
}

// attach gives a file a reference the recorder serves it under, as an adapter would.
func (r *recorder) attach(files []Attachment) []Attachment {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := make([]Attachment, len(files))
	for i, f := range files {
		if f.Ref == "" && f.Fetch != nil {
			f.Ref = fmt.Sprint("file-", len(r.files)+1)
			r.files[f.Ref] = f.Fetch
		}
		f.Fetch = nil // the core fetches through FetchFile, as from any adapter
		out[i] = f
	}
	return out
}

func (r *recorder) FetchFile(ctx context.Context, f Attachment, max int64) ([]byte, error) {
	r.mu.Lock()
	fetch := r.files[f.Ref]
	r.mu.Unlock()
	if fetch == nil {
		return nil, fmt.Errorf("no file %q", f.Ref)
	}
	return fetch(ctx, max)
}

func (r *recorder) Platform() string { return "test" }

func (r *recorder) Working(ctx context.Context, msg Message) (Status, error) {
	r.mu.Lock()
	r.working++
	r.mu.Unlock()
	return recStatus{r}, nil
}

type recStatus struct{ r *recorder }

func (s recStatus) Update(ctx context.Context, text string) error {
	s.r.mu.Lock()
	s.r.status = append(s.r.status, text)
	s.r.mu.Unlock()
	return nil
}

func (s recStatus) Finish(ctx context.Context) error {
	s.r.mu.Lock()
	s.r.finish++
	s.r.mu.Unlock()
	return nil
}

func (r *recorder) Send(ctx context.Context, key ThreadKey, rep Reply) error {
	r.mu.Lock()
	r.replies[key.String()] = append(r.replies[key.String()], rep)
	r.mu.Unlock()
	r.sent <- struct{}{}
	return nil
}

// wait takes n more replies sent; the harness answers in the test's goroutine, so they are sent
// by now.
func (r *recorder) wait(t *testing.T, n int) {
	t.Helper()
	for i := range n {
		select {
		case <-r.sent:
		default:
			t.Fatalf("%d of %d replies sent", i, n)
		}
	}
}

func (r *recorder) last(key ThreadKey) Reply {
	r.mu.Lock()
	defer r.mu.Unlock()
	rs := r.replies[key.String()]
	if len(rs) == 0 {
		return Reply{}
	}
	return rs[len(rs)-1]
}

func (r *recorder) count(key ThreadKey) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.replies[key.String()])
}

// fakeDrawer adds one rectangle per request, labelled with the prompt, or fails when told to.
// With mermaid set, it draws requests marked as Mermaid diagrams with that instead, as the agent's
// drawer does with its converter.
type fakeDrawer struct {
	mu      sync.Mutex
	prompts []string
	images  [][]Image
	talks   []string // each request's Discussion
	marked  []bool   // each request's Mermaid
	err     error
	mermaid *fakeMermaid
}

func (d *fakeDrawer) Draw(ctx context.Context, req DrawRequest) (DrawResult, error) {
	d.mu.Lock()
	d.marked = append(d.marked, req.Mermaid)
	if req.Mermaid && d.mermaid != nil {
		d.mu.Unlock()
		return d.mermaid.draw(req)
	}
	d.prompts = append(d.prompts, req.Prompt)
	d.images = append(d.images, req.Images)
	d.talks = append(d.talks, req.Discussion)
	err := d.err
	d.mu.Unlock()
	if err != nil {
		return DrawResult{}, err
	}
	sc := scene.New()
	if req.Scene != nil {
		sc = req.Scene.Clone()
	}
	e := scene.NewElement(scene.Rectangle)
	e.ID = fmt.Sprintf("r%d", sc.Len()+1)
	e.X, e.Y, e.Width, e.Height = float64(sc.Len()*200), 0, 160, 80
	if _, err := sc.Add(e); err != nil {
		return DrawResult{}, err
	}
	if req.Progress != nil {
		req.Progress(Progress{Step: 1, Tool: "create_element", Shapes: sc.Len()})
	}
	return DrawResult{Scene: sc, Memory: []byte(`{"version":1}`), Summary: "Drew " + e.ID + ".", Changed: true}, nil
}

type fakeRenderer struct{ err error }

func (f fakeRenderer) Render(ctx context.Context, sc *scene.Scene, doc []byte, format export.Format, dark bool) ([]byte, error) {
	if f.err != nil {
		return nil, f.err
	}
	return []byte(fmt.Sprintf("%s dark=%v %d elements", format, dark, sc.Len())), nil
}

// harness drives the conversation as the engine (bot/relay) does, in the test's goroutine and
// without leases: each message admitted and kept, each turn's run recorded, the turn answered and
// its outcome committed with the run's end; the reply goes straight to the recorder, and a
// drawing's working signs are up while it runs.
type harness struct {
	t      *testing.T
	bot    *Bot
	store  *sqlite.Store
	rec    *recorder
	drawer *fakeDrawer
	n      int
	// hold keeps messages waiting without answering them, until answer.
	hold     bool
	outcomes []Outcome
}

// tempStore opens a SQLite store in the test's temporary directory, closed when the test ends.
func tempStore(t *testing.T) *sqlite.Store {
	t.Helper()
	st, err := sqlite.Open(context.Background(), filepath.Join(t.TempDir(), "bot.db"), store.Options{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	return st
}

func newHarness(t *testing.T, opt Options, r export.Renderer) *harness {
	t.Helper()
	st := tempStore(t)
	if r == nil {
		r = fakeRenderer{}
	}
	h := &harness{t: t, store: st, rec: newRecorder(), drawer: &fakeDrawer{}}
	h.bot = New(st, h.drawer, r, nil, opt, nil)
	return h
}

// noRateLimit is a rate no test reaches: 6000 a minute (a token every 10 ms, burst 3) refused
// requests once replies came back faster than that on a quiet machine.
const noRateLimit = 1e9

var thread = ThreadKey{Platform: "test", Workspace: "w", Channel: "c", Thread: "1"}

// say hands a message of user u1 to the conversation.
func (h *harness) say(key ThreadKey, text string, files ...Attachment) {
	h.n++
	h.handle(h.rec, Message{Key: key, EventID: fmt.Sprint("ev", h.n), ID: fmt.Sprint(h.n), User: "u1", Text: text, Files: h.rec.attach(files)})
}

// handle admits msg (a refusal is its reply) and keeps it; unless the harness holds, its thread's
// turns run at once.
func (h *harness) handle(a Adapter, msg Message) {
	h.t.Helper()
	ctx := context.Background()
	if refusal := h.bot.Admit(msg); refusal != "" {
		if err := a.Send(ctx, msg.Key, Reply{Text: refusal, Error: true}); err != nil {
			h.t.Fatal(err)
		}
		return
	}
	body, err := EncodeMessage(msg)
	if err != nil {
		h.t.Fatal(err)
	}
	if _, err := h.store.Accept(ctx, store.AcceptRequest{Key: msg.Key, Body: body}); err != nil {
		h.t.Fatal(err)
	}
	if !h.hold {
		h.answer(a, msg.Key)
	}
}

// answer runs the turns of key's waiting messages, in order.
func (h *harness) answer(a Adapter, key ThreadKey) {
	h.t.Helper()
	ctx := context.Background()
	for {
		waiting, err := h.store.Pending(ctx, key, 50)
		if err != nil {
			h.t.Fatal(err)
		}
		if len(waiting) == 0 {
			return
		}
		turn := h.bot.Plan(key, a, waiting)
		run, err := h.store.StartRun(ctx, store.StartRunRequest{Key: key, Owner: "test", Detail: turn.Detail, Inbox: turn.Inbox})
		if err != nil {
			h.t.Fatalf("StartRun: %v", err)
		}
		var signs Status
		status := func(string) {}
		if turn.Working != nil {
			if signs, err = a.Working(ctx, *turn.Working); err == nil && signs != nil {
				status = func(text string) { signs.Update(ctx, text) }
			}
		}
		o := h.bot.Answer(ctx, turn, status)
		if _, _, err := h.store.FinishRun(ctx, store.FinishRunRequest{ID: run.ID, State: o.State, Detail: clip.Runes(o.Detail, 200), Save: o.Save}); err != nil {
			h.t.Fatalf("FinishRun(%+v): %v", o, err)
		}
		h.outcomes = append(h.outcomes, o)
		if err := a.Send(ctx, key, o.Reply); err != nil {
			h.t.Fatal(err)
		}
		if signs != nil {
			signs.Finish(ctx)
		}
	}
}

// last is the outcome of the latest turn.
func (h *harness) last() Outcome {
	if len(h.outcomes) == 0 {
		return Outcome{}
	}
	return h.outcomes[len(h.outcomes)-1]
}

func (h *harness) rev(t *testing.T, key ThreadKey) *store.Thread {
	t.Helper()
	th, err := h.store.Load(context.Background(), key)
	if err != nil {
		t.Fatal(err)
	}
	return th
}

func TestDrawFollowUpUndoRedo(t *testing.T) {
	h := newHarness(t, Options{}, nil)
	h.say(thread, "draw a box")
	h.rec.wait(t, 1)
	r := h.rec.last(thread)
	if r.Error || r.Image == nil || len(r.Files) != 1 || r.Files[0].Name != "diagram-r1.excalidraw" || r.Image.Name != "diagram-r1.png" || !strings.Contains(r.Alt, "1 box") || !strings.Contains(r.Text, "Drew r1") {
		t.Fatalf("first reply = %+v; want picture, file and summary", r)
	}
	h.say(thread, "add another")
	h.rec.wait(t, 1)
	if got := h.rev(t, thread).Rev; got != 2 {
		t.Fatalf("revision after follow-up = %d, want 2", got)
	}
	h.say(thread, "undo")
	h.rec.wait(t, 1)
	if got := h.rev(t, thread).Rev; got != 1 {
		t.Errorf("revision after undo = %d, want 1", got)
	}
	if r := h.rec.last(thread); r.Image == nil || r.Text != "Undid the last change (added 1 box): back to revision 1." {
		t.Errorf("undo reply = %+v; want the picture of revision 1, saying what was undone", r)
	}
	h.say(thread, "/redo")
	h.rec.wait(t, 1)
	if r := h.rec.last(thread); r.Text != "Redid the change (added 1 box): now at revision 2." {
		t.Errorf("redo reply = %q; want it to say what was made again", r.Text)
	}
	if got := h.rev(t, thread).Rev; got != 2 {
		t.Errorf("revision after redo = %d, want 2", got)
	}
	h.say(thread, "history")
	h.rec.wait(t, 1)
	if r := h.rec.last(thread); !strings.Contains(r.Text, "2. model: “add another” — added 1 box") || !strings.Contains(r.Text, "← current") {
		t.Errorf("history = %q", r.Text)
	}
	h.rec.mu.Lock()
	defer h.rec.mu.Unlock()
	if h.rec.working != 2 || h.rec.finish != 2 {
		t.Errorf("working signs shown %d and finished %d times, want 2 and 2", h.rec.working, h.rec.finish)
	}
}

func TestFailedRunChangesNothing(t *testing.T) {
	h := newHarness(t, Options{}, nil)
	h.say(thread, "draw a box")
	h.rec.wait(t, 1)
	before := h.rev(t, thread)
	h.drawer.mu.Lock()
	h.drawer.err = fmt.Errorf("agent run: %w", ollamaDown)
	h.drawer.mu.Unlock()
	h.say(thread, "make it red")
	h.rec.wait(t, 1)
	r := h.rec.last(thread)
	if !r.Error || !strings.Contains(r.Text, "Ollama is not reachable") || !strings.Contains(r.Text, "Nothing in the diagram changed") {
		t.Errorf("reply = %+v; want a friendly error naming the cause", r)
	}
	after := h.rev(t, thread)
	if after.Rev != before.Rev || string(after.Scene) != string(before.Scene) {
		t.Errorf("failed run changed the thread: rev %d → %d", before.Rev, after.Rev)
	}
	if o := h.last(); o.State != store.RunFailed || o.Save != nil {
		t.Errorf("outcome %+v; want a failed run that saves nothing", o)
	}
}

func TestLimits(t *testing.T) {
	h := newHarness(t, Options{MaxMessageLength: 20, UserRatePerMinute: 1}, nil)
	h.say(thread, strings.Repeat("x", 21))
	h.rec.wait(t, 1)
	if r := h.rec.last(thread); !r.Error || !strings.Contains(r.Text, "at most 20") {
		t.Errorf("long message reply = %+v", r)
	}
	for range 4 { // burst of 3, then refused
		h.say(thread, "draw")
	}
	h.rec.wait(t, 4)
	h.rec.mu.Lock()
	refusals := 0
	for _, r := range h.rec.replies[thread.String()] {
		if strings.Contains(r.Text, "faster than I can draw") {
			refusals++
		}
	}
	h.rec.mu.Unlock()
	if refusals != 1 {
		t.Errorf("%d rate-limit refusals, want 1", refusals)
	}
}

func TestFollowUpsWhileBusyAreMerged(t *testing.T) {
	h := newHarness(t, Options{}, nil)
	h.say(thread, "first")
	h.hold = true // the next ones wait behind a run, as while "first" is drawn
	h.say(thread, "second")
	h.say(thread, "third")
	h.answer(h.rec, thread)
	h.rec.wait(t, 2)
	got := h.drawerPrompts()
	if len(got) != 2 || got[0] != "first" || !strings.Contains(got[1], "1. second\n2. third") {
		t.Errorf("prompts = %q; want first, then second and third merged in order", got)
	}
}

func (h *harness) drawerPrompts() []string {
	h.drawer.mu.Lock()
	defer h.drawer.mu.Unlock()
	return append([]string(nil), h.drawer.prompts...)
}

func TestImport(t *testing.T) {
	h := newHarness(t, Options{UserRatePerMinute: noRateLimit, ChatRatePerMinute: noRateLimit}, nil)
	doc := []byte(`{"type":"excalidraw","version":2,"elements":[{"id":"x","type":"rectangle","x":0,"y":0,"width":100,"height":50}]}`)
	att := func(name string, data []byte) Attachment {
		mime := ""
		if strings.HasSuffix(name, ".jpg") {
			mime = "image/jpeg"
		}
		return Attachment{Name: name, MIME: mime, Size: int64(len(data)), Fetch: func(ctx context.Context, max int64) ([]byte, error) { return data, nil }}
	}
	h.say(thread, "", att("mine.excalidraw", doc))
	h.rec.wait(t, 1)
	th := h.rev(t, thread)
	if r := h.rec.last(thread); r.Error || !strings.Contains(r.Text, "Imported mine.excalidraw as revision 1") {
		t.Fatalf("import reply = %+v", r)
	}
	if sc, err := scene.Decode(th.Scene); err != nil || !sc.Has("x") {
		t.Errorf("stored scene lacks the imported element: %v", err)
	}
	tests := []struct {
		name, file string
		unnamed    bool // a photo the person gave no name, which the adapter calls photo.jpg
		data       []byte
		want       string
	}{
		{"broken json", "bad.excalidraw", false, []byte(`{"type":"excalidraw","elements":`), "not a diagram I can open"},
		{"wrong kind", "notes.txt", false, []byte("hello"), "none of these"},
		{"truncated photo", "photo.jpg", false, []byte("\xff\xd8\xff"), "photo.jpg: "},
		{"truncated unnamed photo", "photo.jpg", true, []byte("\xff\xd8\xff"), "your photo: "},
		{"broken png", "pic.png", false, []byte("\x89PNG\r\n\x1a\n\x00\x00\x00\x00IEND\xaeB`\x82"), "pic.png: "},
	}
	for _, tt := range tests {
		a := att(tt.file, tt.data)
		a.Unnamed = tt.unnamed
		h.say(thread, "", a)
		h.rec.wait(t, 1)
		if r := h.rec.last(thread); !r.Error || !strings.Contains(r.Text, tt.want) || !strings.Contains(r.Text, "Nothing in the diagram changed") {
			t.Errorf("%s: reply = %q, want an error with %q", tt.name, r.Text, tt.want)
		}
		if got := h.rev(t, thread).Rev; got != 1 {
			t.Errorf("%s: revision = %d, want 1 (unchanged)", tt.name, got)
		}
	}
}

func TestResetThemeExport(t *testing.T) {
	h := newHarness(t, Options{}, nil)
	h.say(thread, "undo")
	h.rec.wait(t, 1)
	if r := h.rec.last(thread); !strings.Contains(r.Text, "no diagram") {
		t.Errorf("undo on empty thread = %q", r.Text)
	}
	h.say(thread, "draw")
	h.rec.wait(t, 1)
	h.say(thread, "theme dark")
	h.rec.wait(t, 1)
	if r := h.rec.last(thread); r.Image == nil || !strings.Contains(string(r.Image.Content), "dark=true") {
		t.Errorf("theme reply = %+v; want the picture re-rendered dark", r)
	}
	h.say(thread, "export svg")
	h.rec.wait(t, 1)
	if r := h.rec.last(thread); len(r.Files) != 1 || r.Files[0].Name != "diagram-r1.svg" || r.Files[0].MIME != "image/svg+xml" || !strings.Contains(r.Alt, "1 box") {
		t.Errorf("export reply = %+v", r)
	}
	h.say(thread, "export pdf")
	h.rec.wait(t, 1)
	if r := h.rec.last(thread); !r.Error || !strings.Contains(r.Text, "png, svg or excalidraw") {
		t.Errorf("export pdf reply = %+v", r)
	}
	h.say(thread, "reset")
	h.rec.wait(t, 1)
	th := h.rev(t, thread)
	if sc, err := scene.Decode(th.Scene); err != nil || sc.Len() != 0 || len(th.Memory) != 0 {
		t.Errorf("after reset: scene %v elements, memory %q, err %v; want empty", sc, th.Memory, err)
	}
	h.say(thread, "undo")
	h.rec.wait(t, 1)
	if sc, _ := scene.Decode(h.rev(t, thread).Scene); sc == nil || sc.Len() != 1 {
		t.Errorf("undo after reset did not bring the diagram back")
	}
}

func TestRenderFailureStillDelivers(t *testing.T) {
	h := newHarness(t, Options{}, fakeRenderer{err: worded{"render: chrome: exec: not found", "Chrome is not installed here"}})
	h.say(thread, "draw")
	h.rec.wait(t, 1)
	r := h.rec.last(thread)
	if r.Image != nil || len(r.Files) != 1 || !strings.Contains(r.Text, "could not render the picture (Chrome is not installed here).") {
		t.Errorf("reply = %q, %d files, image %v; want the file and the reason", r.Text, len(r.Files), r.Image != nil)
	}
	if got := h.rev(t, thread).Rev; got != 1 {
		t.Errorf("revision = %d, want 1: the drawing itself succeeded", got)
	}
}

// emptyRefusingRenderer refuses a scene with nothing left to draw, as the browser renderer does.
type emptyRefusingRenderer struct{ fakeRenderer }

func (r emptyRefusingRenderer) Render(ctx context.Context, sc *scene.Scene, doc []byte, format export.Format, dark bool) ([]byte, error) {
	if sc.Len() == 0 {
		return nil, errors.New("render: the scene has nothing to draw")
	}
	return r.fakeRenderer.Render(ctx, sc, doc, format, dark)
}

// TestEmptyRevisionIsNotARenderFailure: after reset the diagram is empty; posting it (here by a
// theme change) or exporting it says so instead of reporting a failed render.
func TestEmptyRevisionIsNotARenderFailure(t *testing.T) {
	h := newHarness(t, Options{}, emptyRefusingRenderer{})
	h.say(thread, "draw a box")
	h.rec.wait(t, 1)
	h.say(thread, "reset")
	h.rec.wait(t, 1)
	tests := []struct {
		say  string
		want string
	}{
		{"theme dark", "Revision 2 is empty: there is nothing to draw yet."},
		{"export png", "Revision 2 is empty: there is nothing to export as png yet."},
	}
	for _, tt := range tests {
		h.say(thread, tt.say)
		h.rec.wait(t, 1)
		r := h.rec.last(thread)
		if !strings.Contains(r.Text, tt.want) || strings.Contains(r.Text, "could not render") || r.Error || r.Image != nil {
			t.Errorf("%s: got %q (error %v, image %v), want %q and no failure", tt.say, r.Text, r.Error, r.Image != nil, tt.want)
		}
	}
}
