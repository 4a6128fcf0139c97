package links

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/excalibot/excalibot/store"
	"github.com/excalibot/excalibot/store/sqlite"
)

func TestEditorLinks(t *testing.T) {
	ctx := context.Background()
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	clock := func() time.Time { return now }
	st, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "links.db"), store.Options{Now: clock}, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	key := store.ThreadKey{Platform: "test", Channel: "c", Thread: "t"}
	if _, err := st.Save(ctx, store.SaveRequest{Key: key, Scene: []byte(`{"type":"excalidraw","version":2,"elements":[]}`), Author: store.AuthorAgent}); err != nil {
		t.Fatal(err)
	}
	e := NewEditor(st, "http://127.0.0.1:8080/", 2*time.Hour, clock)
	th := &store.Thread{Key: key}
	edit, view, err := e.ThreadLinks(ctx, th)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(edit, "http://127.0.0.1:8080/d/") || !strings.HasPrefix(view, "http://127.0.0.1:8080/d/") || edit == view {
		t.Errorf("links %q %q: want two distinct links under the base", edit, view)
	}
	for _, l := range []string{edit, view} {
		if _, err := st.ResolveLink(ctx, l[strings.LastIndex(l, "/")+1:]); err != nil {
			t.Errorf("link %s does not resolve: %v", l, err)
		}
	}
	if again, _, _ := e.ThreadLinks(ctx, th); again != edit {
		t.Errorf("second reply got %q, want the same link %q", again, edit)
	}
	// Within an hour of expiring, a reply gets fresh links rather than ones about to die.
	now = now.Add(90 * time.Minute)
	if later, _, _ := e.ThreadLinks(ctx, th); later == edit {
		t.Errorf("a link 30 minutes from expiry was handed out again")
	}
}
