package web

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/excalibot/excalibot/links"
	"github.com/excalibot/excalibot/scene"
)

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
	payload, key, err := links.EncodeSharePayload(doc)
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
	back, err := links.DecodeSharePayload(raw, res.Key)
	if err != nil {
		t.Fatalf("Go could not read Excalidraw's payload: %v", err)
	}
	if !bytes.Equal(back, doc) {
		t.Errorf("Excalidraw's payload decoded to %d bytes, want the %d bytes encoded", len(back), len(doc))
	}
}
