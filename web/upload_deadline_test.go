package web

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"testing"
	"time"

	"github.com/excalibot/excalibot/store"
	"github.com/excalibot/excalibot/store/sqlite"
)

// TestUploadOutlastsTheReadTimeout: an upload route takes a body that arrives more slowly than
// the HTTP server's read timeout allows a request (a big picture over a poor link), while any
// other route still gets the server's timeout.
func TestUploadOutlastsTheReadTimeout(t *testing.T) {
	st, err := sqlite.Open(context.Background(), filepath.Join(t.TempDir(), "web.db"), store.Options{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	srv := New(st, pngRenderer{}, nil, nil, Options{UploadTimeout: time.Minute}, nil)
	read := func(w http.ResponseWriter, r *http.Request) {
		b, err := io.ReadAll(r.Body)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		w.WriteHeader(http.StatusAccepted)
		fmt.Fprintf(w, "%d bytes\n", len(b))
	}
	srv.HandleUpload("POST /up", http.HandlerFunc(read), 1<<20)
	srv.HandleBrowser("POST /small", http.HandlerFunc(read), false)
	ts := httptest.NewUnstartedServer(srv.Handler())
	ts.Config.ReadTimeout = 200 * time.Millisecond
	ts.Start()
	t.Cleanup(ts.Close)

	slowPost := func(path string) (int, error) {
		pr, pw := io.Pipe()
		go func() {
			// Real time: the read timeout is a deadline on the real connection.
			for range 8 { // 8 parts 100 ms apart: four times the server's read timeout
				time.Sleep(100 * time.Millisecond)
				if _, err := pw.Write([]byte("0123456789")); err != nil {
					return
				}
			}
			pw.Close()
		}()
		res, err := http.Post(ts.URL+path, "application/octet-stream", pr)
		if err != nil {
			return 0, err
		}
		defer res.Body.Close()
		io.Copy(io.Discard, res.Body)
		return res.StatusCode, nil
	}
	if code, err := slowPost("/up"); err != nil || code != http.StatusAccepted {
		t.Errorf("slow upload: %d %v, want 202", code, err)
	}
	if code, err := slowPost("/small"); err == nil && code == http.StatusAccepted {
		t.Errorf("slow post to a route that is not an upload: %d, want it cut off by the read timeout", code)
	}
}
