package httpx

import (
	"net/http"
	"net/http/httptest"
	"testing"
)

func TestClientAddr(t *testing.T) {
	tests := []struct {
		remote, forwarded, want string
	}{
		{"192.0.2.7:51234", "", "192.0.2.7"},
		{"[2001:db8::1]:443", "", "2001:db8::1"},
		{"192.0.2.7:51234", "203.0.113.9", "192.0.2.7"}, // a forwarded header is anyone's to send
		{"@", "", "@"}, // no port (a Unix socket): as it is
	}
	for _, tt := range tests {
		r := httptest.NewRequest(http.MethodGet, "/", nil)
		r.RemoteAddr = tt.remote
		if tt.forwarded != "" {
			r.Header.Set("X-Forwarded-For", tt.forwarded)
		}
		if got := ClientAddr(r); got != tt.want {
			t.Errorf("ClientAddr(%q, forwarded %q): got %q, want %q", tt.remote, tt.forwarded, got, tt.want)
		}
	}
}

func TestWriteJSON(t *testing.T) {
	w := httptest.NewRecorder()
	WriteJSON(w, http.StatusTeapot, map[string]string{"error": "café"})
	if w.Code != http.StatusTeapot || w.Header().Get("Content-Type") != "application/json; charset=utf-8" || w.Body.String() != "{\"error\":\"café\"}\n" {
		t.Errorf("got %d %q %q", w.Code, w.Header().Get("Content-Type"), w.Body.String())
	}
}
