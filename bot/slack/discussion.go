package slack

import (
	"cmp"
	"context"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/slack-go/slack"

	"github.com/excalibot/excalibot/bot"
	"github.com/excalibot/excalibot/internal/logkey"
)

var _ bot.DiscussionReader = (*Adapter)(nil)

const (
	// defaultDiscussionMessages and defaultDiscussionChars stand in for a zero DiscussionLimit
	// field: a reader never reads without bounds.
	defaultDiscussionMessages = 100
	defaultDiscussionChars    = 20_000
	// repliesPage is the page size asked of conversations.replies (Slack recommends at most 200;
	// it may answer with fewer).
	repliesPage = 200
	// maxRepliesPages bounds the pages read for one discussion: 10 000 messages at full pages.
	maxRepliesPages = 50
)

// Discussion implements bot.DiscussionReader: what people said in msg's thread before msg, oldest
// first, from conversations.replies (paged by its cursors). The bot's own messages, other bots'
// and anything that is not a person's message (joins, the assistant thread's root) are left out.
// Of the rest, the latest limit.Messages are kept, and of those the latest that fit in
// limit.Chars characters; the oldest one kept may be cut at its start. Authors are named by their
// display names (users.info, cached; a few look-ups at a time within nameBudget in all), or by
// their user ids when Slack does not say in time.
func (a *Adapter) Discussion(ctx context.Context, msg bot.Message, limit bot.DiscussionLimit) (bot.Discussion, error) {
	key := msg.Key
	if limit.Messages <= 0 {
		limit.Messages = defaultDiscussionMessages
	}
	if limit.Chars <= 0 {
		limit.Chars = defaultDiscussionChars
	}
	switch {
	case key.Thread == "":
		return bot.Discussion{Note: "I read the messages of a thread: start a thread on the messages you want drawn and ask me there."}, nil
	case key.Thread == msg.ID:
		return bot.Discussion{Note: "This message starts its thread, so there is nothing above it to draw: ask me in the thread you want drawn."}, nil
	}
	self, _ := a.identity()

	var kept []slack.Message // the latest limit.Messages so far, oldest first
	cursor, last := "", ""
	for page := 0; ; page++ {
		if page == maxRepliesPages {
			a.log.Warn("slack: discussion longer than the pages read; the rest is left out", logkey.Thread, key.String(), "pages", page)
			break
		}
		msgs, more, next, err := a.api.GetConversationRepliesContext(ctx, &slack.GetConversationRepliesParameters{
			ChannelID: key.Channel, Timestamp: key.Thread, Cursor: cursor, Limit: repliesPage,
			Latest: msg.ID, Inclusive: false,
		})
		if err != nil {
			a.log.Warn("slack: cannot read the thread for a discussion"+scopeHint(err),
				logkey.Thread, key.String(), "method", "conversations.replies", "page", page+1, logkey.Err, err)
			return bot.Discussion{}, readFailed(err)
		}
		for _, m := range msgs {
			// Oldest first, each once: a parent repeated at the top of a page is dropped, and
			// anything from the request on (Latest is exclusive, but be sure).
			if (last != "" && !tsBefore(last, m.Timestamp)) || (msg.ID != "" && !tsBefore(m.Timestamp, msg.ID)) {
				continue
			}
			last = m.Timestamp
			if !said(m, self) {
				continue
			}
			kept = append(kept, m)
			if len(kept) > limit.Messages {
				kept = kept[1:]
			}
		}
		if !more || next == "" {
			break
		}
		cursor = next
	}

	// The names of the authors and of the people mentioned, all at once within one budget, the
	// latest messages' first: those the characters keep.
	var users []string
	for i := len(kept) - 1; i >= 0; i-- {
		users = append(users, kept[i].User)
		for _, sm := range userMention.FindAllStringSubmatch(kept[i].Text, -1) {
			users = append(users, sm[1])
		}
	}
	nctx, cancel := a.nameContext(ctx)
	names := a.names.resolve(nctx, a, users)
	cancel()

	var said []bot.Said
	for _, m := range kept {
		if text := discussionText(m, self.UserID, names); text != "" {
			said = append(said, bot.Said{Author: names[m.User], Text: text, At: tsTime(m.Timestamp)})
		}
	}
	return bot.Discussion{Said: bot.Latest(said, limit)}, nil
}

// readFailed is err from conversations.replies with words for the person who asked (the core puts
// them in its answer): short, without thread keys or API method names, which stay in Error.
func readFailed(err error) error {
	msg := "Slack did not answer"
	switch {
	case isSlackError(err, "missing_scope"):
		msg = "the app lacks permission to read this thread; whoever runs me must update it from the manifest and reinstall it"
	case isSlackError(err, "not_allowed_token_type"):
		msg = "Slack does not let me read this thread"
	case isSlackError(err, "not_in_channel", "channel_not_found"):
		msg = "I am not in this channel"
	}
	return bot.UserError(msg, fmt.Errorf("conversations.replies: %w", err))
}

// said reports whether m is a person's message: not the bot's, not another bot's, not a join or
// the root Slack makes for an assistant thread.
func said(m slack.Message, self identity) bool {
	switch {
	case m.BotID != "" || m.SubType == "bot_message" || m.User == "":
		return false
	case self.UserID != "" && m.User == self.UserID:
		return false
	case !acceptedSubtypes[m.SubType]:
		return false
	}
	return true
}

// userMention matches a mention of a person in Slack's markup: <@U123> or <@U123|ana>.
var userMention = regexp.MustCompile(`<@([UW][A-Z0-9]+)(?:\|[^>]*)?>`)

// discussionText is what a person wrote, as plain text: the bot's mention removed, other
// mentions by name, the files named when there is no text.
func discussionText(m slack.Message, botUserID string, names map[string]string) string {
	// cleanText keeps the mentions of people other than the bot as Slack wrote them.
	text := userMention.ReplaceAllStringFunc(cleanText(m.Text, botUserID), func(tok string) string {
		id := userMention.FindStringSubmatch(tok)[1]
		return "@" + cmp.Or(names[id], id)
	})
	if text == "" && len(m.Files) > 0 {
		var names []string
		for _, f := range m.Files {
			names = append(names, cmp.Or(f.Name, f.Title, "a file"))
		}
		text = "(shared " + strings.Join(names, ", ") + ")"
	}
	return text
}

// tsBefore orders Slack timestamps ("1700000000.000123") as numbers, without float rounding.
func tsBefore(a, b string) bool {
	ai, af, _ := strings.Cut(a, ".")
	bi, bf, _ := strings.Cut(b, ".")
	if len(ai) != len(bi) {
		return len(ai) < len(bi)
	}
	if ai != bi {
		return ai < bi
	}
	for len(af) < len(bf) {
		af += "0"
	}
	for len(bf) < len(af) {
		bf += "0"
	}
	return af < bf
}

// tsTime is when a Slack timestamp was made; the zero time when it is not one.
func tsTime(ts string) time.Time {
	sec, frac, _ := strings.Cut(ts, ".")
	s, err := strconv.ParseInt(sec, 10, 64)
	if err != nil {
		return time.Time{}
	}
	frac = (frac + "000000")[:6]
	us, err := strconv.ParseInt(frac, 10, 64)
	if err != nil {
		return time.Time{}
	}
	return time.Unix(s, us*1000).UTC()
}
