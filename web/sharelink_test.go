package web

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

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
	if err != nil || sc.Len() != 8 {
		t.Fatalf("decoded scene: %v", err)
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

// TestShareCodecAgainstExcalidraw runs Excalidraw's own compressData/decompressData (data/encode.ts,
// bundled into testdata/share-codec.js by ui/build.mjs) in Chromium: it must read what Go wrote, and
// Go must read what it wrote.
func TestShareCodecAgainstExcalidraw(t *testing.T) {
	t.Parallel() // each in its own tab; page loads overlap
	ctx := tab(t)
	codec, err := os.ReadFile("testdata/share-codec.js")
	if err != nil {
		t.Fatalf("read the codec bundle (run go generate ./web): %v", err)
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/codec.js" {
			w.Header().Set("Content-Type", "text/javascript")
			w.Write(codec)
			return
		}
		io.WriteString(w, `<!doctype html><script src="/codec.js"></script>`)
	}))
	defer srv.Close()
	// 127.0.0.1 is a secure context, so WebCrypto is available.
	run(t, ctx, "open", chromedp.Navigate(srv.URL))
	poll(t, ctx, "codec loaded", `!!window.ExcalidrawShareCodec`)

	doc := sampleScene(t)
	payload, key, err := EncodeSharePayload(doc)
	if err != nil {
		t.Fatal(err)
	}
	// Go → Excalidraw.
	js := fmt.Sprintf(`(async () => {
  const bytes = Uint8Array.from(atob(%q), c => c.charCodeAt(0));
  const { metadata, data } = await ExcalidrawShareCodec.decompressData(bytes, { decryptionKey: %q });
  return JSON.stringify({ metadata, scene: JSON.parse(new TextDecoder().decode(data)) });
})()`, base64.StdEncoding.EncodeToString(payload), key)
	out := run(t, ctx, "decode in Excalidraw", chromedp.Evaluate[string](js, chromedp.EvalAwaitPromise))
	var got struct {
		Metadata any             `json:"metadata"`
		Scene    json.RawMessage `json:"scene"`
	}
	if err := json.Unmarshal([]byte(out), &got); err != nil {
		t.Fatal(err)
	}
	sc, err := scene.Decode(got.Scene)
	if got.Metadata != nil || err != nil || sc.Len() != 8 {
		t.Errorf("Excalidraw decoded metadata %v and a scene with %v / %d elements; want null and 8", got.Metadata, err, sc.Len())
	}

	// Excalidraw → Go, as exportToBackend calls it (no metadata, key from WebCrypto).
	js = fmt.Sprintf(`(async () => {
  const key = await crypto.subtle.generateKey({ name: "AES-GCM", length: 128 }, true, ["encrypt", "decrypt"]);
  const k = (await crypto.subtle.exportKey("jwk", key)).k;
  const payload = await ExcalidrawShareCodec.compressData(new TextEncoder().encode(%q), { encryptionKey: k });
  return { key: k, payload: btoa(String.fromCharCode(...payload)) };
})()`, string(doc))
	type fromJS struct{ Key, Payload string }
	res := run(t, ctx, "encode in Excalidraw", chromedp.Evaluate[fromJS](js, chromedp.EvalAwaitPromise))
	raw, err := base64.StdEncoding.DecodeString(res.Payload)
	if err != nil {
		t.Fatal(err)
	}
	back, err := DecodeSharePayload(raw, res.Key)
	if err != nil {
		t.Fatalf("Go could not read Excalidraw's payload: %v", err)
	}
	if !bytes.Equal(back, doc) {
		t.Errorf("Excalidraw's payload decoded to %d bytes, want the %d bytes encoded", len(back), len(doc))
	}
}
