package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"mime/multipart"
	"net/http"
	"net/textproto"
	"path"
	"sync"
	"testing"
	"time"
)

// webDriver plays a person at the chat page of a serve, through the page's API: one browser
// session, a thread id per conversation.
type webDriver struct {
	addr    string
	session string

	mu      sync.Mutex
	threads int
	last    time.Time // the last request, for pace
}

// readEvery paces the driver's reads: the web server allows a client address 300 requests a
// minute (5 a second), and the tests' waits ask far more often than that.
const readEvery = 250 * time.Millisecond

// pace waits until readEvery has passed since the driver's last request (real time: the limit is
// the server's, on its wall clock).
func (d *webDriver) pace() {
	d.mu.Lock()
	wait := time.Until(d.last.Add(readEvery))
	if wait < 0 {
		wait = 0
	}
	d.last = time.Now().Add(wait)
	d.mu.Unlock()
	time.Sleep(wait)
}

func newWebChat(e *e2e) *webDriver {
	return &webDriver{addr: e.addr, session: "session-e2e-0123456789"}
}

// start posts text (and file) as the first message of a new thread.
func (d *webDriver) start(t *testing.T, user int, text string, file *upload) *chatThread {
	t.Helper()
	d.mu.Lock()
	d.threads++
	id := fmt.Sprintf("thread-e2e-%02d-%03d", user, d.threads)
	d.mu.Unlock()
	d.post(t, id, text, file)
	return &chatThread{chat: id}
}

func (d *webDriver) say(t *testing.T, th *chatThread, user int, text string) {
	t.Helper()
	d.post(t, th.chat, text, nil)
}

// post sends a message as the page does: JSON, or a multipart form when it carries a file.
func (d *webDriver) post(t *testing.T, thread, text string, file *upload) {
	t.Helper()
	var body bytes.Buffer
	ctype := "application/json"
	if file == nil {
		json.NewEncoder(&body).Encode(map[string]string{"text": text})
	} else {
		w := multipart.NewWriter(&body)
		w.WriteField("text", text)
		h := textproto.MIMEHeader{}
		h.Set("Content-Disposition", fmt.Sprintf(`form-data; name="file"; filename=%q`, file.Name))
		h.Set("Content-Type", "application/octet-stream")
		pw, _ := w.CreatePart(h)
		pw.Write(file.Data)
		w.Close()
		ctype = w.FormDataContentType()
	}
	d.pace()
	req, _ := http.NewRequest(http.MethodPost, "http://"+d.addr+"/chat/api/threads/"+thread+"/messages", &body)
	req.Header.Set("Content-Type", ctype)
	req.Header.Set("X-Excalibot-Session", d.session)
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("post to the chat page: %v", err)
	}
	defer res.Body.Close()
	if res.StatusCode != http.StatusAccepted {
		b, _ := io.ReadAll(res.Body)
		t.Fatalf("post to the chat page: %d %s, want 202", res.StatusCode, b)
	}
}

// replies is what the page shows of th: the bot's messages (those with files are answers) and
// whether the thread is working.
func (d *webDriver) replies(th *chatThread) (answers []answer, texts []string, busy bool) {
	d.pace()
	res, err := http.Get("http://" + d.addr + "/chat/api/threads/" + th.chat + "?session=" + d.session)
	if err != nil {
		return nil, nil, true
	}
	defer res.Body.Close()
	var thread struct {
		Working  bool `json:"working"`
		Messages []struct {
			From  string `json:"from"`
			Text  string `json:"text"`
			Files []struct {
				Name string `json:"name"`
			} `json:"files"`
		} `json:"messages"`
	}
	if res.StatusCode != http.StatusOK || json.NewDecoder(res.Body).Decode(&thread) != nil {
		return nil, nil, true // the thread is not there yet
	}
	for _, m := range thread.Messages {
		if m.From != "bot" {
			continue
		}
		if m.Text != "" {
			texts = append(texts, m.Text)
		}
		if len(m.Files) > 0 {
			a := answer{Text: m.Text}
			for _, f := range m.Files {
				if path.Ext(f.Name) == ".excalidraw" {
					a.Excalidraw = []byte{} // the page links the file; its bytes are not needed here
				}
			}
			answers = append(answers, a)
		}
	}
	return answers, texts, thread.Working
}
