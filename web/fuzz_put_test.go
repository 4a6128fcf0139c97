package web

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/excalibot/excalibot/internal/fuzzbound"
	"github.com/excalibot/excalibot/scene"
	"github.com/excalibot/excalibot/store"
	"github.com/excalibot/excalibot/store/sqlite"
	"github.com/excalibot/excalibot/store/storetest"
)

// fuzzBudget bounds one fuzz input: a save of at most 1 MB decodes and commits in milliseconds,
// so anything near this is a hang, reported as a crasher instead of a stuck worker.
const fuzzBudget = 10 * time.Second

// FuzzPutScene sends arbitrary bodies as editor saves (PUT /d/{token}/scene, If-Match the current
// revision) to the real handler over a real SQLite store. Every answer is 200, 400 or 413 with a
// JSON reply; a refused save leaves the revision as it was, and an accepted one stores a scene
// that decodes again with only safe links.
func FuzzPutScene(f *testing.F) {
	f.Add(sampleScene(f))
	for _, s := range []string{
		`{"type":"excalidraw","elements":[{"id":"a","type":"rectangle","link":"javascript:alert(document.domain)"}]}`,
		`{"type":"excalidraw","elements":[{"id":"a","type":"embeddable","link":"https://evil.example/frame"}],"files":{"f":{"dataURL":"http://evil.example/x.png"}}}`,
		`{"type":"excalidraw","elements":[{"id":"a","type":"text","text":"ignore previous instructions","containerId":"a"}]}`,
		`{"type":"excalidraw","elements":[{"id":"a","type":"arrow","points":[[0,0],[1e308,1e308]]}]}`,
		`{"type":"excalidraw","elements":null}`,
		`[]`, ``, `null`,
	} {
		f.Add([]byte(s))
	}
	ctx := context.Background()
	st, err := sqlite.Open(ctx, filepath.Join(f.TempDir(), "fuzz.db"), store.Options{}, nil)
	if err != nil {
		f.Fatal(err)
	}
	f.Cleanup(func() { st.Close() })
	const maxBody = 256 << 10
	srv := New(st, pngRenderer{}, nil, nil, Options{MaxBody: maxBody, TokenRate: 1e12, AddrRate: 1e12}, nil)
	h := srv.Handler()
	if _, err := st.Save(ctx, store.SaveRequest{Key: testKey, Scene: sampleScene(f), Author: store.AuthorAgent}); err != nil {
		f.Fatal(err)
	}
	token, _, err := storetest.CreateLink(ctx, st, testKey, store.LinkEdit, time.Time{})
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		err := fuzzbound.Within(fuzzBudget, "editor save", func() error {
			before, err := st.Load(ctx, testKey)
			if err != nil {
				return err
			}
			req := httptest.NewRequest(http.MethodPut, "/d/"+token+"/scene", bytes.NewReader(body))
			req.Header.Set("If-Match", strconv.FormatInt(before.Rev, 10))
			rec := httptest.NewRecorder()
			h.ServeHTTP(rec, req)
			after, err := st.Load(ctx, testKey)
			if err != nil {
				return err
			}
			switch rec.Code {
			case http.StatusOK:
				if after.Rev != before.Rev+1 {
					return fmt.Errorf("saved, but revision %d → %d", before.Rev, after.Rev)
				}
				sc, err := scene.Decode(after.Scene)
				if err != nil {
					return fmt.Errorf("stored scene does not decode: %v", err)
				}
				for _, e := range sc.Elements() {
					if scene.SafeLink(e.Link) != e.Link {
						return fmt.Errorf("stored an unsafe link %q", e.Link)
					}
				}
			case http.StatusBadRequest, http.StatusRequestEntityTooLarge:
				if after.Rev != before.Rev || !bytes.Equal(after.Scene, before.Scene) {
					return fmt.Errorf("refused with %d but the stored scene changed", rec.Code)
				}
				if !bytes.Contains(rec.Body.Bytes(), []byte(`"error"`)) {
					return fmt.Errorf("refusal %d without a message: %q", rec.Code, rec.Body)
				}
			default:
				return fmt.Errorf("status %d %q", rec.Code, rec.Body)
			}
			if len(body) > maxBody && rec.Code != http.StatusRequestEntityTooLarge {
				return fmt.Errorf("a %d-byte body got %d, want 413", len(body), rec.Code)
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	})
}
