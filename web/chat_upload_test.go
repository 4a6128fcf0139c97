package web

import (
	"bytes"
	"context"
	"encoding/base64"
	"fmt"
	"image"
	"image/color"
	"image/png"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/excalibot/excalibot/agent"
	"github.com/excalibot/excalibot/agent/ollama"
	"github.com/excalibot/excalibot/agent/ollamafake"
	"github.com/excalibot/excalibot/bot"
	"github.com/excalibot/excalibot/bot/agentdraw"
	"github.com/excalibot/excalibot/bot/webchat"
	"github.com/excalibot/excalibot/scene"
	"github.com/excalibot/excalibot/store"
)

// boardSketch is what the fake vision model reads in any picture.
var boardSketch = ollamafake.Sketch{Kind: "flowchart", Direction: "LR",
	Nodes: []ollamafake.SketchNode{{ID: "web", Label: "Web"}, {ID: "api", Label: "API"}, {ID: "cache", Label: "Cache"}},
	Edges: []ollamafake.SketchEdge{{From: "web", To: "api"}, {From: "api", To: "cache"}}}

// boardPNG is a photo-like PNG without a scene: light board, a dark mark.
func boardPNG(t *testing.T) []byte {
	t.Helper()
	img := image.NewRGBA(image.Rect(0, 0, 320, 200))
	for y := 0; y < 200; y++ {
		for x := 0; x < 320; x++ {
			img.Set(x, y, color.RGBA{235, 235, 228, 255})
			if x > 40 && x < 120 && y > 70 && y < 130 {
				img.Set(x, y, color.RGBA{30, 30, 40, 255})
			}
		}
	}
	var b bytes.Buffer
	if err := png.Encode(&b, img); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// dropFile drops a file made of data on the chat page as a person drags one from their desktop.
func dropFile(name, mimeType string, data []byte) string {
	return fmt.Sprintf(`(() => {
  const bytes = Uint8Array.from(atob(%q), c => c.charCodeAt(0));
  const dt = new DataTransfer();
  dt.items.add(new File([bytes], %q, {type: %q}));
  const on = document.querySelector("#messages");
  on.dispatchEvent(new DragEvent("dragenter", {bubbles: true, cancelable: true, dataTransfer: dt}));
  const shown = !document.querySelector("#drop").hidden;
  on.dispatchEvent(new DragEvent("dragover", {bubbles: true, cancelable: true, dataTransfer: dt}));
  on.dispatchEvent(new DragEvent("drop", {bubbles: true, cancelable: true, dataTransfer: dt}));
  return shown && document.querySelector("#drop").hidden;
})()`, base64.StdEncoding.EncodeToString(data), name, mimeType)
}

// botReplies counts the bot's messages on screen; the n-th is there with its picture loaded.
func replyShown(n int, picture bool) string {
	if !picture {
		return fmt.Sprintf(`document.querySelectorAll(".msg.bot").length === %d`, n)
	}
	return fmt.Sprintf(`(() => { const m = document.querySelectorAll(".msg.bot"); if (m.length !== %d) return false;
  const i = m[%d].querySelector("img"); return !!i && i.complete && i.naturalWidth > 0; })()`, n, n-1)
}

type shownReply struct {
	Text      string   `json:"text"`
	Alt       string   `json:"alt"`
	Downloads []string `json:"downloads"`
	Error     bool     `json:"error"`
}

const lastReply = `(() => { const m = [...document.querySelectorAll(".msg.bot")].pop(); const i = m.querySelector("img");
  return {text: m.textContent, alt: i ? i.alt : "", error: m.classList.contains("error"),
    downloads: [...m.querySelectorAll("a[download]")].map(a => a.getAttribute("download"))}; })()`

// TestBrowserChatUpload: on the chat page, against the real server and core, a chosen
// .excalidraw file is imported and its picture shown; a broken picture is answered with what is
// wrong and changes nothing; a file over the limit is refused before it is sent, and the server
// refuses it in the same words when sent anyway; a dropped photo with words goes, as a picture,
// to a vision model (the fake Ollama) through the real agent, and its diagram comes back drawn.
func TestBrowserChatUpload(t *testing.T) {
	t.Parallel() // each in its own tab; page loads overlap
	ctx := tab(t)
	const limit = 256 << 10
	fake := ollamafake.New(t, ollamafake.Config{Models: []string{ollamafake.VisionToolModel}, Responder: ollamafake.Sees(boardSketch)})
	model, err := ollama.New(ollama.Config{Host: fake.URL(), Model: ollamafake.VisionToolModel}, nil)
	if err != nil {
		t.Fatal(err)
	}
	ce := newChatEnvWith(t, chatConfig{
		drawer: agentdraw.New(agent.New(model, agent.Config{}, nil), agentdraw.Options{}, nil),
		bot:    bot.Options{MaxImportBytes: limit, MaxImageBytes: limit},
		chat:   webchat.Options{MaxImportBytes: limit, MaxImageBytes: limit},
	})
	page := watch(t, ctx)
	dir := t.TempDir()
	write := func(name string, data []byte) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, data, 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	key := func(thread string) store.ThreadKey {
		sid := run(t, ctx, "session", chromedp.Evaluate[string](`window.__chat.session`))
		return store.ThreadKey{Platform: "web", Workspace: sid, Channel: "chat", Thread: thread}
	}
	load := func(thread string) *store.Thread {
		th, err := ce.st.Load(context.Background(), key(thread))
		if err != nil {
			t.Fatalf("load %s: %v", thread, err)
		}
		return th
	}

	run(t, ctx, "open the chat page", chromedp.Navigate(ce.ts.URL+"/chat"))
	poll(t, ctx, "page ready", `!!(window.__chat && document.querySelector("#threads li"))`)
	thread := run(t, ctx, "thread", chromedp.Evaluate[string](`window.__chat.thread`))

	// Chosen with Attach: an .excalidraw file is imported.
	run(t, ctx, "choose flow.excalidraw", chromedp.SetUploadFiles("#file", []string{write("flow.excalidraw", sampleScene(t))}))
	poll(t, ctx, "file attached", `!document.querySelector("#attached").hidden && document.querySelector("#attached-name").textContent.startsWith("flow.excalidraw (")`)
	run(t, ctx, "send", chromedp.Click("#send"))
	poll(t, ctx, "imported picture", replyShown(1, true))
	got := run(t, ctx, "reply", chromedp.Evaluate[shownReply](lastReply))
	// The alt text is the core's, made from the imported diagram (its boxes are labelled Browser,
	// excalibot and Store), and the files are named by revision.
	if !strings.Contains(got.Text, "Imported flow.excalidraw as revision 1.") || got.Error || !strings.Contains(got.Alt, "Browser") {
		t.Errorf("import reply %+v: want the import named and a picture whose alt names its boxes", got)
	}
	if !slices.ContainsFunc(got.Downloads, func(n string) bool { return strings.HasSuffix(n, "-r1.png") }) ||
		!slices.ContainsFunc(got.Downloads, func(n string) bool { return strings.HasSuffix(n, "-r1.excalidraw") }) {
		t.Errorf("import reply downloads %q: want the picture and the .excalidraw file named by revision", got.Downloads)
	}
	t.Logf("alt of the imported picture: %q; downloads %q", got.Alt, got.Downloads)
	if you := run(t, ctx, "your message", chromedp.Text(".msg.you")); !strings.Contains(you, "Attached: flow.excalidraw") {
		t.Errorf("the person's message reads %q, want the file it carried", you)
	}
	if attached := run(t, ctx, "composer", chromedp.Evaluate[bool](`document.querySelector("#attached").hidden && window.__chat.attached === null`)); !attached {
		t.Error("the file is still attached after sending")
	}
	if th := load(thread); th.Rev != 1 || sceneLen(t, th.Scene) != 8 {
		t.Fatalf("after the import: revision %d with %d elements, want 1 with the file's 8", th.Rev, sceneLen(t, th.Scene))
	}

	// A broken picture: what is wrong, and nothing changed.
	board := boardPNG(t)
	run(t, ctx, "choose broken.png", chromedp.SetUploadFiles("#file", []string{write("broken.png", board[:len(board)/3])}))
	poll(t, ctx, "broken file attached", `document.querySelector("#attached-name").textContent.startsWith("broken.png (")`)
	run(t, ctx, "send broken", chromedp.Click("#send"))
	poll(t, ctx, "refusal", replyShown(2, false))
	got = run(t, ctx, "refusal", chromedp.Evaluate[shownReply](lastReply))
	if !got.Error || !strings.Contains(got.Text, "broken.png") || !strings.Contains(got.Text, "Nothing in the diagram changed.") {
		t.Errorf("broken upload reply %+v: want an error naming the file, saying nothing changed", got)
	}
	if th := load(thread); th.Rev != 1 {
		t.Errorf("after the broken upload: revision %d, want still 1", th.Rev)
	}

	// Too large: refused by the page before sending, and by the server in the same words.
	big := make([]byte, limit+40<<10)
	want := fmt.Sprintf("big.png is %s; I take pictures up to %s.", scene.ByteSize(int64(len(big))), scene.ByteSize(limit))
	if ok := run(t, ctx, "drop big.png", chromedp.Evaluate[bool](dropFile("big.png", "image/png", big))); !ok {
		t.Error("the drop zone did not show while dragging, or stayed after the drop")
	}
	poll(t, ctx, "refused on the page", replyShown(3, false))
	if got = run(t, ctx, "page refusal", chromedp.Evaluate[shownReply](lastReply)); got.Text != "Not sent: "+want || !got.Error {
		t.Errorf("page refusal %+v, want the error %q", got, "Not sent: "+want)
	}
	if attached := run(t, ctx, "nothing attached", chromedp.Evaluate[bool](`window.__chat.attached === null`)); !attached {
		t.Error("the file too large was attached")
	}
	server := run(t, ctx, "sent anyway", chromedp.Evaluate[string](fmt.Sprintf(`(async () => {
  const fd = new FormData();
  fd.append("text", ""); fd.append("size", "%d"); fd.append("file", new File([new Uint8Array(%d)], "big.png", {type: "image/png"}));
  const r = await fetch("/chat/api/threads/" + window.__chat.thread + "/messages", {method: "POST", headers: {"X-Excalibot-Session": window.__chat.session}, body: fd});
  return r.status + " " + (await r.text()).trim();
})()`, len(big), len(big)), chromedp.EvalAwaitPromise))
	if server != "413 "+want {
		t.Errorf("the server answered %q, want %q", server, "413 "+want)
	}

	// Dropped in a new thread with words: a photo goes to the vision model and comes back drawn.
	run(t, ctx, "new thread", chromedp.Click("#new-thread"))
	poll(t, ctx, "new thread open", fmt.Sprintf(`window.__chat.thread !== %q && document.querySelectorAll(".msg").length === 0`, thread))
	photoThread := run(t, ctx, "thread", chromedp.Evaluate[string](`window.__chat.thread`))
	run(t, ctx, "drop board.png", chromedp.Evaluate[bool](dropFile("board.png", "image/png", board)))
	poll(t, ctx, "photo attached", `window.__chat.attached === "board.png"`)
	run(t, ctx, "type and send", chromedp.SendKeys("#text", "make this neat and add a cache\r"))
	poll(t, ctx, "redrawn picture", replyShown(1, true))
	got = run(t, ctx, "redrawn", chromedp.Evaluate[shownReply](lastReply))
	if got.Error || got.Alt == "" {
		t.Errorf("picture reply %+v: want a picture with alt text", got)
	}
	th := load(photoThread)
	if labels := sceneLabels(t, th.Scene); th.Rev != 1 || !slices.Equal(labels, []string{"API", "Cache", "Web"}) {
		t.Errorf("after the photo: revision %d with labels %q, want 1 with the sketch's API, Cache, Web", th.Rev, labels)
	}
	reqs := fake.Requests()
	if len(reqs) == 0 || len(ollamafake.Pictures(reqs[0])) != 1 {
		t.Fatalf("%d model requests; want the first to carry the photo", len(reqs))
	}
	if pic := ollamafake.Pictures(reqs[0])[0]; !bytes.Equal(pic, board) {
		if cfg, _, err := image.DecodeConfig(bytes.NewReader(pic)); err != nil || cfg.Width != 320 || cfg.Height != 200 {
			t.Errorf("the model got a picture of %+v (%v), want the 320×200 photo", cfg, err)
		}
	}
	var prompt string
	for _, m := range reqs[0].Messages {
		prompt += m.Content
	}
	if !strings.Contains(prompt, "make this neat and add a cache") {
		t.Errorf("the model was not given the words sent with the photo")
	}
	// The alt text comes from the diagram: it names what the model drew.
	for _, label := range []string{"Web", "API", "Cache"} {
		if !strings.Contains(got.Alt, label) {
			t.Errorf("the picture's alt %q does not name %s", got.Alt, label)
		}
	}
	t.Logf("alt of the redrawn picture: %q; downloads %q", got.Alt, got.Downloads)
	// The page shows a reply's alt and names as the core gives them.
	alt := "A flowchart: Web leads to API, API to Cache."
	if err := ce.chat.Send(context.Background(), key(photoThread), bot.Reply{Text: "Here it is.", Alt: alt,
		Image: &bot.File{Name: "web-api-cache-r1.png", MIME: "image/png", Content: board},
		Files: []bot.File{{Name: "web-api-cache-r1.excalidraw", MIME: "application/vnd.excalidraw+json", Content: th.Scene}}}); err != nil {
		t.Fatal(err)
	}
	poll(t, ctx, "reply sent by the adapter", replyShown(2, true))
	if got = run(t, ctx, "named reply", chromedp.Evaluate[shownReply](lastReply)); got.Alt != alt ||
		!slices.Equal(got.Downloads, []string{"web-api-cache-r1.png", "web-api-cache-r1.excalidraw"}) {
		t.Errorf("reply shown with alt %q and downloads %q; want %q and the core's names", got.Alt, got.Downloads, alt)
	}
	errs, _ := page.get()
	for _, e := range errs {
		// The file sent anyway was answered 413, which the browser logs.
		if strings.Contains(e, "Failed to load resource") && strings.Contains(e, "413") {
			continue
		}
		t.Errorf("page console: %.300s", e)
	}
}

func sceneLen(t *testing.T, doc []byte) int {
	t.Helper()
	sc, err := scene.Decode(doc)
	if err != nil {
		t.Fatal(err)
	}
	return sc.Len()
}

// sceneLabels are the scene's texts as written (not as wrapped), sorted.
func sceneLabels(t *testing.T, doc []byte) []string {
	t.Helper()
	sc, err := scene.Decode(doc)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range sc.Elements() {
		if e.Type == scene.Text && !e.IsDeleted {
			out = append(out, strings.Join(strings.Fields(e.Text), " "))
		}
	}
	slices.Sort(out)
	return out
}
