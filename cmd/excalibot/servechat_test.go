package main

import (
	"bytes"
	"fmt"
	"io"
	"mime/multipart"
	"net/http"
	"net/textproto"
	"os/exec"
	"strings"
	"testing"
)

// TestServeChatUpload: serve mounts the chat page's post with the file limit as its body limit,
// not the editor's: a 7 MB picture (over the editor's 6 MB) is taken, and one declared at 25 MB
// is refused in the core's words before its bytes are sent.
func TestServeChatUpload(t *testing.T) {
	if _, err := exec.LookPath("chromium"); err != nil {
		t.Skip("chromium is not installed (apt-get install chromium); .ci/run installs it")
	}
	var logs bytes.Buffer
	addr, stop := startServe(t, testConfig(t), &logs)
	defer stop()
	post := func(declared int64, data []byte) (int, string) {
		var b bytes.Buffer
		w := multipart.NewWriter(&b)
		w.WriteField("text", "redraw this")
		w.WriteField("size", fmt.Sprint(declared))
		h := textproto.MIMEHeader{}
		h.Set("Content-Disposition", `form-data; name="file"; filename="board.png"`)
		h.Set("Content-Type", "image/png")
		pw, _ := w.CreatePart(h)
		pw.Write(data)
		w.Close()
		req, _ := http.NewRequest("POST", "http://"+addr+"/chat/api/threads/thread-serve-1/messages", &b)
		req.Header.Set("Content-Type", w.FormDataContentType())
		req.Header.Set("X-Excalibot-Session", "session-serve-0123456789")
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		body, _ := io.ReadAll(res.Body)
		return res.StatusCode, strings.TrimSpace(string(body))
	}
	if code, body := post(7<<20, make([]byte, 7<<20)); code != http.StatusAccepted {
		t.Errorf("a 7 MB picture: %d %q, want 202", code, body)
	}
	want := "board.png is 25.0 MB; I take pictures up to 20.0 MB."
	if code, body := post(25<<20, []byte("\x89PNG")); code != http.StatusRequestEntityTooLarge || body != want {
		t.Errorf("a picture declared at 25 MB: %d %q, want 413 %q", code, body, want)
	}
}
