// Package tgfake is a fake Telegram Bot API server for tests. It speaks the real wire protocol
// (POST /bot<token>/<method> with multipart, JSON or form bodies; {"ok":…} envelopes; file downloads
// under /file/bot<token>/<path>), keeps chats with per-chat message ids like Telegram does, blocks
// getUpdates until something is queued, delivers to a registered webhook, checks the limits that the
// real server enforces (caption and text length, photo dimensions, URL buttons, replies and topics),
// and records every call so tests can assert on what a chat shows.
//
// It is imported only from _test.go files: by bot/telegram's tests and by end-to-end tests of the bot.
//
//	fake := tgfake.New("123:token")
//	defer fake.Close()
//	fake.AddChat(models.Chat{ID: 5, Type: models.ChatTypePrivate})
//	// point the adapter at fake.URL (telegram.Config.APIURL) and start it, then:
//	fake.Send(tgfake.Post{Chat: 5, From: models.User{ID: 5, FirstName: "Ann"}, Text: "draw a cache"})
//	fake.WaitFor(10*time.Second, func() bool { return len(fake.BotMessages(5)) >= 2 })
//
// Groups apply privacy mode (on by default, as for a new bot; SetPrivacy(false) turns it off): the
// bot is told only of commands, mentions of it and replies to its messages. Forum topics are made
// with CreateTopic; Fail injects errors such as 429 with retry_after.
package tgfake

import (
	"encoding/json"
	"fmt"
	"io"
	"mime"
	"mime/multipart"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/go-telegram/bot/models"
)

// Telegram's limits, as the real server enforces them.
const (
	MaxTextLen       = 4096             // sendMessage / editMessageText, in UTF-16 units
	MaxCaptionLen    = 1024             // captions, in UTF-16 units
	MaxPhotoBytes    = 10 << 20         // sendPhoto upload
	MaxPhotoSides    = 10000            // width + height
	MaxPhotoRatio    = 20               // longer side / shorter side
	MaxUploadBytes   = 50 << 20         // sendDocument upload
	MaxDownloadBytes = 20 << 20         // getFile refuses bigger files
	pollCap          = 50 * time.Second // longest getUpdates wait we honour
)

// Upload is a file part of a request, or a file a user posts.
type Upload struct {
	Name string
	Data []byte
}

// Call is one recorded Bot API request.
type Call struct {
	Method string            // as in the URL, e.g. "sendPhoto"
	Fields map[string]string // scalars as sent; objects as their JSON text
	Files  map[string]Upload // multipart file parts by field name
	Code   int               // 200, or the error_code answered
	Error  string            // description of the error answered
	At     time.Time         // when the request arrived
}

// Failure is an error injected for the next calls of a method.
type Failure struct {
	Code        int    // error_code, e.g. 429
	Description string // defaults to Telegram's wording for the code
	RetryAfter  int    // parameters.retry_after in seconds (429)
	MigrateTo   int64  // parameters.migrate_to_chat_id (400: the group became a supergroup)
	Times       int    // how many calls fail; 0 means 1
}

// Server is a running fake. All methods are safe for concurrent use.
type Server struct {
	URL   string      // base URL for bot.WithServerURL (no trailing slash)
	Token string      // the only token accepted
	Bot   models.User // what getMe answers

	srv    *httptest.Server
	client *http.Client // delivers updates to a registered webhook
	done   chan struct{}

	mu         sync.Mutex
	changed    chan struct{} // closed and replaced on every change, for WaitFor and getUpdates
	nextUpdate int64
	queue      []models.Update // not yet confirmed by a getUpdates offset
	delivered  []models.Update // confirmed (or delivered to the webhook)
	redeliver  []models.Update // handed out once more regardless of the offset
	chats      map[int64]*chat
	files      map[string]*storedFile
	nextFile   int
	calls      []Call
	failures   map[string][]Failure
	commands   []models.BotCommand
	pollGen    int // the latest getUpdates call; an earlier one still waiting gets 409
	webhook    Webhook
}

// Webhook is the registered webhook, if any.
type Webhook struct {
	URL            string
	Secret         string
	AllowedUpdates []string
	MaxConnections int // 0 when not given: Telegram then opens up to 40 connections at once
}

type storedFile struct {
	id   string
	name string
	mime string
	size int64 // as reported; may exceed len(data) to simulate big files
	data []byte
}

// New starts a fake for token. The bot's id is the number before the colon in the token.
func New(token string) *Server {
	id, _ := strconv.ParseInt(strings.SplitN(token, ":", 2)[0], 10, 64)
	s := &Server{
		Token:    token,
		Bot:      models.User{ID: id, IsBot: true, FirstName: "Draw", Username: "draw_bot"},
		client:   &http.Client{Timeout: 10 * time.Second},
		done:     make(chan struct{}),
		changed:  make(chan struct{}),
		chats:    map[int64]*chat{},
		files:    map[string]*storedFile{},
		failures: map[string][]Failure{},
	}
	s.srv = httptest.NewServer(http.HandlerFunc(s.serveHTTP))
	s.URL = s.srv.URL
	return s
}

// Close stops the server; blocked getUpdates calls return at once.
func (s *Server) Close() {
	s.mu.Lock()
	select {
	case <-s.done:
	default:
		close(s.done)
	}
	s.mu.Unlock()
	s.srv.CloseClientConnections()
	s.srv.Close()
}

// notify wakes everyone waiting for a change. Called with s.mu held.
func (s *Server) notify() {
	close(s.changed)
	s.changed = make(chan struct{})
}

// WaitFor evaluates cond after every change (and every few milliseconds, for conditions outside
// the fake) until it holds or timeout passes, and reports whether it held. cond may call the
// Server's accessors.
func (s *Server) WaitFor(timeout time.Duration, cond func() bool) bool {
	deadline := time.NewTimer(timeout)
	defer deadline.Stop()
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	for {
		s.mu.Lock()
		ch := s.changed
		s.mu.Unlock()
		if cond() {
			return true
		}
		select {
		case <-ch:
		case <-tick.C:
		case <-deadline.C:
			return cond()
		}
	}
}

// apiError is an {"ok":false} answer.
type apiError struct {
	code       int
	desc       string
	retryAfter int
	migrateTo  int64
}

func (e *apiError) Error() string { return fmt.Sprintf("%d %s", e.code, e.desc) }

func badRequest(format string, args ...any) *apiError {
	return &apiError{code: 400, desc: "Bad Request: " + fmt.Sprintf(format, args...)}
}

func (s *Server) serveHTTP(w http.ResponseWriter, r *http.Request) {
	if rest, ok := strings.CutPrefix(r.URL.Path, "/file/bot"); ok {
		s.serveFile(w, rest)
		return
	}
	rest, ok := strings.CutPrefix(r.URL.Path, "/bot")
	token, method, ok2 := strings.Cut(rest, "/")
	if !ok || !ok2 {
		writeError(w, &apiError{code: 404, desc: "Not Found"})
		return
	}
	if token != s.Token {
		writeError(w, &apiError{code: 401, desc: "Unauthorized"})
		return
	}
	fields, files, err := readParams(r)
	call := Call{Method: method, Fields: fields, Files: files, Code: 200, At: time.Now()}
	var result any
	if err == nil {
		err = s.injected(method)
	}
	if err == nil {
		result, err = s.dispatch(r, method, fields, files)
	}
	if err != nil {
		ae, ok := err.(*apiError)
		if !ok {
			ae = badRequest("%v", err)
		}
		call.Code, call.Error = ae.code, ae.desc
		s.record(call)
		writeError(w, ae)
		return
	}
	s.record(call)
	raw, _ := json.Marshal(result)
	w.Header().Set("Content-Type", "application/json")
	fmt.Fprintf(w, `{"ok":true,"result":%s}`, raw)
}

func (s *Server) record(c Call) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.calls = append(s.calls, c)
	s.notify()
}

func writeError(w http.ResponseWriter, e *apiError) {
	body := map[string]any{"ok": false, "error_code": e.code, "description": e.desc}
	switch {
	case e.retryAfter > 0:
		body["parameters"] = map[string]int64{"retry_after": int64(e.retryAfter)}
	case e.migrateTo != 0:
		body["parameters"] = map[string]int64{"migrate_to_chat_id": e.migrateTo}
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(e.code)
	json.NewEncoder(w).Encode(body)
}

// injected pops an injected failure for method, if one is queued.
func (s *Server) injected(method string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	q := s.failures[strings.ToLower(method)]
	if len(q) == 0 {
		return nil
	}
	f := q[0]
	if f.Times <= 1 {
		s.failures[strings.ToLower(method)] = q[1:]
	} else {
		q[0].Times--
	}
	e := &apiError{code: f.Code, desc: f.Description, retryAfter: f.RetryAfter, migrateTo: f.MigrateTo}
	if e.desc == "" {
		switch f.Code {
		case 429:
			e.desc = fmt.Sprintf("Too Many Requests: retry after %d", f.RetryAfter)
		case 403:
			e.desc = "Forbidden: bot was blocked by the user"
		default:
			e.desc = http.StatusText(f.Code)
		}
	}
	return e
}

// Fail makes the next f.Times calls of method (e.g. "sendPhoto") answer with f's error.
func (s *Server) Fail(method string, f Failure) {
	s.mu.Lock()
	defer s.mu.Unlock()
	m := strings.ToLower(method)
	s.failures[m] = append(s.failures[m], f)
}

// readParams reads a request's parameters the ways the Bot API accepts them: multipart/form-data
// (what go-telegram/bot sends, even for getMe, whose body is then empty), application/json, and
// URL-encoded forms or query strings. JSON objects become their JSON text, as in a form.
func readParams(r *http.Request) (map[string]string, map[string]Upload, error) {
	fields, files := map[string]string{}, map[string]Upload{}
	ct, params, _ := mime.ParseMediaType(r.Header.Get("Content-Type"))
	switch ct {
	case "multipart/form-data":
		mr := multipart.NewReader(r.Body, params["boundary"])
		for {
			p, err := mr.NextPart()
			if err == io.EOF {
				break
			}
			if err != nil {
				// An empty body (a call without parameters) has no parts at all.
				if len(fields) == 0 && len(files) == 0 && strings.Contains(err.Error(), "EOF") {
					break
				}
				return nil, nil, fmt.Errorf("read multipart body: %w", err)
			}
			b, err := io.ReadAll(io.LimitReader(p, MaxUploadBytes+1))
			if err != nil {
				return nil, nil, fmt.Errorf("read part %s: %w", p.FormName(), err)
			}
			if p.FileName() != "" {
				files[p.FormName()] = Upload{Name: p.FileName(), Data: b}
			} else {
				fields[p.FormName()] = string(b)
			}
		}
	case "application/json":
		var obj map[string]json.RawMessage
		if err := json.NewDecoder(r.Body).Decode(&obj); err != nil && err != io.EOF {
			return nil, nil, fmt.Errorf("decode JSON body: %w", err)
		}
		for k, v := range obj {
			var str string
			if json.Unmarshal(v, &str) == nil {
				fields[k] = str
			} else {
				fields[k] = string(v)
			}
		}
	default:
		if err := r.ParseForm(); err != nil {
			return nil, nil, fmt.Errorf("parse form: %w", err)
		}
		for k, v := range r.Form {
			fields[k] = v[0]
		}
	}
	return fields, files, nil
}

func (s *Server) serveFile(w http.ResponseWriter, rest string) {
	token, path, _ := strings.Cut(rest, "/")
	if token != s.Token {
		http.Error(w, `{"ok":false,"error_code":401,"description":"Unauthorized"}`, http.StatusUnauthorized)
		return
	}
	s.mu.Lock()
	var f *storedFile
	for _, sf := range s.files {
		if filePath(sf) == path {
			f = sf
		}
	}
	s.mu.Unlock()
	if f == nil {
		http.Error(w, `{"ok":false,"error_code":404,"description":"Not Found"}`, http.StatusNotFound)
		return
	}
	w.Header().Set("Content-Length", strconv.Itoa(len(f.data)))
	w.Write(f.data)
}

func filePath(f *storedFile) string { return "documents/" + f.id + "_" + f.name }

// Calls returns the recorded calls of method (all calls when method is empty), oldest first.
func (s *Server) Calls(method string) []Call {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []Call
	for _, c := range s.calls {
		if method == "" || strings.EqualFold(c.Method, method) {
			out = append(out, c)
		}
	}
	return out
}

// Commands returns the commands last registered with setMyCommands.
func (s *Server) Commands() []models.BotCommand {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]models.BotCommand(nil), s.commands...)
}

// Webhook returns the registered webhook (empty URL when none).
func (s *Server) Webhook() Webhook {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.webhook
}

// PendingUpdates returns the updates queued for getUpdates and not yet confirmed.
func (s *Server) PendingUpdates() []models.Update {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]models.Update(nil), s.queue...)
}
