package telegram

import (
	"container/list"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/go-telegram/bot/models"

	"github.com/excalibot/excalibot/bot"
)

// The record of messages seen, for "draw this thread": Telegram has no call that reads a chat's
// history, so the adapter keeps what it was sent. It is kept in this process's memory only, never
// written anywhere: a restart forgets it, and of several replicas each has what it received.
const (
	seenPerChat      = 200     // messages kept per chat and forum topic
	seenCharsPerChat = 40_000  // characters of them
	seenBytes        = 8 << 20 // all chats together, counting seenOverhead per message
	seenOverhead     = 64      // bytes a message costs beyond its text and author
)

// seenLog keeps the latest messages of each chat (and forum topic) the adapter received, bounded
// per chat by count and characters and across chats by bytes: the chat written to longest ago is
// forgotten first.
type seenLog struct {
	mu    sync.Mutex
	convs map[convRef]*list.Element // of *conv
	order *list.List                // least recently written first
	bytes int

	perChat, charsPerChat, maxBytes int
}

type convRef struct {
	chat  int64
	topic int
}

// conv is the record of one chat or forum topic.
type conv struct {
	ref   convRef
	msgs  []seenMsg // by message id, oldest first
	chars int
	bytes int
	// all is set once a message not addressed to the bot arrived: the bot evidently receives the
	// whole discussion here (privacy mode off, or the bot is an admin).
	all bool
}

type seenMsg struct {
	id     int
	author string
	text   string
	at     time.Time
	chars  int
}

func newSeenLog() *seenLog {
	return &seenLog{convs: map[convRef]*list.Element{}, order: list.New(),
		perChat: seenPerChat, charsPerChat: seenCharsPerChat, maxBytes: seenBytes}
}

func (m seenMsg) size() int { return len(m.text) + len(m.author) + seenOverhead }

// add records message m by author with its text (the bot's mention stripped). forBot tells a
// message addressed to the bot; of those only drawing requests are discussion, not commands. No
// command is discussion, whichever bot it is for: of the texts starting with "/" only a /draw
// request to this bot is kept. A general command ("/start") reaches bots in privacy mode too, so
// it does not show that the bot hears the whole group. A message seen before (a redelivered
// update) is not recorded twice.
func (s *seenLog) add(m *models.Message, author, text string, forBot bool, now time.Time) {
	if !forBot && strings.HasPrefix(text, "/") {
		return
	}
	if text == "" || forBot && bot.ParseCommand(text).Kind != bot.CmdDraw {
		if !forBot {
			s.markAll(convRef{m.Chat.ID, topicOf(m)})
		}
		return
	}
	at := now
	if m.Date > 0 {
		at = time.Unix(int64(m.Date), 0)
	}
	msg := seenMsg{id: m.ID, author: author, text: text, at: at, chars: len([]rune(text))}
	if msg.chars > s.charsPerChat {
		return // cannot be kept whole; Telegram's 4096-character limit keeps this from happening
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	c := s.conv(convRef{m.Chat.ID, topicOf(m)})
	c.all = c.all || !forBot
	i := len(c.msgs)
	for i > 0 && c.msgs[i-1].id >= msg.id {
		if c.msgs[i-1].id == msg.id {
			return
		}
		i--
	}
	c.msgs = append(c.msgs, seenMsg{})
	copy(c.msgs[i+1:], c.msgs[i:])
	c.msgs[i] = msg
	c.chars += msg.chars
	c.bytes += msg.size()
	s.bytes += msg.size()
	for len(c.msgs) > s.perChat || c.chars > s.charsPerChat {
		s.dropOldest(c)
	}
	s.evict()
}

// markAll notes that a message not for the bot arrived in ref.
func (s *seenLog) markAll(ref convRef) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.conv(ref).all = true
	s.evict() // a new chat's entry costs bytes too
}

// evict forgets the chats written to longest ago while all together hold more than maxBytes;
// the chat just written stays. Called with s.mu held.
func (s *seenLog) evict() {
	for s.bytes > s.maxBytes && s.order.Len() > 1 {
		s.forget(s.order.Front())
	}
}

// conv returns the record of ref, made and moved to the most recently written. Called with s.mu
// held.
func (s *seenLog) conv(ref convRef) *conv {
	if el, ok := s.convs[ref]; ok {
		s.order.MoveToBack(el)
		return el.Value.(*conv)
	}
	c := &conv{ref: ref}
	s.convs[ref] = s.order.PushBack(c)
	s.bytes += seenOverhead
	c.bytes = seenOverhead
	return c
}

func (s *seenLog) dropOldest(c *conv) {
	old := c.msgs[0]
	c.msgs = c.msgs[1:]
	c.chars -= old.chars
	c.bytes -= old.size()
	s.bytes -= old.size()
}

func (s *seenLog) forget(el *list.Element) {
	c := el.Value.(*conv)
	s.order.Remove(el)
	delete(s.convs, c.ref)
	s.bytes -= c.bytes
}

// before is what the record holds of ref before message id (0: all of it), newest first
// within limit, and whether it holds message id itself and any message not for the bot.
func (s *seenLog) before(ref convRef, id int, limit bot.DiscussionLimit) (said []bot.Said, hasID, all bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	el, ok := s.convs[ref]
	if !ok {
		return nil, false, false
	}
	c := el.Value.(*conv)
	var earlier []bot.Said
	for _, m := range c.msgs {
		if m.id == id {
			hasID = true
		}
		if id == 0 || m.id < id {
			earlier = append(earlier, bot.Said{Author: m.author, Text: m.text, At: m.at})
		}
	}
	return bot.Latest(earlier, limit), hasID || id == 0, c.all
}

// text is what message id of ref said, or "" when the record does not hold it.
func (s *seenLog) text(ref convRef, id int) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	el, ok := s.convs[ref]
	if !ok {
		return ""
	}
	for _, m := range el.Value.(*conv).msgs {
		if m.id == id {
			return m.text
		}
	}
	return ""
}

// displayName is how a message's author is named in a discussion: their name as Telegram shows
// it, else their username, else their id; an anonymous admin by the group's title.
func displayName(m *models.Message) string {
	if m.SenderChat != nil {
		return strings.TrimSpace(m.SenderChat.Title)
	}
	if m.From == nil {
		return ""
	}
	if n := strings.TrimSpace(m.From.FirstName + " " + m.From.LastName); n != "" {
		return n
	}
	if m.From.Username != "" {
		return m.From.Username
	}
	return strconv.FormatInt(m.From.ID, 10)
}
