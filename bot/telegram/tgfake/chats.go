package tgfake

import (
	"bytes"
	"encoding/json"
	"fmt"
	"image"
	"regexp"
	"strings"
	"time"
	"unicode/utf16"

	"github.com/go-telegram/bot/models"
)

// Message is a message as the chat shows it, for assertions.
type Message struct {
	ID      int
	Topic   int  // forum topic (message_thread_id); 0 outside topics
	FromBot bool // sent by the bot under test
	From    int64
	Kind    string // "text", "photo", "document" or "service"
	Text    string // text, or the caption of a photo or document
	File    Upload // photo or document content
	ReplyTo int    // message replied to, 0 when none
	Buttons []Button
	Edits   []string // earlier texts, oldest first
	Deleted bool
}

// Button is an inline keyboard URL button.
type Button struct {
	Text string
	URL  string
}

type chat struct {
	info   models.Chat
	nextID int
	msgs   []*stored
	byID   map[int]*stored
	topics map[int]bool
}

type stored struct {
	Message
	raw models.Message
}

// AddChat makes a chat known (private, group, supergroup; set IsForum for topics).
func (s *Server) AddChat(c models.Chat) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.chats[c.ID] = &chat{info: c, byID: map[int]*stored{}, topics: map[int]bool{}}
}

// Messages returns a chat's messages, oldest first.
func (s *Server) Messages(chatID int64) []Message {
	s.mu.Lock()
	defer s.mu.Unlock()
	c := s.chats[chatID]
	if c == nil {
		return nil
	}
	out := make([]Message, 0, len(c.msgs))
	for _, m := range c.msgs {
		cp := m.Message
		cp.Edits = append([]string(nil), m.Edits...)
		cp.Buttons = append([]Button(nil), m.Buttons...)
		out = append(out, cp)
	}
	return out
}

// BotMessages returns the bot's messages in a chat that are still there, oldest first.
func (s *Server) BotMessages(chatID int64) []Message {
	var out []Message
	for _, m := range s.Messages(chatID) {
		if m.FromBot && !m.Deleted {
			out = append(out, m)
		}
	}
	return out
}

// add stores a new message in c with the next id. Called with s.mu held.
func (s *Server) add(c *chat, m *stored) {
	c.nextID++
	m.ID = c.nextID
	m.raw.ID = m.ID
	m.raw.Chat = c.info
	if m.raw.Date == 0 {
		m.raw.Date = int(time.Now().Unix())
	}
	c.msgs = append(c.msgs, m)
	c.byID[m.ID] = m
	s.notify()
}

// link fills the reply and topic fields of m the way Telegram does: in a forum topic, a message
// that replies to nothing replies to the topic's creation message. Called with s.mu held.
func link(c *chat, m *stored, replyTo, topic int) {
	if topic != 0 {
		m.Topic = topic
		m.raw.MessageThreadID = topic
		m.raw.IsTopicMessage = true
		if replyTo == 0 {
			replyTo = topic
		}
	}
	if r := c.byID[replyTo]; r != nil {
		if r.ID != topic {
			m.ReplyTo = r.ID
		}
		shallow := r.raw
		shallow.ReplyToMessage = nil // Telegram never nests replies
		m.raw.ReplyToMessage = &shallow
	}
}

// CreateTopic opens a forum topic in a forum supergroup and returns its id (message_thread_id),
// which is the id of its creation service message.
func (s *Server) CreateTopic(chatID int64, name string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	c := s.chats[chatID]
	if c == nil || !c.info.IsForum {
		panic(fmt.Sprintf("tgfake: chat %d is not a known forum", chatID))
	}
	m := &stored{Message: Message{Kind: "service"}}
	m.raw.ForumTopicCreated = &models.ForumTopicCreated{Name: name}
	s.add(c, m)
	c.topics[m.ID] = true
	m.Topic, m.raw.MessageThreadID, m.raw.IsTopicMessage = m.ID, m.ID, true
	return m.ID
}

// Post is a message a user (or another bot) sends.
type Post struct {
	Chat    int64
	From    models.User
	Text    string // text, or the caption when Document is set; entities are derived from it
	ReplyTo int    // id of the message replied to
	Topic   int    // forum topic id
	// SenderChat is set for messages sent on behalf of a chat (anonymous group admins).
	SenderChat *models.Chat
	Document   *Upload
	Photo      *Upload // a PNG or JPEG sent as a photo (compressed by Telegram)
	// DocumentSize overrides the reported file size (to simulate files Telegram won't hand over).
	DocumentSize int64
}

// Sent tells what became of a Post.
type Sent struct {
	UpdateID  int64
	MessageID int
	// WebhookStatus is the HTTP status the webhook answered when one is registered; 0 otherwise.
	WebhookStatus int
	WebhookErr    error
}

var (
	mentionRE = regexp.MustCompile(`@[A-Za-z0-9_]{5,32}\b`)
	commandRE = regexp.MustCompile(`^/[A-Za-z0-9_]{1,32}(@[A-Za-z0-9_]{5,32})?`)
)

// entities finds mentions and a leading bot command, with UTF-16 offsets as Telegram sends them.
func entities(text string) []models.MessageEntity {
	u16 := func(byteOff int) int { return len(utf16.Encode([]rune(text[:byteOff]))) }
	var out []models.MessageEntity
	if loc := commandRE.FindStringIndex(text); loc != nil {
		out = append(out, models.MessageEntity{Type: models.MessageEntityTypeBotCommand, Offset: 0, Length: u16(loc[1])})
	}
	for _, loc := range mentionRE.FindAllStringIndex(text, -1) {
		if loc[0] > 0 && text[loc[0]-1] != ' ' && text[loc[0]-1] != '\n' {
			continue // part of a command (/draw@bot) or an e-mail address
		}
		out = append(out, models.MessageEntity{Type: models.MessageEntityTypeMention, Offset: u16(loc[0]), Length: u16(loc[1]) - u16(loc[0])})
	}
	return out
}

// Send posts p into its chat and queues the update (or delivers it to the webhook). In groups,
// privacy mode decides whether the bot gets an update at all (see SetPrivacy).
func (s *Server) Send(p Post) Sent {
	u, sent, hook := s.post(p)
	if u != nil && hook.URL != "" {
		sent.WebhookStatus, sent.WebhookErr = s.PostWebhook(hook.URL, hook.Secret, *u)
	}
	return sent
}

// post stores p and queues its update; u is nil when privacy mode hides it from the bot.
func (s *Server) post(p Post) (u *models.Update, sent Sent, hook Webhook) {
	s.mu.Lock()
	defer s.mu.Unlock()
	c := s.chats[p.Chat]
	if c == nil {
		panic(fmt.Sprintf("tgfake: unknown chat %d: call AddChat first", p.Chat))
	}
	from := p.From
	m := &stored{Message: Message{From: from.ID, Kind: "text", Text: p.Text}}
	m.raw.From = &from
	m.raw.SenderChat = p.SenderChat
	if p.Document != nil {
		f := s.storeFile(p.Document.Name, p.Document.Data)
		if p.DocumentSize > 0 {
			f.size = p.DocumentSize
		}
		m.Kind, m.File = "document", *p.Document
		m.raw.Document = &models.Document{FileID: f.id, FileUniqueID: "u" + f.id, FileName: f.name, MimeType: f.mime, FileSize: f.size}
		m.raw.Caption, m.raw.CaptionEntities = p.Text, entities(p.Text)
	} else if p.Photo != nil {
		f := s.storeFile("photo.jpg", p.Photo.Data)
		cfg, _, err := image.DecodeConfig(bytes.NewReader(p.Photo.Data))
		if err != nil {
			panic(fmt.Sprintf("tgfake: the photo is not an image: %v", err))
		}
		m.Kind, m.File = "photo", *p.Photo
		m.raw.Photo = []models.PhotoSize{
			{FileID: f.id + "s", FileUniqueID: "u" + f.id + "s", Width: 90, Height: 90},
			{FileID: f.id, FileUniqueID: "u" + f.id, Width: cfg.Width, Height: cfg.Height, FileSize: int(f.size)},
		}
		m.raw.Caption, m.raw.CaptionEntities = p.Text, entities(p.Text)
	} else {
		m.raw.Text, m.raw.Entities = p.Text, entities(p.Text)
	}
	link(c, m, p.ReplyTo, p.Topic)
	s.add(c, m)
	if !s.visible(c, m) {
		return nil, Sent{MessageID: m.ID}, Webhook{} // privacy mode: the bot never hears of it
	}
	s.nextUpdate++
	msg := m.raw
	u = &models.Update{ID: s.nextUpdate, Message: &msg}
	if s.webhook.URL == "" {
		s.queue = append(s.queue, *u)
	} else {
		s.delivered = append(s.delivered, *u)
	}
	s.notify()
	return u, Sent{UpdateID: u.ID, MessageID: m.ID}, s.webhook
}

// visible applies privacy mode (on unless SetPrivacy(false)): in groups the bot receives only
// commands, mentions of it and replies to its messages. Called with s.mu held.
func (s *Server) visible(c *chat, m *stored) bool {
	if c.info.Type == models.ChatTypePrivate || s.Bot.CanReadAllGroupMessages {
		return true
	}
	if r := m.raw.ReplyToMessage; r != nil && r.From != nil && r.From.ID == s.Bot.ID && r.ID != m.Topic {
		return true
	}
	text, ents := m.raw.Text, m.raw.Entities
	if m.raw.Document != nil || m.raw.Photo != nil {
		text, ents = m.raw.Caption, m.raw.CaptionEntities
	}
	u := utf16.Encode([]rune(text))
	for _, e := range ents {
		word := string(utf16.Decode(u[e.Offset : e.Offset+e.Length]))
		switch e.Type {
		case models.MessageEntityTypeMention:
			if strings.EqualFold(word, "@"+s.Bot.Username) {
				return true
			}
		case models.MessageEntityTypeBotCommand:
			if _, to, ok := strings.Cut(word, "@"); !ok || strings.EqualFold(to, s.Bot.Username) {
				return true
			}
		}
	}
	return false
}

// SetPrivacy turns privacy mode on (the default, as for a new bot) or off (a bot that is admin
// or had privacy disabled in @BotFather), as getMe's can_read_all_group_messages reports it.
func (s *Server) SetPrivacy(on bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.Bot.CanReadAllGroupMessages = !on
}

// Redeliver hands the update with id over again, as Telegram does after a webhook error or when a
// poller restarts before confirming it; polling receives it regardless of the confirmed offset.
func (s *Server) Redeliver(updateID int64) Sent {
	s.mu.Lock()
	var u *models.Update
	for i := range s.delivered {
		if s.delivered[i].ID == updateID {
			u = &s.delivered[i]
		}
	}
	for i := range s.queue {
		if s.queue[i].ID == updateID {
			u = &s.queue[i]
		}
	}
	if u == nil {
		s.mu.Unlock()
		panic(fmt.Sprintf("tgfake: no update %d to redeliver", updateID))
	}
	upd := *u
	hook := s.webhook
	if hook.URL == "" {
		s.redeliver = append(s.redeliver, upd)
		s.notify()
	}
	s.mu.Unlock()
	sent := Sent{UpdateID: upd.ID, MessageID: upd.Message.ID}
	if hook.URL != "" {
		sent.WebhookStatus, sent.WebhookErr = s.PostWebhook(hook.URL, hook.Secret, upd)
	}
	return sent
}

// storeFile keeps data under a new file id. Called with s.mu held.
func (s *Server) storeFile(name string, data []byte) *storedFile {
	s.nextFile++
	f := &storedFile{id: fmt.Sprintf("F%04d", s.nextFile), name: name, size: int64(len(data)), data: data, mime: mimeOf(name)}
	s.files[f.id] = f
	return f
}

func mimeOf(name string) string {
	switch {
	case strings.HasSuffix(name, ".png"):
		return "image/png"
	case strings.HasSuffix(name, ".excalidraw"):
		return "application/json"
	case strings.HasSuffix(name, ".svg"):
		return "image/svg+xml"
	}
	return "application/octet-stream"
}

// buttons decodes an inline keyboard and rejects what Telegram rejects: URL buttons whose host has
// no dot, and the empty copy_text go-telegram/bot v1.19.0 serialises on every button.
func buttons(markup string) ([]Button, error) {
	if markup == "" {
		return nil, nil
	}
	var kb struct {
		InlineKeyboard [][]map[string]json.RawMessage `json:"inline_keyboard"`
	}
	if err := json.Unmarshal([]byte(markup), &kb); err != nil {
		return nil, badRequest("can't parse reply keyboard markup JSON object")
	}
	var out []Button
	for _, row := range kb.InlineKeyboard {
		for _, b := range row {
			if _, ok := b["copy_text"]; ok {
				return nil, badRequest("BUTTON_COPY_TEXT_INVALID")
			}
			var text, url string
			json.Unmarshal(b["text"], &text)
			json.Unmarshal(b["url"], &url)
			host := url
			if _, after, ok := strings.Cut(url, "://"); ok {
				host = after
			}
			host, _, _ = strings.Cut(host, "/")
			if text == "" || url == "" || !strings.Contains(host, ".") {
				return nil, badRequest("BUTTON_URL_INVALID")
			}
			out = append(out, Button{Text: text, URL: url})
		}
	}
	return out, nil
}
