package scene

import (
	"bytes"
	"compress/zlib"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"unicode/utf8"
)

// pngKeyword is the tEXt keyword Excalidraw uses for a scene embedded in a PNG.
const pngKeyword = "application/vnd.excalidraw+json"

var pngSignature = []byte("\x89PNG\r\n\x1a\n")

// ErrNoEmbeddedScene means a PNG is valid but carries no Excalidraw scene.
var ErrNoEmbeddedScene = errors.New("the PNG has no Excalidraw scene embedded (export it from Excalidraw with \"Embed scene\" on)")

// ErrEmbeddedTooLarge means the scene embedded in a PNG is larger than the limit it was read with.
var ErrEmbeddedTooLarge = errors.New("embedded scene is above the limit")

// IsPNG reports whether data starts with the PNG signature.
func IsPNG(data []byte) bool { return bytes.HasPrefix(data, pngSignature) }

// EmbeddedScene returns the .excalidraw JSON embedded in a PNG the way Excalidraw's exporter embeds
// it: the first tEXt chunk, keyword application/vnd.excalidraw+json, holding a Latin-1 string of
// {"version":"1","encoding":"bstring","compressed":true,"encoded":"<zlib bytes>"} or, in old
// files, the plain scene JSON. Like Excalidraw's decodePngMetadata it reads the first tEXt chunk
// only. maxScene bounds the inflated size.
func EmbeddedScene(png []byte, maxScene int) ([]byte, error) {
	if !IsPNG(png) {
		return nil, errors.New("not a PNG file")
	}
	rest := png[len(pngSignature):]
	for len(rest) >= 12 {
		n := binary.BigEndian.Uint32(rest[:4])
		typ := string(rest[4:8])
		if uint64(n)+12 > uint64(len(rest)) {
			return nil, fmt.Errorf("PNG chunk %q is cut short (%d bytes declared, %d left)", typ, n, len(rest)-12)
		}
		data := rest[8 : 8+n]
		switch typ {
		case "tEXt":
			keyword, text, ok := bytes.Cut(data, []byte{0})
			if !ok || string(keyword) != pngKeyword {
				return nil, ErrNoEmbeddedScene
			}
			return decodePNGText(latin1ToUTF8(text), maxScene)
		case "IEND":
			return nil, ErrNoEmbeddedScene
		}
		rest = rest[12+n:]
	}
	return nil, errors.New("PNG file is cut short: no IEND chunk")
}

// HasEmbeddedScene reports whether png carries an Excalidraw scene where EmbeddedScene looks for
// one (the first tEXt chunk, under Excalidraw's keyword), without inflating it: such a picture is
// a diagram to import, not a photo to read.
func HasEmbeddedScene(png []byte) bool {
	if !IsPNG(png) {
		return false
	}
	rest := png[len(pngSignature):]
	for len(rest) >= 12 {
		n := binary.BigEndian.Uint32(rest[:4])
		typ := string(rest[4:8])
		if uint64(n)+12 > uint64(len(rest)) {
			return false
		}
		switch typ {
		case "tEXt":
			keyword, _, _ := bytes.Cut(rest[8:8+n], []byte{0})
			return string(keyword) == pngKeyword
		case "IEND":
			return false
		}
		rest = rest[12+n:]
	}
	return false
}

// decodePNGText unwraps the envelope of Excalidraw's encode() (data/encode.ts).
func decodePNGText(text string, maxScene int) ([]byte, error) {
	var env struct {
		Version    string  `json:"version"`
		Encoding   string  `json:"encoding"`
		Compressed bool    `json:"compressed"`
		Encoded    *string `json:"encoded"`
	}
	if err := json.Unmarshal([]byte(text), &env); err != nil {
		return nil, fmt.Errorf("embedded scene is not JSON: %w", err)
	}
	if env.Encoded == nil { // legacy: the chunk holds the scene itself
		if len(text) > maxScene {
			return nil, fmt.Errorf("%w: %d bytes, more than %d", ErrEmbeddedTooLarge, len(text), maxScene)
		}
		return []byte(text), nil
	}
	if env.Encoding != "bstring" {
		return nil, fmt.Errorf("embedded scene uses encoding %q; only bstring is known", env.Encoding)
	}
	raw, ok := utf8ToLatin1(*env.Encoded)
	if !ok {
		return nil, errors.New("embedded scene holds characters above U+00FF in its byte string")
	}
	if !env.Compressed {
		return fromByteString(raw, maxScene)
	}
	zr, err := zlib.NewReader(bytes.NewReader(raw))
	if err != nil {
		return nil, fmt.Errorf("inflate embedded scene: %w", err)
	}
	defer zr.Close()
	out, err := io.ReadAll(io.LimitReader(zr, int64(maxScene)+1))
	if err != nil {
		return nil, fmt.Errorf("inflate embedded scene: %w", err)
	}
	return fromByteString(out, maxScene)
}

// fromByteString turns the inflated bytes back into JSON text. Excalidraw compresses the UTF-8
// bytes of the JSON (TextEncoder), so they are used as they are.
func fromByteString(b []byte, maxScene int) ([]byte, error) {
	if len(b) > maxScene {
		return nil, fmt.Errorf("%w of %d bytes", ErrEmbeddedTooLarge, maxScene)
	}
	return b, nil
}

// EmbedScene returns png with scene (the .excalidraw JSON) embedded as Excalidraw does it, so that
// dropping the picture onto excalidraw.com opens the diagram. An existing scene chunk is replaced,
// and the new one goes before any other tEXt chunk (or IEND): Excalidraw reads only the first.
func EmbedScene(png, scene []byte) ([]byte, error) {
	chunk, err := SceneChunk(scene)
	if err != nil {
		return nil, err
	}
	return EmbedSceneChunk(png, chunk)
}

// SceneChunk is the tEXt chunk's data that EmbedScene writes for scene. It does not depend on the
// picture, so a renderer can compress the scene while the picture is being drawn and add it with
// EmbedSceneChunk afterwards.
func SceneChunk(scene []byte) ([]byte, error) {
	var z bytes.Buffer
	zw := zlib.NewWriter(&z)
	if _, err := zw.Write(scene); err != nil {
		return nil, fmt.Errorf("compress scene: %w", err)
	}
	if err := zw.Close(); err != nil {
		return nil, fmt.Errorf("compress scene: %w", err)
	}
	encoded := latin1ToUTF8(z.Bytes())
	env, err := json.Marshal(map[string]any{"version": "1", "encoding": "bstring", "compressed": true, "encoded": encoded})
	if err != nil {
		return nil, fmt.Errorf("encode scene envelope: %w", err)
	}
	text, ok := utf8ToLatin1(string(env))
	if !ok { // json.Marshal escapes nothing above U+00FF here, since encoded is Latin-1 only
		return nil, errors.New("scene envelope is not Latin-1")
	}
	return append(append([]byte(pngKeyword), 0), text...), nil
}

// EmbedSceneChunk is EmbedScene with the chunk SceneChunk made.
func EmbedSceneChunk(png, chunk []byte) ([]byte, error) {
	if !IsPNG(png) {
		return nil, errors.New("not a PNG file")
	}
	out := bytes.NewBuffer(make([]byte, 0, len(png)+len(chunk)+12))
	out.Write(pngSignature)
	rest := png[len(pngSignature):]
	written := false
	for len(rest) >= 12 {
		n := binary.BigEndian.Uint32(rest[:4])
		if uint64(n)+12 > uint64(len(rest)) {
			return nil, errors.New("PNG file is cut short")
		}
		typ := string(rest[4:8])
		whole := rest[:12+n]
		rest = rest[12+n:]
		if typ == "tEXt" {
			if k, _, _ := bytes.Cut(whole[8:8+n], []byte{0}); string(k) == pngKeyword {
				continue // replaced
			}
		}
		if (typ == "tEXt" || typ == "IEND") && !written {
			writeChunk(out, "tEXt", chunk)
			written = true
		}
		out.Write(whole)
		if typ == "IEND" {
			return out.Bytes(), nil
		}
	}
	return nil, errors.New("PNG file is cut short: no IEND chunk")
}

func writeChunk(w *bytes.Buffer, typ string, data []byte) {
	var hdr [8]byte
	binary.BigEndian.PutUint32(hdr[:4], uint32(len(data)))
	copy(hdr[4:], typ)
	w.Write(hdr[:])
	w.Write(data)
	crc := crc32.NewIEEE()
	crc.Write(hdr[4:])
	crc.Write(data)
	var sum [4]byte
	binary.BigEndian.PutUint32(sum[:], crc.Sum32())
	w.Write(sum[:])
}

// latin1ToUTF8 reads each byte as one character, as png-chunk-text does.
func latin1ToUTF8(b []byte) string {
	rs := make([]rune, len(b))
	for i, c := range b {
		rs[i] = rune(c)
	}
	return string(rs)
}

// utf8ToLatin1 writes each character as one byte; false if one is above U+00FF.
func utf8ToLatin1(s string) ([]byte, bool) {
	out := make([]byte, 0, utf8.RuneCountInString(s))
	for _, r := range s {
		if r > 0xFF {
			return nil, false
		}
		out = append(out, byte(r))
	}
	return out, true
}
