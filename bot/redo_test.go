package bot

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/excalibot/excalibot/store"
)

// TestRunsCutShort: a drawing cut short is redone; a command (which may have been done) and a
// message that could not be read are not; a request given up says so plainly, without asking for
// it again.
func TestRunsCutShort(t *testing.T) {
	b := newHarness(t, Options{}, nil).bot
	for _, tt := range []struct {
		detail string
		want   bool
	}{
		{"draw a box | make it red", true},
		{commandDetail + "undo", false},
		{unreadableDetail, false},
	} {
		if got := b.Redoable(store.Run{Detail: tt.detail}); got != tt.want {
			t.Errorf("Redoable(%q) = %v, want %v", tt.detail, got, tt.want)
		}
	}
	r := b.GivenUp(store.Run{Detail: "draw a box"}, 2)
	if !r.Error || !strings.Contains(r.Text, "could not finish this request") || !strings.Contains(r.Text, "2 times") ||
		!strings.Contains(r.Text, "Nothing in the diagram changed") || strings.Contains(r.Text, "again") {
		t.Errorf("GivenUp = %+v; want a plain error saying the request was given up after 2 times", r)
	}
}

// TestRedoOfAnImportSavesItOnce: a request with a file whose run was cut short after its import
// was saved is redone without saving the import again: the history holds the import and the
// drawing, once each, and the reply names the import's revision.
func TestRedoOfAnImportSavesItOnce(t *testing.T) {
	h := newHarness(t, Options{UserRatePerMinute: noRateLimit, ChatRatePerMinute: noRateLimit}, nil)
	h.hold = true
	doc := []byte(`{"type":"excalidraw","version":2,"elements":[{"id":"x","type":"rectangle","x":0,"y":0,"width":100,"height":50}]}`)
	h.say(thread, "draw a box beside it", Attachment{Name: "mine.excalidraw", Size: int64(len(doc)),
		Fetch: func(ctx context.Context, max int64) ([]byte, error) { return doc, nil }})
	ctx := context.Background()
	waiting, err := h.store.Pending(ctx, thread, 50)
	if err != nil {
		t.Fatal(err)
	}
	turn := h.bot.Plan(thread, h.rec, waiting)
	if _, err := h.store.StartRun(ctx, store.StartRunRequest{Key: thread, Owner: "killed", Detail: turn.Detail, Inbox: turn.Inbox}); err != nil {
		t.Fatal(err)
	}
	// The process dies while the model draws, after the import was saved: the run's outcome is
	// never committed.
	h.drawer.mu.Lock()
	h.drawer.err = errors.New("the process died here")
	h.drawer.mu.Unlock()
	h.bot.Answer(ctx, turn, func(string) {})
	if got := h.rev(t, thread).Rev; got != 1 {
		t.Fatalf("after the cut run: revision %d, want 1 (the import)", got)
	}
	h.drawer.mu.Lock()
	h.drawer.err = nil
	h.drawer.mu.Unlock()
	cut, err := h.store.RecoverRuns(ctx, store.RecoverRequest{Recovery: store.Recovery{Redo: h.bot.Redoable, MaxInterruptions: 2}})
	if err != nil || len(cut) != 1 || cut[0].Fate != store.FateRedone {
		t.Fatalf("RecoverRuns: %+v, %v; want the run redone", cut, err)
	}

	h.answer(h.rec, thread)
	if r := h.rec.last(thread); r.Error || !strings.Contains(r.Text, "Imported mine.excalidraw as revision 1.") || r.Image == nil {
		t.Errorf("the redo's reply = %+v; want the drawing, naming the import's revision", r)
	}
	hist, err := h.store.History(ctx, thread, 0)
	if err != nil {
		t.Fatal(err)
	}
	var authors []store.Author
	for _, r := range hist {
		authors = append(authors, r.Author)
	}
	if len(hist) != 2 || hist[0].Author != store.AuthorAgent || hist[1].Author != store.AuthorImport {
		t.Errorf("history %v, want the import, then the drawing, once each", authors)
	}
}
