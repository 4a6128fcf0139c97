package tgfake

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"image"
	_ "image/jpeg" // photo dimensions
	_ "image/png"
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"time"
	"unicode/utf16"

	"github.com/go-telegram/bot/models"
)

func (s *Server) dispatch(r *http.Request, method string, f map[string]string, files map[string]Upload) (any, error) {
	switch strings.ToLower(method) {
	case "getme":
		s.mu.Lock()
		defer s.mu.Unlock()
		return s.Bot, nil
	case "getupdates":
		return s.getUpdates(r.Context(), f)
	case "sendmessage":
		return s.sendMessage(f)
	case "sendphoto":
		return s.sendMedia(f, files, "photo")
	case "senddocument":
		return s.sendMedia(f, files, "document")
	case "editmessagetext":
		return s.editMessageText(f)
	case "sendchataction":
		return s.sendChatAction(f)
	case "deletemessage":
		return s.deleteMessage(f)
	case "setmycommands":
		return s.setMyCommands(f)
	case "getfile":
		return s.getFile(f)
	case "setwebhook":
		return s.setWebhook(f)
	case "deletewebhook":
		s.mu.Lock()
		defer s.mu.Unlock()
		s.webhook = Webhook{}
		return true, nil
	}
	return nil, &apiError{code: 404, desc: "Not Found"}
}

func (s *Server) getUpdates(ctx context.Context, f map[string]string) (any, error) {
	offset, _ := strconv.ParseInt(f["offset"], 10, 64)
	limit, _ := strconv.Atoi(f["limit"])
	if limit <= 0 || limit > 100 {
		limit = 100
	}
	timeout, _ := strconv.Atoi(f["timeout"])
	wait := min(time.Duration(timeout)*time.Second, pollCap)
	deadline := time.NewTimer(wait)
	defer deadline.Stop()
	s.mu.Lock()
	s.pollGen++
	mine := s.pollGen
	s.notify() // wakes an earlier poller, which now gives way
	s.mu.Unlock()
	for {
		s.mu.Lock()
		if s.pollGen != mine {
			s.mu.Unlock()
			return nil, &apiError{code: 409, desc: "Conflict: terminated by other getUpdates request; make sure that only one bot instance is running"}
		}
		if s.webhook.URL != "" {
			s.mu.Unlock()
			return nil, &apiError{code: 409, desc: "Conflict: can't use getUpdates method while webhook is active; use deleteWebhook to delete the webhook first"}
		}
		// An offset confirms every update before it, as on the real server.
		keep := s.queue[:0]
		for _, u := range s.queue {
			if u.ID < offset {
				s.delivered = append(s.delivered, u)
			} else {
				keep = append(keep, u)
			}
		}
		s.queue = keep
		out := append([]models.Update{}, s.redeliver...)
		s.redeliver = nil
		for _, u := range s.queue {
			if len(out) < limit {
				out = append(out, u)
			}
		}
		ch := s.changed
		s.mu.Unlock()
		if len(out) > 0 {
			return out, nil
		}
		// Block like the real server: answering [] at once makes clients spin.
		select {
		case <-ch:
		case <-deadline.C:
			return []models.Update{}, nil
		case <-ctx.Done():
			return []models.Update{}, nil
		case <-s.done:
			return []models.Update{}, nil
		}
	}
}

func utf16Len(s string) int { return len(utf16.Encode([]rune(s))) }

// target finds the chat of a send and applies message_thread_id and reply_parameters the way
// Telegram checks them. Called with s.mu held.
func (s *Server) target(f map[string]string) (*chat, int, int, error) {
	id, err := strconv.ParseInt(f["chat_id"], 10, 64)
	c := s.chats[id]
	if err != nil || c == nil {
		return nil, 0, 0, badRequest("chat not found")
	}
	topic, _ := strconv.Atoi(f["message_thread_id"])
	if topic != 0 && (!c.info.IsForum || !c.topics[topic]) {
		return nil, 0, 0, badRequest("message thread not found")
	}
	replyTo := 0
	if rp := f["reply_parameters"]; rp != "" {
		var p models.ReplyParameters
		if err := json.Unmarshal([]byte(rp), &p); err != nil {
			return nil, 0, 0, badRequest("can't parse reply parameters JSON object")
		}
		if c.byID[p.MessageID] == nil || c.byID[p.MessageID].Deleted {
			if !p.AllowSendingWithoutReply {
				return nil, 0, 0, badRequest("message to be replied not found")
			}
		} else {
			replyTo = p.MessageID
		}
	}
	return c, topic, replyTo, nil
}

func (s *Server) botMessage(c *chat, kind, text string, replyTo, topic int, btns []Button) *stored {
	m := &stored{Message: Message{FromBot: true, From: s.Bot.ID, Kind: kind, Text: text, Buttons: btns}}
	bot := s.Bot
	m.raw.From = &bot
	link(c, m, replyTo, topic)
	return m
}

func (s *Server) sendMessage(f map[string]string) (any, error) {
	text := f["text"]
	switch {
	case strings.TrimSpace(text) == "":
		return nil, badRequest("message text is empty")
	case utf16Len(text) > MaxTextLen:
		return nil, badRequest("message is too long")
	}
	btns, err := buttons(f["reply_markup"])
	if err != nil {
		return nil, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	c, topic, replyTo, err := s.target(f)
	if err != nil {
		return nil, err
	}
	m := s.botMessage(c, "text", text, replyTo, topic, btns)
	m.raw.Text = text
	s.add(c, m)
	return m.raw, nil
}

// sendMedia handles sendPhoto and sendDocument, with uploads or file ids of stored files.
func (s *Server) sendMedia(f map[string]string, files map[string]Upload, kind string) (any, error) {
	caption := f["caption"]
	if utf16Len(caption) > MaxCaptionLen {
		return nil, badRequest("message caption is too long")
	}
	btns, err := buttons(f["reply_markup"])
	if err != nil {
		return nil, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	up, ok := files[kind]
	if !ok {
		sf := s.files[f[kind]]
		if sf == nil {
			return nil, badRequest("there is no %s in the request", kind)
		}
		up = Upload{Name: sf.name, Data: sf.data}
	}
	c, topic, replyTo, err := s.target(f)
	if err != nil {
		return nil, err
	}
	m := s.botMessage(c, kind, caption, replyTo, topic, btns)
	m.File = up
	m.raw.Caption = caption
	if kind == "photo" {
		if len(up.Data) > MaxPhotoBytes {
			return nil, badRequest("PHOTO_SAVE_FILE_INVALID")
		}
		cfg, _, err := image.DecodeConfig(bytes.NewReader(up.Data))
		if err != nil {
			return nil, badRequest("IMAGE_PROCESS_FAILED")
		}
		w, h := cfg.Width, cfg.Height
		if w+h > MaxPhotoSides || w > MaxPhotoRatio*h || h > MaxPhotoRatio*w {
			return nil, badRequest("PHOTO_INVALID_DIMENSIONS")
		}
		// Telegram keeps a recompressed JPEG; the fake keeps the bytes but names the size.
		sf := s.storeFile("photo.jpg", up.Data)
		m.raw.Photo = []models.PhotoSize{{FileID: sf.id, FileUniqueID: "u" + sf.id, Width: w, Height: h, FileSize: int(sf.size)}}
	} else {
		if len(up.Data) > MaxUploadBytes {
			return nil, &apiError{code: 413, desc: "Request Entity Too Large"}
		}
		sf := s.storeFile(up.Name, up.Data)
		m.raw.Document = &models.Document{FileID: sf.id, FileUniqueID: "u" + sf.id, FileName: up.Name, MimeType: sf.mime, FileSize: sf.size}
	}
	s.add(c, m)
	return m.raw, nil
}

// message finds a message by chat_id and message_id. Called with s.mu held.
func (s *Server) message(f map[string]string, notFound string) (*chat, *stored, error) {
	id, _ := strconv.ParseInt(f["chat_id"], 10, 64)
	c := s.chats[id]
	if c == nil {
		return nil, nil, badRequest("chat not found")
	}
	mid, _ := strconv.Atoi(f["message_id"])
	m := c.byID[mid]
	if m == nil || m.Deleted {
		return nil, nil, badRequest("%s", notFound)
	}
	return c, m, nil
}

func (s *Server) editMessageText(f map[string]string) (any, error) {
	text := f["text"]
	switch {
	case strings.TrimSpace(text) == "":
		return nil, badRequest("message text is empty")
	case utf16Len(text) > MaxTextLen:
		return nil, badRequest("message is too long")
	}
	btns, err := buttons(f["reply_markup"])
	if err != nil {
		return nil, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	_, m, err := s.message(f, "message to edit not found")
	if err != nil {
		return nil, err
	}
	switch {
	case !m.FromBot:
		return nil, badRequest("message can't be edited")
	case m.Kind != "text":
		return nil, badRequest("there is no text in the message to edit")
	case m.Text == text && fmt.Sprint(m.Buttons) == fmt.Sprint(btns):
		return nil, badRequest("message is not modified: specified new message content and reply markup are exactly the same as a current content and reply markup of the message")
	}
	m.Edits = append(m.Edits, m.Text)
	m.Text, m.raw.Text, m.Buttons = text, text, btns
	m.raw.EditDate = int(time.Now().Unix())
	s.notify()
	return m.raw, nil
}

var chatActions = map[string]bool{
	"typing": true, "upload_photo": true, "record_video": true, "upload_video": true, "record_voice": true,
	"upload_voice": true, "upload_document": true, "choose_sticker": true, "find_location": true,
	"record_video_note": true, "upload_video_note": true,
}

func (s *Server) sendChatAction(f map[string]string) (any, error) {
	if !chatActions[f["action"]] {
		return nil, badRequest("wrong parameter action in request")
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, _, _, err := s.target(f); err != nil {
		return nil, err
	}
	return true, nil
}

func (s *Server) deleteMessage(f map[string]string) (any, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	_, m, err := s.message(f, "message to delete not found")
	if err != nil {
		return nil, err
	}
	m.Deleted = true
	s.notify()
	return true, nil
}

var commandName = regexp.MustCompile(`^[a-z0-9_]{1,32}$`)

func (s *Server) setMyCommands(f map[string]string) (any, error) {
	var cmds []models.BotCommand
	if err := json.Unmarshal([]byte(f["commands"]), &cmds); err != nil {
		return nil, badRequest("can't parse commands JSON object")
	}
	if len(cmds) > 100 {
		return nil, badRequest("too many commands")
	}
	for _, c := range cmds {
		if !commandName.MatchString(c.Command) {
			return nil, badRequest("BOT_COMMAND_INVALID")
		}
		if n := utf16Len(c.Description); n < 1 || n > 256 {
			return nil, badRequest("BOT_COMMAND_DESCRIPTION_INVALID")
		}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.commands = cmds
	return true, nil
}

func (s *Server) getFile(f map[string]string) (any, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	sf := s.files[f["file_id"]]
	if sf == nil {
		return nil, badRequest("invalid file_id")
	}
	if sf.size > MaxDownloadBytes {
		return nil, badRequest("file is too big")
	}
	return models.File{FileID: sf.id, FileUniqueID: "u" + sf.id, FileSize: sf.size, FilePath: filePath(sf)}, nil
}

var secretToken = regexp.MustCompile(`^[A-Za-z0-9_-]{1,256}$`)

func (s *Server) setWebhook(f map[string]string) (any, error) {
	url := f["url"]
	if url != "" && !strings.HasPrefix(url, "https://") && !strings.HasPrefix(url, "http://") {
		return nil, badRequest("bad webhook: invalid URL")
	}
	if sec := f["secret_token"]; sec != "" && !secretToken.MatchString(sec) {
		return nil, badRequest("secret token contains unallowed characters")
	}
	var allowed []string
	if a := f["allowed_updates"]; a != "" {
		if err := json.Unmarshal([]byte(a), &allowed); err != nil {
			return nil, badRequest("can't parse allowed updates")
		}
	}
	maxConn := 0
	if m := f["max_connections"]; m != "" {
		n, err := strconv.Atoi(m)
		if err != nil || n < 1 || n > 100 {
			return nil, badRequest("bad webhook: max_connections must be between 1 and 100")
		}
		maxConn = n
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.webhook = Webhook{URL: url, Secret: f["secret_token"], AllowedUpdates: allowed, MaxConnections: maxConn}
	s.notify()
	return true, nil
}

// PostWebhook POSTs update to url with the secret header, as Telegram delivers to a webhook, and
// returns the HTTP status.
func (s *Server) PostWebhook(url, secret string, u models.Update) (int, error) {
	body, err := json.Marshal(u)
	if err != nil {
		return 0, fmt.Errorf("encode update: %w", err)
	}
	req, err := http.NewRequest(http.MethodPost, url, bytes.NewReader(body))
	if err != nil {
		return 0, fmt.Errorf("webhook request: %w", err)
	}
	req.Header.Set("Content-Type", "application/json")
	if secret != "" {
		req.Header.Set("X-Telegram-Bot-Api-Secret-Token", secret)
	}
	resp, err := s.client.Do(req)
	if err != nil {
		return 0, fmt.Errorf("deliver to webhook: %w", err)
	}
	resp.Body.Close()
	return resp.StatusCode, nil
}
