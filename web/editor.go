package web

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/excalibot/excalibot/diagram/outline"
	"github.com/excalibot/excalibot/internal/httpx"
	"github.com/excalibot/excalibot/internal/logkey"
	"github.com/excalibot/excalibot/render/export"
	"github.com/excalibot/excalibot/scene"
	"github.com/excalibot/excalibot/store"
)

// link is what every editor handler does first: it limits requests per token and resolves the
// token to its link. When it returns false it has answered the request (429, 404 or 500).
func (s *Server) link(w http.ResponseWriter, r *http.Request, token string) (store.Link, bool) {
	if ok, wait := s.byToken.Allow(token); !ok {
		tooMany(w, wait)
		return store.Link{}, false
	}
	link, err := s.resolve(r.Context(), token)
	if err != nil {
		s.fail(w, "resolve link", err)
		return store.Link{}, false
	}
	return link, true
}

// getDiagram serves /d/{token} (the editor page) and /d/{token}.excalidraw|.png|.svg (downloads).
func (s *Server) getDiagram(w http.ResponseWriter, r *http.Request) {
	name := r.PathValue("name")
	token, ext, _ := strings.Cut(name, ".")
	link, ok := s.link(w, r, token)
	if !ok {
		return
	}
	if ext == "" {
		s.metrics.editorOpens.Inc()
		serveEditorPage(w, r)
		return
	}
	th, err := s.st.Load(r.Context(), link.Key)
	if err != nil {
		s.fail(w, "load thread", err)
		return
	}
	if th.Scene == nil {
		notFound(w)
		return
	}
	// The file is named as the chat names the diagram's files; a scene that cannot be read is
	// still served as its .excalidraw, named without a title.
	sc, derr := scene.Decode(th.Scene) // bytes from the store, decoded here at the edge
	file := fileBase(sc, th.Rev) + "." + ext
	switch ext {
	case "excalidraw":
		// Cross-origin reads let https://excalidraw.com/#url=… open the file directly.
		w.Header().Set("Access-Control-Allow-Origin", "*")
		w.Header().Set("Content-Type", "application/vnd.excalidraw+json")
		w.Header().Set("Content-Disposition", attachment(file))
		w.Header().Set("Cache-Control", "no-store")
		w.Write(th.Scene)
	case "png", "svg":
		start := time.Now()
		err := derr
		var pic []byte
		if err == nil {
			pic, err = s.render.Render(r.Context(), sc, th.Scene, export.Format(ext), r.URL.Query().Get("theme") == "dark")
		}
		s.metrics.renders.WithLabelValues(ext, outcome(err)).Inc()
		s.metrics.renderSeconds.Observe(time.Since(start).Seconds())
		if err != nil {
			s.log.Warn("render download", "link", link.ID, logkey.Err, err)
			http.Error(w, "the picture could not be rendered right now; the .excalidraw download still works", http.StatusServiceUnavailable)
			return
		}
		w.Header().Set("Content-Type", export.Format(ext).MIME())
		w.Header().Set("Content-Disposition", attachment(file))
		w.Header().Set("Cache-Control", "no-store")
		w.Write(pic)
	default:
		notFound(w)
	}
}

// preflight answers CORS preflight for the .excalidraw download.
func (s *Server) preflight(w http.ResponseWriter, r *http.Request) {
	if !strings.HasSuffix(r.PathValue("name"), ".excalidraw") {
		notFound(w)
		return
	}
	w.Header().Set("Access-Control-Allow-Origin", "*")
	w.Header().Set("Access-Control-Allow-Methods", "GET")
	w.WriteHeader(http.StatusNoContent)
}

// sceneDoc is what the editor page loads.
type sceneDoc struct {
	Rev     int64           `json:"rev"`
	CanEdit bool            `json:"canEdit"`
	Scene   json.RawMessage `json:"scene"`
	// Name is what the page names the files it saves (Excalidraw's own export, the copy of a
	// refused edit), without the extension: the same name the chat and the downloads give them.
	Name string `json:"name"`
}

// fileBase names a diagram's files at revision rev as the chat does: after its title (nil: none).
func fileBase(sc *scene.Scene, rev int64) string {
	title := ""
	if sc != nil {
		title = outline.Of(sc).Title
	}
	return outline.FileBase(title, rev)
}

// docName is fileBase for a stored scene.
func docName(doc []byte, rev int64) string {
	sc, _ := scene.Decode(doc) // an unreadable scene is named without a title
	return fileBase(sc, rev)
}

func (s *Server) getScene(w http.ResponseWriter, r *http.Request) {
	token := r.PathValue("token")
	link, ok := s.link(w, r, token)
	if !ok {
		return
	}
	th, err := s.st.Load(r.Context(), link.Key)
	if err != nil {
		s.fail(w, "load thread", err)
		return
	}
	doc := th.Scene
	if doc == nil {
		doc = []byte(`{"type":"excalidraw","version":2,"elements":[],"appState":{},"files":{}}`)
	}
	w.Header().Set("Cache-Control", "no-store")
	httpx.WriteJSON(w, http.StatusOK, sceneDoc{Rev: th.Rev, CanEdit: link.Kind == store.LinkEdit, Scene: doc, Name: docName(th.Scene, th.Rev)})
}

// saveReply answers a save: the new revision, or why it was refused.
type saveReply struct {
	Rev   int64  `json:"rev"`
	Error string `json:"error,omitempty"`
	// Name is the files' name at the saved revision (see sceneDoc.Name).
	Name string `json:"name,omitempty"`
}

// putScene saves the editor's scene as the thread's next revision. The page sends the revision it
// started from in If-Match; when the thread moved on meanwhile the save is refused with 409 and the
// current revision, so nothing is overwritten silently.
func (s *Server) putScene(w http.ResponseWriter, r *http.Request) {
	token := r.PathValue("token")
	link, ok := s.link(w, r, token)
	if !ok {
		return
	}
	if link.Kind != store.LinkEdit {
		httpx.WriteJSON(w, http.StatusForbidden, saveReply{Error: "this is a view-only link; ask in the chat thread for the edit link"})
		return
	}
	base, err := strconv.ParseInt(strings.Trim(r.Header.Get("If-Match"), `"`), 10, 64)
	if err != nil || base < 0 {
		httpx.WriteJSON(w, http.StatusPreconditionRequired, saveReply{Error: "If-Match must carry the revision the edit started from"})
		return
	}
	body, err := io.ReadAll(r.Body)
	var tooBig *http.MaxBytesError
	if errors.As(err, &tooBig) {
		httpx.WriteJSON(w, http.StatusRequestEntityTooLarge, saveReply{Error: fmt.Sprintf("the diagram is larger than %s; remove some images or elements", scene.ByteSize(tooBig.Limit))})
		return
	}
	if err != nil {
		httpx.WriteJSON(w, http.StatusBadRequest, saveReply{Error: "could not read the request: " + err.Error()})
		return
	}
	// Counted before decoding: a few MB of bare elements decode to hundreds of MB.
	if err := s.opt.Limits.Check(body); err != nil {
		s.metrics.editorSaves.WithLabelValues("too_large").Inc()
		httpx.WriteJSON(w, http.StatusRequestEntityTooLarge, saveReply{Error: overCapAdvice(err)})
		return
	}
	sc, err := scene.Decode(body)
	if err != nil {
		httpx.WriteJSON(w, http.StatusBadRequest, saveReply{Error: err.Error()})
		return
	}
	doc, err := sc.Encode()
	if err != nil {
		s.fail(w, "encode scene", err)
		return
	}
	th, err := s.st.Save(r.Context(), store.SaveRequest{Key: link.Key, Base: base, Scene: doc, Author: store.AuthorEditor, Reason: "edited in the browser"})
	switch {
	case errors.Is(err, store.ErrConflict):
		cur, lerr := s.st.Load(r.Context(), link.Key)
		rev := int64(0)
		if lerr == nil {
			rev = cur.Rev
		}
		s.metrics.editorSaves.WithLabelValues("conflict").Inc()
		httpx.WriteJSON(w, http.StatusConflict, saveReply{Rev: rev, Error: fmt.Sprintf("the diagram changed since you opened it (now revision %d); reload to see the new version", rev)})
		return
	case errors.Is(err, store.ErrTooLarge):
		s.metrics.editorSaves.WithLabelValues("too_large").Inc()
		httpx.WriteJSON(w, http.StatusRequestEntityTooLarge, saveReply{Error: err.Error()})
		return
	case err != nil:
		s.metrics.editorSaves.WithLabelValues("error").Inc()
		s.fail(w, "save scene", err)
		return
	}
	s.metrics.editorSaves.WithLabelValues("ok").Inc()
	s.log.Info("diagram edited in the browser", logkey.Thread, link.Key.String(), "rev", th.Rev, "link", link.ID)
	if s.notify != nil {
		s.notify.Edited(r.Context(), link.Key, th.Rev)
	}
	httpx.WriteJSON(w, http.StatusOK, saveReply{Rev: th.Rev, Name: fileBase(sc, th.Rev)})
}

// overCapAdvice turns a scene.Limits refusal into the sentence the editor shows: the cap, and
// what to do about it. Nothing was saved.
func overCapAdvice(err error) string {
	var over *scene.OverCapError
	if !errors.As(err, &over) {
		return err.Error()
	}
	advice := "remove some elements or images"
	switch over.Cap {
	case scene.CapElements:
		advice = "split it, or remove some elements"
	case scene.CapText:
		advice = "shorten that text"
	}
	return fmt.Sprintf("Not saved: %v. To save, %s and save again.", err, advice)
}

// fail answers 404 for dead links and 500 for everything else, logging the cause but never the token.
func (s *Server) fail(w http.ResponseWriter, step string, err error) {
	if errors.Is(err, errNotFound) || errors.Is(err, store.ErrNotFound) {
		notFound(w)
		return
	}
	s.log.Error(step, logkey.Err, err)
	http.Error(w, "internal error; the diagram is unchanged", http.StatusInternalServerError)
}

func outcome(err error) string {
	if err != nil {
		return "error"
	}
	return "ok"
}

// attachment is the Content-Disposition of a download named file. A title in another script
// makes a name beyond ASCII, which goes as RFC 2231's filename* (what mime.FormatMediaType
// writes) rather than raw bytes in the header.
func attachment(file string) string {
	for _, r := range file {
		if r >= utf8.RuneSelf {
			if v := mime.FormatMediaType("attachment", map[string]string{"filename": file}); v != "" {
				return v
			}
			return "attachment"
		}
	}
	return `attachment; filename="` + file + `"`
}
