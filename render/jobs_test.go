package render

import (
	"bytes"
	"compress/gzip"
	"encoding/base64"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// TestReadBody: a picture is read whole when its length is announced, with io.ReadAll when it is
// not, and refused when it is longer than the job allows or shorter than announced.
func TestReadBody(t *testing.T) {
	for _, tc := range []struct {
		name    string
		body    string
		length  int64
		max     int64
		want    string
		wantErr bool
	}{
		{"announced", "picture", 7, 100, "picture", false},
		{"empty", "", 0, 100, "", false},
		{"unknown length", "picture", -1, 100, "picture", false},
		{"unknown length, too long", "picture", -1, 3, "", true},
		{"announced too long", "picture", 7, 3, "", true},
		{"shorter than announced", "pic", 7, 100, "", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w := httptest.NewRecorder()
			got, err := readBody(http.MaxBytesReader(w, io.NopCloser(strings.NewReader(tc.body)), tc.max), tc.length, tc.max)
			if (err != nil) != tc.wantErr {
				t.Fatalf("err = %v, want error: %v", err, tc.wantErr)
			}
			if err == nil && string(got) != tc.want {
				t.Errorf("got %q, want %q", got, tc.want)
			}
		})
	}
	// Too long with a known length must say so the way the handler maps to 413.
	w := httptest.NewRecorder()
	_, err := readBody(http.MaxBytesReader(w, io.NopCloser(strings.NewReader("picture")), 3), -1, 3)
	if _, ok := errors.AsType[*http.MaxBytesError](err); !ok {
		t.Errorf("err = %v, want *http.MaxBytesError", err)
	}
}

// TestGzipBase64Reuse: writers come from a pool, so each job must come out as its own complete
// gzip stream whatever ran through the writer before.
func TestGzipBase64Reuse(t *testing.T) {
	inputs := []string{strings.Repeat("first job ", 3000), "second", strings.Repeat("third job ", 500)}
	for range 2 {
		for _, in := range inputs {
			b64, ok := gzipBase64([]byte(in), 1<<20)
			if !ok {
				t.Fatalf("gzipBase64(%d bytes) refused", len(in))
			}
			raw, err := base64.StdEncoding.DecodeString(b64)
			if err != nil {
				t.Fatal(err)
			}
			zr, err := gzip.NewReader(bytes.NewReader(raw))
			if err != nil {
				t.Fatal(err)
			}
			zr.Multistream(false)
			got, err := io.ReadAll(zr)
			if err != nil {
				t.Fatal(err)
			}
			if string(got) != in {
				t.Errorf("round trip of %d bytes gave %d bytes", len(in), len(got))
			}
		}
	}
	if _, ok := gzipBase64([]byte(strings.Repeat("x", 1000)), 8); ok {
		t.Error("gzipBase64 accepted a result longer than max")
	}
}
