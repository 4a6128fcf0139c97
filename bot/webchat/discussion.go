package webchat

import (
	"context"
	"slices"

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

	var all []bot.Said
	for _, m := range before {
		if m.From == "you" && m.Text != "" {
			all = append(all, bot.Said{Author: userName, Text: m.Text, At: m.Time})
		}
	}
	said := bot.Latest(all, limit)
	d := bot.Discussion{Said: said}
	if len(said) == 0 {
		d.Note = noEarlierMessages
	}
	return d, nil
}
