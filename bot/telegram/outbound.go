package telegram

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"net"
	"net/url"
	"strconv"
	"strings"
	"unicode/utf16"

	tg "github.com/go-telegram/bot"
	"github.com/go-telegram/bot/models"

	"github.com/excalibot/excalibot/bot"
)

// Telegram's limits (core.telegram.org/bots/api; excalidraw.md §11).
const (
	maxCaption     = 1024     // UTF-16 units
	maxText        = 4096     // UTF-16 units
	maxPhotoBytes  = 10 << 20 // sendPhoto
	maxPhotoSides  = 10000    // width + height
	maxPhotoRatio  = 20       // longer side / shorter side
	maxUploadBytes = 50 << 20 // sendDocument
)

// dest is where a reply goes: a chat, the forum topic, and the message replied to.
type dest struct {
	chat    int64
	topic   int
	replyTo int
	thread  string // ThreadKey.Thread, to remember the bot's messages by
}

func destOf(key bot.ThreadKey) (dest, error) {
	if key.Platform != Platform {
		return dest{}, fmt.Errorf("telegram: thread %s is not a Telegram thread", key)
	}
	chat, err := strconv.ParseInt(key.Channel, 10, 64)
	if err != nil {
		return dest{}, fmt.Errorf("telegram: thread %s: chat id %q is not a number", key, key.Channel)
	}
	t, err := parseThread(key.Thread)
	if err != nil {
		return dest{}, fmt.Errorf("telegram: %w", err)
	}
	return dest{chat: chat, topic: t.topic, replyTo: t.root, thread: key.Thread}, nil
}

func (d dest) reply() *models.ReplyParameters {
	if d.replyTo == 0 {
		return nil
	}
	// The root may have been deleted; the answer still belongs in the chat.
	return &models.ReplyParameters{MessageID: d.replyTo, AllowSendingWithoutReply: true}
}

// Our own reply_markup types: go-telegram/bot v1.19.0's InlineKeyboardButton always serialises an
// empty "copy_text", which Telegram rejects with BUTTON_COPY_TEXT_INVALID.
type urlButton struct {
	Text string `json:"text"`
	URL  string `json:"url"`
}

type inlineKeyboard struct {
	InlineKeyboard [][]urlButton `json:"inline_keyboard"`
}

// Send implements bot.Adapter: the picture with the summary as caption and the editor button,
// then any text that did not fit, then the files as documents, all in the thread.
func (a *Adapter) Send(ctx context.Context, key bot.ThreadKey, r bot.Reply) error {
	d, err := destOf(key)
	if err != nil {
		return err
	}
	err = a.send(ctx, d, r)
	var moved *tg.MigrateError
	if errors.As(err, &moved) && moved.MigrateToChatID != 0 {
		// The group became a supergroup with a new id: answer there. Its old threads go on
		// under the old key; new messages arrive from the new chat and start new threads.
		a.log.Info("telegram: group upgraded to a supergroup; replying in the new chat", "from", d.chat, "to", moved.MigrateToChatID)
		d.chat = int64(moved.MigrateToChatID)
		err = a.send(ctx, d, r)
	}
	return err
}

func (a *Adapter) send(ctx context.Context, d dest, r bot.Reply) error {
	text, markup := links(r)
	if r.Image != nil {
		caption, rest := split(text, maxCaption)
		if err := a.sendImage(ctx, d, *r.Image, caption, markup); err != nil {
			return err
		}
		text, markup = rest, nil
	}
	for text != "" {
		var chunk string
		chunk, text = split(text, maxText)
		if chunk == "" {
			continue // a piece that was only blank lines
		}
		var mk any
		if text == "" && markup != nil {
			mk = markup // the button goes with the last piece, where readers end up
		}
		if err := a.sendText(ctx, d, chunk, mk); err != nil {
			return err
		}
	}
	for _, f := range r.Files {
		if err := a.sendDocument(ctx, d, f, "", nil); err != nil {
			return err
		}
	}
	return nil
}

// links builds the inline keyboard from the reply's URLs. Telegram refuses a whole message whose
// button URL has a host without a dot (http://localhost:8080), so such links go into the text.
func links(r bot.Reply) (string, any) {
	text := r.Text
	var row []urlButton
	for _, l := range []struct{ label, url string }{{"Open in editor", r.EditURL}, {"View", r.ViewURL}} {
		switch {
		case l.url == "":
		case buttonURL(l.url):
			row = append(row, urlButton{Text: l.label, URL: l.url})
		default:
			text = strings.TrimSpace(text + "\n\n" + l.label + ": " + l.url)
		}
	}
	if row == nil {
		return text, nil
	}
	return text, inlineKeyboard{InlineKeyboard: [][]urlButton{row}}
}

func buttonURL(s string) bool {
	u, err := url.Parse(s)
	if err != nil || (u.Scheme != "https" && u.Scheme != "http") {
		return false
	}
	h := u.Hostname()
	return strings.Contains(h, ".") && !strings.HasSuffix(h, ".") || net.ParseIP(h) != nil
}

// split cuts s after at most n UTF-16 units (Telegram's unit for lengths), at the last line break
// or space of the second half of the piece when there is one, so words stay whole.
func split(s string, n int) (head, rest string) {
	s = strings.ToValidUTF8(s, "\uFFFD") // so that head is a prefix of s
	u := utf16.Encode([]rune(s))
	if len(u) <= n {
		return s, ""
	}
	cut := n
	if u[cut-1] >= 0xD800 && u[cut-1] < 0xDC00 {
		cut-- // a high surrogate: never split a pair
	}
	head = string(utf16.Decode(u[:cut]))
	if i := strings.LastIndexAny(head, "\n "); i > len(head)/2 {
		head = head[:i]
	}
	return strings.TrimRight(head, " \n"), strings.TrimLeft(s[len(head):], " \n")
}

// photoProblem says why Telegram would refuse img as a photo, or "" when it would take it. The
// dimensions come from the PNG header (IHDR), without decoding the picture.
func photoProblem(img []byte) string {
	if len(img) > maxPhotoBytes {
		return fmt.Sprintf("it is %.1f MB, more than the 10 MB photo limit", float64(len(img))/(1<<20))
	}
	w, h, ok := pngSize(img)
	switch {
	case !ok:
		return "it is not a PNG whose size can be read"
	case w+h > maxPhotoSides:
		return fmt.Sprintf("it is %d×%d px, more than the 10000 px of width plus height", w, h)
	case w > maxPhotoRatio*h || h > maxPhotoRatio*w:
		return fmt.Sprintf("it is %d×%d px, an aspect ratio over 20", w, h)
	}
	return ""
}

var pngMagic = []byte("\x89PNG\r\n\x1a\n")

// pngSize reads width and height from a PNG's IHDR chunk, which the format puts first.
func pngSize(b []byte) (w, h int, ok bool) {
	if len(b) < 24 || !bytes.Equal(b[:8], pngMagic) || string(b[12:16]) != "IHDR" {
		return 0, 0, false
	}
	w, h = int(binary.BigEndian.Uint32(b[16:20])), int(binary.BigEndian.Uint32(b[20:24]))
	return w, h, w > 0 && h > 0
}

func (a *Adapter) sendImage(ctx context.Context, d dest, img bot.File, caption string, markup any) error {
	name := img.Name
	if name == "" {
		name = "diagram.png"
	}
	img.Name = name
	if why := photoProblem(img.Content); why != "" {
		a.log.Info("telegram: picture sent as a document", "why", why)
		return a.sendDocument(ctx, d, img, caption, markup)
	}
	var sent *models.Message
	err := a.call(ctx, "sendPhoto", func(ctx context.Context) (err error) {
		sent, err = a.client.SendPhoto(ctx, &tg.SendPhotoParams{
			ChatID: d.chat, MessageThreadID: d.topic, ReplyParameters: d.reply(),
			Photo:   &models.InputFileUpload{Filename: name, Data: bytes.NewReader(img.Content)},
			Caption: caption, ReplyMarkup: markup,
		})
		return err
	})
	if errors.Is(err, tg.ErrorBadRequest) && ctx.Err() == nil {
		// A limit we do not know of (or a PNG Telegram cannot process): a document always works.
		a.log.Warn("telegram: photo refused; sending it as a document", "err", err)
		return a.sendDocument(ctx, d, img, caption, markup)
	}
	if err != nil {
		return fmt.Errorf("telegram: send picture: %w", err)
	}
	a.remember(ctx, d, sent)
	return nil
}

func (a *Adapter) sendDocument(ctx context.Context, d dest, f bot.File, caption string, markup any) error {
	if len(f.Content) > maxUploadBytes {
		return fmt.Errorf("telegram: %s is %.1f MB; bots can send files up to 50 MB", f.Name, float64(len(f.Content))/(1<<20))
	}
	var sent *models.Message
	err := a.call(ctx, "sendDocument", func(ctx context.Context) (err error) {
		sent, err = a.client.SendDocument(ctx, &tg.SendDocumentParams{
			ChatID: d.chat, MessageThreadID: d.topic, ReplyParameters: d.reply(),
			Document: &models.InputFileUpload{Filename: f.Name, Data: bytes.NewReader(f.Content)},
			Caption:  caption, ReplyMarkup: markup,
			// Telegram would otherwise detect an image and show it recompressed.
			DisableContentTypeDetection: true,
		})
		return err
	})
	if err != nil {
		return fmt.Errorf("telegram: send %s: %w", f.Name, err)
	}
	a.remember(ctx, d, sent)
	return nil
}

func (a *Adapter) sendText(ctx context.Context, d dest, text string, markup any) error {
	var sent *models.Message
	err := a.call(ctx, "sendMessage", func(ctx context.Context) (err error) {
		sent, err = a.client.SendMessage(ctx, &tg.SendMessageParams{
			ChatID: d.chat, MessageThreadID: d.topic, ReplyParameters: d.reply(),
			Text: text, ReplyMarkup: markup,
			LinkPreviewOptions: &models.LinkPreviewOptions{IsDisabled: tg.True()},
		})
		return err
	})
	if err != nil {
		return fmt.Errorf("telegram: send message: %w", err)
	}
	a.remember(ctx, d, sent)
	return nil
}

// remember files a message the bot sent under its thread, so replies to it continue the thread.
func (a *Adapter) remember(ctx context.Context, d dest, m *models.Message) {
	if m != nil && d.thread != "" {
		a.setThread(ctx, d.chat, m.ID, d.thread)
	}
}
