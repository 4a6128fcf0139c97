package webchat

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"image"
	"image/color"
	"image/png"
	"mime/multipart"
	"net/http"
	"net/textproto"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/excalibot/excalibot/bot"
	"github.com/excalibot/excalibot/bot/bottest"
	"github.com/excalibot/excalibot/internal/waitfor"
	"github.com/excalibot/excalibot/scene"
	"github.com/excalibot/excalibot/store"
)

const upSession = "session-0123456789"

// seeingDrawer is the box drawer that also remembers what each request carried.
type seeingDrawer struct {
	bottest.BoxDrawer
	mu   sync.Mutex
	reqs []bot.DrawRequest
}

func (d *seeingDrawer) Draw(ctx context.Context, req bot.DrawRequest) (bot.DrawResult, error) {
	d.mu.Lock()
	d.reqs = append(d.reqs, req)
	d.mu.Unlock()
	return d.BoxDrawer.Draw(ctx, req)
}

func (d *seeingDrawer) requests() []bot.DrawRequest {
	d.mu.Lock()
	defer d.mu.Unlock()
	return append([]bot.DrawRequest(nil), d.reqs...)
}

// part is one field of a multipart post; a file when name is set.
type part struct {
	field, name, mime string
	data              []byte
}

func multipartBody(t *testing.T, parts ...part) ([]byte, string) {
	t.Helper()
	var b bytes.Buffer
	w := multipart.NewWriter(&b)
	for _, p := range parts {
		h := textproto.MIMEHeader{}
		if p.name != "" {
			h.Set("Content-Disposition", fmt.Sprintf(`form-data; name=%q; filename=%q`, p.field, p.name))
			h.Set("Content-Type", p.mime)
		} else {
			h.Set("Content-Disposition", fmt.Sprintf(`form-data; name=%q`, p.field))
		}
		pw, err := w.CreatePart(h)
		if err != nil {
			t.Fatal(err)
		}
		pw.Write(p.data)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return b.Bytes(), w.FormDataContentType()
}

// postFile posts text and a file as the page does: text, the declared size (when >= 0), the file.
func (e *chatEnv) postFile(t *testing.T, thread, text, name, mimeType string, data []byte, declared int64) (*http.Response, string) {
	t.Helper()
	parts := []part{{field: "text", data: []byte(text)}}
	if declared >= 0 {
		parts = append(parts, part{field: "size", data: []byte(fmt.Sprint(declared))})
	}
	parts = append(parts, part{field: "file", name: name, mime: mimeType, data: data})
	body, ct := multipartBody(t, parts...)
	res := e.do(t, "POST", "/chat/api/threads/"+thread+"/messages", body, map[string]string{chatSessionHdr: upSession, "Content-Type": ct})
	return res, readAll(t, res)
}

// thread returns a copy of a thread's messages as the adapter holds them.
func (e *chatEnv) thread(sid, id string) (chatThread, bool) {
	e.chat.mu.Lock()
	defer e.chat.mu.Unlock()
	ss := e.chat.sessions[sid]
	if ss == nil || ss.threads[id] == nil {
		return chatThread{}, false
	}
	th := *ss.threads[id]
	th.Messages = append([]chatMessage(nil), th.Messages...)
	return th, true
}

// waitReply waits until the thread has n replies of the bot and its run is over.
func (e *chatEnv) waitReply(t *testing.T, thread string, n int) chatMessage {
	t.Helper()
	var th chatThread
	var replies []chatMessage
	waitfor.Until(t, 20*time.Second, fmt.Sprintf("%d replies in thread %s", n, thread), func() bool {
		th, _ = e.thread(upSession, thread)
		replies = replies[:0]
		for _, m := range th.Messages {
			if m.From == "bot" {
				replies = append(replies, m)
			}
		}
		return len(replies) >= n && !th.Working
	}, func() string { return fmt.Sprintf("%d replies: %+v", len(replies), th.Messages) })
	return replies[n-1]
}

func uploadKey(thread string) store.ThreadKey {
	return store.ThreadKey{Platform: Platform, Workspace: upSession, Channel: chatChannel, Thread: thread}
}

// flowScene is a two-box .excalidraw document.
func flowScene(t *testing.T) []byte {
	t.Helper()
	sc := scene.New()
	for i, id := range []string{"web", "db"} {
		e := scene.NewElement(scene.Rectangle)
		e.ID, e.X, e.Width, e.Height = id, float64(i*240), 180, 80
		if _, err := sc.Add(e); err != nil {
			t.Fatal(err)
		}
		if _, err := sc.SetLabel(id, strings.ToUpper(id)); err != nil {
			t.Fatal(err)
		}
	}
	doc, err := sc.Encode()
	if err != nil {
		t.Fatal(err)
	}
	return doc
}

// photo is a small PNG without a scene: a picture to redraw.
func photo(t *testing.T) []byte {
	t.Helper()
	img := image.NewGray(image.Rect(0, 0, 64, 48))
	for i := range img.Pix {
		img.Pix[i] = 230
	}
	img.SetGray(10, 10, color.Gray{Y: 20})
	var b bytes.Buffer
	if err := png.Encode(&b, img); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// TestChatUploads: a file posted on the page reaches the core as a platform's file does: an
// .excalidraw file or an Excalidraw PNG is imported, another picture goes to the drawer with the
// words beside it, and a broken or unknown file is answered with what is wrong while nothing
// stored changes.
func TestChatUploads(t *testing.T) {
	doc := flowScene(t)
	pic := photo(t)
	exported, err := scene.EmbedScene(pic, doc)
	if err != nil {
		t.Fatal(err)
	}
	for i, tc := range []struct {
		name, text, file, mime string
		data                   []byte
		says                   []string
		rev                    int64 // 0: nothing stored
		labels                 string
		images                 int // pictures the drawer was sent
	}{
		{name: "an .excalidraw file is imported", file: "flow.excalidraw", data: doc,
			says: []string{"Imported flow.excalidraw as revision 1."}, rev: 1, labels: "DB,WEB"},
		{name: "an Excalidraw PNG is imported", file: "flow.png", mime: "image/png", data: exported,
			says: []string{"Imported flow.png as revision 1."}, rev: 1, labels: "DB,WEB"},
		{name: "a picture is redrawn, with the words beside it", text: "make this neat and add a cache", file: "board.png", mime: "image/png", data: pic,
			says: []string{"Added box 1."}, rev: 1, labels: "make this neat and add a cache", images: 1},
		{name: "an import with words is imported, then drawn on", text: "add a cache", file: "flow.excalidraw", data: doc,
			says: []string{"Imported flow.excalidraw as revision 1.", "Added box 3."}, rev: 2, labels: "DB,WEB,add a cache"},
		{name: "a broken .excalidraw file", file: "flow.excalidraw", data: doc[:len(doc)/2],
			says: []string{"flow.excalidraw is not a diagram I can open", "Nothing in the diagram changed."}},
		{name: "a truncated PNG", file: "board.png", mime: "image/png", data: pic[:len(pic)/2],
			says: []string{"board.png", "Nothing in the diagram changed."}},
		{name: "a file of another kind", file: "notes.pdf", mime: "application/pdf", data: []byte("%PDF-1.7"),
			says: []string{`"notes.pdf" is none of these`, "Nothing in the diagram changed."}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d := &seeingDrawer{}
			ce := startChat(t, d, bot.Options{}, Options{})
			thread := fmt.Sprintf("thread-up-%02d", i)
			res, body := ce.postFile(t, thread, tc.text, tc.file, tc.mime, tc.data, int64(len(tc.data)))
			if res.StatusCode != http.StatusAccepted {
				t.Fatalf("post: %d %q, want 202", res.StatusCode, body)
			}
			reply := ce.waitReply(t, thread, 1)
			for _, want := range tc.says {
				if !strings.Contains(reply.Text, want) {
					t.Errorf("reply %q lacks %q", reply.Text, want)
				}
			}
			th, _ := ce.thread(upSession, thread)
			if you := th.Messages[0]; you.From != "you" || you.Upload == nil || you.Upload.Name != tc.file || you.Upload.Size != int64(len(tc.data)) {
				t.Errorf("the person's message %+v, want it to show %s of %d bytes", you, tc.file, len(tc.data))
			}
			stored, err := ce.st.Load(context.Background(), uploadKey(thread))
			if tc.rev == 0 {
				if err != nil || stored.Rev != 0 || len(stored.Scene) != 0 || reply.Image != "" || !reply.Error {
					t.Errorf("got %+v (%v), image %q, error %v; want no revision and an error reply", stored, err, reply.Image, reply.Error)
				}
				return
			}
			if err != nil || stored.Rev != tc.rev || reply.Image == "" {
				t.Fatalf("got %+v (%v), picture %q; want revision %d with a picture", stored, err, reply.Image, tc.rev)
			}
			if got := labelsOf(t, stored.Scene); got != tc.labels {
				t.Errorf("labels %q, want %q", got, tc.labels)
			}
			images := 0
			for _, r := range d.requests() {
				images += len(r.Images)
			}
			if images != tc.images {
				t.Errorf("the drawer was sent %d pictures, want %d", images, tc.images)
			}
		})
	}
}

func labelsOf(t *testing.T, doc []byte) string {
	t.Helper()
	sc, err := scene.Decode(doc)
	if err != nil {
		t.Fatal(err)
	}
	var labels []string
	for _, e := range sc.Elements() {
		if e.Type == scene.Text {
			labels = append(labels, strings.Join(strings.Fields(e.Text), " ")) // as written, not as wrapped
		}
	}
	slices.Sort(labels)
	return strings.Join(labels, ",")
}

// TestChatUploadTooLarge: a file over the core's limit for its kind is refused with 413 in the
// core's words, before it is read whole: by the size the page declares, by the bytes once one
// more than the limit arrived, or by the post's length; nothing reaches the thread or the store.
func TestChatUploadTooLarge(t *testing.T) {
	const importMax, imageMax = 64 << 10, 128 << 10
	big := bytes.Repeat([]byte("x"), imageMax+1)
	for i, tc := range []struct {
		name, file, mime string
		data             []byte
		declared         int64
		says             string
	}{
		{"a picture declared too large", "board.png", "image/png", []byte("\x89PNG"), 200 << 10,
			"board.png is 200 KB; I take pictures up to 128 KB."},
		{"a file declared too large", "flow.excalidraw", "", []byte("{}"), 100 << 10,
			"flow.excalidraw is 100 KB; I import files up to 64 KB."},
		{"a file whose bytes are too many", "flow.excalidraw", "", big[:importMax+1], -1,
			"flow.excalidraw is more than 64 KB; I import files up to 64 KB."},
		{"a picture declared small whose bytes are too many", "board.jpg", "image/jpeg", big, 1000,
			"board.jpg is more than 128 KB; I take pictures up to 128 KB."},
		{"a post longer than any file", "board.png", "image/png", bytes.Repeat([]byte("x"), 300<<10), -1,
			"That upload is 300 KB; I take files up to 128 KB."},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ce := startChat(t, &bottest.BoxDrawer{}, bot.Options{MaxImportBytes: importMax, MaxImageBytes: imageMax},
				Options{MaxImportBytes: importMax, MaxImageBytes: imageMax})
			thread := fmt.Sprintf("thread-big-%02d", i)
			res, body := ce.postFile(t, thread, "redraw this", tc.file, tc.mime, tc.data, tc.declared)
			if res.StatusCode != http.StatusRequestEntityTooLarge || !strings.Contains(body, tc.says) {
				t.Errorf("post: %d %q, want 413 saying %q", res.StatusCode, body, tc.says)
			}
			if th, ok := ce.thread(upSession, thread); ok && len(th.Messages) > 0 {
				t.Errorf("the thread has %+v, want nothing", th.Messages)
			}
			if _, err := ce.st.Load(context.Background(), uploadKey(thread)); !errors.Is(err, store.ErrNotFound) {
				t.Errorf("store: %v, want nothing stored", err)
			}
			ce.chat.mu.Lock()
			kept := len(ce.chat.uploads.byID)
			ce.chat.mu.Unlock()
			if kept != 0 {
				t.Errorf("%d uploads kept, want none", kept)
			}
		})
	}
}

// TestChatUploadForm: what else a post may get wrong is answered with 400 and what is wrong.
func TestChatUploadForm(t *testing.T) {
	ce := startChat(t, &bottest.BoxDrawer{}, bot.Options{}, Options{})
	for _, tc := range []struct {
		name  string
		parts []part
		says  string
	}{
		{"nothing at all", []part{{field: "text", data: []byte("  ")}}, "the message is empty"},
		{"an empty file", []part{{field: "file", name: "flow.excalidraw", data: nil}}, "flow.excalidraw is empty (0 bytes)"},
		{"an unknown field", []part{{field: "comment", data: []byte("hi")}}, `the upload has a field "comment"`},
		{"text too long", []part{{field: "text", data: bytes.Repeat([]byte("a"), maxChatText+1)}}, "over 16 KB"},
		{"text after the file", []part{{field: "file", name: "flow.excalidraw", data: []byte(`{"type":"excalidraw","elements":[]}`)}, {field: "text", data: []byte("make it neat")}},
			`the upload has a field "text" after its file`},
	} {
		body, ct := multipartBody(t, tc.parts...)
		res := ce.do(t, "POST", "/chat/api/threads/thread-form-01/messages", body, map[string]string{chatSessionHdr: upSession, "Content-Type": ct})
		if got := readAll(t, res); res.StatusCode != http.StatusBadRequest || !strings.Contains(got, tc.says) {
			t.Errorf("%s: %d %q, want 400 saying %q", tc.name, res.StatusCode, got, tc.says)
		}
	}
	res := ce.do(t, "POST", "/chat/api/threads/thread-form-01/messages", []byte("--x\r\nContent-Disposition: form-data; name=\"text\"\r\n\r\nhello"), map[string]string{chatSessionHdr: upSession, "Content-Type": "multipart/form-data; boundary=x"})
	if got := readAll(t, res); res.StatusCode != http.StatusBadRequest || !strings.Contains(got, "could not be read") {
		t.Errorf("a cut-off form: %d %q, want 400 saying it could not be read", res.StatusCode, got)
	}
	if th, ok := ce.thread(upSession, "thread-form-01"); ok && len(th.Messages) > 0 {
		t.Errorf("refused posts reached the thread: %+v", th.Messages)
	}
}

// TestUploadStoreBounds: uploads are forgotten past their hour, past the session's share (its
// oldest first) and past the total (the oldest of all first).
func TestUploadStoreBounds(t *testing.T) {
	t0 := time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)
	up := func(id, session string, n int) *upload {
		return &upload{id: id, session: session, data: make([]byte, n), at: t0}
	}
	for _, tc := range []struct {
		name  string
		puts  []*upload
		after time.Duration // when the last is put
		want  string        // kept, oldest first
	}{
		{"all fit", []*upload{up("a1", "a", 10), up("b1", "b", 10)}, 0, "a1 b1"},
		{"the session's oldest makes room", []*upload{up("a1", "a", 10), up("b1", "b", 10), up("a2", "a", 15)}, 0, "b1 a2"},
		{"the oldest of all makes room", []*upload{up("a1", "a", 15), up("b1", "b", 15), up("c1", "c", 15), up("d1", "d", 15)}, 0, "b1 c1 d1"},
		{"expired ones go first", []*upload{up("a1", "a", 5), up("b1", "b", 5), up("c1", "c", 5)}, uploadTTL, "c1"},
	} {
		var s uploadStore
		for i, u := range tc.puts {
			now := t0
			if i == len(tc.puts)-1 {
				now = t0.Add(tc.after)
				u.at = now
			}
			s.put(u, now, 20, 50)
		}
		var got []string
		var size int64
		for _, u := range s.order {
			got = append(got, u.id)
			size += int64(len(u.data))
		}
		if strings.Join(got, " ") != tc.want || len(s.byID) != len(got) || size != s.size {
			t.Errorf("%s: kept %q (%d by id, size %d of %d), want %q", tc.name, got, len(s.byID), s.size, size, tc.want)
		}
	}
}

// TestFetchFileExpired: a run that reads an upload after its hour is told it is no longer kept.
func TestFetchFileExpired(t *testing.T) {
	var mu sync.Mutex
	now := time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)
	clock := func() time.Time { mu.Lock(); defer mu.Unlock(); return now }
	c := New(refusingCore{}, Options{Now: clock}, nil)
	defer c.Close()
	c.mu.Lock()
	c.uploads.put(&upload{id: "u1", session: upSession, name: "board.png", data: []byte("png"), at: now}, now, 1<<20, 1<<20)
	c.mu.Unlock()
	at := bot.Attachment{Name: "board.png", Ref: "u1"}
	if got, err := c.FetchFile(context.Background(), at, 1<<20); err != nil || string(got) != "png" {
		t.Fatalf("fetch at once: %q, %v", got, err)
	}
	if _, err := c.FetchFile(context.Background(), at, 2); err == nil || !strings.Contains(err.Error(), "more than the 2 bytes I accept") {
		t.Errorf("fetch with a smaller limit: %v, want it refused", err)
	}
	mu.Lock()
	now = now.Add(uploadTTL)
	mu.Unlock()
	if _, err := c.FetchFile(context.Background(), at, 1<<20); err == nil || !strings.Contains(err.Error(), "board.png is no longer kept") {
		t.Errorf("fetch after an hour: %v, want it no longer kept", err)
	}
}
