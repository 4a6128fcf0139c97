package telegram

import (
	"context"
	"fmt"
	"strconv"

	"github.com/excalibot/excalibot/bot"
)

var _ bot.DiscussionReader = (*Adapter)(nil)

// littleToRead is how few earlier messages make a discussion worth a note on why.
const littleToRead = 3

// Notes on why a discussion may be short, in the user's words.
const (
	notePrivacy = "I only see the messages in this group that mention me, reply to me or start with a command, " +
		"because my privacy mode is on. To let me read the whole discussion, whoever runs me can send " +
		"/setprivacy to @BotFather, choose me and pick Disable (or make me an admin of the group); " +
		"Telegram applies it only after I am removed from the group and added again."
	noteMemory = "I keep the messages I receive only in memory, and this request reached me before a restart " +
		"(or reached another copy of me), so I have none of the messages before it."
)

// Discussion implements bot.DiscussionReader from the messages this process received in the
// request's chat and forum topic (a private chat: the person's own messages), oldest first. The
// bot's own messages are never among them: Telegram does not send a bot its own messages.
func (a *Adapter) Discussion(_ context.Context, msg bot.Message, limit bot.DiscussionLimit) (bot.Discussion, error) {
	d, err := destOf(msg.Key)
	if err != nil {
		return bot.Discussion{}, err
	}
	id := 0
	if msg.ID != "" {
		if id, err = strconv.Atoi(msg.ID); err != nil {
			return bot.Discussion{}, fmt.Errorf("telegram: message id %q is not a number", msg.ID)
		}
	}
	said, received, all := a.seen.before(convRef{d.chat, d.topic}, id, limit)
	out := bot.Discussion{Said: said}
	// With privacy mode on, what the bot heard is only what was addressed to it, however much
	// that is; a request from before a restart merely may have little before it.
	switch {
	case !received && len(said) < littleToRead:
		out.Note = noteMemory
	case d.thread != "" && !all && !a.readsAll():
		out.Note = notePrivacy
	}
	return out, nil
}

// readsAll reports getMe's can_read_all_group_messages: privacy mode is off.
func (a *Adapter) readsAll() bool {
	me := a.me.Load()
	return me != nil && me.CanReadAllGroupMessages
}
