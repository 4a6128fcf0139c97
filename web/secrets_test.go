package web

import (
	"bytes"
	"context"
	"encoding/base64"
	"errors"
	"io"
	"log/slog"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/excalibot/excalibot/links"
	"github.com/excalibot/excalibot/store"
	"github.com/excalibot/excalibot/store/sqlite"
	"github.com/excalibot/excalibot/store/storetest"
)

// TestEditorTokensNotLogged drives every editor route, the failing ones too (bad body, stale
// revision, render failure, dead token, a store that is gone), with a debug logger, and checks
// the log never holds a token. There is no access log: the routes log the link id (a prefix of
// the token's hash) instead.
func TestEditorTokensNotLogged(t *testing.T) {
	ctx := context.Background()
	var logs bytes.Buffer
	log := slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	st, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "web.db"), store.Options{}, log)
	if err != nil {
		t.Fatal(err)
	}
	srv := New(st, pngRenderer{err: errors.New("chrome crashed")}, nil, nil, Options{}, log)
	h := srv.Handler()
	if _, err := st.Save(ctx, store.SaveRequest{Key: testKey, Scene: sampleScene(t), Author: store.AuthorAgent}); err != nil {
		t.Fatal(err)
	}
	edit, view, err := links.NewEditor(st, "", 0, nil).ThreadLinks(ctx, &store.Thread{Key: testKey})
	if err != nil {
		t.Fatal(err)
	}
	tokens := []string{edit[strings.LastIndex(edit, "/")+1:], view[strings.LastIndex(view, "/")+1:]}
	et := tokens[0]
	dead := "AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA"
	tokens = append(tokens, dead)
	do := func(method, path, ifMatch string, body []byte) int {
		req := httptest.NewRequest(method, path, bytes.NewReader(body))
		if ifMatch != "" {
			req.Header.Set("If-Match", ifMatch)
		}
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		return rec.Code
	}
	steps := []struct {
		method, path, ifMatch string
		body                  []byte
		want                  int
	}{
		{"GET", "/d/" + et, "", nil, 200},
		{"GET", "/d/" + et + "/scene", "", nil, 200},
		{"PUT", "/d/" + et + "/scene", "1", sampleScene(t), 200},
		{"PUT", "/d/" + et + "/scene", "1", sampleScene(t), 409},
		{"PUT", "/d/" + et + "/scene", "2", []byte(`{"type":"nope"}`), 400},
		{"PUT", "/d/" + tokens[1] + "/scene", "2", sampleScene(t), 403},
		{"GET", "/d/" + et + ".png", "", nil, 503},
		{"GET", "/d/" + dead, "", nil, 404},
		{"PUT", "/d/" + dead + "/scene", "2", sampleScene(t), 404},
	}
	for _, s := range steps {
		if got := do(s.method, s.path, s.ifMatch, s.body); got != s.want {
			t.Errorf("%s %s: %d, want %d", s.method, s.path, got, s.want)
		}
	}
	st.Close() // every route now fails inside the store and logs why
	for _, p := range []string{"/d/" + et, "/d/" + et + "/scene", "/d/" + et + ".excalidraw"} {
		if got := do("GET", p, "", nil); got != 500 {
			t.Errorf("GET %s with the store closed: %d, want 500", p, got)
		}
	}
	if !strings.Contains(logs.String(), "level=ERROR") {
		t.Fatalf("the failing paths logged nothing; the test proves nothing:\n%s", logs.String())
	}
	for _, tok := range tokens {
		if strings.Contains(logs.String(), tok) {
			t.Errorf("log holds token %s:\n%s", tok, logs.String())
		}
	}
}

// TestEditorTokensUnguessable: tokens carry 256 random bits (base64url of 32 bytes from
// crypto/rand, the store's CreateLink), never repeat, and only their hash is stored: the
// database file does not contain them.
func TestEditorTokensUnguessable(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "web.db")
	st, err := sqlite.Open(ctx, path, store.Options{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := st.Save(ctx, store.SaveRequest{Key: testKey, Scene: sampleScene(t), Author: store.AuthorAgent}); err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	var some []string
	for i := range 500 {
		tok, _, err := storetest.CreateLink(ctx, st, testKey, store.LinkEdit, time.Time{})
		if err != nil {
			t.Fatal(err)
		}
		raw, err := base64.RawURLEncoding.DecodeString(tok)
		if err != nil || len(raw) < 16 {
			t.Fatalf("token %q: %d bytes (%v), want at least 16 random bytes (128 bits)", tok, len(raw), err)
		}
		if seen[tok] {
			t.Fatalf("token %q repeated after %d links", tok, i)
		}
		seen[tok] = true
		if i%100 == 0 {
			some = append(some, tok)
		}
	}
	if err := st.Close(); err != nil {
		t.Fatal(err)
	}
	var db []byte
	for _, f := range []string{path, path + "-wal"} {
		if b, err := os.ReadFile(f); err == nil {
			db = append(db, b...)
		}
	}
	if len(db) == 0 {
		t.Fatal("database file is empty")
	}
	for _, tok := range some {
		if bytes.Contains(db, []byte(tok)) {
			t.Errorf("the database file holds token %s in clear", tok)
		}
	}
}

// TestEditorSaveDropsUnsafeLinks: a save from the editor with a javascript: link is stored, and
// served back to the editor page, without it; an http(s) link survives.
func TestEditorSaveDropsUnsafeLinks(t *testing.T) {
	e := newEnv(t, Options{})
	doc := `{"type":"excalidraw","elements":[
	 {"id":"a","type":"rectangle","x":0,"y":0,"width":100,"height":50,"link":"javascript:alert(document.cookie)"},
	 {"id":"b","type":"rectangle","x":200,"y":0,"width":100,"height":50,"link":"https://example.com/runbook"}]}`
	res := e.do(t, "PUT", "/d/"+e.edit+"/scene", []byte(doc), map[string]string{"If-Match": "1"})
	if res.StatusCode != 200 {
		b, _ := io.ReadAll(res.Body)
		t.Fatalf("save: %d %s", res.StatusCode, b)
	}
	res = e.do(t, "GET", "/d/"+e.edit+"/scene", nil, nil)
	served, _ := io.ReadAll(res.Body)
	for name, b := range map[string][]byte{"stored": e.rev(t).Scene, "served": served} {
		if bytes.Contains(b, []byte("javascript:")) {
			t.Errorf("%s scene keeps the javascript: link", name)
		}
		if !bytes.Contains(b, []byte("https://example.com/runbook")) {
			t.Errorf("%s scene lost the https link", name)
		}
	}
}
