package links

import (
	"bytes"
	"context"
	"encoding/base64"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/excalibot/excalibot/scene"
)

func TestSharePayloadRoundTrip(t *testing.T) {
	doc := sampleScene(t)
	payload, key, err := EncodeSharePayload(doc)
	if err != nil {
		t.Fatal(err)
	}
	if len(key) != 22 {
		t.Errorf("key %q has %d characters, want 22", key, len(key))
	}
	parts, err := splitBuffers(payload)
	if err != nil || len(parts) != 3 || string(parts[0]) != shareEncoding || len(parts[1]) != 12 {
		t.Fatalf("payload layout: %v, %d parts", err, len(parts))
	}
	back, err := DecodeSharePayload(payload, key)
	if err != nil {
		t.Fatal(err)
	}
	sc, err := scene.Decode(back)
	if err != nil || sc.Len() != 4 {
		t.Fatalf("decoded scene: %v, %d elements, want the 4 of two labelled boxes", err, sc.Len())
	}
	if bytes.Contains(back, []byte(`"files"`)) {
		t.Errorf("shared scene carries files: %.200s", back)
	}

	other := base64.RawURLEncoding.EncodeToString(make([]byte, 16))
	tampered := append([]byte{}, payload...)
	tampered[len(tampered)-1] ^= 1
	for _, tc := range []struct {
		name, key string
		payload   []byte
		want      string
	}{
		{"wrong key", other, payload, "wrong key or damaged"},
		{"short key", "abc", payload, "22 base64url"},
		{"tampered", key, tampered, "wrong key or damaged"},
		{"truncated", key, payload[:40], "truncated"},
		{"not a payload", key, []byte("hello"), "buffer version"},
	} {
		if _, err := DecodeSharePayload(tc.payload, tc.key); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: error %v, want one containing %q", tc.name, err, tc.want)
		}
	}
}

func TestShareRefusesImages(t *testing.T) {
	doc := []byte(`{"type":"excalidraw","version":2,"elements":[{"type":"image","id":"i","fileId":"f"}],"appState":{},"files":{"f":{}}}`)
	if _, _, err := EncodeSharePayload(doc); err == nil || !strings.Contains(err.Error(), "images") {
		t.Errorf("scene with an image: %v, want a refusal naming images", err)
	}
}

func TestShareLinkerUpload(t *testing.T) {
	for _, tc := range []struct {
		name  string
		reply string
		code  int
		want  string // in the link or the error
	}{
		{"ok", `{"id":"abc123"}`, 200, "https://excalidraw.com/#json=abc123,"},
		{"too large", `{"error_class":"RequestTooLargeError"}`, 413, "too large"},
		{"server error", `{"error_class":"InternalError"}`, 500, "HTTP 500"},
		{"garbage", `<html>`, 502, "unreadable reply"},
	} {
		var got []byte
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			got, _ = io.ReadAll(r.Body)
			w.WriteHeader(tc.code)
			io.WriteString(w, tc.reply)
		}))
		link, err := ShareLinker{PostURL: srv.URL, Client: srv.Client()}.Link(context.Background(), sampleScene(t))
		srv.Close()
		msg := link
		if err != nil {
			msg = err.Error()
		}
		if !strings.Contains(msg, tc.want) {
			t.Errorf("%s: %q, want %q", tc.name, msg, tc.want)
		}
		if tc.name == "ok" {
			// The posted bytes open with the key in the link's fragment.
			key := link[strings.LastIndex(link, ",")+1:]
			if _, err := DecodeSharePayload(got, key); err != nil {
				t.Errorf("posted payload does not decode with the link's key: %v", err)
			}
		}
	}
}

// sampleScene is a scene of two labelled boxes.
func sampleScene(t testing.TB) []byte {
	t.Helper()
	sc := scene.New()
	for i, label := range []string{"API", "Store"} {
		e := scene.NewElement(scene.Rectangle)
		e.ID, e.X, e.Width, e.Height = label, float64(i*240), 180, 90
		if _, err := sc.Add(e); err != nil {
			t.Fatal(err)
		}
		if _, err := sc.SetLabel(e.ID, label); err != nil {
			t.Fatal(err)
		}
	}
	doc, err := sc.Encode()
	if err != nil {
		t.Fatal(err)
	}
	return doc
}
