// Package slackfake is a fake Slack for tests: the Web API methods the bot calls, the file
// upload and download URLs, Socket Mode over a websocket, and signed Events API requests. It
// speaks Slack's wire protocol (form posts in, Slack's JSON shapes out), so the real slack-go
// client talks to it unchanged, and it records the workspace's state (messages, reactions,
// files and their alt text, the AI app's threads, users) for assertions. Import it from _test.go
// files only.
package slackfake

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/gorilla/websocket"
)

// Config names the fake workspace and its app; zero fields get the defaults below.
type Config struct {
	BotToken      string // default "xoxb-fake"
	AppToken      string // default "xapp-fake"
	SigningSecret string // default "fake-signing-secret"
	TeamID        string // default "T0FAKE"
	BotUserID     string // default "U0BOT"
	BotID         string // default "B0BOT"
	AppID         string // default "A0FAKE"
	// PingInterval is how often the websocket pings the client (default 200 ms). Slack pings
	// every few seconds; slack-go reconnects when pings stop for its ping interval.
	PingInterval time.Duration
	// RepliesPage is the most messages one conversations.replies call returns, whatever limit
	// asks (default 1000, Slack's largest page). Slack caps it far lower for some apps
	// distributed outside its Marketplace; a small value makes a reader page.
	RepliesPage int
	// AssistantAnywhere makes the assistant.threads.* methods answer ok in any thread, as
	// Slack may: its answer outside an assistant thread is not documented. The calls are
	// recorded on an AssistantThread the fake adds for that thread. By default the fake refuses
	// them there (invalid_thread_ts).
	AssistantAnywhere bool
	// Scopes are the bot token's scopes, which Slack names in the X-OAuth-Scopes header of
	// every Web API answer to it (auth.test included); nil sends no header.
	Scopes []string
}

// Message is a message in the fake workspace, the bot's or a person's.
type Message struct {
	Channel  string
	TS       string
	ThreadTS string // empty for top-level messages
	User     string
	BotID    string // set on the bot's messages
	Subtype  string // e.g. "assistant_app_thread" for an assistant thread's root; "" for most
	Text     string
	Blocks   json.RawMessage // as posted; nil without blocks
	Files    []File          // shared with this message
	Edits    int             // chat.update calls on it
	Deleted  bool
}

// File is a file in the fake workspace: uploaded by the bot, or posted by a person.
type File struct {
	ID      string
	Name    string
	Title   string
	MIME    string
	Content []byte
	User    string
	// Alt is the image's alt text (files.getUploadURLExternal's alt_txt); "" when none was given.
	Alt string
}

// Call is one request to the Web API, as received.
type Call struct {
	Method string
	Form   url.Values // the form body (token included)
	Status int        // the HTTP status answered
	At     time.Time
}

// Server is a running fake Slack. Create it with New; it closes itself when the test ends.
type Server struct {
	cfg Config
	srv *httptest.Server

	mu          sync.Mutex
	seq         int // timestamps and ids
	messages    []*Message
	reactions   map[string][]string // "channel/ts" → names
	files       map[string]*File
	pending     map[string]*pendingUpload // files.getUploadURLExternal, not yet completed
	calls       []Call
	limits      map[string][]int    // method → Retry-After seconds of the next 429 answers
	failures    map[string][]string // method → error codes of the next answers
	users       map[string]User     // users.info
	assistant   []*AssistantThread  // threads of the assistant surface (assistant.go)
	shortShares int                 // completeUploadExternal calls left that leave out their last file

	sock sockets
	gate gate // holds and outages of Web API methods (gate.go)
}

type pendingUpload struct {
	name     string
	alt      string
	length   int
	content  []byte
	uploaded bool
}

// New starts a fake Slack and registers its Close with t.Cleanup.
func New(t testing.TB, cfg Config) *Server {
	t.Helper()
	def := func(s *string, v string) {
		if *s == "" {
			*s = v
		}
	}
	def(&cfg.BotToken, "xoxb-fake")
	def(&cfg.AppToken, "xapp-fake")
	def(&cfg.SigningSecret, "fake-signing-secret")
	def(&cfg.TeamID, "T0FAKE")
	def(&cfg.BotUserID, "U0BOT")
	def(&cfg.BotID, "B0BOT")
	def(&cfg.AppID, "A0FAKE")
	if cfg.PingInterval <= 0 {
		cfg.PingInterval = 200 * time.Millisecond
	}
	s := &Server{
		cfg:       cfg,
		reactions: map[string][]string{},
		files:     map[string]*File{},
		pending:   map[string]*pendingUpload{},
		limits:    map[string][]int{},
		failures:  map[string][]string{},
		users:     map[string]User{},
	}
	s.users[cfg.BotUserID] = User{ID: cfg.BotUserID, Name: "excalibot", RealName: "excalibot", IsBot: true}
	s.sock.init()
	mux := http.NewServeMux()
	mux.HandleFunc("/api/", s.serveAPI)
	mux.HandleFunc("/upload/", s.serveUpload)
	mux.HandleFunc("/files-pri/", s.serveDownload)
	mux.HandleFunc("/signin", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		_, _ = io.WriteString(w, "<html><body>Sign in to Fake Slack</body></html>")
	})
	mux.HandleFunc("/link/", s.serveSocket)
	s.srv = httptest.NewServer(mux)
	t.Cleanup(s.Close)
	return s
}

// Close stops the server and every websocket connection.
func (s *Server) Close() {
	s.sock.closeAll()
	s.srv.Close()
	s.sock.wait()
}

// Config returns the effective configuration (defaults filled in).
func (s *Server) Config() Config { return s.cfg }

// APIURL is the Web API base URL to give the client (slack.OptionAPIURL); it ends in "/".
func (s *Server) APIURL() string { return s.srv.URL + "/api/" }

// URL is the server's base URL.
func (s *Server) URL() string { return s.srv.URL }

// RateLimit makes the next n calls of method answer 429 with Retry-After: retryAfter seconds.
func (s *Server) RateLimit(method string, n, retryAfter int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for range n {
		s.limits[method] = append(s.limits[method], retryAfter)
	}
}

// Fail makes the next n calls of method answer {"ok":false,"error":code}, e.g. "missing_scope".
func (s *Server) Fail(method, code string, n int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for range n {
		s.failures[method] = append(s.failures[method], code)
	}
}

// ShareFewer makes the next n files.completeUploadExternal calls of more than one file answer ok
// but share all the files but the last, which stays unshared: Slack's answer lists fewer files
// than it was asked to share.
func (s *Server) ShareFewer(n int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.shortShares += n
}

// Heal drops the failures and rate limits still queued for method by Fail and RateLimit.
func (s *Server) Heal(method string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.failures, method)
	delete(s.limits, method)
}

// Calls returns the Web API calls of method so far (every method when method is "").
func (s *Server) Calls(method string) []Call {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []Call
	for _, c := range s.calls {
		if method == "" || c.Method == method {
			out = append(out, c)
		}
	}
	return out
}

// Thread returns a thread's messages in order, the parent first, without deleted ones.
// threadTS "" returns the channel's top-level messages.
func (s *Server) Thread(channel, threadTS string) []Message {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []Message
	for _, m := range s.messages {
		if m.Channel != channel || m.Deleted {
			continue
		}
		if (threadTS == "" && m.ThreadTS == "") || (threadTS != "" && (m.TS == threadTS || m.ThreadTS == threadTS)) {
			out = append(out, s.copyMessage(m))
		}
	}
	return out
}

// Message returns one message, deleted or not.
func (s *Server) Message(channel, ts string) (Message, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if m := s.find(channel, ts); m != nil {
		return s.copyMessage(m), true
	}
	return Message{}, false
}

// Files returns the files shared into the workspace (the bot's and people's), oldest first.
func (s *Server) Files() []File {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []File
	for _, m := range s.messages {
		out = append(out, m.Files...)
	}
	return out
}

// Reactions returns the reactions on a message, sorted.
func (s *Server) Reactions(channel, ts string) []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := slices.Clone(s.reactions[channel+"/"+ts])
	slices.Sort(out)
	return out
}

func (s *Server) copyMessage(m *Message) Message {
	c := *m
	c.Files = slices.Clone(m.Files)
	return c
}

func (s *Server) find(channel, ts string) *Message {
	for _, m := range s.messages {
		if m.Channel == channel && m.TS == ts {
			return m
		}
	}
	return nil
}

// nextTS returns a fresh message timestamp; Slack's ts are unique per channel and ordered.
func (s *Server) nextTS() string {
	s.seq++
	return fmt.Sprintf("1700000000.%06d", s.seq)
}

func (s *Server) nextID(prefix string) string {
	s.seq++
	return fmt.Sprintf("%s%07d", prefix, s.seq)
}

// fileJSON is a file object as Slack sends it in events and in files.info.
func (s *Server) fileJSON(f *File) map[string]any {
	priv := s.srv.URL + "/files-pri/" + s.cfg.TeamID + "-" + f.ID + "/" + url.PathEscape(f.Name)
	j := map[string]any{
		"id": f.ID, "created": 1700000000, "timestamp": 1700000000, "name": f.Name, "title": f.Title,
		"mimetype": f.MIME, "filetype": strings.TrimPrefix(pathExt(f.Name), "."), "pretty_type": f.MIME,
		"user": f.User, "user_team": s.cfg.TeamID, "editable": false, "size": len(f.Content), "mode": "hosted",
		"is_external": false, "external_type": "", "is_public": true, "public_url_shared": false,
		"display_as_bot": false, "username": "",
		"url_private": priv, "url_private_download": priv + "?download=1",
		"permalink": "https://fake.slack.com/files/" + f.User + "/" + f.ID + "/" + url.PathEscape(f.Name),
	}
	if f.Alt != "" {
		j["alt_txt"] = f.Alt
	}
	return j
}

func pathExt(name string) string {
	if i := strings.LastIndex(name, "."); i >= 0 {
		return name[i:]
	}
	return ""
}

// serveAPI answers /api/<method> the way Slack does: HTTP 200 with {"ok": false, "error": …}
// for API errors, 429 with Retry-After when rate limited.
func (s *Server) serveAPI(w http.ResponseWriter, r *http.Request) {
	method := strings.TrimPrefix(r.URL.Path, "/api/")
	_ = r.ParseForm()
	if s.gated(w, r, method) {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	call := Call{Method: method, Form: r.Form, Status: http.StatusOK, At: time.Now()}
	if q := s.limits[method]; len(q) > 0 {
		s.limits[method] = q[1:]
		call.Status = http.StatusTooManyRequests
		s.calls = append(s.calls, call)
		w.Header().Set("Retry-After", strconv.Itoa(q[0]))
		w.WriteHeader(http.StatusTooManyRequests)
		return
	}
	s.calls = append(s.calls, call)

	token := r.Form.Get("token")
	if token == "" {
		token = strings.TrimPrefix(r.Header.Get("Authorization"), "Bearer ")
	}
	want := s.cfg.BotToken
	if method == "apps.connections.open" {
		want = s.cfg.AppToken
	}
	var res map[string]any
	var apiErr string
	switch {
	case token == "":
		apiErr = "not_authed"
	case token != want:
		apiErr = "invalid_auth"
	case len(s.failures[method]) > 0:
		apiErr = s.failures[method][0]
		s.failures[method] = s.failures[method][1:]
	default:
		h, ok := apiMethods[method]
		if !ok {
			apiErr = "unknown_method"
			break
		}
		res, apiErr = h(s, r.Form)
	}
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	if s.cfg.Scopes != nil && token == s.cfg.BotToken {
		w.Header().Set("X-OAuth-Scopes", strings.Join(s.cfg.Scopes, ","))
	}
	if apiErr != "" {
		_ = json.NewEncoder(w).Encode(map[string]any{"ok": false, "error": apiErr})
		return
	}
	if res == nil {
		res = map[string]any{}
	}
	res["ok"] = true
	_ = json.NewEncoder(w).Encode(res)
}

// apiMethods run with s.mu held; they return the response fields or a Slack error code.
var apiMethods = map[string]func(s *Server, f url.Values) (map[string]any, string){
	"auth.test":                             (*Server).authTest,
	"chat.postMessage":                      (*Server).postMessage,
	"chat.update":                           (*Server).updateMessage,
	"chat.delete":                           (*Server).deleteMessage,
	"reactions.add":                         (*Server).addReaction,
	"reactions.remove":                      (*Server).removeReaction,
	"files.getUploadURLExternal":            (*Server).getUploadURL,
	"files.completeUploadExternal":          (*Server).completeUpload,
	"files.info":                            (*Server).fileInfo,
	"apps.connections.open":                 (*Server).connectionsOpen,
	"conversations.replies":                 (*Server).replies,
	"users.info":                            (*Server).userInfo,
	"assistant.threads.setStatus":           (*Server).setAssistantStatus,
	"assistant.threads.setTitle":            (*Server).setAssistantTitle,
	"assistant.threads.setSuggestedPrompts": (*Server).setSuggestedPrompts,
}

func (s *Server) authTest(url.Values) (map[string]any, string) {
	return map[string]any{
		"url": "https://fake.slack.com/", "team": "Fake Workspace", "user": "excalibot",
		"team_id": s.cfg.TeamID, "user_id": s.cfg.BotUserID, "bot_id": s.cfg.BotID, "is_enterprise_install": false,
	}, ""
}

// checkThread enforces what Slack does with thread_ts: it must name a message of the channel
// (Slack would post an orphan; the fake refuses, so a wrong thread shows up in tests).
func (s *Server) checkThread(channel, threadTS string) string {
	if threadTS == "" {
		return ""
	}
	parent := s.find(channel, threadTS)
	if parent == nil {
		return "thread_not_found"
	}
	if parent.ThreadTS != "" && parent.ThreadTS != parent.TS {
		return "thread_ts_is_a_reply" // Slack wants the parent's ts, not a reply's
	}
	return ""
}

func (s *Server) postMessage(f url.Values) (map[string]any, string) {
	channel, text, blocks := f.Get("channel"), f.Get("text"), f.Get("blocks")
	if channel == "" {
		return nil, "channel_not_found"
	}
	if text == "" && blocks == "" {
		return nil, "no_text"
	}
	if e := s.checkThread(channel, f.Get("thread_ts")); e != "" {
		return nil, e
	}
	if e := checkBlocks(blocks); e != "" {
		return nil, e
	}
	if utf8.RuneCountInString(text) > 40000 {
		return nil, "msg_too_long"
	}
	m := &Message{Channel: channel, TS: s.nextTS(), ThreadTS: f.Get("thread_ts"), User: s.cfg.BotUserID,
		BotID: s.cfg.BotID, Text: text}
	if blocks != "" {
		m.Blocks = json.RawMessage(blocks)
	}
	s.messages = append(s.messages, m)
	s.botPostedIn(channel, m.ThreadTS)
	msg := map[string]any{"type": "message", "user": m.User, "bot_id": m.BotID, "text": m.Text, "ts": m.TS, "team": s.cfg.TeamID}
	if m.ThreadTS != "" {
		msg["thread_ts"] = m.ThreadTS
	}
	return map[string]any{"channel": channel, "ts": m.TS, "message": msg}, ""
}

func (s *Server) ownMessage(f url.Values, notOwn string) (*Message, string) {
	m := s.find(f.Get("channel"), f.Get("ts"))
	switch {
	case m == nil || m.Deleted:
		return nil, "message_not_found"
	case m.User != s.cfg.BotUserID:
		return nil, notOwn
	}
	return m, ""
}

func (s *Server) updateMessage(f url.Values) (map[string]any, string) {
	m, e := s.ownMessage(f, "cant_update_message")
	if e != "" {
		return nil, e
	}
	if f.Get("text") == "" && f.Get("blocks") == "" {
		return nil, "no_text"
	}
	if e := checkBlocks(f.Get("blocks")); e != "" {
		return nil, e
	}
	m.Text = f.Get("text")
	if b := f.Get("blocks"); b != "" {
		m.Blocks = json.RawMessage(b)
	}
	m.Edits++
	return map[string]any{"channel": m.Channel, "ts": m.TS, "text": m.Text}, ""
}

func (s *Server) deleteMessage(f url.Values) (map[string]any, string) {
	m, e := s.ownMessage(f, "cant_delete_message")
	if e != "" {
		return nil, e
	}
	m.Deleted = true
	return map[string]any{"channel": m.Channel, "ts": m.TS}, ""
}

func (s *Server) addReaction(f url.Values) (map[string]any, string) {
	channel, ts, name := f.Get("channel"), f.Get("timestamp"), f.Get("name")
	if m := s.find(channel, ts); m == nil || m.Deleted {
		return nil, "message_not_found"
	}
	if name == "" {
		return nil, "invalid_name"
	}
	key := channel + "/" + ts
	if slices.Contains(s.reactions[key], name) {
		return nil, "already_reacted"
	}
	s.reactions[key] = append(s.reactions[key], name)
	return nil, ""
}

func (s *Server) removeReaction(f url.Values) (map[string]any, string) {
	key := f.Get("channel") + "/" + f.Get("timestamp")
	i := slices.Index(s.reactions[key], f.Get("name"))
	if i < 0 {
		return nil, "no_reaction"
	}
	s.reactions[key] = slices.Delete(s.reactions[key], i, i+1)
	return nil, ""
}

// maxAltText is Slack's limit on an image's alt text ("alt_txt_too_large" beyond it).
const maxAltText = 1000

func (s *Server) getUploadURL(f url.Values) (map[string]any, string) {
	n, err := strconv.Atoi(f.Get("length"))
	if err != nil || n <= 0 {
		return nil, "invalid_arguments"
	}
	if f.Get("filename") == "" {
		return nil, "invalid_arguments"
	}
	if utf8.RuneCountInString(f.Get("alt_txt")) > maxAltText {
		return nil, "alt_txt_too_large"
	}
	id := s.nextID("F")
	s.pending[id] = &pendingUpload{name: f.Get("filename"), length: n, alt: f.Get("alt_txt")}
	// On the API host: slack-go v0.35 refuses to send the token anywhere else.
	return map[string]any{"upload_url": s.srv.URL + "/upload/v1/" + id, "file_id": id}, ""
}

// serveUpload receives the file content (multipart field "file") at an upload URL.
func (s *Server) serveUpload(w http.ResponseWriter, r *http.Request) {
	id := strings.TrimPrefix(r.URL.Path, "/upload/v1/")
	if r.Method != http.MethodPost {
		http.Error(w, "POST only", http.StatusMethodNotAllowed)
		return
	}
	file, _, err := r.FormFile("file")
	if err != nil {
		http.Error(w, "no file part: "+err.Error(), http.StatusBadRequest)
		return
	}
	body, err := io.ReadAll(file)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	p := s.pending[id]
	switch {
	case p == nil:
		http.Error(w, "unknown upload", http.StatusNotFound)
	case len(body) != p.length:
		http.Error(w, fmt.Sprintf("declared %d bytes, received %d", p.length, len(body)), http.StatusBadRequest)
	default:
		p.content, p.uploaded = body, true
		w.Header().Set("Content-Type", "text/plain")
		_, _ = fmt.Fprintf(w, "OK - %d", len(body))
	}
}

func (s *Server) completeUpload(f url.Values) (map[string]any, string) {
	var list []struct {
		ID    string `json:"id"`
		Title string `json:"title"`
	}
	if err := json.Unmarshal([]byte(f.Get("files")), &list); err != nil || len(list) == 0 {
		return nil, "invalid_arguments"
	}
	channel := f.Get("channel_id")
	if channel == "" && f.Get("channels") != "" {
		channel = strings.Split(f.Get("channels"), ",")[0]
	}
	if e := s.checkThread(channel, f.Get("thread_ts")); e != "" {
		return nil, e
	}
	if f.Get("thread_ts") != "" && channel == "" {
		return nil, "invalid_arguments" // a thread needs its channel
	}
	if utf8.RuneCountInString(f.Get("initial_comment")) > 40000 {
		return nil, "msg_too_long" // as chat.postMessage's text
	}
	if s.shortShares > 0 && len(list) > 1 {
		s.shortShares--
		list = list[:len(list)-1]
	}
	var shared []File
	var out []map[string]any
	for _, item := range list {
		p := s.pending[item.ID]
		if p == nil || !p.uploaded {
			return nil, "file_not_found"
		}
		title := item.Title
		if title == "" {
			title = p.name
		}
		file := &File{ID: item.ID, Name: p.name, Title: title, MIME: mimeOf(p.name), Content: p.content, User: s.cfg.BotUserID, Alt: p.alt}
		shared = append(shared, *file)
		out = append(out, map[string]any{"id": file.ID, "title": file.Title})
	}
	for _, file := range shared {
		delete(s.pending, file.ID)
		s.files[file.ID] = &file
	}
	if channel != "" {
		m := &Message{Channel: channel, TS: s.nextTS(), ThreadTS: f.Get("thread_ts"), User: s.cfg.BotUserID,
			BotID: s.cfg.BotID, Text: f.Get("initial_comment"), Files: shared}
		if b := f.Get("blocks"); b != "" && m.Text == "" {
			m.Blocks = json.RawMessage(b)
		}
		s.messages = append(s.messages, m)
		s.botPostedIn(channel, m.ThreadTS)
	}
	return map[string]any{"files": out}, ""
}

func mimeOf(name string) string {
	switch strings.ToLower(pathExt(name)) {
	case ".png":
		return "image/png"
	case ".svg":
		return "image/svg+xml"
	case ".excalidraw", ".json":
		return "application/json"
	}
	return "application/octet-stream"
}

func (s *Server) fileInfo(f url.Values) (map[string]any, string) {
	file := s.files[f.Get("file")]
	if file == nil {
		return nil, "file_not_found"
	}
	return map[string]any{"file": s.fileJSON(file), "comments": []any{}, "paging": map[string]any{"count": 0, "total": 0, "page": 1, "pages": 0}}, ""
}

// serveDownload serves url_private; without the bot token Slack redirects to its sign-in page.
func (s *Server) serveDownload(w http.ResponseWriter, r *http.Request) {
	rest := strings.TrimPrefix(r.URL.Path, "/files-pri/")
	idPart, _, _ := strings.Cut(rest, "/")
	id := strings.TrimPrefix(idPart, s.cfg.TeamID+"-")
	if r.Header.Get("Authorization") != "Bearer "+s.cfg.BotToken {
		http.Redirect(w, r, "/signin?redir="+url.QueryEscape(r.URL.Path), http.StatusFound)
		return
	}
	s.mu.Lock()
	file := s.files[id]
	s.mu.Unlock()
	if file == nil {
		http.NotFound(w, r)
		return
	}
	w.Header().Set("Content-Type", file.MIME)
	w.Header().Set("Content-Length", strconv.Itoa(len(file.Content)))
	_, _ = w.Write(file.Content)
}

// connectionsOpen hands out a websocket URL on this server.
func (s *Server) connectionsOpen(url.Values) (map[string]any, string) {
	ticket := s.nextID("ticket-")
	return map[string]any{"url": "ws" + strings.TrimPrefix(s.srv.URL, "http") + "/link/?ticket=" + ticket}, ""
}

var upgrader = websocket.Upgrader{
	// slack-go sends Origin: https://api.slack.com, which gorilla's default check refuses.
	CheckOrigin: func(*http.Request) bool { return true },
}
