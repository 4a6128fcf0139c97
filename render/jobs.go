package render

import (
	"crypto/rand"
	"encoding/hex"
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
