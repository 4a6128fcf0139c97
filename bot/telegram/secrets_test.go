package telegram

import (
	"bytes"
	"context"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/excalibot/excalibot/bot"
)

// TestTokenNotInErrors: the bot token is part of every Bot API URL and of every file download
// URL, and errors from both reach the chat ("I could not download …") and the log. Every way a
// download can fail (the API down, an error answer, the download cut mid-body, a redirect to a
// dead host, a file path that makes no URL) must leave the token out of the error and the log.
func TestTokenNotInErrors(t *testing.T) {
	const token = "987654321:AAHsecret-token_value"
	dead := httptest.NewServer(http.NotFoundHandler())
	deadURL := dead.URL
	dead.Close()
	for _, tc := range []struct {
		name     string
		getFile  string // the getFile answer; "" means the API server is down
		download func(w http.ResponseWriter, r *http.Request)
	}{
		{"api down", "", nil},
		{"getFile refused", `{"ok":false,"error_code":400,"description":"Bad Request: file is too big"}`, nil},
		{"getFile 500", `{"ok":false,"error_code":500,"description":"Internal Server Error"}`, nil},
		{"download cut", `{"ok":true,"result":{"file_id":"F","file_unique_id":"U","file_size":10,"file_path":"documents/d.excalidraw"}}`,
			func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Content-Length", "1000")
				w.Write([]byte("{"))
				panic(http.ErrAbortHandler) // cut the connection mid-body
			}},
		{"download redirected to a dead host", `{"ok":true,"result":{"file_id":"F","file_unique_id":"U","file_size":10,"file_path":"documents/d.excalidraw"}}`,
			func(w http.ResponseWriter, r *http.Request) {
				http.Redirect(w, r, deadURL+r.URL.Path, http.StatusFound)
			}},
		{"file path that makes no URL", `{"ok":true,"result":{"file_id":"F","file_unique_id":"U","file_size":10,"file_path":"docs/%zz\u0000.excalidraw"}}`, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			api := deadURL
			if tc.getFile != "" {
				srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
					switch {
					case strings.HasSuffix(r.URL.Path, "/getFile"):
						w.Header().Set("Content-Type", "application/json")
						code := 200
						if strings.Contains(tc.getFile, `"error_code":500`) {
							code = 500
						}
						w.WriteHeader(code)
						w.Write([]byte(tc.getFile))
					case strings.HasPrefix(r.URL.Path, "/file/") && tc.download != nil:
						tc.download(w, r)
					default:
						http.NotFound(w, r)
					}
				}))
				defer srv.Close()
				api = srv.URL
			}
			var logs bytes.Buffer
			a, err := New(Config{Token: token, APIURL: api, RequestTimeout: 2 * time.Second, MaxRetryWait: time.Millisecond},
				nopHandler{}, slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug})))
			if err != nil {
				t.Fatal(err)
			}
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			_, err = a.FetchFile(ctx, a.attachment("F", "d.excalidraw", "application/json", 10), 1<<20)
			if err == nil {
				t.Fatal("download succeeded; the case tests nothing")
			}
			t.Logf("error: %v", err)
			for _, part := range []string{token, "AAHsecret"} {
				if strings.Contains(err.Error(), part) {
					t.Errorf("error holds the token: %v", err)
				}
				if strings.Contains(logs.String(), part) {
					t.Errorf("log holds the token:\n%s", logs.String())
				}
			}
		})
	}
}

type nopHandler struct{}

func (nopHandler) Handle(context.Context, bot.Adapter, bot.Message) error { return nil }
