package ollama

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"sync"
)

// The api client decodes every line of a chat stream into a ChatResponse and drops keys it does
// not know, so an error line under a key other than "error" arrives as an empty chunk. The
// transport keeps the last line of the body of a request that asks for it, for send to read.

type lastLineKey struct{}

func withLastLine(ctx context.Context, l *lastLine) context.Context {
	return context.WithValue(ctx, lastLineKey{}, l)
}

// lastLineTransport records the last line of a response body when the request's context carries
// a *lastLine.
type lastLineTransport struct{ next http.RoundTripper }

func (t lastLineTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := t.next.RoundTrip(req)
	if l, ok := req.Context().Value(lastLineKey{}).(*lastLine); ok && err == nil {
		resp.Body = &lastLineBody{ReadCloser: resp.Body, l: l}
	}
	return resp, err
}

// maxLastLine bounds what is kept: an error line is short, a content chunk may be long.
const maxLastLine = 4 << 10

// lastLine is the last non-empty line read from a body, up to maxLastLine bytes.
type lastLine struct {
	mu   sync.Mutex
	cur  []byte // the line being read
	last []byte // the last complete line
	over bool   // cur passed the bound
}

func (l *lastLine) write(p []byte) {
	l.mu.Lock()
	defer l.mu.Unlock()
	for len(p) > 0 {
		i := bytes.IndexByte(p, '\n')
		part := p
		if i >= 0 {
			part = p[:i]
		}
		if !l.over && len(l.cur)+len(part) <= maxLastLine {
			l.cur = append(l.cur, part...)
		} else {
			l.over = true
		}
		if i < 0 {
			return
		}
		if !l.over && len(bytes.TrimSpace(l.cur)) > 0 {
			l.last = append(l.last[:0], l.cur...)
		}
		l.cur, l.over, p = l.cur[:0], false, p[i+1:]
	}
}

// errorText is the value of the last line's key naming an error, or "" when the last line is not
// an object with one.
func (l *lastLine) errorText() string {
	l.mu.Lock()
	line := l.last
	if t := bytes.TrimSpace(l.cur); len(t) > 0 && !l.over {
		line = t // the body ended without a final newline
	}
	var obj map[string]json.RawMessage
	err := json.Unmarshal(line, &obj)
	l.mu.Unlock()
	if err != nil {
		return ""
	}
	for k, v := range obj {
		var text string
		if strings.Contains(strings.ToLower(k), "error") && json.Unmarshal(v, &text) == nil && text != "" {
			if k == "error" {
				return text
			}
			return k + ": " + text
		}
	}
	return ""
}

type lastLineBody struct {
	io.ReadCloser
	l *lastLine
}

func (b *lastLineBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	b.l.write(p[:n])
	return n, err
}
