package render

import (
	"bytes"
	"compress/gzip"
	"crypto/rand"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"sync"
)

// jobs hands a render to the page and takes the picture back over the page server instead of
// CDP: Runtime.evaluate carries a megabyte-sized string (a scene in, a base64 PNG out) at about
// half a second per megabyte, where a loopback HTTP request moves it in a few milliseconds. The
// page fetches GET /job/{id} and posts the picture to POST /job/{id}; ids are 128 random bits,
// so nothing else on the machine can read a scene or plant a picture.
type jobs struct {
	mu sync.Mutex
	m  map[string]*job
}

// job is one render attempt's input and, once the page has posted it, its output.
type job struct {
	id     string
	in     []byte // {"fn", "opts", "doc"} as the page reads it
	maxOut int64  // the largest picture the page may post

	mu  sync.Mutex
	out []byte
}

// add registers a job; remove must be called when the attempt is over.
func (js *jobs) add(in []byte, maxOut int64) (*job, error) {
	var b [16]byte
	if _, err := rand.Read(b[:]); err != nil {
		return nil, fmt.Errorf("render: job id: %w", err)
	}
	j := &job{id: hex.EncodeToString(b[:]), in: in, maxOut: maxOut}
	js.mu.Lock()
	defer js.mu.Unlock()
	if js.m == nil {
		js.m = make(map[string]*job)
	}
	js.m[j.id] = j
	return j, nil
}

func (js *jobs) remove(j *job) {
	js.mu.Lock()
	delete(js.m, j.id)
	js.mu.Unlock()
}

func (js *jobs) get(id string) *job {
	js.mu.Lock()
	defer js.mu.Unlock()
	return js.m[id]
}

// result returns what the page posted, nil if nothing.
func (j *job) result() []byte {
	j.mu.Lock()
	defer j.mu.Unlock()
	return j.out
}

func (js *jobs) serve(w http.ResponseWriter, r *http.Request) {
	j := js.get(r.PathValue("id"))
	if j == nil {
		http.Error(w, "no such render job", http.StatusNotFound)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.Write(j.in)
}

func (js *jobs) receive(w http.ResponseWriter, r *http.Request) {
	j := js.get(r.PathValue("id"))
	if j == nil {
		http.Error(w, "no such render job", http.StatusNotFound)
		return
	}
	body, err := readBody(http.MaxBytesReader(w, r.Body, j.maxOut), r.ContentLength, j.maxOut)
	if err != nil {
		code := http.StatusBadRequest
		if _, ok := errors.AsType[*http.MaxBytesError](err); ok {
			code = http.StatusRequestEntityTooLarge
		}
		http.Error(w, fmt.Sprintf("read picture: %v", err), code)
		return
	}
	j.mu.Lock()
	j.out = body
	j.mu.Unlock()
	w.WriteHeader(http.StatusNoContent)
}

// readBody reads a request body of the announced length into one buffer of that size. io.ReadAll
// would grow its buffer about twenty times for an 800 KB picture, copying and zeroing as it goes
// (measured: 1.5 ms and most of the garbage of a render's Go side).
func readBody(body io.Reader, length, max int64) ([]byte, error) {
	if length < 0 || length > max {
		return io.ReadAll(body) // unknown length (chunked), or too long: MaxBytesReader says so
	}
	b := make([]byte, length)
	if _, err := io.ReadFull(body, b); err != nil {
		return nil, err
	}
	return b, nil
}

// A job reaches the page in one of three ways, by size. A loopback fetch costs this Chromium
// 5-23 ms whatever its size (most of it hops between its processes), a CDP message about 1 ms up
// to 16 KB and 5-10 ms at 64 KB (measured), so:
const (
	// inlineJobMax: up to this size the job's JSON text travels inside the Runtime.evaluate call
	// (a 30-element scene is 16 KB).
	inlineJobMax = 24 << 10
	// gzipJobMax: a larger job travels inside the call gzipped and in base64 when that is at most
	// this long (a 290-element scene: 150 KB of JSON, 11 KB; its fetch took 12-17 ms); beyond it
	// the page fetches the job from /job/{id}.
	gzipJobMax = 32 << 10
)

// jobArg is the input that travels with the call that runs a job, as the text to put after the
// job's id in that call: its JSON when it is small, base64 of it gzipped when that is short enough,
// else nothing (the page fetches the job). It is a string literal that the page decodes and parses,
// so no part of the document runs as code. A render computes it once for all its attempts.
func jobArg(in []byte) string {
	if len(in) <= inlineJobMax {
		lit, err := json.Marshal(string(in))
		if err == nil { // cannot fail for a string; fetching works for any input
			return ", " + string(lit)
		}
	}
	// Scene JSON compresses 10-15x (images in it far less): past 16x the limit, don't try.
	if len(in) <= 16*gzipJobMax {
		if gz, ok := gzipBase64(in, gzipJobMax); ok {
			return fmt.Sprintf(", {gzip: %q}", gz)
		}
	}
	return ""
}

// jobExpr is the expression that runs job id in the page, with arg from jobArg.
func jobExpr(id, arg string) string { return fmt.Sprintf("ExcalidrawRender.job(%q%s)", id, arg) }

// gzipBase64 returns in gzipped (fastest level: JSON shrinks about 14x either way) and in base64,
// or false when that is longer than max.
func gzipBase64(in []byte, max int) (string, bool) {
	var b bytes.Buffer
	zw := gzipWriters.Get().(*gzip.Writer)
	defer gzipWriters.Put(zw)
	zw.Reset(&b)
	if _, err := zw.Write(in); err != nil {
		return "", false
	}
	if err := zw.Close(); err != nil || base64.StdEncoding.EncodedLen(b.Len()) > max {
		return "", false
	}
	return base64.StdEncoding.EncodeToString(b.Bytes()), true
}

// gzipWriters keeps gzip writers between jobs: a new writer allocates about a megabyte of tables,
// which Go zeroes and later collects (measured: 1.5 ms of the Go side's 20 ms per 290-element render).
var gzipWriters = sync.Pool{New: func() any {
	zw, _ := gzip.NewWriterLevel(nil, gzip.BestSpeed) // cannot fail for a valid level
	return zw
}}

// jobInput is the page's job: {"fn", "opts", "doc"}.
func jobInput(fn string, doc []byte, opts Options) ([]byte, error) {
	po, err := opts.page()
	if err != nil {
		return nil, err
	}
	vp, err := checkScene(doc)
	if err != nil {
		return nil, err
	}
	if po.Viewport == nil && vp != nil && vp.Width > 0 && vp.Height > 0 {
		po.Viewport = vp
	}
	if fn == "png" && po.EmbedScene {
		po.Reserve = len(doc)
	}
	o, err := json.Marshal(po)
	if err != nil {
		return nil, fmt.Errorf("render: encode options: %w", err)
	}
	in := make([]byte, 0, len(doc)+len(o)+32)
	in = fmt.Appendf(in, `{"fn":%q,"opts":%s,"doc":`, fn, o)
	in = append(append(in, doc...), '}')
	return in, nil
}

// sceneLiteral checks doc like checkScene and returns it as a JavaScript string literal, for
// expressions that hand the page a scene directly (Check, probes): the page parses it, so no part
// of the document runs as code.
func sceneLiteral(doc []byte) (string, *pageRect, error) {
	vp, err := checkScene(doc)
	if err != nil {
		return "", nil, err
	}
	lit, err := json.Marshal(string(doc))
	if err != nil {
		return "", nil, fmt.Errorf("render: quote scene: %w", err)
	}
	return string(lit), vp, nil
}

// checkScene checks doc enough to give a clear error for what is not a scene (it must be valid
// JSON, which also makes it safe to splice into the job's JSON), and returns the viewport the
// scene asks for (package scene keeps it in appState.excalibotViewport).
func checkScene(doc []byte) (*pageRect, error) {
	if len(doc) > MaxSceneBytes {
		return nil, fmt.Errorf("%w: the document is %d bytes; the limit is %d", ErrInvalidScene, len(doc), MaxSceneBytes)
	}
	var env struct {
		Type     string `json:"type"`
		Elements *[]struct {
			IsDeleted bool `json:"isDeleted"`
		} `json:"elements"`
		AppState struct {
			Viewport *pageRect `json:"excalibotViewport"`
		} `json:"appState"`
	}
	if err := json.Unmarshal(doc, &env); err != nil {
		return nil, fmt.Errorf("%w: not .excalidraw JSON: %v", ErrInvalidScene, err)
	}
	if env.Type != "excalidraw" {
		return nil, fmt.Errorf("%w: \"type\" is %q, want \"excalidraw\"", ErrInvalidScene, env.Type)
	}
	if env.Elements == nil {
		return nil, fmt.Errorf("%w: no \"elements\" array", ErrInvalidScene)
	}
	live := 0
	for _, e := range *env.Elements {
		if !e.IsDeleted {
			live++
		}
	}
	if live == 0 {
		return nil, fmt.Errorf("%w (%d elements, all deleted or none)", ErrEmptyScene, len(*env.Elements))
	}
	return env.AppState.Viewport, nil
}
