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
	"time"
	"unicode/utf16"

	tg "github.com/go-telegram/bot"
	"github.com/go-telegram/bot/models"

	"github.com/excalibot/excalibot/bot"
	"github.com/excalibot/excalibot/diagram/outline"
	"github.com/excalibot/excalibot/internal/logkey"
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

var _ bot.StepSender = (*Adapter)(nil)

// Send implements bot.Adapter: the whole reply at once (SendSteps without a record).
func (a *Adapter) Send(ctx context.Context, key bot.ThreadKey, r bot.Reply) error {
	// No record keeps the steps' entries here: they are set in the index directly.
	return a.SendSteps(ctx, key, r, nil, func(_ string, index ...bot.IndexEntry) error {
		if a.cfg.IndexKeptByCore {
			for _, e := range index {
				a.setEntry(ctx, e)
			}
		}
		return nil
	})
}

// SendSteps implements bot.StepSender: the picture with the summary as caption and the editor
// button, then any text that did not fit, then the files as documents, all in the thread; each
// message is a step, recorded by its message id, and a later attempt starts after the steps
// already posted. Errors are marked for the outbox: a 429 beyond what call waits out carries
// Telegram's retry_after, a refusal (400, 403) is permanent.
func (a *Adapter) SendSteps(ctx context.Context, key bot.ThreadKey, r bot.Reply, posted []string, record bot.Record) error {
	d, err := destOf(key)
	if err != nil {
		return bot.Permanent(err)
	}
	var name naming
	if id, err := strconv.Atoi(r.ReplyTo); err == nil && id > 0 && d.thread != "" {
		// A group answer replies to the request it answers (the root is only the fallback, for
		// notices that answer nothing). A private chat is one conversation: no quotes there.
		d.replyTo = id
		if len(posted) == 0 && a.pickedLast(ctx, d, id) {
			name = a.nameFor(d, r.Title)
		}
	}
	if len(posted) > 0 {
		// The name was decided when the first step was posted and kept with it: the index and
		// the record of messages seen may answer otherwise now (another replica, a restart), and
		// other text would cut the remaining pieces elsewhere.
		posted[0], name = parseStep(posted[0])
	}
	r = name.apply(r)
	steps := a.steps(r)
	for i := len(posted); i < len(steps); i++ {
		id, err := steps[i](ctx, d)
		var moved *tg.MigrateError
		if errors.As(err, &moved) && moved.MigrateToChatID != 0 {
			// The group became a supergroup with a new id: answer there. Its old threads go on
			// under the old key; new messages arrive from the new chat and start new threads.
			a.log.Info("telegram: group upgraded to a supergroup; replying in the new chat", "from", d.chat, "to", moved.MigrateToChatID)
			d.chat = int64(moved.MigrateToChatID)
			id, err = steps[i](ctx, d)
		}
		if err != nil {
			return classify(err)
		}
		rec := strconv.Itoa(id)
		if i == 0 {
			rec = name.step(id)
		}
		var index []bot.IndexEntry
		if d.thread != "" && id != 0 { // remember filed it in this process; the commit files it for all
			index = append(index, storedEntry(d.chat, msgRef(id), d.thread))
		}
		if err := record(rec, index...); err != nil {
			return err
		}
	}
	return nil
}

// step posts one message of a reply and returns its id.
type step func(ctx context.Context, d dest) (int, error)

// steps are the messages of a reply, in order; the same reply always makes the same steps.
func (a *Adapter) steps(r bot.Reply) []step {
	var out []step
	text, markup := links(r)
	if r.Image != nil {
		caption, rest := captionOf(text, r.Alt)
		img, mk := *r.Image, markup
		if img.Name == "" {
			img.Name = outline.FileBase(r.Title, 0) + ".png"
		}
		out = append(out, func(ctx context.Context, d dest) (int, error) { return a.sendImage(ctx, d, img, caption, mk) })
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
		out = append(out, func(ctx context.Context, d dest) (int, error) { return a.sendText(ctx, d, chunk, mk) })
	}
	// An exported picture (png, svg) is sent as a document; without an image above it, the alt
	// text is its caption, as it is an image's.
	altLeft := r.Image == nil && strings.TrimSpace(r.Alt) != ""
	for _, f := range r.Files {
		caption := ""
		if altLeft && strings.HasPrefix(f.MIME, "image/") {
			caption, altLeft = fitSentences(strings.TrimSpace(r.Alt), maxCaption, true), false
		}
		out = append(out, func(ctx context.Context, d dest) (int, error) { return a.sendDocument(ctx, d, f, caption, nil) })
	}
	return out
}

// classify marks a failed call's error for the outbox.
func classify(err error) error {
	var tmr *tg.TooManyRequestsError
	switch {
	case errors.As(err, &tmr):
		return bot.RateLimited(time.Duration(max(tmr.RetryAfter, 1))*time.Second, err)
	case errors.Is(err, tg.ErrorBadRequest), errors.Is(err, tg.ErrorForbidden), errors.Is(err, tg.ErrorNotFound),
		errors.Is(err, tg.ErrorUnauthorized), errors.Is(err, errTooBig):
		return bot.Permanent(err)
	}
	return err
}

// errTooBig is a file above what bots may send.
var errTooBig = errors.New("file too large for Telegram")

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

func (a *Adapter) sendImage(ctx context.Context, d dest, img bot.File, caption string, markup any) (int, error) {
	name := img.Name
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
		a.log.Warn("telegram: photo refused; sending it as a document", logkey.Err, err)
		return a.sendDocument(ctx, d, img, caption, markup)
	}
	if err != nil {
		return 0, fmt.Errorf("telegram: send picture: %w", err)
	}
	a.remember(ctx, d, sent)
	return idOf(sent), nil
}

func (a *Adapter) sendDocument(ctx context.Context, d dest, f bot.File, caption string, markup any) (int, error) {
	if len(f.Content) > maxUploadBytes {
		return 0, fmt.Errorf("telegram: %s is %.1f MB; bots can send files up to 50 MB: %w", f.Name, float64(len(f.Content))/(1<<20), errTooBig)
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
		return 0, fmt.Errorf("telegram: send %s: %w", f.Name, err)
	}
	a.remember(ctx, d, sent)
	return idOf(sent), nil
}

func (a *Adapter) sendText(ctx context.Context, d dest, text string, markup any) (int, error) {
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
		return 0, fmt.Errorf("telegram: send message: %w", err)
	}
	a.remember(ctx, d, sent)
	return idOf(sent), nil
}

// remember files a step the bot posted under its thread, so replies to it continue the thread,
// unless the core keeps the entry with the step's record (SendSteps hands it over).
func (a *Adapter) remember(ctx context.Context, d dest, m *models.Message) {
	if m != nil && d.thread != "" && !a.cfg.IndexKeptByCore {
		a.setThread(ctx, d.chat, msgRef(m.ID), d.thread)
	}
}

// setEntry writes one entry to the index.
func (a *Adapter) setEntry(ctx context.Context, e bot.IndexEntry) {
	chat, err := strconv.ParseInt(e.Chat, 10, 64)
	if err != nil {
		return // made by storedEntry from a chat id: cannot happen
	}
	a.setThread(ctx, chat, e.Msg, e.Thread)
}

// idOf is a sent message's id (0 when Telegram returned none).
func idOf(m *models.Message) int {
	if m == nil {
		return 0
	}
	return m.ID
}
