package main

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/go-telegram/bot/models"

	"github.com/excalibot/excalibot/bot/telegram/tgfake"
	"github.com/excalibot/excalibot/config"
	"github.com/excalibot/excalibot/links"
	"github.com/excalibot/excalibot/scene"
)

// jsonStore plays json.excalidraw.com: POST /api/v2/post/ keeps the payload and answers its id.
type jsonStore struct {
	mu       sync.Mutex
	payloads map[string][]byte
	fail     bool // answer 500, as a store that is down
}

func (j *jsonStore) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost || r.URL.Path != "/api/v2/post/" {
		http.NotFound(w, r)
		return
	}
	body, _ := io.ReadAll(r.Body)
	j.mu.Lock()
	defer j.mu.Unlock()
	if j.fail {
		http.Error(w, `{"error_class":"InternalError"}`, http.StatusInternalServerError)
		return
	}
	id := "id" + strings.Repeat("x", len(j.payloads)+1)
	j.payloads[id] = body
	json.NewEncoder(w).Encode(map[string]string{"id": id})
}

func (j *jsonStore) count() int {
	j.mu.Lock()
	defer j.mu.Unlock()
	return len(j.payloads)
}

// TestShareLinks: without a public URL and with EXCALIBOT_SHARE_LINKS, a Telegram reply's editor
// button is an excalidraw.com #json= link whose payload, decrypted with the key in the fragment,
// is the thread's scene; a repost of the same revision reuses the upload; a store that is down
// leaves the reply without a link but with its picture and file.
func TestShareLinks(t *testing.T) {
	js := &jsonStore{payloads: map[string][]byte{}}
	srv := httptest.NewServer(js)
	t.Cleanup(srv.Close)
	tg := tgfake.New(tgToken)
	t.Cleanup(tg.Close)
	startE2E(t, func(c *config.Config) {
		c.TelegramToken, c.TelegramAPIURL = tgToken, tg.URL
		c.ShareLinks, c.ShareURL = true, srv.URL+"/api/v2/post/"
	})
	const chat = 777
	tg.AddChat(models.Chat{ID: chat, Type: models.ChatTypePrivate})
	photos := func() []tgfake.Message {
		var out []tgfake.Message
		for _, m := range tg.BotMessages(chat) {
			if m.Kind == "photo" {
				out = append(out, m)
			}
		}
		return out
	}
	say := func(text string, wantPhotos int) tgfake.Message {
		t.Helper()
		tg.Send(tgfake.Post{Chat: chat, From: models.User{ID: chat, FirstName: "Ann"}, Text: text})
		if !tg.WaitFor(e2eWait, func() bool { return len(photos()) >= wantPhotos }) {
			t.Fatalf("%q: no picture %d; bot said %+v", text, wantPhotos, tg.BotMessages(chat))
		}
		return photos()[wantPhotos-1]
	}

	first := say("draw a box", 1)
	link := editorButton(t, first)
	id, key, ok := strings.Cut(strings.TrimPrefix(link, "https://excalidraw.com/#json="), ",")
	if !strings.HasPrefix(link, "https://excalidraw.com/#json=") || !ok {
		t.Fatalf("editor button %q, want https://excalidraw.com/#json=<id>,<key>", link)
	}
	js.mu.Lock()
	payload := js.payloads[id]
	js.mu.Unlock()
	doc, err := links.DecodeSharePayload(payload, key)
	if err != nil {
		t.Fatalf("decrypt the uploaded scene with the link's key: %v", err)
	}
	sc, err := scene.Decode(doc)
	if err != nil || len(sc.Elements()) == 0 {
		t.Fatalf("shared scene: %v, %d elements; want the drawing", err, len(sc.Elements()))
	}

	// The same revision posted again (a theme change) reuses its upload and its link.
	again := say("theme dark", 2)
	if got := editorButton(t, again); got != link || js.count() != 1 {
		t.Errorf("repost of revision 1: link %q after %d uploads, want %q after 1", got, js.count(), link)
	}

	// excalidraw.com's store down: the picture still comes, without a link.
	js.mu.Lock()
	js.fail = true
	js.mu.Unlock()
	down := say("add a second box", 3)
	if len(down.Buttons) != 0 {
		t.Errorf("store down: buttons %+v, want none", down.Buttons)
	}
}

func editorButton(t *testing.T, m tgfake.Message) string {
	t.Helper()
	for _, b := range m.Buttons {
		if b.Text == "Open in editor" {
			return b.URL
		}
	}
	t.Fatalf("no \"Open in editor\" button on the picture: %+v", m.Buttons)
	return ""
}
