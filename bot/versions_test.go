package bot

import (
	"bytes"
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/excalibot/excalibot/store"
	"github.com/excalibot/excalibot/store/sqlite"
)

// saveScene stores a test scene as the thread's next revision, as another author would.
func (h *harness) saveScene(t *testing.T, key ThreadKey, author store.Author, reason string, groups ...[]el) *store.Thread {
	t.Helper()
	doc, err := testScene(t, groups...).Encode()
	if err != nil {
		t.Fatal(err)
	}
	base := int64(0)
	if th, err := h.store.Load(context.Background(), key); err == nil {
		base = th.Rev
	}
	th, err := h.store.Save(context.Background(), store.SaveRequest{Key: key, Base: base, Scene: doc, Author: author, Reason: reason})
	if err != nil {
		t.Fatal(err)
	}
	return th
}

// command says text and returns the reply.
func (h *harness) command(t *testing.T, key ThreadKey, text string) Reply {
	t.Helper()
	h.say(key, text)
	h.rec.wait(t, 1)
	return h.rec.last(key)
}

func (h *harness) history(t *testing.T, key ThreadKey) []store.Revision {
	t.Helper()
	revs, err := h.store.History(context.Background(), key, 0)
	if err != nil {
		t.Fatal(err)
	}
	return revs
}

func TestHistoryAuthorsAndChanges(t *testing.T) {
	h := newHarness(t, Options{}, nil)
	h.saveScene(t, thread, store.AuthorImport, "imported deploy.excalidraw", box("a", 0, "API"), box("b", 200, "DB"), arrow("ab", "a", "b"))
	h.say(thread, "add a cache") // the fake drawer adds one unlabelled box
	h.rec.wait(t, 1)
	h.saveScene(t, thread, store.AuthorEditor, "edited in the browser", box("a", 0, "API"), box("b", 200, "Postgres"), arrow("ab", "a", "b"), box("r4", 600, ""))
	h.say(thread, "flowchart LR\n  A --> B") // no Mermaid drawer here: the fake drawer draws it
	h.rec.wait(t, 1)
	if r := h.command(t, thread, "revert 1"); r.Error || !strings.Contains(r.Text, "Reverted to revision 1: the diagram is now revision 5 (removed 2 boxes; renamed ‘Postgres’ to ‘DB’). Say undo to go back to revision 4.") {
		t.Fatalf("revert reply = %q", r.Text)
	}
	h.command(t, thread, "reset")

	got := h.command(t, thread, "history").Text
	want := []string{
		"Revisions, newest first:",
		"6. reset: removed 2 boxes, 1 arrow (just now) ← current",
		"5. revert: to revision 1 — removed 2 boxes; renamed ‘Postgres’ to ‘DB’ (just now)",
		"4. Mermaid: added 1 box (just now)",
		"3. editor: added 1 box; removed 1 box; renamed ‘DB’ to ‘Postgres’ (just now)",
		"2. model: “add a cache” — added 1 box (just now)",
		"1. import: deploy.excalidraw — added 2 boxes, 1 arrow (just now)",
		"Say show N to see revision N",
	}
	lines := strings.Split(got, "\n")
	for i, w := range want {
		if i >= len(lines) || !strings.HasPrefix(lines[i], w) {
			t.Errorf("history line %d = %q, want %q\nhistory:\n%s", i, line(lines, i), w, got)
		}
	}
}

func line(lines []string, i int) string {
	if i < len(lines) {
		return lines[i]
	}
	return ""
}

func TestHistoryListsTheNewest(t *testing.T) {
	h := newHarness(t, Options{HistoryListed: 2}, nil)
	for range 3 {
		h.say(thread, "draw")
		h.rec.wait(t, 1)
	}
	got := h.command(t, thread, "history").Text
	if !strings.HasPrefix(got, "Revisions, newest first (the 2 newest of the 3 I keep):\n3. ") || strings.Contains(got, "\n1. ") {
		t.Errorf("history = %q; want revisions 3 and 2, saying 3 are kept", got)
	}
}

func TestShowChangesNothing(t *testing.T) {
	h := newHarness(t, Options{}, nil)
	for range 3 {
		h.say(thread, "draw")
		h.rec.wait(t, 1)
	}
	before := h.rev(t, thread)
	revsBefore := h.history(t, thread)
	old, err := h.store.Revision(context.Background(), thread, 2)
	if err != nil {
		t.Fatal(err)
	}

	r := h.command(t, thread, "show 2")
	if r.Error || r.Image == nil || !strings.Contains(string(r.Image.Content), "2 elements") {
		t.Fatalf("show 2 = %+v; want the picture of revision 2 (2 elements)", r)
	}
	if len(r.Files) != 1 || !bytes.Equal(r.Files[0].Content, old.Scene) {
		t.Errorf("show 2 files = %+v; want revision 2's .excalidraw", r.Files)
	}
	if !strings.Contains(r.Text, "Revision 2 (model: “draw” — added 1 box), as it was; nothing changed. The current diagram is revision 3; say revert 2") {
		t.Errorf("show 2 text = %q", r.Text)
	}
	if r.EditURL != "" || r.ViewURL != "" {
		t.Errorf("show 2 carries the current diagram's links %q %q", r.EditURL, r.ViewURL)
	}
	after := h.rev(t, thread)
	if after.Rev != before.Rev || after.Head != before.Head || !bytes.Equal(after.Scene, before.Scene) {
		t.Errorf("show changed the thread: rev %d head %d → rev %d head %d", before.Rev, before.Head, after.Rev, after.Head)
	}
	if n := len(h.history(t, thread)); n != len(revsBefore) {
		t.Errorf("show saved something: %d revisions → %d", len(revsBefore), n)
	}

	if r := h.command(t, thread, "/show"); r.Image == nil || !strings.Contains(string(r.Image.Content), "3 elements") || !strings.HasPrefix(r.Text, "Revision 3, the current diagram") {
		t.Errorf("show alone = %+v; want the current picture", r)
	}
	if h.rev(t, thread).Head != before.Head {
		t.Errorf("show alone saved a revision")
	}
}

func TestShowRevertDescribeRefusals(t *testing.T) {
	st, err := sqlite.Open(context.Background(), filepath.Join(t.TempDir(), "bot.db"), store.Options{HistoryLimit: 3}, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	h := &harness{t: t, store: st, rec: newRecorder(), drawer: &fakeDrawer{}}
	h.bot = New(st, h.drawer, fakeRenderer{}, nil, Options{UserRatePerMinute: noRateLimit, ChatRatePerMinute: noRateLimit}, nil)

	for _, cmd := range []string{"show 1", "revert 1", "describe"} {
		if r := h.command(t, thread, cmd); !strings.Contains(r.Text, "There is no diagram in this thread yet") {
			t.Errorf("%s on an empty thread = %q", cmd, r.Text)
		}
	}
	for range 5 { // revisions 3, 4, 5 are kept
		h.say(thread, "draw")
		h.rec.wait(t, 1)
	}
	before := h.rev(t, thread)
	tests := []struct {
		say, want string
		err       bool
	}{
		{"show 9", "There is no revision 9: the newest is revision 5.", true},
		{"revert 9", "There is no revision 9: the newest is revision 5.", true},
		{"describe 9", "There is no revision 9", true},
		{"show 1", "Revision 1 is no longer kept: I keep the last 3 revisions, and the oldest now is revision 3.", true},
		{"revert 2", "Revision 2 is no longer kept", true},
		{"show 0", "Revisions are numbered from 1, so there is no revision 0", true},
		{"revert -2", "there is no revision -2", true},
		{"show 99999999999999999999", "99999999999999999999 is not a revision number", true},
		{"revert", "Say which revision to go back to, e.g. `revert 3`", true},
		{"revert it", "I revert to a revision by its number (`revert 3`), not \"it\"", true},
		{"revert 5", "Revision 5 is the current diagram already; nothing changed.", false},
	}
	for _, tt := range tests {
		r := h.command(t, thread, tt.say)
		if !strings.Contains(r.Text, tt.want) || r.Error != tt.err {
			t.Errorf("%s = %q (error %v), want %q (error %v)", tt.say, r.Text, r.Error, tt.want, tt.err)
		}
		if r.Image != nil {
			t.Errorf("%s came with a picture", tt.say)
		}
	}
	after := h.rev(t, thread)
	if after.Rev != before.Rev || after.Head != before.Head {
		t.Errorf("refused commands changed the thread: rev %d head %d → rev %d head %d", before.Rev, before.Head, after.Rev, after.Head)
	}
}

func TestRevertMakesANewRevision(t *testing.T) {
	h := newHarness(t, Options{}, nil)
	for range 3 {
		h.say(thread, "draw")
		h.rec.wait(t, 1)
	}
	h.command(t, thread, "undo") // at 2; reverting must not care where the cursor is
	old, err := h.store.Revision(context.Background(), thread, 1)
	if err != nil {
		t.Fatal(err)
	}
	r := h.command(t, thread, "revert to revision 1")
	if r.Error || r.Image == nil || !strings.Contains(string(r.Image.Content), "1 elements") {
		t.Fatalf("revert reply = %+v; want revision 1's picture", r)
	}
	if want := "Reverted to revision 1: the diagram is now revision 4 (removed 1 box). Say undo to go back to revision 2."; r.Text != want {
		t.Errorf("revert text = %q, want %q", r.Text, want)
	}
	th := h.rev(t, thread)
	if th.Rev != 4 || th.Head != 4 || !bytes.Equal(th.Scene, old.Scene) {
		t.Fatalf("after revert: rev %d head %d, scene equal to revision 1: %v; want revision 4 with revision 1's scene", th.Rev, th.Head, bytes.Equal(th.Scene, old.Scene))
	}
	rev, err := h.store.Revision(context.Background(), thread, 4)
	if err != nil || rev.Author != store.AuthorRevert || rev.Reason != "reverted to revision 1" || rev.Parent != 2 {
		t.Errorf("revision 4 = %+v, %v; want author revert, reason \"reverted to revision 1\", parent 2", rev, err)
	}
	if len(th.Memory) == 0 {
		t.Errorf("revert dropped the agent's memory")
	}
	if r := h.command(t, thread, "revert 1"); !strings.Contains(r.Text, "Revision 1 is the same as the current diagram (revision 4); nothing changed.") {
		t.Errorf("revert to the same scene = %q", r.Text)
	}
	if h.rev(t, thread).Head != 4 {
		t.Errorf("a revert to the same scene saved a revision")
	}
	h.command(t, thread, "undo")
	if got := h.rev(t, thread).Rev; got != 2 {
		t.Errorf("undo after revert went to revision %d, want 2", got)
	}
}

func TestDescribeNamesNodes(t *testing.T) {
	h := newHarness(t, Options{}, nil)
	h.saveScene(t, thread, store.AuthorImport, "imported", box("a", 0, "API"), box("b", 200, "Postgres"), arrow("ab", "a", "b"))
	h.saveScene(t, thread, store.AuthorEditor, "", box("a", 0, "API"))
	r := h.command(t, thread, "describe")
	for _, want := range []string{"Diagram with 1 box", "- API"} {
		if !strings.Contains(r.Text, want) {
			t.Errorf("describe = %q; want %q in it", r.Text, want)
		}
	}
	r = h.command(t, thread, "describe 1")
	for _, want := range []string{"Revision 1 (the current diagram is revision 2):", "Boxes:\n- API\n- Postgres", "Connections:\n- API → Postgres"} {
		if !strings.Contains(r.Text, want) {
			t.Errorf("describe 1 = %q; want %q in it", r.Text, want)
		}
	}
	h.command(t, thread, "reset")
	if r := h.command(t, thread, "describe"); !strings.Contains(r.Text, "Revision 3 is empty") {
		t.Errorf("describe after reset = %q", r.Text)
	}
	if h.rev(t, thread).Head != 3 {
		t.Errorf("describe saved a revision")
	}
}

func TestExportNamedAfterTheDiagram(t *testing.T) {
	h := newHarness(t, Options{}, nil)
	title := []el{{"id": "title", "type": "text", "x": 0, "y": -100, "width": 300, "height": 45, "text": "Deploy pipeline", "originalText": "Deploy pipeline", "fontSize": 36}}
	h.saveScene(t, thread, store.AuthorImport, "imported", title, box("a", 0, "Build"), box("b", 200, "Ship"), arrow("ab", "a", "b"))
	for _, format := range []string{"png", "svg", "excalidraw"} {
		r := h.command(t, thread, "export "+format)
		if len(r.Files) != 1 || r.Files[0].Name != "deploy-pipeline-r1."+format {
			t.Errorf("export %s files = %+v; want deploy-pipeline-r1.%s", format, r.Files, format)
		}
	}
}

func TestAgo(t *testing.T) {
	tests := []struct {
		d    time.Duration
		want string
	}{
		{10 * time.Second, "just now"},
		{time.Minute, "1 minute ago"},
		{2 * time.Minute, "2 minutes ago"},
		{time.Hour, "1 hour ago"},
		{47 * time.Hour, "47 hours ago"},
		{48 * time.Hour, "2 days ago"},
	}
	for _, tt := range tests {
		if got := ago(tt.d); got != tt.want {
			t.Errorf("ago(%v) = %q, want %q", tt.d, got, tt.want)
		}
	}
}

func TestRevisionLine(t *testing.T) {
	tests := []struct {
		r      store.Revision
		change string
		known  bool
		want   string
	}{
		{store.Revision{Author: store.AuthorAgent, Reason: "add a\ncache"}, "added 1 box", true, "model: “add a cache” — added 1 box"},
		{store.Revision{Author: store.AuthorAgent, Reason: "make it nicer"}, "", true, "model: “make it nicer” — no visible change"},
		{store.Revision{Author: store.AuthorAgent, Reason: "```mermaid\nflowchart LR\nA-->B\n```"}, "added 2 boxes, 1 arrow", true, "Mermaid: added 2 boxes, 1 arrow"},
		{store.Revision{Author: store.AuthorEditor, Reason: "edited in the browser"}, "moved 1 box", true, "editor: moved 1 box"},
		{store.Revision{Author: store.AuthorImport, Reason: "imported a.excalidraw"}, "", false, "import: a.excalidraw"},
		{store.Revision{Author: store.AuthorRevert, Reason: "reverted to revision 3"}, "removed 1 arrow", true, "revert: to revision 3 — removed 1 arrow"},
		{store.Revision{Author: store.AuthorRestore, Reason: "reset"}, "", false, "reset"},
		{store.Revision{Author: store.AuthorReset, Reason: "reset"}, "removed 1 box", true, "reset: removed 1 box"},
		{store.Revision{Author: "robot", Reason: "why"}, "", false, "robot: why"},
	}
	for _, tt := range tests {
		if got := revisionLine(tt.r, tt.change, tt.known); got != tt.want {
			t.Errorf("revisionLine(%s %q) = %q, want %q", tt.r.Author, tt.r.Reason, got, tt.want)
		}
	}
}
