package telegram

import (
	"context"
	"strconv"
	"strings"
	"time"
	"unicode/utf16"

	"github.com/go-telegram/bot/models"

	"github.com/excalibot/excalibot/bot"
	"github.com/excalibot/excalibot/internal/logkey"
)

// ourCommands are the slash commands a group message may carry without "@botname" and still be
// for this bot (with several bots in a group, Telegram delivers "/help" to all of them): the
// core's menu, and the aliases it understands.
var ourCommands = func() map[string]bool {
	out := map[string]bool{"reset": true, "start": true}
	for _, c := range bot.Commands {
		out[c.Name] = true
	}
	return out
}()

// refuseEvery limits allowlist refusals to one per chat in this interval.
const refuseEvery = 10 * time.Minute

// handleUpdate turns one update into a bot.Message for the core, or drops it (with a log line
// saying why). An error means the core could not keep the message: the update must not be
// acknowledged.
func (a *Adapter) handleUpdate(ctx context.Context, u *models.Update) error {
	me := a.me.Load()
	m := u.Message
	if m == nil || me == nil {
		a.log.Debug("telegram: an update without a message, or before the bot knows itself; ignored", "update_id", u.ID)
		return nil
	}
	log := a.log.With("update_id", u.ID, logkey.Chat, m.Chat.ID, "message_id", m.ID)
	user, name, ok := sender(m, me)
	if !ok {
		log.Debug("telegram: ignored a message from a bot or a channel")
		return nil
	}
	text, ents := m.Text, m.Entities
	if text == "" {
		text, ents = m.Caption, m.CaptionEntities
	}
	if text == "" && m.Document == nil && len(m.Photo) == 0 {
		log.Debug("telegram: a message with neither text nor a file (a sticker, voice, a service message); ignored")
		return nil
	}
	key := bot.ThreadKey{Platform: Platform, Channel: strconv.FormatInt(m.Chat.ID, 10)}
	group := false
	switch m.Chat.Type {
	case models.ChatTypePrivate:
		// One diagram per private chat until /new, so the thread is the chat.
	case models.ChatTypeGroup, models.ChatTypeSupergroup:
		group = true
	default:
		log.Debug("telegram: a message in a chat of a kind the bot does not answer", "type", m.Chat.Type)
		return nil
	}
	forBot := !group || addressed(m, ents, text, me)
	stripped := strings.TrimSpace(stripMention(text, ents, me))
	// What an allowed sender says in an allowed chat is recorded for Discussion, also what is not
	// for the bot (it arrives only with privacy mode off). A sender outside the allowlists is not
	// recorded; their chatter in an admitted chat only shows that the bot hears the whole group.
	switch {
	case a.allowed(m.Chat.ID, user):
		a.seen.add(m, displayName(m), stripped, forBot, a.now())
	case !forBot && a.chatAllowed(m.Chat.ID):
		a.seen.markAll(convRef{m.Chat.ID, topicOf(m)})
	}
	if !forBot {
		log.Debug("telegram: a group message not addressed to the bot; not for it")
		return nil
	}
	if !a.allowed(m.Chat.ID, user) {
		log.Info("telegram: refused a sender outside the allowlists", "user", user)
		a.refuse(ctx, m)
		return nil
	}
	var t thread
	var byLast bool
	if group {
		t, byLast = a.route(ctx, m, me, user, stripped)
		key.Thread = t.String()
	}
	msg := bot.Message{
		Key:      key,
		EventID:  strconv.FormatInt(u.ID, 10),
		ID:       strconv.Itoa(m.ID),
		User:     strconv.FormatInt(user, 10),
		UserName: name,
		Text:     dropStartPayload(stripped),
		Received: a.now(), // when the update reached us: m.Date has whole seconds only
	}
	msg.Files = a.filesOf(m)
	// "@bot redraw this" replying to a colleague's whiteboard photo is about that photo: a request
	// that starts a diagram and has no file of its own takes the file of the message it answers
	// (never the bot's own pictures, and not a message of a diagram already drawn: that routes
	// to its thread).
	if r := m.ReplyToMessage; group && len(msg.Files) == 0 && r != nil && !isTopicRoot(m) && t.root == m.ID &&
		(r.From == nil || r.From.ID != me.ID) && bot.ParseCommand(stripped).Kind == bot.CmdDraw {
		msg.Files = a.filesOf(r)
	}
	if group {
		msg.Index = a.file(ctx, m, user, t, byLast)
	}
	return a.handler.Handle(ctx, a, msg)
}

// sender returns who sent m, or ok=false for the bot itself, other bots and channel posts. An
// anonymous group admin writes as the group through GroupAnonymousBot and counts as a user whose
// id is the chat's.
func sender(m *models.Message, me *models.User) (id int64, name string, ok bool) {
	if m.SenderChat != nil && m.SenderChat.ID == m.Chat.ID && m.Chat.Type != models.ChatTypePrivate {
		return m.Chat.ID, m.Chat.Title, true
	}
	if m.From == nil || m.From.ID == me.ID || m.From.IsBot || m.IsAutomaticForward || m.SenderChat != nil {
		return 0, "", false
	}
	name = m.From.Username
	if name == "" {
		name = strings.TrimSpace(m.From.FirstName + " " + m.From.LastName)
	}
	return m.From.ID, name, true
}

func (a *Adapter) allowed(chat, user int64) bool {
	return a.chatAllowed(chat) && (len(a.users) == 0 || a.users[user])
}

func (a *Adapter) chatAllowed(chat int64) bool { return len(a.chats) == 0 || a.chats[chat] }

// refuse answers a refused sender once per chat per refuseEvery, so a stranger cannot make the
// bot flood a chat with refusals.
func (a *Adapter) refuse(ctx context.Context, m *models.Message) {
	now := a.now()
	a.refusedMu.Lock()
	last, seen := a.refused[m.Chat.ID]
	if seen && now.Sub(last) < refuseEvery {
		a.refusedMu.Unlock()
		return
	}
	if len(a.refused) > 10_000 {
		clear(a.refused)
	}
	a.refused[m.Chat.ID] = now
	a.refusedMu.Unlock()
	text := "Sorry, I'm not enabled for this chat. Ask the person who runs this bot to allow it."
	if a.chatAllowed(m.Chat.ID) {
		text = "Sorry, I only take requests from people on my allowlist. Ask the person who runs this bot to add you."
	}
	// Kept through the core like any reply: posted from the outbox, retried while Telegram is
	// down, never holding up the update loop. Its thread is the message itself, in its topic.
	key := bot.ThreadKey{Platform: Platform, Channel: strconv.FormatInt(m.Chat.ID, 10)}
	if m.Chat.Type != models.ChatTypePrivate {
		key.Thread = thread{topic: topicOf(m), root: m.ID}.String()
	}
	if err := a.handler.Handle(ctx, a, bot.Message{Key: key, ID: strconv.Itoa(m.ID), Refusal: text}); err != nil {
		a.log.Warn("telegram: refusal not kept", logkey.Chat, m.Chat.ID, logkey.Err, err)
	}
}

func topicOf(m *models.Message) int {
	if m.IsTopicMessage {
		return m.MessageThreadID
	}
	return 0
}

// addressed reports whether a group message is for the bot: it mentions the bot, carries a
// command for it, or replies to one of its messages.
func addressed(m *models.Message, ents []models.MessageEntity, text string, me *models.User) bool {
	if r := m.ReplyToMessage; r != nil && r.From != nil && r.From.ID == me.ID && !isTopicRoot(m) {
		return true
	}
	for _, e := range ents {
		switch e.Type {
		case models.MessageEntityTypeMention:
			if strings.EqualFold(entityText(text, e), "@"+me.Username) {
				return true
			}
		case models.MessageEntityTypeTextMention:
			if e.User != nil && e.User.ID == me.ID {
				return true
			}
		case models.MessageEntityTypeBotCommand:
			if e.Offset != 0 {
				continue
			}
			cmd, target, hasTarget := strings.Cut(strings.TrimPrefix(entityText(text, e), "/"), "@")
			if hasTarget {
				return strings.EqualFold(target, me.Username)
			}
			return ourCommands[strings.ToLower(cmd)]
		}
	}
	return false
}

// isTopicRoot tells a real reply from the reply to a forum topic's creation message that
// Telegram puts on every message in a topic.
func isTopicRoot(m *models.Message) bool {
	return m.IsTopicMessage && m.ReplyToMessage != nil && m.ReplyToMessage.ID == m.MessageThreadID
}

// entityText cuts an entity out of text. Offsets count UTF-16 code units, not bytes.
func entityText(text string, e models.MessageEntity) string {
	u := utf16.Encode([]rune(text))
	end, ok := entityEnd(e, len(u))
	if !ok {
		return ""
	}
	return string(utf16.Decode(u[e.Offset:end]))
}

// entityEnd returns where e ends in a text of n UTF-16 units, or false when e does not lie inside
// it. Written so that no offset or length, however large or negative, can overflow: a malformed
// entity would otherwise panic the update loop and, in polling mode, the process.
func entityEnd(e models.MessageEntity, n int) (int, bool) {
	if e.Offset < 0 || e.Length < 0 || e.Offset > n || e.Length > n-e.Offset {
		return 0, false
	}
	return e.Offset + e.Length, true
}

// stripMention removes a leading mention of the bot ("@draw_bot, draw …" → "draw …"). Commands
// keep their "@botname": the core's parser understands "/undo@draw_bot".
func stripMention(text string, ents []models.MessageEntity, me *models.User) string {
	u := utf16.Encode([]rune(text))
	lead := len(u) - len(utf16.Encode([]rune(strings.TrimLeft(text, " \n\t"))))
	for _, e := range ents {
		end, ok := entityEnd(e, len(u))
		if e.Offset != lead || !ok {
			continue
		}
		ours := e.Type == models.MessageEntityTypeMention && strings.EqualFold(entityText(text, e), "@"+me.Username) ||
			e.Type == models.MessageEntityTypeTextMention && e.User != nil && e.User.ID == me.ID
		if ours {
			rest := string(utf16.Decode(u[end:]))
			return strings.TrimLeft(rest, " \n\t,:;")
		}
	}
	return text
}

// dropStartPayload turns "/start <payload>" (what a t.me/<bot>?start=<payload> link sends) into
// "/start", which the core answers with help; otherwise the payload would be drawn.
func dropStartPayload(text string) string {
	word, _, _ := strings.Cut(text, " ")
	cmd, _, _ := strings.Cut(strings.ToLower(word), "@")
	if cmd == "/start" {
		return word
	}
	return text
}

// filesOf is what m carries: a document and a photo (the largest size).
func (a *Adapter) filesOf(m *models.Message) []bot.Attachment {
	var out []bot.Attachment
	if d := m.Document; d != nil {
		out = append(out, a.attachment(d.FileID, d.FileName, d.MimeType, d.FileSize))
	}
	if n := len(m.Photo); n > 0 {
		// A picture sent as a photo arrives recompressed to JPEG, without any scene embedded in
		// the PNG: the core can tell the user to send it as a file. The last size is the largest.
		p := m.Photo[n-1]
		at := a.attachment(p.FileID, "photo.jpg", "image/jpeg", int64(p.FileSize))
		at.Unnamed = true // Telegram names no photo; photo.jpg is ours
		out = append(out, at)
	}
	return out
}
