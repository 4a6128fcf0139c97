package webchat

import (
	"context"
	"slices"
	"unicode/utf8"

	"github.com/excalibot/excalibot/bot"
)

var _ bot.DiscussionReader = (*Adapter)(nil)

// noEarlierMessages is the Discussion's note when the thread holds nothing said before the
// request: the page's messages live in this process's memory, so a restart forgets them.
const noEarlierMessages = "The chat page reads the messages of this thread sent since the server last started; there are none before this one."

// Discussion implements bot.DiscussionReader from the thread's own messages: what the person
// wrote before msg, oldest first, the latest kept within limit. The bot's replies are left out,
// and so are messages that carried only a file.
func (c *Adapter) Discussion(ctx context.Context, msg bot.Message, limit bot.DiscussionLimit) (bot.Discussion, error) {
	c.mu.Lock()
	var before []chatMessage
	if ss := c.sessions[msg.Key.Workspace]; ss != nil && msg.Key.Platform == Platform {
		if t := ss.threads[msg.Key.Thread]; t != nil {
			before = t.Messages
			if i := slices.IndexFunc(t.Messages, func(m chatMessage) bool { return m.ID == msg.ID }); i >= 0 {
				before = t.Messages[:i]
			} else if !msg.Received.IsZero() {
				// The request fell out of the kept history (or is not the page's): what came before it.
				i := slices.IndexFunc(t.Messages, func(m chatMessage) bool { return !m.Time.Before(msg.Received) })
				if i >= 0 {
					before = t.Messages[:i]
				}
			}
			before = slices.Clone(before)
		}
	}
	c.mu.Unlock()

	var said []bot.Said
	chars := 0
	for i := len(before) - 1; i >= 0; i-- {
		m := before[i]
		if m.From != "you" || m.Text == "" {
			continue
		}
		if limit.Messages > 0 && len(said) >= limit.Messages {
			break
		}
		text := m.Text
		n := utf8.RuneCountInString(text)
		if limit.Chars > 0 && chars+n > limit.Chars {
			room := limit.Chars - chars
			if room < 2 {
				break
			}
			// The latest words of a message are the ones that lead to the request.
			r := []rune(text)
			text, n = "…"+string(r[len(r)-(room-1):]), room
		}
		chars += n
		said = append(said, bot.Said{Author: userName, Text: text, At: m.Time})
		if limit.Chars > 0 && chars >= limit.Chars {
			break
		}
	}
	slices.Reverse(said)
	d := bot.Discussion{Said: said}
	if len(said) == 0 {
		d.Note = noEarlierMessages
	}
	return d, nil
}
