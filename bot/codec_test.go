package bot

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"reflect"
	"testing"
	"time"
)

var update = flag.Bool("update", false, "rewrite golden files in testdata")

// golden compares got with testdata/name, or rewrites it with -update.
func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s changed:\ngot  %s\nwant %s", name, got, want)
	}
}

// TestStoredEncoding pins what the inbox and the outbox keep: rows written by an earlier program
// must read back the same, so the encoding changes only with codecVersion.
func TestStoredEncoding(t *testing.T) {
	key := ThreadKey{Platform: "slack", Workspace: "T1", Channel: "C1", Thread: "1700000000.000100"}
	msg := Message{Key: key, EventID: "Ev1", ID: "1700000000.000200", User: "U1", UserName: "Ada", Text: "draw a box",
		Files:    []Attachment{{Name: "mine.excalidraw", MIME: "application/json", Size: 42, Ref: "F1"}},
		Received: time.UnixMilli(1772366400123)}
	body, err := EncodeMessage(msg)
	if err != nil {
		t.Fatal(err)
	}
	golden(t, "codec/message.json", body)
	back, err := DecodeMessage(key, body, nil)
	if err != nil {
		t.Fatal(err)
	}
	back.Files[0].Fetch = nil
	if !reflect.DeepEqual(back, msg) {
		t.Errorf("message read back as %+v, want %+v", back, msg)
	}

	for _, tc := range []struct {
		name string
		r    Reply
	}{
		{"reply.json", Reply{Text: "Drew r1.", Image: &File{Name: "diagram-r1.png", MIME: "image/png", Content: []byte("\x89PNG")},
			Files:   []File{{Name: "diagram-r1.excalidraw", MIME: "application/vnd.excalidraw+json", Content: []byte("{}")}},
			EditURL: "https://excalibot.example/d/e", ViewURL: "https://excalibot.example/d/v", Alt: "A box.", Title: "Box",
			ReplyTo: "1700000000.000200"}},
		{"reply-text.json", Reply{Text: "Sorry, that failed.", Error: true}},
	} {
		body, err := EncodeReply(tc.r)
		if err != nil {
			t.Fatal(err)
		}
		golden(t, "codec/"+tc.name, body)
		back, err := DecodeReply(body)
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(back, tc.r) {
			t.Errorf("%s read back as %+v, want %+v", tc.name, back, tc.r)
		}
	}
}
