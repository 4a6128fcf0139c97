package webchat

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"mime"
	"mime/multipart"
	"net/http"
	"path"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/excalibot/excalibot/bot"
	"github.com/excalibot/excalibot/internal/logkey"
	"github.com/excalibot/excalibot/scene"
)

// A file posted on the page (an .excalidraw file, an Excalidraw PNG, a photo to redraw) is kept
// in memory until the run that reads it fetches it through FetchFile: the page's threads live in
// this process only (bot.LocalAdapter), so the process that took the file is the one that reads
// it. Uploads are bounded per session and in all, and forgotten after uploadTTL; a run that
// comes too late is told the file is no longer kept.
const (
	uploadTTL         = time.Hour
	sessionUploads    = 2 // a session keeps this many largest-size files' worth of uploads
	totalUploads      = 6 // and all sessions together this many
	concurrentUploads = 4 // uploads being read at once; more wait their turn
	formOverhead      = 64 << 10
)

// upload is one kept file.
type upload struct {
	id      string
	session string
	name    string
	mime    string
	data    []byte
	at      time.Time
}

// uploadStore keeps uploads by id, oldest first.
type uploadStore struct {
	byID  map[string]*upload
	order []*upload
	size  int64
}

// put keeps u, first forgetting expired uploads, then the session's oldest and the oldest of all
// until u fits under both caps.
func (s *uploadStore) put(u *upload, now time.Time, perSession, total int64) {
	if s.byID == nil {
		s.byID = map[string]*upload{}
	}
	n := int64(len(u.data))
	sessionSize := int64(0)
	for _, o := range s.order {
		if o.session == u.session {
			sessionSize += int64(len(o.data))
		}
	}
	keep := s.order[:0]
	for _, o := range s.order {
		drop := now.Sub(o.at) >= uploadTTL
		if !drop && o.session == u.session && sessionSize+n > perSession {
			drop = true
		}
		if !drop && s.size+n > total {
			drop = true
		}
		if drop {
			delete(s.byID, o.id)
			s.size -= int64(len(o.data))
			if o.session == u.session {
				sessionSize -= int64(len(o.data))
			}
			continue
		}
		keep = append(keep, o)
	}
	clear(s.order[len(keep):]) // let the dropped ones go
	s.order = append(keep, u)
	s.byID[u.id] = u
	s.size += n
}

// remove forgets an upload whose message was not kept.
func (s *uploadStore) remove(id string) {
	u, ok := s.byID[id]
	if !ok {
		return
	}
	delete(s.byID, id)
	s.size -= int64(len(u.data))
	s.order = slices.DeleteFunc(s.order, func(o *upload) bool { return o == u })
}

func (s *uploadStore) get(id string, now time.Time) (*upload, bool) {
	u, ok := s.byID[id]
	if !ok || now.Sub(u.at) >= uploadTTL {
		return nil, false
	}
	return u, true
}

var _ bot.FileFetcher = (*Adapter)(nil)

// FetchFile implements bot.FileFetcher: the bytes of a file posted on the page, from memory.
func (c *Adapter) FetchFile(ctx context.Context, f bot.Attachment, limit int64) ([]byte, error) {
	c.mu.Lock()
	u, ok := c.uploads.get(f.Ref, c.now())
	c.mu.Unlock()
	if !ok {
		return nil, bot.UserError(fmt.Sprintf("%s is no longer kept in memory (the chat page keeps uploads for an hour, and forgets the oldest when many arrive); send it again", f.Name), nil)
	}
	if limit > 0 && int64(len(u.data)) > limit {
		return nil, bot.UserError(fmt.Sprintf("%s is %s, more than the %s I accept", f.Name, scene.ByteSize(int64(len(u.data))), scene.ByteSize(limit)), nil)
	}
	return bytes.Clone(u.data), nil
}

// isPicture tells a picture from a document as the core does: by its type or its name's ending.
// A PNG may still turn out to be an Excalidraw export, which the core imports.
func isPicture(name, mimeType string) bool {
	switch strings.ToLower(path.Ext(name)) {
	case ".png", ".jpg", ".jpeg", ".webp":
		return true
	}
	return strings.HasPrefix(mimeType, "image/")
}

// fileLimit is the largest file of its kind the core takes, and how the core says so.
func (c *Adapter) fileLimit(name, mimeType string) (int64, string) {
	if isPicture(name, mimeType) {
		max := max(c.maxImport, c.maxImage)
		return max, "I take pictures up to " + scene.ByteSize(max) + "."
	}
	return c.maxImport, "I import files up to " + scene.ByteSize(c.maxImport) + "."
}

// maxBody is the largest post the message route reads: the largest file, its text and the
// form's own bytes.
func (c *Adapter) maxBody() int64 { return max(c.maxImport, c.maxImage) + maxChatText + formOverhead }

// formError is a refusal of a post, in words for the page.
type formError struct {
	code int
	msg  string
}

func (e *formError) Error() string { return e.msg }

func refuse(code int, format string, args ...any) *formError {
	return &formError{code: code, msg: fmt.Sprintf(format, args...)}
}

// form is what a multipart post carries: the text and at most one file.
type form struct {
	text string
	file *upload
}

// readForm reads a multipart post: "text" (optional), "size" (the file's size as the browser
// knows it, optional) and "file", in that order, as the page sends them. A file over the core's
// limit for its kind is refused in the core's words before its bytes are read: by the declared
// size, else as soon as more than the limit has arrived. A part after the file is refused, so
// words sent after it are never lost without a word.
func (c *Adapter) readForm(r *http.Request, session string) (form, error) {
	if r.ContentLength > c.maxBody() {
		return form{}, refuse(http.StatusRequestEntityTooLarge, "That upload is %s; I take files up to %s.",
			scene.ByteSize(r.ContentLength), scene.ByteSize(max(c.maxImport, c.maxImage)))
	}
	mr, err := r.MultipartReader()
	if err != nil {
		c.log.Info("web chat: an upload that is not a multipart form", logkey.Err, err)
		return form{}, refuse(http.StatusBadRequest, "the upload is not a multipart form")
	}
	var f form
	declared := int64(-1)
	for {
		p, err := mr.NextPart()
		if errors.Is(err, io.EOF) {
			return f, nil
		}
		if err != nil {
			return form{}, c.readFailure("the upload", err)
		}
		switch p.FormName() {
		case "text":
			b, err := io.ReadAll(io.LimitReader(p, maxChatText+1))
			if err != nil {
				return form{}, c.readFailure("the message", err)
			}
			if len(b) > maxChatText {
				return form{}, refuse(http.StatusBadRequest, "the message is over 16 KB; shorten it and send it again")
			}
			f.text = string(b)
		case "size":
			b, _ := io.ReadAll(io.LimitReader(p, 32))
			if n, err := strconv.ParseInt(strings.TrimSpace(string(b)), 10, 64); err == nil && n >= 0 {
				declared = n
			}
		case "file":
			u, err := c.readFile(p, declared)
			if err != nil || u == nil {
				return form{}, err
			}
			u.session = session
			f.file = u
			switch next, err := mr.NextPart(); {
			case errors.Is(err, io.EOF):
				return f, nil
			case err != nil:
				return form{}, c.readFailure("the upload", err)
			default:
				return form{}, refuse(http.StatusBadRequest, "the upload has a field %q after its file; send the text before the file", clipName(next.FormName()))
			}
		default:
			return form{}, refuse(http.StatusBadRequest, "the upload has a field %q; it takes text, size and file", clipName(p.FormName()))
		}
	}
}

// readFile reads the file part, never more than one byte beyond its limit. A part without a
// name or bytes is no file (a form sent with nothing chosen).
func (c *Adapter) readFile(p *multipart.Part, declared int64) (*upload, error) {
	name := clipName(path.Base(strings.ReplaceAll(p.FileName(), `\`, "/")))
	if name == "." || name == "/" {
		name = ""
	}
	mimeType := p.Header.Get("Content-Type")
	if mt, _, err := mime.ParseMediaType(mimeType); err == nil {
		mimeType = mt
	} else {
		mimeType = ""
	}
	if mimeType == "application/octet-stream" {
		mimeType = "" // what browsers send for a type they do not know: no type at all
	}
	limit, says := c.fileLimit(name, mimeType)
	shown := name
	if shown == "" {
		shown = "The file"
	}
	if declared > limit {
		return nil, refuse(http.StatusRequestEntityTooLarge, "%s is %s; %s", shown, scene.ByteSize(declared), says)
	}
	data, err := io.ReadAll(io.LimitReader(p, limit+1))
	if err != nil {
		return nil, c.readFailure(shown, err)
	}
	if int64(len(data)) > limit {
		return nil, refuse(http.StatusRequestEntityTooLarge, "%s is more than %s; %s", shown, scene.ByteSize(limit), says)
	}
	if len(data) == 0 {
		if name == "" {
			return nil, nil
		}
		return nil, refuse(http.StatusBadRequest, "%s is empty (0 bytes); choose the file again", name)
	}
	if name == "" {
		name = "upload"
	}
	return &upload{id: randomID(16), name: name, mime: mimeType, data: data}, nil
}

// readFailure says why a post could not be read: too large for the route, or cut off.
func (c *Adapter) readFailure(what string, err error) error {
	var tooBig *http.MaxBytesError
	if errors.As(err, &tooBig) {
		return refuse(http.StatusRequestEntityTooLarge, "That upload is more than %s; I take files up to %s.",
			scene.ByteSize(tooBig.Limit), scene.ByteSize(max(c.maxImport, c.maxImage)))
	}
	c.log.Info("web chat: an upload cut off", "what", what, logkey.Err, err)
	return refuse(http.StatusBadRequest, "%s could not be read; send it again", what)
}

// clipName keeps a file or field name short and on one line for the messages that quote it.
func clipName(s string) string {
	s = strings.Map(func(r rune) rune {
		if r < ' ' || r == 0x7f {
			return -1
		}
		return r
	}, s)
	if r := []rune(s); len(r) > 120 {
		s = string(r[:120]) + "…"
	}
	return s
}

// uploadTurn waits for a turn to read an upload; the returned func gives it back.
func (c *Adapter) uploadTurn(ctx context.Context) (func(), error) {
	select {
	case c.reading <- struct{}{}:
		return func() { <-c.reading }, nil
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}
