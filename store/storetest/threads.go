package storetest

import (
	"bytes"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/excalibot/excalibot/store"
)

func testCreateLoad(t *testing.T, f Factory) {
	e := newEnv(t, f, store.Options{})
	ctx, key := t.Context(), Key(1)
	_, err := e.s.Load(ctx, key)
	wantErr(t, "Load of a new thread", err, store.ErrNotFound)

	th := e.save(key, 0, SceneN(1))
	if th.Rev != 1 || th.Head != 1 {
		t.Fatalf("first Save: got rev %d head %d, want 1 1", th.Rev, th.Head)
	}
	got := e.load(key)
	if got.Key != key || got.Rev != 1 || got.Head != 1 {
		t.Fatalf("Load: got key %v rev %d head %d, want %v 1 1", got.Key, got.Rev, got.Head, key)
	}
	wantScene(t, "Load", got.Scene, SceneN(1))
	if !got.Created.Equal(e.clock.Now()) || !got.Updated.Equal(e.clock.Now()) {
		t.Fatalf("Load: got created %v updated %v, want both %v", got.Created, got.Updated, e.clock.Now())
	}
	_, err = e.s.Load(ctx, Key(2))
	wantErr(t, "Load of another thread", err, store.ErrNotFound)

	e.clock.Advance(time.Second)
	th = e.save(key, 1, SceneN(2))
	if th.Rev != 2 || th.Head != 2 {
		t.Fatalf("second Save: got rev %d head %d, want 2 2", th.Rev, th.Head)
	}
	got = e.load(key)
	wantScene(t, "Load after update", got.Scene, SceneN(2))
	if got.Updated.Equal(got.Created) {
		t.Fatalf("Load after update: updated %v not after created %v", got.Updated, got.Created)
	}
	// Keys whose parts contain "/" or "%" must not collide.
	odd := store.ThreadKey{Platform: "telegram", Workspace: "-100/1", Channel: "", Thread: "7%2F"}
	e.save(odd, 0, SceneN(9))
	wantScene(t, "Load of odd key", e.load(odd).Scene, SceneN(9))
}

func testExists(t *testing.T, f Factory) {
	e := newEnv(t, f, store.Options{})
	ctx := t.Context()
	exists := func(s store.Store, what string, key store.ThreadKey, want bool) {
		t.Helper()
		if got, err := s.Exists(ctx, key); err != nil || got != want {
			t.Fatalf("Exists %s: got %v, %v, want %v", what, got, err, want)
		}
	}
	exists(e.s, "of a new thread", Key(1), false)
	e.accept(e.s, Key(1), 1, "ev:1") // a thread is known from its first message on
	exists(e.s, "after its first message", Key(1), true)
	exists(e.another(), "on a second store", Key(1), true)
	e.save(Key(2), 0, SceneN(1))
	exists(e.s, "after a save", Key(2), true)
	exists(e.s, "of another thread", Key(3), false)
	_, err := e.s.Exists(ctx, store.ThreadKey{Thread: "1"})
	wantErr(t, "Exists without platform", err, store.ErrInvalid)

	// A pruned thread is no longer known; one whose message waits is kept.
	e.clock.Advance(48 * time.Hour)
	if _, err := e.s.Prune(ctx, e.clock.Now().Add(-time.Hour)); err != nil {
		t.Fatal(err)
	}
	exists(e.s, "after its thread was pruned", Key(2), false)
	exists(e.s, "of a thread with a waiting message, after Prune", Key(1), true)
}

func testSaveConflict(t *testing.T, f Factory) {
	e := newEnv(t, f, store.Options{})
	ctx, key := t.Context(), Key(1)
	e.save(key, 0, SceneN(1))

	tests := []struct {
		name string
		base int64
	}{
		{"CreateAgain", 0},
		{"Future", 7},
	}
	for _, tt := range tests {
		_, err := e.s.Save(ctx, store.SaveRequest{Key: key, Base: tt.base, Scene: SceneN(99), Author: store.AuthorEditor})
		wantErr(t, tt.name, err, store.ErrConflict)
		var ce *store.ConflictError
		if !errors.As(err, &ce) || ce.Base != tt.base || ce.Now != 1 {
			t.Fatalf("%s: got %#v, want a ConflictError with Base %d Now 1", tt.name, ce, tt.base)
		}
	}
	e.save(key, 1, SceneN(2))
	_, err := e.s.Save(ctx, store.SaveRequest{Key: key, Base: 1, Scene: SceneN(99), Author: store.AuthorEditor})
	wantErr(t, "stale Save", err, store.ErrConflict)
	got := e.load(key)
	if got.Rev != 2 || got.Head != 2 {
		t.Fatalf("after conflicts: got rev %d head %d, want 2 2", got.Rev, got.Head)
	}
	wantScene(t, "after conflicts", got.Scene, SceneN(2))

	_, err = e.s.Save(ctx, store.SaveRequest{Key: Key(5), Base: 3, Scene: SceneN(1), Author: store.AuthorEditor})
	wantErr(t, "Save on a missing thread with a base", err, store.ErrNotFound)
}

func testInvalidInput(t *testing.T, f Factory) {
	e := newEnv(t, f, store.Options{})
	ctx := t.Context()
	bad := store.ThreadKey{Workspace: "T1", Thread: "1"} // no platform
	tests := []struct {
		name string
		err  error
	}{
		{"SaveBadKey", func() error {
			_, err := e.s.Save(ctx, store.SaveRequest{Key: bad, Scene: SceneN(1), Author: store.AuthorAgent})
			return err
		}()},
		{"SaveNoScene", func() error {
			_, err := e.s.Save(ctx, store.SaveRequest{Key: Key(1), Author: store.AuthorAgent})
			return err
		}()},
		{"SaveNoAuthor", func() error {
			_, err := e.s.Save(ctx, store.SaveRequest{Key: Key(1), Scene: SceneN(1)})
			return err
		}()},
		{"LoadBadKey", func() error { _, err := e.s.Load(ctx, bad); return err }()},
		{"LeaseNoOwner", func() error { _, err := e.s.AcquireLease(ctx, Key(1), "", 1e9); return err }()},
		{"EventEmpty", func() error { _, err := e.s.ClaimEvents(ctx, ""); return err }()},
		{"RunBadState", func() error { _, err := e.s.SetRunState(ctx, 1, "sleeping", ""); return err }()},
	}
	for _, tt := range tests {
		wantErr(t, tt.name, tt.err, store.ErrInvalid)
	}
	_, err := e.s.Load(ctx, Key(1))
	wantErr(t, "Load after invalid saves", err, store.ErrNotFound)
}

// testUndoRedo walks the cursor down and up a long linear history.
func testUndoRedo(t *testing.T, f Factory) {
	e := newEnv(t, f, store.Options{})
	ctx, key := t.Context(), Key(1)
	const n = 30
	for i := 1; i <= n; i++ {
		e.save(key, int64(i-1), SceneN(i))
	}
	for i := n; i > 1; i-- {
		th, err := e.s.Undo(ctx, key, int64(i))
		if err != nil {
			t.Fatalf("Undo from %d: %v", i, err)
		}
		if th.Rev != int64(i-1) || th.Head != n {
			t.Fatalf("Undo from %d: got rev %d head %d, want %d %d", i, th.Rev, th.Head, i-1, n)
		}
		wantScene(t, "Undo", th.Scene, SceneN(i-1))
		wantScene(t, "Load after Undo", e.load(key).Scene, SceneN(i-1))
	}
	_, err := e.s.Undo(ctx, key, 1)
	wantErr(t, "Undo at the first revision", err, store.ErrNothingToUndo)
	_, err = e.s.Undo(ctx, key, 5)
	wantErr(t, "Undo from a stale revision", err, store.ErrConflict)
	for i := 1; i < n; i++ {
		th, err := e.s.Redo(ctx, key, int64(i))
		if err != nil {
			t.Fatalf("Redo from %d: %v", i, err)
		}
		if th.Rev != int64(i+1) {
			t.Fatalf("Redo from %d: got rev %d, want %d", i, th.Rev, i+1)
		}
		wantScene(t, "Redo", th.Scene, SceneN(i+1))
	}
	_, err = e.s.Redo(ctx, key, n)
	wantErr(t, "Redo at the newest revision", err, store.ErrNothingToRedo)
	_, err = e.s.Redo(ctx, key, 3)
	wantErr(t, "Redo from a stale revision", err, store.ErrConflict)
	_, err = e.s.Undo(ctx, Key(2), 1)
	wantErr(t, "Undo on a missing thread", err, store.ErrNotFound)
}

// testUndoRedoBranch: a save after undo starts a new branch; redo follows the newest branch.
func testUndoRedoBranch(t *testing.T, f Factory) {
	e := newEnv(t, f, store.Options{})
	ctx, key := t.Context(), Key(1)
	for i := 1; i <= 5; i++ {
		e.save(key, int64(i-1), SceneN(i))
	}
	for from := int64(5); from > 3; from-- {
		if _, err := e.s.Undo(ctx, key, from); err != nil {
			t.Fatalf("Undo from %d: %v", from, err)
		}
	}
	_, err := e.s.Save(ctx, store.SaveRequest{Key: key, Base: 5, Scene: SceneN(60), Author: store.AuthorEditor})
	wantErr(t, "Save based on an undone revision", err, store.ErrConflict)
	th := e.save(key, 3, SceneN(6))
	if th.Rev != 6 || th.Head != 6 {
		t.Fatalf("Save after undo: got rev %d head %d, want 6 6 (numbers are never reused)", th.Rev, th.Head)
	}
	_, err = e.s.Redo(ctx, key, 6)
	wantErr(t, "Redo after a new save", err, store.ErrNothingToRedo)
	th, err = e.s.Undo(ctx, key, 6)
	if err != nil || th.Rev != 3 {
		t.Fatalf("Undo of the branch: got %v, %v, want revision 3", th, err)
	}
	th, err = e.s.Redo(ctx, key, 3)
	if err != nil || th.Rev != 6 {
		t.Fatalf("Redo onto the newest branch: got %v, %v, want revision 6", th, err)
	}
	wantScene(t, "Redo onto the branch", th.Scene, SceneN(6))
}

func testHistory(t *testing.T, f Factory) {
	e := newEnv(t, f, store.Options{})
	ctx, key := t.Context(), Key(1)
	_, err := e.s.History(ctx, key, 0)
	wantErr(t, "History of a missing thread", err, store.ErrNotFound)
	authors := []store.Author{store.AuthorImport, store.AuthorAgent, store.AuthorEditor, store.AuthorRevert, store.AuthorReset, store.AuthorRestore}
	for i, a := range authors {
		_, err := e.s.Save(ctx, store.SaveRequest{Key: key, Base: int64(i), Scene: SceneN(i + 1), Author: a, Reason: "why " + string(a)})
		if err != nil {
			t.Fatalf("Save %d: %v", i+1, err)
		}
		e.clock.Advance(time.Second)
	}
	n := int64(len(authors))
	if _, err := e.s.Undo(ctx, key, n); err != nil {
		t.Fatal(err)
	}
	h, err := e.s.History(ctx, key, 0)
	if err != nil {
		t.Fatal(err)
	}
	if len(h) != len(authors) {
		t.Fatalf("History: got %d revisions, want %d", len(h), len(authors))
	}
	for i, r := range h {
		rev := n - int64(i)
		a := authors[rev-1]
		if r.Rev != rev || r.Author != a || r.Reason != "why "+string(a) || r.Parent != rev-1 || r.Size != len(SceneN(int(rev))) || r.Scene != nil {
			t.Errorf("History[%d]: got %+v, want rev %d author %s parent %d size %d, no scene", i, r, rev, a, rev-1, len(SceneN(int(rev))))
		}
		if r.Current != (rev == n-1) {
			t.Errorf("History[%d]: got current %v, want %v", i, r.Current, rev == n-1)
		}
	}
	if !h[0].Created.After(h[1].Created) {
		t.Errorf("History: created %v not after %v", h[0].Created, h[1].Created)
	}
	h, err = e.s.History(ctx, key, 2)
	if err != nil || len(h) != 2 || h[0].Rev != n {
		t.Fatalf("History(limit 2): got %d revisions, %v; want revisions %d and %d", len(h), err, n, n-1)
	}
	r, err := e.s.Revision(ctx, key, 2)
	if err != nil {
		t.Fatal(err)
	}
	wantScene(t, "Revision 2", r.Scene, SceneN(2))
	if r.Author != store.AuthorAgent || r.Current {
		t.Fatalf("Revision 2: got author %s current %v, want agent false", r.Author, r.Current)
	}
	_, err = e.s.Revision(ctx, key, 9)
	wantErr(t, "Revision 9", err, store.ErrNotFound)
}

// testRevision: one kept revision is read with its scene and changes nothing; a copy of it saved
// again (what `revert` does) is a new revision on the current one, undone back to where it was made.
func testRevision(t *testing.T, f Factory) {
	e := newEnv(t, f, store.Options{})
	ctx, key := t.Context(), Key(1)
	_, err := e.s.Revision(ctx, key, 1)
	wantErr(t, "Revision of a missing thread", err, store.ErrNotFound)
	for i := 1; i <= 4; i++ {
		e.save(key, int64(i-1), SceneN(i))
	}
	for _, rev := range []int64{0, -1, 5} {
		_, err := e.s.Revision(ctx, key, rev)
		wantErr(t, fmt.Sprintf("Revision %d", rev), err, store.ErrNotFound)
	}
	_, err = e.s.Revision(ctx, Key(2), 1)
	wantErr(t, "Revision of another thread", err, store.ErrNotFound)
	cur, err := e.s.Revision(ctx, key, 4)
	if err != nil || !cur.Current || cur.Parent != 3 {
		t.Fatalf("Revision 4: got %+v, %v; want the current revision, parent 3", cur, err)
	}
	before := e.load(key)
	r, err := e.s.Revision(ctx, key, 2)
	if err != nil {
		t.Fatal(err)
	}
	wantScene(t, "Revision 2", r.Scene, SceneN(2))
	if r.Current || r.Size != len(SceneN(2)) || r.Parent != 1 {
		t.Fatalf("Revision 2: got %+v; want not current, parent 1, size %d", r, len(SceneN(2)))
	}
	if after := e.load(key); after.Rev != before.Rev || after.Head != before.Head || !after.Updated.Equal(before.Updated) {
		t.Fatalf("reading a revision changed the thread: rev %d head %d → rev %d head %d", before.Rev, before.Head, after.Rev, after.Head)
	}

	th, err := e.s.Save(ctx, store.SaveRequest{Key: key, Base: 4, Scene: r.Scene, Author: store.AuthorRevert, Reason: "reverted to revision 2"})
	if err != nil {
		t.Fatal(err)
	}
	if th.Rev != 5 || th.Head != 5 {
		t.Fatalf("Save of revision 2's scene: got rev %d head %d, want 5 5", th.Rev, th.Head)
	}
	wantScene(t, "the copy", e.load(key).Scene, SceneN(2))
	cp, err := e.s.Revision(ctx, key, 5)
	if err != nil || cp.Author != store.AuthorRevert || cp.Reason != "reverted to revision 2" || cp.Parent != 4 || !cp.Current {
		t.Fatalf("Revision 5: got %+v, %v; want the current revert of revision 2, parent 4", cp, err)
	}
	if th, err := e.s.Undo(ctx, key, 5); err != nil || th.Rev != 4 {
		t.Fatalf("Undo of the copy: got %v, %v; want revision 4", th, err)
	}
}

func testHistoryLimit(t *testing.T, f Factory) {
	tests := []struct {
		name  string
		limit int // 0: the default
		want  int
	}{
		{"Default", 0, store.DefaultHistoryLimit},
		{"Five", 5, 5},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := newEnv(t, f, store.Options{HistoryLimit: tt.limit})
			ctx, key := t.Context(), Key(1)
			n := tt.want + 10
			for i := 1; i <= n; i++ {
				e.save(key, int64(i-1), SceneN(i))
			}
			h, err := e.s.History(ctx, key, 1000)
			if err != nil {
				t.Fatal(err)
			}
			if len(h) != tt.want || h[0].Rev != int64(n) || h[len(h)-1].Rev != int64(n-tt.want+1) {
				t.Fatalf("History: got %d revisions (%d..%d), want %d (%d..%d)", len(h), h[len(h)-1].Rev, h[0].Rev, tt.want, n-tt.want+1, n)
			}
			oldest := int64(n - tt.want + 1)
			_, err = e.s.Revision(ctx, key, oldest-1)
			wantErr(t, "Revision beyond the limit", err, store.ErrNotFound)
			from := int64(n)
			for ; from > oldest; from-- {
				if _, err := e.s.Undo(ctx, key, from); err != nil {
					t.Fatalf("Undo from %d: %v", from, err)
				}
			}
			_, err = e.s.Undo(ctx, key, oldest)
			wantErr(t, "Undo past the oldest kept revision", err, store.ErrNothingToUndo)
			if err != nil && !strings.Contains(err.Error(), "kept") {
				t.Fatalf("Undo past the limit: error %q does not say revisions were dropped", err)
			}
		})
	}
}

func testMemorySettings(t *testing.T, f Factory) {
	e := newEnv(t, f, store.Options{})
	ctx, key := t.Context(), Key(1)
	if err := e.s.SetMemory(ctx, key, []byte("user likes blue")); err != nil {
		t.Fatal(err)
	}
	th := e.load(key)
	if th.Rev != 0 || th.Scene != nil || string(th.Memory) != "user likes blue" {
		t.Fatalf("Load after SetMemory: got rev %d scene %q memory %q", th.Rev, th.Scene, th.Memory)
	}
	want := store.Settings{Theme: "dark", Model: "qwen3:8b"}
	if err := e.s.SetSettings(ctx, key, want); err != nil {
		t.Fatal(err)
	}
	e.save(key, 0, SceneN(1)) // nil Memory keeps it
	th = e.load(key)
	if th.Settings != want || string(th.Memory) != "user likes blue" {
		t.Fatalf("Load: got settings %+v memory %q, want %+v and the old memory", th.Settings, th.Memory, want)
	}
	_, err := e.s.Save(ctx, store.SaveRequest{Key: key, Base: 1, Scene: SceneN(2), Author: store.AuthorAgent, Memory: []byte("v2")})
	if err != nil {
		t.Fatal(err)
	}
	if th = e.load(key); string(th.Memory) != "v2" || th.Settings != want {
		t.Fatalf("Load after Save with memory: got memory %q settings %+v", th.Memory, th.Settings)
	}
	if err := e.s.SetSettings(ctx, Key(2), store.Settings{Theme: "light"}); err != nil {
		t.Fatal(err)
	}
	if th = e.load(Key(2)); th.Settings.Theme != "light" || th.Rev != 0 {
		t.Fatalf("SetSettings on a new thread: got %+v rev %d", th.Settings, th.Rev)
	}
}

func testSizeLimit(t *testing.T, f Factory) {
	tests := []struct {
		name  string
		limit int
		size  int
		ok    bool
	}{
		{"AtSmallLimit", 1000, 1000, true},
		{"AboveSmallLimit", 1000, 1001, false},
		{"DefaultLimit", 0, store.DefaultMaxSceneBytes, true},
		{"AboveDefaultLimit", 0, store.DefaultMaxSceneBytes + 1, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := newEnv(t, f, store.Options{MaxSceneBytes: tt.limit})
			ctx, key := t.Context(), Key(1)
			scene := bytes.Repeat([]byte("x"), tt.size)
			_, err := e.s.Save(ctx, store.SaveRequest{Key: key, Scene: scene, Author: store.AuthorImport})
			if tt.ok {
				if err != nil {
					t.Fatalf("Save of %d bytes: %v", tt.size, err)
				}
				if got := e.load(key); len(got.Scene) != tt.size {
					t.Fatalf("Load: got %d bytes, want %d", len(got.Scene), tt.size)
				}
				return
			}
			wantErr(t, "Save above the limit", err, store.ErrTooLarge)
			var tl *store.TooLargeError
			if !errors.As(err, &tl) || tl.Size != tt.size || !strings.Contains(err.Error(), "above the limit") {
				t.Fatalf("Save above the limit: got %v, want a TooLargeError saying so", err)
			}
			_, err = e.s.Load(ctx, key)
			wantErr(t, "Load after a refused save", err, store.ErrNotFound)
			wantErr(t, "SetMemory above the limit", e.s.SetMemory(ctx, key, scene), store.ErrTooLarge)
		})
	}
}
