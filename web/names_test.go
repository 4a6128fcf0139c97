package web

import (
	"context"
	"encoding/json"
	"mime"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/excalibot/excalibot/scene"
	"github.com/excalibot/excalibot/store"
)

// titledScene is sampleScene under a heading, which the outline reads as the diagram's title.
func titledScene(t testing.TB, title string) []byte {
	t.Helper()
	sc, err := scene.Decode(sampleScene(t))
	if err != nil {
		t.Fatal(err)
	}
	h := scene.NewElement(scene.Text)
	h.ID, h.X, h.Y, h.Width, h.Height = "title", 0, -120, 400, 45
	h.Text, h.OriginalText, h.FontSize = title, title, 36
	if _, err := sc.Add(h); err != nil {
		t.Fatal(err)
	}
	doc, err := sc.Encode()
	if err != nil {
		t.Fatal(err)
	}
	return doc
}

// saveTitled makes a titled scene the thread's next revision.
func (e *env) saveTitled(t testing.TB, title string) *store.Thread {
	t.Helper()
	th, err := e.st.Load(context.Background(), e.key)
	if err != nil {
		t.Fatal(err)
	}
	th, err = e.st.Save(context.Background(), store.SaveRequest{Key: e.key, Base: th.Rev, Scene: titledScene(t, title), Author: store.AuthorAgent, Reason: "title"})
	if err != nil {
		t.Fatal(err)
	}
	return th
}

// TestFileNames: the downloads, the name the page gives its own exports, and the name after a
// save are the chat's: the diagram's title and revision.
func TestFileNames(t *testing.T) {
	e := newEnv(t, Options{})
	var doc sceneDoc
	if err := json.NewDecoder(e.do(t, "GET", "/d/"+e.view+"/scene", nil, nil).Body).Decode(&doc); err != nil {
		t.Fatal(err)
	}
	if doc.Name != "diagram-r1" {
		t.Errorf("untitled scene's name = %q, want diagram-r1", doc.Name)
	}

	e.saveTitled(t, "Deploy pipeline")
	if err := json.NewDecoder(e.do(t, "GET", "/d/"+e.view+"/scene", nil, nil).Body).Decode(&doc); err != nil {
		t.Fatal(err)
	}
	if doc.Name != "deploy-pipeline-r2" {
		t.Errorf("titled scene's name = %q, want deploy-pipeline-r2", doc.Name)
	}
	for _, ext := range []string{"excalidraw", "png", "svg"} {
		res := e.do(t, "GET", "/d/"+e.view+"."+ext, nil, nil)
		readAll(t, res)
		if want := `attachment; filename="deploy-pipeline-r2.` + ext + `"`; res.Header.Get("Content-Disposition") != want {
			t.Errorf("%s download: Content-Disposition %q, want %q", ext, res.Header.Get("Content-Disposition"), want)
		}
	}

	// A title in another script: the name goes as RFC 2231's filename*, read back whole.
	e.saveTitled(t, "Déploiement")
	res := e.do(t, "GET", "/d/"+e.view+".excalidraw", nil, nil)
	readAll(t, res)
	cd := res.Header.Get("Content-Disposition")
	if _, params, err := mime.ParseMediaType(cd); err != nil || params["filename"] != "déploiement-r3.excalidraw" || strings.ContainsFunc(cd, func(r rune) bool { return r >= 0x80 }) {
		t.Errorf("non-ASCII download: Content-Disposition %q (%v), want filename déploiement-r3.excalidraw in ASCII", cd, err)
	}

	res = e.do(t, "PUT", "/d/"+e.edit+"/scene", titledScene(t, "Release train"), map[string]string{"If-Match": "3", "Content-Type": "application/json"})
	var got saveReply
	if err := json.NewDecoder(res.Body).Decode(&got); err != nil {
		t.Fatal(err)
	}
	if res.StatusCode != 200 || got.Rev != 4 || got.Name != "release-train-r4" {
		t.Errorf("save = %d %+v, want 200 at revision 4 named release-train-r4", res.StatusCode, got)
	}

	// A stored scene that cannot be read is still downloaded, named without a title.
	if _, err := e.st.Save(context.Background(), store.SaveRequest{Key: e.key, Base: 4, Scene: []byte(`{"type":"excalidraw","elements":[{"id":`), Author: store.AuthorImport}); err != nil {
		t.Fatal(err)
	}
	res = e.do(t, "GET", "/d/"+e.view+".excalidraw", nil, nil)
	readAll(t, res)
	if want := `attachment; filename="diagram-r5.excalidraw"`; res.StatusCode != 200 || res.Header.Get("Content-Disposition") != want {
		t.Errorf("unreadable scene download = %d %q, want 200 %q", res.StatusCode, res.Header.Get("Content-Disposition"), want)
	}
}

// TestBrowserFileNames: the editor page names Excalidraw's own exports as the chat names the
// diagram's files, and moves the name to the new revision when it saves.
func TestBrowserFileNames(t *testing.T) {
	t.Parallel()
	ctx := tab(t)
	e := newEnv(t, Options{})
	e.saveTitled(t, "Deploy pipeline")
	run(t, ctx, "open the edit link", chromedp.Navigate(e.ts.URL+"/d/"+e.edit))
	poll(t, ctx, "scene loaded", `!!(window.__excalibot && window.__excalibot.api && window.__excalibot.state().loaded)`)
	names := `window.__excalibot.state().name + " " + window.__excalibot.api.getName()`
	if got := run(t, ctx, "names", chromedp.Evaluate[string](names)); got != "deploy-pipeline-r2 deploy-pipeline-r2" {
		t.Errorf("page and Excalidraw names = %q, want deploy-pipeline-r2 for both", got)
	}
	run(t, ctx, "edit", chromedp.Evaluate[bool](edit("browser", `backgroundColor: "#ffc9c9"`)))
	poll(t, ctx, "autosaved", `window.__excalibot.state().state === "saved" && window.__excalibot.state().rev === 3`)
	poll(t, ctx, "renamed", names+` === "deploy-pipeline-r3 deploy-pipeline-r3"`)
}
