package links

import (
	"bytes"
	"compress/zlib"
	"context"
	"crypto/aes"
	"crypto/cipher"
	"crypto/rand"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"time"

	"github.com/excalibot/excalibot/scene"
)

// excalidraw.com's #json= share links, built as Excalidraw builds them (excalidraw-app
// exportToBackend and packages/excalidraw/data/encode.ts compressData):
//
//	payload = concatBuffers(`{"version":2,"compression":"pako@1","encryption":"AES-GCM"}`, iv,
//	                        AES-128-GCM(key, iv, zlib(concatBuffers(`null`, sceneJSON))))
//	concatBuffers(b…) = uint32BE(1) ‖ for each b: uint32BE(len(b)) ‖ b
//
// The payload goes to json.excalidraw.com, the key only into the link's fragment, so the service
// stores the scene without being able to read it. Off by default: the scene leaves the machine.

const (
	// DefaultSharePostURL is where excalidraw.com posts share payloads (VITE_APP_BACKEND_V2_POST_URL).
	DefaultSharePostURL = "https://json.excalidraw.com/api/v2/post/"
	shareAppURL         = "https://excalidraw.com/"
	// shareMaxPayload is about what the json store accepts (excalidraw#3934: RequestTooLargeError).
	shareMaxPayload = 1 << 20
	shareEncoding   = `{"version":2,"compression":"pako@1","encryption":"AES-GCM"}`
)

// EncodeSharePayload encrypts a .excalidraw document for a #json= link and returns the payload and
// the key for the link's fragment (the JWK "k" of a random 128-bit AES key). Like Excalidraw's
// "database" serialization it leaves out files; scenes with images are refused, since their
// pictures would be missing from the link.
func EncodeSharePayload(doc []byte) (payload []byte, key string, err error) {
	body, err := shareScene(doc)
	if err != nil {
		return nil, "", err
	}
	k := make([]byte, 16)
	iv := make([]byte, 12)
	if _, err := rand.Read(k); err != nil {
		return nil, "", fmt.Errorf("share link key: %w", err)
	}
	if _, err := rand.Read(iv); err != nil {
		return nil, "", fmt.Errorf("share link iv: %w", err)
	}
	var z bytes.Buffer
	zw := zlib.NewWriter(&z) // pako.deflate writes a zlib (RFC 1950) stream
	if _, err := zw.Write(concatBuffers([]byte("null"), body)); err != nil {
		return nil, "", fmt.Errorf("share link compress: %w", err)
	}
	if err := zw.Close(); err != nil {
		return nil, "", fmt.Errorf("share link compress: %w", err)
	}
	gcm, err := newGCM(k)
	if err != nil {
		return nil, "", err
	}
	// Seal appends the 16-byte tag to the ciphertext, as WebCrypto does.
	sealed := gcm.Seal(nil, iv, z.Bytes(), nil)
	return concatBuffers([]byte(shareEncoding), iv, sealed), base64.RawURLEncoding.EncodeToString(k), nil
}

// DecodeSharePayload reverses EncodeSharePayload (and reads payloads Excalidraw made), returning
// the scene JSON.
func DecodeSharePayload(payload []byte, key string) ([]byte, error) {
	parts, err := splitBuffers(payload)
	if err != nil {
		return nil, fmt.Errorf("share payload: %w", err)
	}
	if len(parts) != 3 {
		return nil, fmt.Errorf("share payload: %d parts, want encoding, iv and data", len(parts))
	}
	var enc struct {
		Compression string `json:"compression"`
		Encryption  string `json:"encryption"`
	}
	if err := json.Unmarshal(parts[0], &enc); err != nil {
		return nil, fmt.Errorf("share payload encoding metadata: %w", err)
	}
	if enc.Encryption != "AES-GCM" {
		return nil, fmt.Errorf("share payload: encryption %q, want AES-GCM", enc.Encryption)
	}
	k, err := base64.RawURLEncoding.DecodeString(key)
	if err != nil || len(k) != 16 {
		return nil, errors.New("share link key: want 22 base64url characters (128 bits)")
	}
	gcm, err := newGCM(k)
	if err != nil {
		return nil, err
	}
	if len(parts[1]) != gcm.NonceSize() {
		return nil, fmt.Errorf("share payload: iv of %d bytes, want %d", len(parts[1]), gcm.NonceSize())
	}
	plain, err := gcm.Open(nil, parts[1], parts[2], nil)
	if err != nil {
		return nil, fmt.Errorf("share payload: decrypt (wrong key or damaged data): %w", err)
	}
	if enc.Compression != "" {
		zr, err := zlib.NewReader(bytes.NewReader(plain))
		if err != nil {
			return nil, fmt.Errorf("share payload: inflate: %w", err)
		}
		if plain, err = io.ReadAll(io.LimitReader(zr, 64<<20)); err != nil {
			return nil, fmt.Errorf("share payload: inflate: %w", err)
		}
	}
	inner, err := splitBuffers(plain)
	if err != nil || len(inner) != 2 {
		return nil, fmt.Errorf("share payload contents: want metadata and scene (%v)", err)
	}
	return inner[1], nil
}

// ShareLinker posts share payloads to excalidraw.com's store.
type ShareLinker struct {
	PostURL string       // default DefaultSharePostURL
	Client  *http.Client // default: 20 s timeout
}

// Link uploads the encrypted scene and returns https://excalidraw.com/#json=<id>,<key>. The payload
// is decoded again first, so a link that would open empty is never handed out.
func (l ShareLinker) Link(ctx context.Context, doc []byte) (string, error) {
	payload, key, err := EncodeSharePayload(doc)
	if err != nil {
		return "", err
	}
	if len(payload) > shareMaxPayload {
		return "", fmt.Errorf("the diagram is %d KB encrypted; excalidraw.com takes about %d KB: share the .excalidraw file instead", len(payload)>>10, shareMaxPayload>>10)
	}
	back, err := DecodeSharePayload(payload, key)
	if err == nil {
		_, err = scene.Decode(back)
	}
	if err != nil {
		return "", fmt.Errorf("share link check: %w", err)
	}
	url, client := l.PostURL, l.Client
	if url == "" {
		url = DefaultSharePostURL
	}
	if client == nil {
		client = &http.Client{Timeout: 20 * time.Second}
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(payload))
	if err != nil {
		return "", fmt.Errorf("share link request: %w", err)
	}
	res, err := client.Do(req)
	if err != nil {
		return "", fmt.Errorf("upload to excalidraw.com: %w", err)
	}
	defer res.Body.Close()
	var reply struct {
		ID         string `json:"id"`
		ErrorClass string `json:"error_class"`
	}
	if err := json.NewDecoder(io.LimitReader(res.Body, 64<<10)).Decode(&reply); err != nil {
		return "", fmt.Errorf("upload to excalidraw.com: HTTP %d, unreadable reply: %w", res.StatusCode, err)
	}
	switch {
	case reply.ErrorClass == "RequestTooLargeError":
		return "", errors.New("excalidraw.com refused the diagram as too large: share the .excalidraw file instead")
	case res.StatusCode/100 != 2 || reply.ID == "" || reply.ErrorClass != "":
		return "", fmt.Errorf("upload to excalidraw.com: HTTP %d %s", res.StatusCode, reply.ErrorClass)
	}
	return shareAppURL + "#json=" + reply.ID + "," + key, nil
}

// shareScene is the document as Excalidraw's "database" serialization carries it: no files.
func shareScene(doc []byte) ([]byte, error) {
	var top map[string]json.RawMessage
	if err := json.Unmarshal(doc, &top); err != nil {
		return nil, fmt.Errorf("share link: the scene is not JSON: %w", err)
	}
	var elems []struct {
		Type      string `json:"type"`
		IsDeleted bool   `json:"isDeleted"`
	}
	if err := json.Unmarshal(top["elements"], &elems); err != nil {
		return nil, fmt.Errorf("share link: elements: %w", err)
	}
	for _, e := range elems {
		if e.Type == "image" && !e.IsDeleted {
			return nil, errors.New("the diagram has images, which an excalidraw.com link cannot carry: share the .excalidraw file instead")
		}
	}
	delete(top, "files")
	return json.Marshal(top)
}

func newGCM(key []byte) (cipher.AEAD, error) {
	block, err := aes.NewCipher(key)
	if err != nil {
		return nil, fmt.Errorf("share link cipher: %w", err)
	}
	return cipher.NewGCM(block) // 12-byte nonce, 16-byte tag: WebCrypto's AES-GCM defaults
}

func concatBuffers(bufs ...[]byte) []byte {
	n := 4
	for _, b := range bufs {
		n += 4 + len(b)
	}
	out := make([]byte, 0, n)
	out = binary.BigEndian.AppendUint32(out, 1) // CONCAT_BUFFERS_VERSION
	for _, b := range bufs {
		out = binary.BigEndian.AppendUint32(out, uint32(len(b)))
		out = append(out, b...)
	}
	return out
}

func splitBuffers(b []byte) ([][]byte, error) {
	if len(b) < 4 {
		return nil, errors.New("too short")
	}
	if v := binary.BigEndian.Uint32(b); v > 1 {
		return nil, fmt.Errorf("buffer version %d, want 1", v)
	}
	var out [][]byte
	for c := 4; c < len(b); {
		if c+4 > len(b) {
			return nil, errors.New("truncated chunk length")
		}
		n := int(binary.BigEndian.Uint32(b[c:]))
		c += 4
		if n > len(b)-c {
			return nil, errors.New("truncated chunk")
		}
		out = append(out, b[c:c+n])
		c += n
	}
	return out, nil
}
