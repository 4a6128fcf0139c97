// Package webchat is the bot's third adapter, beside Slack and Telegram: the chat page excalibot
// serves itself, where a browser holds the same conversation a Slack or Telegram user has. The web
// server mounts its routes (Routes) and serves the page's HTML and scripts; this package holds the
// sessions, threads and messages (in memory; diagrams live in the store like any other thread's).
package webchat

import (
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"mime"
	"net"
	"net/http"
	"regexp"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/excalibot/excalibot/bot"
	"github.com/excalibot/excalibot/internal/clip"
	"github.com/excalibot/excalibot/internal/httpx"
	"github.com/excalibot/excalibot/internal/logkey"
)

// A browser is a session (a random id kept in its localStorage); its threads and messages live in
// memory here.
//
//	GET  /chat                              the page (?secret=… sets the access cookie)
//	GET  /chat/api/threads                  this session's threads
//	GET  /chat/api/threads/{id}             one thread's messages
//	POST /chat/api/threads/{id}/messages    {"text": …}, or a multipart form with text and a file
//	                                        → 202, the bot answers on the stream
//	GET  /chat/api/events?session=…         Server-Sent Events: thread updates, messages
//	GET  /chat/api/blobs/{id}               pictures and files of replies
const (
	Platform        = "web" // the thread keys' platform
	chatChannel     = "chat"
	chatCookie      = "excalibot_chat"
	chatSecretHdr   = "X-Excalibot-Chat-Secret"
	chatSessionHdr  = "X-Excalibot-Session"
	maxChatText     = 16 << 10
	maxSessions     = 1000
	maxThreads      = 100 // per session
	maxMessages     = 200 // per thread
	maxSubscribers  = 8   // streams per session (tabs)
	maxBlobBytes    = 128 << 20
	streamHeartbeat = 20 * time.Second
)

var chatID = regexp.MustCompile(`^[A-Za-z0-9_-]{8,64}$`)

// Adapter serves the chat page's API and is the bot.Adapter of its messages.
type Adapter struct {
	h         bot.Handler
	secret    string
	secure    bool // cookies only over HTTPS
	page      http.Handler
	now       func() time.Time
	log       *slog.Logger
	maxImport int64
	maxImage  int64
	reading   chan struct{} // a token per upload being read

	mu       sync.Mutex
	sessions map[string]*chatSession
	blobs    blobStore
	uploads  uploadStore

	closeOnce sync.Once
	closed    chan struct{}
}

var _ bot.Adapter = (*Adapter)(nil)

type chatSession struct {
	threads  map[string]*chatThread
	subs     map[chan chatEvent]struct{}
	lastUsed time.Time
}

type chatThread struct {
	ID       string        `json:"id"`
	Title    string        `json:"title"`
	Working  bool          `json:"working"`
	Status   string        `json:"status,omitempty"`
	Updated  time.Time     `json:"updated"`
	Messages []chatMessage `json:"messages,omitempty"`
	// titled: Title is a diagram's title, which a later untitled revision must not keep.
	titled bool
}

type chatMessage struct {
	ID   string    `json:"id"`
	From string    `json:"from"` // "you" or "bot"
	Text string    `json:"text"`
	Time time.Time `json:"time"`
	// Image is the picture's address, ImageName its file name and Alt what it shows, in words.
	Image     string     `json:"image,omitempty"`
	ImageName string     `json:"imageName,omitempty"`
	Alt       string     `json:"alt,omitempty"`
	Files     []chatFile `json:"files,omitempty"`
	EditURL   string     `json:"editURL,omitempty"`
	ViewURL   string     `json:"viewURL,omitempty"`
	Error     bool       `json:"error,omitempty"`
	// Upload is the file a message of the person's carried (its name and size; the bytes are
	// the run's to read, not the page's to show again).
	Upload *chatUpload `json:"upload,omitempty"`
}

type chatFile struct {
	Name string `json:"name"`
	URL  string `json:"url"`
}

type chatUpload struct {
	Name string `json:"name"`
	Size int64  `json:"size"`
}

type chatEvent struct {
	name string
	data []byte
}

// Options configure the adapter.
type Options struct {
	// Secret lets the page be used from other machines (empty: localhost only).
	Secret string
	// Secure marks the access cookie Secure: the public URL is https.
	Secure bool
	// Page serves the chat page's HTML (the web server's embedded page).
	Page http.Handler
	// MaxImportBytes and MaxImageBytes are the core's limits on an uploaded file (bot.Options'
	// fields of the same names, 20 MB each by default): the page refuses a larger file before
	// sending it, and the server before reading it whole, in the words the core uses.
	MaxImportBytes, MaxImageBytes int64
	Now                           func() time.Time // default time.Now
}

// New returns the adapter; messages go to h. Mount its Routes on the web server, and call Close
// when the server shuts down, so open streams end.
func New(h bot.Handler, opt Options, log *slog.Logger) *Adapter {
	if opt.Now == nil {
		opt.Now = time.Now
	}
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	if opt.Page == nil {
		opt.Page = http.NotFoundHandler()
	}
	if opt.MaxImportBytes <= 0 {
		opt.MaxImportBytes = 20 << 20
	}
	if opt.MaxImageBytes <= 0 {
		opt.MaxImageBytes = 20 << 20
	}
	return &Adapter{h: h, secret: opt.Secret, secure: opt.Secure, page: opt.Page, now: opt.Now,
		maxImport: opt.MaxImportBytes, maxImage: opt.MaxImageBytes, reading: make(chan struct{}, concurrentUploads),
		log: log.With("adapter", Platform), sessions: map[string]*chatSession{}, closed: make(chan struct{})}
}

// Route is one route of the page. A Stream lives as long as the tab: it gets the per-address rate
// limit but no handler timeout. A route with MaxBody takes uploads: its body may be that large,
// in place of the server's usual limit (the handler reads no further than each file's own).
type Route struct {
	Pattern string
	Handler http.Handler
	Stream  bool
	MaxBody int64
}

// Routes are the page and its API, each behind the access check.
func (c *Adapter) Routes() []Route {
	return []Route{
		{Pattern: "GET /chat", Handler: c.guard(http.HandlerFunc(c.servePage))},
		{Pattern: "GET /chat/api/threads", Handler: c.guard(http.HandlerFunc(c.listThreads))},
		{Pattern: "GET /chat/api/threads/{id}", Handler: c.guard(http.HandlerFunc(c.getThread))},
		{Pattern: "POST /chat/api/threads/{id}/messages", Handler: c.guard(http.HandlerFunc(c.post)), MaxBody: c.maxBody()},
		{Pattern: "GET /chat/api/blobs/{id}", Handler: c.guard(http.HandlerFunc(c.blob))},
		{Pattern: "GET /chat/api/events", Handler: c.guard(http.HandlerFunc(c.events)), Stream: true},
	}
}

// Close ends every open event stream. The adapter keeps accepting Send calls (they are dropped
// from no stream) so a run finishing during shutdown does not fail.
func (c *Adapter) Close() { c.closeOnce.Do(func() { close(c.closed) }) }

// Platform implements bot.Adapter.
func (c *Adapter) Platform() string { return Platform }

var _ bot.LocalAdapter = (*Adapter)(nil)

// ProcessLocal implements bot.LocalAdapter: a chat page's threads live in this process's memory,
// so their messages are worked on, and their replies posted, here only while it lives.
func (c *Adapter) ProcessLocal() bool { return true }

// Adopt implements bot.LocalAdapter: a message the page sent to a process that died before
// answering it joins this process's memory of its thread, so the page, reconnected here, shows it
// with its answer. Its upload stayed in the dead process's memory: the run says it cannot read it.
func (c *Adapter) Adopt(ctx context.Context, msg bot.Message) {
	key := msg.Key
	if key.Platform != Platform || !chatID.MatchString(key.Workspace) || !chatID.MatchString(key.Thread) {
		return
	}
	m := chatMessage{ID: msg.ID, From: "you", Text: msg.Text, Time: msg.Received}
	if m.ID == "" {
		m.ID = randomID(9)
	}
	if m.Time.IsZero() {
		m.Time = c.now()
	}
	if len(msg.Files) > 0 {
		m.Upload = &chatUpload{Name: msg.Files[0].Name, Size: msg.Files[0].Size}
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	t := c.threadLocked(key.Workspace, key.Thread)
	for _, old := range t.Messages {
		if old.ID == m.ID {
			return // this process kept it itself
		}
	}
	c.addMessageLocked(key.Workspace, key.Thread, m)
}

// Working implements bot.Adapter: the thread shows a status line until Finish.
func (c *Adapter) Working(ctx context.Context, msg bot.Message) (bot.Status, error) {
	c.setStatus(msg.Key, true, bot.WorkingText)
	return &chatStatus{c: c, key: msg.Key}, nil
}

type chatStatus struct {
	c   *Adapter
	key bot.ThreadKey
}

var _ bot.Status = (*chatStatus)(nil)

func (st *chatStatus) Update(ctx context.Context, text string) error {
	st.c.setStatus(st.key, true, bot.StatusLine(text))
	return nil
}

func (st *chatStatus) Finish(ctx context.Context) error {
	st.c.setStatus(st.key, false, "")
	return nil
}

// Send implements bot.Adapter: the reply joins the thread, its picture and files kept in memory.
func (c *Adapter) Send(ctx context.Context, key bot.ThreadKey, r bot.Reply) error {
	if key.Platform != Platform || !chatID.MatchString(key.Workspace) || !chatID.MatchString(key.Thread) {
		return fmt.Errorf("web chat: not a chat thread: %s", key)
	}
	m := chatMessage{ID: randomID(9), From: "bot", Text: r.Text, Time: c.now(), EditURL: r.EditURL, ViewURL: r.ViewURL, Error: r.Error}
	c.mu.Lock()
	defer c.mu.Unlock()
	if r.Image != nil {
		m.Image = "/chat/api/blobs/" + c.blobs.put(*r.Image)
		m.ImageName, m.Alt = r.Image.Name, r.Alt
		if m.Alt == "" && r.Title != "" { // a picture whose scene could not be described
			m.Alt = "Diagram: " + r.Title
		}
	}
	for _, f := range r.Files {
		m.Files = append(m.Files, chatFile{Name: f.Name, URL: "/chat/api/blobs/" + c.blobs.put(f)})
	}
	t := c.threadLocked(key.Workspace, key.Thread)
	switch title := strings.Join(strings.Fields(r.Title), " "); {
	case title != "":
		// The diagram's title names the thread better than its first words did; each reply
		// names it again, so the name follows the revision shown last.
		t.Title, t.titled = clip.Runes(title, 60), true
	case t.titled && r.Image != nil && !r.Error:
		// A revision without a title (an untitled file imported): the old diagram's title
		// would name a drawing that no longer has it.
		t.Title, t.titled = "diagram", false
	}
	c.addMessageLocked(key.Workspace, key.Thread, m)
	return nil
}

func (c *Adapter) setStatus(key bot.ThreadKey, working bool, text string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	t := c.threadLocked(key.Workspace, key.Thread)
	t.Working, t.Status = working, text
	c.publishThreadLocked(key.Workspace, t)
}

// roomLocked reports whether session id may be used: it is known, or there is room for it, or
// room can be made by forgetting a session without an open stream. A new browser is refused
// when every session is held open, so the cap holds against a crowd of open tabs.
func (c *Adapter) roomLocked(id string) bool {
	if _, ok := c.sessions[id]; ok || len(c.sessions) < maxSessions {
		return true
	}
	for _, ss := range c.sessions {
		if len(ss.subs) == 0 {
			return true
		}
	}
	return false
}

// chatFull is the answer to a new browser when roomLocked says no.
func chatFull(w http.ResponseWriter) {
	w.Header().Set("Retry-After", "60")
	http.Error(w, "the chat is full right now (too many open chat pages); try again in a few minutes", http.StatusServiceUnavailable)
}

// sessionLocked returns a session, making room by forgetting the least recently used one that
// has no open stream. The HTTP handlers ask roomLocked first; the core's replies go to
// sessions that posted, so they rarely find theirs forgotten.
func (c *Adapter) sessionLocked(id string) *chatSession {
	now := c.now()
	if ss, ok := c.sessions[id]; ok {
		ss.lastUsed = now
		return ss
	}
	if len(c.sessions) >= maxSessions {
		oldest := ""
		for sid, ss := range c.sessions {
			if len(ss.subs) == 0 && (oldest == "" || ss.lastUsed.Before(c.sessions[oldest].lastUsed)) {
				oldest = sid
			}
		}
		if oldest != "" {
			delete(c.sessions, oldest)
		}
	}
	ss := &chatSession{threads: map[string]*chatThread{}, subs: map[chan chatEvent]struct{}{}, lastUsed: now}
	c.sessions[id] = ss
	return ss
}

func (c *Adapter) threadLocked(session, id string) *chatThread {
	ss := c.sessionLocked(session)
	if t, ok := ss.threads[id]; ok {
		return t
	}
	if len(ss.threads) >= maxThreads {
		oldest := ""
		for tid, t := range ss.threads {
			if oldest == "" || t.Updated.Before(ss.threads[oldest].Updated) {
				oldest = tid
			}
		}
		delete(ss.threads, oldest)
	}
	t := &chatThread{ID: id, Updated: c.now()}
	ss.threads[id] = t
	return t
}

func (c *Adapter) addMessageLocked(session, thread string, m chatMessage) {
	t := c.threadLocked(session, thread)
	if t.Title == "" && m.From == "you" {
		t.Title = clip.Runes(strings.Join(strings.Fields(m.Text), " "), 60)
		if t.Title == "" && m.Upload != nil {
			t.Title = clip.Runes(m.Upload.Name, 60)
		}
	}
	t.Messages = append(t.Messages, m)
	if len(t.Messages) > maxMessages {
		t.Messages = append([]chatMessage(nil), t.Messages[len(t.Messages)-maxMessages:]...)
	}
	t.Updated = m.Time
	c.publishThreadLocked(session, t)
	c.publishLocked(session, "message", struct {
		Thread  string      `json:"thread"`
		Message chatMessage `json:"message"`
	}{thread, m})
}

func (c *Adapter) publishThreadLocked(session string, t *chatThread) {
	head := *t
	head.Messages = nil
	c.publishLocked(session, "thread", head)
}

// publishLocked hands an event to the session's streams. A stream too slow to keep up is closed;
// the page reconnects and reloads the thread, so it misses nothing.
func (c *Adapter) publishLocked(session, name string, v any) {
	ss := c.sessions[session]
	if ss == nil || len(ss.subs) == 0 {
		return
	}
	data, err := json.Marshal(v)
	if err != nil {
		c.log.Error("encode chat event", logkey.Err, err)
		return
	}
	for ch := range ss.subs {
		select {
		case ch <- chatEvent{name, data}:
		default:
			delete(ss.subs, ch)
			close(ch)
		}
	}
}

// guard lets in requests from this machine, and from elsewhere only with the shared secret.
func (c *Adapter) guard(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if c.hasSecret(r) || isLocal(r) {
			next.ServeHTTP(w, r)
			return
		}
		w.Header().Set("Cache-Control", "no-store")
		if c.secret == "" {
			http.Error(w, "The chat page is open only on the machine excalibot runs on (localhost). To use it from "+
				"elsewhere, set EXCALIBOT_CHAT_SECRET and open /chat?secret=<that secret> once.", http.StatusForbidden)
			return
		}
		http.Error(w, "The chat page needs the shared secret: open /chat?secret=<secret> once "+
			"(the secret is EXCALIBOT_CHAT_SECRET on the server).", http.StatusForbidden)
	})
}

// cookieValue is derived from the secret so the cookie itself is not the secret.
func (c *Adapter) cookieValue() string {
	m := hmac.New(sha256.New, []byte(c.secret))
	io.WriteString(m, "excalibot chat cookie v1")
	return hex.EncodeToString(m.Sum(nil))
}

func (c *Adapter) hasSecret(r *http.Request) bool {
	if c.secret == "" {
		return false
	}
	if v := r.Header.Get(chatSecretHdr); v != "" && hmac.Equal([]byte(v), []byte(c.secret)) {
		return true
	}
	if r.URL.Path == "/chat" {
		if v := r.URL.Query().Get("secret"); v != "" && hmac.Equal([]byte(v), []byte(c.secret)) {
			return true
		}
	}
	ck, err := r.Cookie(chatCookie)
	return err == nil && hmac.Equal([]byte(ck.Value), []byte(c.cookieValue()))
}

// isLocal is true for a request made on this machine to a local name. The Host check keeps web
// pages elsewhere out through DNS rebinding; forwarded headers mean a proxy on this machine passes
// on someone else's request.
func isLocal(r *http.Request) bool {
	if r.Header.Get("Forwarded") != "" || r.Header.Get("X-Forwarded-For") != "" || r.Header.Get("X-Real-Ip") != "" {
		return false
	}
	ip := net.ParseIP(httpx.ClientAddr(r))
	if ip == nil || !ip.IsLoopback() {
		return false
	}
	host := r.Host
	if h, _, err := net.SplitHostPort(host); err == nil {
		host = h
	}
	host = strings.Trim(host, "[]")
	if host == "localhost" || strings.HasSuffix(host, ".localhost") {
		return true
	}
	hip := net.ParseIP(host)
	return hip != nil && hip.IsLoopback()
}

func (c *Adapter) servePage(w http.ResponseWriter, r *http.Request) {
	if v := r.URL.Query().Get("secret"); v != "" {
		if !c.hasSecret(r) {
			http.Error(w, "wrong secret", http.StatusForbidden)
			return
		}
		// Keep the secret out of the address bar and history.
		http.SetCookie(w, &http.Cookie{Name: chatCookie, Value: c.cookieValue(), Path: "/chat", HttpOnly: true,
			SameSite: http.SameSiteStrictMode, Secure: r.TLS != nil || c.secure,
			MaxAge: 90 * 24 * 3600})
		http.Redirect(w, r, "/chat", http.StatusSeeOther)
		return
	}
	c.page.ServeHTTP(w, r)
}

// session reads the browser's id. Requests that change something also carry it in a header,
// which a page on another origin cannot send without a preflight this server never approves.
func session(r *http.Request) (string, bool) {
	id := r.Header.Get(chatSessionHdr)
	if id == "" && r.Method == http.MethodGet {
		id = r.URL.Query().Get("session")
	}
	return id, chatID.MatchString(id)
}

func (c *Adapter) listThreads(w http.ResponseWriter, r *http.Request) {
	sid, ok := session(r)
	if !ok {
		http.Error(w, "missing or malformed session id", http.StatusBadRequest)
		return
	}
	c.mu.Lock()
	var list []chatThread
	if ss := c.sessions[sid]; ss != nil {
		for _, t := range ss.threads {
			head := *t
			head.Messages = nil
			list = append(list, head)
		}
	}
	c.mu.Unlock()
	sortThreads(list)
	w.Header().Set("Cache-Control", "no-store")
	httpx.WriteJSON(w, http.StatusOK, struct {
		Threads []chatThread `json:"threads"`
		Limits  chatLimits   `json:"limits"`
	}{append([]chatThread{}, list...), chatLimits{ImportBytes: c.maxImport, PictureBytes: max(c.maxImport, c.maxImage)}})
}

// chatLimits are the largest files the page may send, so it can refuse one before sending it.
type chatLimits struct {
	ImportBytes  int64 `json:"importBytes"`
	PictureBytes int64 `json:"pictureBytes"`
}

func (c *Adapter) getThread(w http.ResponseWriter, r *http.Request) {
	sid, ok := session(r)
	if !ok {
		http.Error(w, "missing or malformed session id", http.StatusBadRequest)
		return
	}
	c.mu.Lock()
	var t chatThread
	found := false
	if ss := c.sessions[sid]; ss != nil {
		if p := ss.threads[r.PathValue("id")]; p != nil {
			t, found = *p, true
			t.Messages = append([]chatMessage{}, p.Messages...)
		}
	}
	c.mu.Unlock()
	if !found {
		http.Error(w, "not found", http.StatusNotFound)
		return
	}
	w.Header().Set("Cache-Control", "no-store")
	httpx.WriteJSON(w, http.StatusOK, t)
}

func (c *Adapter) post(w http.ResponseWriter, r *http.Request) {
	sid, ok := session(r)
	if !ok || r.Header.Get(chatSessionHdr) == "" {
		http.Error(w, "missing or malformed "+chatSessionHdr+" header", http.StatusBadRequest)
		return
	}
	if o := r.Header.Get("Origin"); o != "" && o != "http://"+r.Host && o != "https://"+r.Host {
		http.Error(w, "cross-origin posts are not accepted", http.StatusForbidden)
		return
	}
	thread := r.PathValue("id")
	if !chatID.MatchString(thread) {
		http.Error(w, "malformed thread id", http.StatusBadRequest)
		return
	}
	c.mu.Lock()
	room := c.roomLocked(sid)
	c.mu.Unlock()
	if !room {
		chatFull(w)
		return
	}
	text, up, err := c.readPost(r, sid)
	if err != nil {
		fe := &formError{code: http.StatusBadRequest, msg: err.Error()}
		errors.As(err, &fe)
		http.Error(w, fe.msg, fe.code)
		return
	}
	now := c.now()
	m := chatMessage{ID: randomID(9), From: "you", Text: text, Time: now}
	msg := bot.Message{Key: bot.ThreadKey{Platform: Platform, Workspace: sid, Channel: chatChannel, Thread: thread},
		EventID: m.ID, ID: m.ID, User: sid, UserName: userName, Text: text, Received: now}
	c.mu.Lock()
	if up != nil {
		// Kept before the core hears of it: the run may start, and fetch it, at once.
		up.at = now
		perFile := max(c.maxImport, c.maxImage)
		c.uploads.put(up, now, sessionUploads*perFile, totalUploads*perFile)
		m.Upload = &chatUpload{Name: up.name, Size: int64(len(up.data))}
		msg.Files = []bot.Attachment{{Name: up.name, MIME: up.mime, Size: int64(len(up.data)), Ref: up.id}}
	}
	c.addMessageLocked(sid, thread, m)
	c.mu.Unlock()
	if err := c.h.Handle(r.Context(), c, msg); err != nil {
		c.log.Warn("web chat: message not kept", logkey.Thread, msg.Key.String(), logkey.Err, err)
		c.mu.Lock()
		if up != nil {
			c.uploads.remove(up.id)
		}
		c.addMessageLocked(sid, thread, chatMessage{ID: randomID(9), From: "bot", Error: true, Time: c.now(),
			Text: "I could not keep that message (my database did not answer); please send it again in a minute."})
		c.mu.Unlock()
		http.Error(w, "the message was not kept; send it again", http.StatusServiceUnavailable)
		return
	}
	httpx.WriteJSON(w, http.StatusAccepted, struct {
		Message chatMessage `json:"message"`
	}{m})
}

// userName is how the core, and a discussion read back, name the person at the page.
const userName = "web user"

// readPost reads a message: JSON {"text": …}, or a multipart form with the text and a file.
func (c *Adapter) readPost(r *http.Request, session string) (string, *upload, error) {
	if mt, _, _ := mime.ParseMediaType(r.Header.Get("Content-Type")); mt == "multipart/form-data" {
		done, err := c.uploadTurn(r.Context())
		if err != nil {
			return "", nil, refuse(http.StatusServiceUnavailable, "the upload was cut off while waiting its turn; send it again")
		}
		defer done()
		r.Body = http.MaxBytesReader(nil, r.Body, c.maxBody())
		f, err := c.readForm(r, session)
		if err != nil {
			return "", nil, err
		}
		text := strings.TrimSpace(f.text)
		if text == "" && f.file == nil {
			return "", nil, refuse(http.StatusBadRequest, "the message is empty: write something or choose a file")
		}
		return text, f.file, nil
	}
	var body struct {
		Text string `json:"text"`
	}
	dec := json.NewDecoder(io.LimitReader(r.Body, maxChatText))
	if err := dec.Decode(&body); err != nil {
		c.log.Info("web chat: a message that is not JSON", logkey.Err, err)
		return "", nil, refuse(http.StatusBadRequest, "the message must be JSON {\"text\": …} under 16 KB")
	}
	text := strings.TrimSpace(body.Text)
	if text == "" {
		return "", nil, refuse(http.StatusBadRequest, "the message is empty")
	}
	return text, nil, nil
}

func (c *Adapter) blob(w http.ResponseWriter, r *http.Request) {
	c.mu.Lock()
	f, ok := c.blobs.get(r.PathValue("id"))
	c.mu.Unlock()
	if !ok {
		http.Error(w, "this file is no longer kept in memory; the diagram's links still work", http.StatusNotFound)
		return
	}
	h := w.Header()
	h.Set("Content-Type", f.MIME)
	h.Set("Cache-Control", "private, max-age=86400, immutable")
	// The picture is shown in the page, the rest downloaded; both under the name the core gave.
	disposition := "attachment"
	if strings.HasPrefix(f.MIME, "image/png") {
		disposition = "inline"
	}
	if v := mime.FormatMediaType(disposition, map[string]string{"filename": f.Name}); v != "" {
		h.Set("Content-Disposition", v)
	} else {
		h.Set("Content-Disposition", disposition)
	}
	w.Write(f.Content)
}

// events streams the session's events until the tab goes away or the adapter closes.
func (c *Adapter) events(w http.ResponseWriter, r *http.Request) {
	sid, ok := session(r)
	if !ok {
		http.Error(w, "missing or malformed session id", http.StatusBadRequest)
		return
	}
	ch := make(chan chatEvent, 64)
	c.mu.Lock()
	if !c.roomLocked(sid) {
		c.mu.Unlock()
		chatFull(w)
		return
	}
	ss := c.sessionLocked(sid)
	if len(ss.subs) >= maxSubscribers {
		c.mu.Unlock()
		http.Error(w, "too many open chat tabs for this browser", http.StatusTooManyRequests)
		return
	}
	ss.subs[ch] = struct{}{}
	c.mu.Unlock()
	defer func() {
		c.mu.Lock()
		if _, still := ss.subs[ch]; still {
			delete(ss.subs, ch)
		}
		c.mu.Unlock()
	}()

	rc := http.NewResponseController(w)
	// The server's write timeout is meant for ordinary answers; a stream has none.
	_ = rc.SetWriteDeadline(time.Time{})
	h := w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-store")
	h.Set("X-Accel-Buffering", "no")
	w.WriteHeader(http.StatusOK)
	io.WriteString(w, "retry: 3000\n: connected\n\n")
	if rc.Flush() != nil {
		return
	}
	beat := time.NewTicker(streamHeartbeat)
	defer beat.Stop()
	for {
		var err error
		select {
		case <-r.Context().Done():
			return
		case <-c.closed:
			return
		case ev, open := <-ch:
			if !open {
				return
			}
			_, err = fmt.Fprintf(w, "event: %s\ndata: %s\n\n", ev.name, ev.data)
		case <-beat.C:
			_, err = io.WriteString(w, ": ping\n\n")
		}
		if err == nil {
			err = rc.Flush()
		}
		if err != nil {
			return
		}
	}
}

// blobStore keeps reply pictures and files in memory, forgetting the oldest beyond maxBlobBytes.
type blobStore struct {
	files map[string]bot.File
	order []string
	size  int
}

func (b *blobStore) put(f bot.File) string {
	if b.files == nil {
		b.files = map[string]bot.File{}
	}
	id := randomID(16)
	b.files[id] = f
	b.order = append(b.order, id)
	b.size += len(f.Content)
	for b.size > maxBlobBytes && len(b.order) > 1 {
		old := b.order[0]
		b.order = b.order[1:]
		b.size -= len(b.files[old].Content)
		delete(b.files, old)
	}
	return id
}

func (b *blobStore) get(id string) (bot.File, bool) {
	f, ok := b.files[id]
	return f, ok
}

func randomID(n int) string {
	b := make([]byte, n)
	if _, err := rand.Read(b); err != nil {
		panic(errors.New("webchat: crypto/rand failed")) // never fails on supported platforms
	}
	return base64.RawURLEncoding.EncodeToString(b)
}

func sortThreads(ts []chatThread) {
	slices.SortFunc(ts, func(a, b chatThread) int { return b.Updated.Compare(a.Updated) }) // newest first
}
