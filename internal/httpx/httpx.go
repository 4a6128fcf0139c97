// Package httpx holds the small HTTP habits the web server and the chat page's API share, so
// both answer and identify clients one way.
package httpx

import (
	"encoding/json"
	"net"
	"net/http"
)

// ClientAddr is the TCP peer's host; forwarded headers are not trusted, since any client can
// send them.
func ClientAddr(r *http.Request) string {
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		return r.RemoteAddr
	}
	return host
}

// WriteJSON answers code with v as JSON. An error while writing is the client gone away, which
// nobody can be told of.
func WriteJSON(w http.ResponseWriter, code int, v any) {
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.WriteHeader(code)
	_ = json.NewEncoder(w).Encode(v)
}
