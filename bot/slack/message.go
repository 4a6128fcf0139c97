package slack

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/slack-go/slack"
	"github.com/slack-go/slack/slackevents"

	"github.com/excalibot/excalibot/bot"
	"github.com/excalibot/excalibot/internal/logkey"
)

// inbound is one message event as Slack sent it, before the adapter decides whether it is for
// the bot. Both app_mention and message events end up here.
type inbound struct {
	teamID   string
	eventID  string
	retry    int  // redelivery attempt, 0 for the first delivery
	mention  bool // an app_mention event
	edited   bool
	channel  string
	chanType string // "channel", "group", "im", "mpim"; empty on app_mention
	user     string
	botID    string
	subtype  string
	text     string
	ts       string
	threadTS string
	files    []slack.File
	received time.Time
	// assistant marks an assistant_thread_started or assistant_thread_context_changed event:
	// channel and threadTS name the assistant thread, user the person, and there is no message.
	assistant assistantEvent
}

type assistantEvent int

const (
	notAssistant assistantEvent = iota
	assistantStarted
	assistantContextChanged
)

// parseEventsAPI picks the message out of an Events API callback; false for anything else.
func parseEventsAPI(data any) (inbound, bool) {
	ev, ok := data.(slackevents.EventsAPIEvent)
	if !ok || ev.Type != slackevents.CallbackEvent {
		return inbound{}, false
	}
	in := inbound{teamID: ev.TeamID, received: time.Now()}
	if cb, ok := ev.Data.(*slackevents.EventsAPICallbackEvent); ok {
		in.eventID = cb.EventID
	}
	switch e := ev.InnerEvent.Data.(type) {
	case *slackevents.AppMentionEvent:
		in.mention = true
		in.edited = e.Edited != nil
		in.channel, in.user, in.botID = e.Channel, e.User, e.BotID
		in.text, in.ts, in.threadTS = e.Text, e.TimeStamp, e.ThreadTimeStamp
		in.files = e.Files
	case *slackevents.MessageEvent:
		in.channel, in.chanType, in.user, in.botID = e.Channel, e.ChannelType, e.User, e.BotID
		in.subtype, in.text, in.ts, in.threadTS = e.SubType, e.Text, e.TimeStamp, e.ThreadTimeStamp
		if e.Message != nil {
			in.files = e.Message.Files
			in.edited = e.Message.Edited != nil
		}
	case *slackevents.AssistantThreadStartedEvent:
		in.assistant = assistantStarted
		in.channel, in.threadTS, in.user = e.AssistantThread.ChannelID, e.AssistantThread.ThreadTimeStamp, e.AssistantThread.UserID
	case *slackevents.AssistantThreadContextChangedEvent:
		in.assistant = assistantContextChanged
		in.channel, in.threadTS, in.user = e.AssistantThread.ChannelID, e.AssistantThread.ThreadTimeStamp, e.AssistantThread.UserID
	default:
		return inbound{}, false
	}
	return in, true
}

// acceptedSubtypes are the message subtypes that carry a person's new message. Edits, deletions,
// joins, topic changes and bot_message are not requests.
var acceptedSubtypes = map[string]bool{"": true, "file_share": true, "thread_broadcast": true}

// toMessage decides whether in is for the bot and builds the core's message. Mentions start a
// thread on the mentioning message; messages in a thread the bot is part of need no mention;
// every direct message is for the bot. Every message it drops is logged with why. An error means
// it could not tell (the store did not answer whether the bot is in the thread): the event must
// not be acknowledged, so Slack delivers it again.
func (a *Adapter) toMessage(ctx context.Context, in inbound) (bot.Message, bool, error) {
	self, _ := a.identity()
	log := a.log.With("channel", in.channel, "ts", in.ts, "event", in.eventID)
	switch {
	case in.botID != "" || in.user == "" || in.user == self.UserID:
		log.Debug("slack: ignoring a bot's message", "bot_id", in.botID, "user", in.user)
		return bot.Message{}, false, nil
	case !acceptedSubtypes[in.subtype] || in.edited:
		log.Debug("slack: ignoring message subtype", "subtype", in.subtype, "edited", in.edited)
		return bot.Message{}, false, nil
	}
	team := in.teamID
	if team == "" {
		team = self.TeamID
	}
	// app_mention carries no channel_type; mentions never happen in DMs anyway.
	im := in.chanType == "im"
	mentioned := in.mention || hasMention(in.text, self.UserID)
	key := bot.ThreadKey{Platform: Platform, Workspace: team, Channel: in.channel, Thread: in.threadTS}
	if why := a.refusal(team, in.channel); why != "" {
		log.Info("slack: outside the allowlist; message dropped", "team", team, "why", why)
		if im || mentioned {
			a.refuse(ctx, key, in.ts, why)
		}
		return bot.Message{}, false, nil
	}
	switch {
	case im:
		// A DM's top level is one conversation (Thread ""); a thread inside a DM is its own.
	case in.threadTS == "" && mentioned:
		key.Thread = in.ts // the mention starts a thread on itself
	case in.threadTS == "":
		log.Debug("slack: channel message without a mention; not for the bot")
		return bot.Message{}, false, nil
	case mentioned:
	default:
		known, err := a.knownThread(ctx, key)
		if err != nil {
			return bot.Message{}, false, err
		}
		if !known {
			log.Debug("slack: message in a thread the bot is not part of; not for the bot", logkey.Thread, key.String())
			return bot.Message{}, false, nil
		}
	}
	if key.Thread != "" {
		a.threads.add(key.String())
	}
	msg := bot.Message{
		Key:      key,
		EventID:  in.eventID,
		ID:       in.ts,
		User:     in.user,
		Text:     cleanText(in.text, self.UserID),
		Received: in.received,
	}
	for _, f := range in.files {
		if at, ok := a.attachment(ctx, f); ok {
			msg.Files = append(msg.Files, at)
		}
	}
	if msg.Text == "" && len(msg.Files) == 0 {
		log.Info("slack: message for the bot with neither text nor a file it can read; ignored", logkey.Thread, key.String())
		return bot.Message{}, false, nil
	}
	return msg, true, nil
}

// knownThread reports whether the bot is part of a thread: remembered here, or known to the store
// through Config.KnownThread (after a restart, or when another replica saw the thread start). An
// error means the store could not say.
func (a *Adapter) knownThread(ctx context.Context, key bot.ThreadKey) (bool, error) {
	if a.threads.has(key.String()) {
		return true, nil
	}
	if a.cfg.KnownThread == nil {
		return false, nil
	}
	ok, err := a.cfg.KnownThread(ctx, key)
	if err != nil {
		return false, fmt.Errorf("slack: tell whether the bot is in thread %s: %w", key, err)
	}
	if ok {
		a.threads.add(key.String())
	}
	return ok, nil
}

func hasMention(text, userID string) bool {
	return userID != "" && (strings.Contains(text, "<@"+userID+">") || strings.Contains(text, "<@"+userID+"|"))
}

// slackMarkup matches Slack's <…> tokens: user and channel mentions, links.
var slackMarkup = regexp.MustCompile(`<([^<>]*)>`)

// cleanText turns Slack's message markup into what a person typed: the bot's mention removed,
// links and channel names as plain text, the three escaped characters unescaped. Mentions of
// other people stay as <@U…>.
func cleanText(text, botUserID string) string {
	text = slackMarkup.ReplaceAllStringFunc(text, func(tok string) string {
		inner := tok[1 : len(tok)-1]
		target, label, hasLabel := strings.Cut(inner, "|")
		switch {
		case strings.HasPrefix(target, "@"):
			if botUserID != "" && target[1:] == botUserID {
				return ""
			}
			return tok
		case strings.HasPrefix(target, "#"):
			if hasLabel && label != "" {
				return "#" + label
			}
			return tok
		case strings.HasPrefix(target, "!"):
			return tok // @here, @channel, dates
		case hasLabel && label != "":
			if label == strings.TrimPrefix(strings.TrimPrefix(target, "mailto:"), "http://") ||
				strings.HasSuffix(target, "://"+label) {
				return label
			}
			return label + " (" + target + ")"
		default:
			return strings.TrimPrefix(target, "mailto:")
		}
	})
	text = strings.NewReplacer("&lt;", "<", "&gt;", ">", "&amp;", "&").Replace(text)
	// Removing the mention leaves doubled or leading spaces ("<@U1> draw" → " draw").
	lines := strings.Split(text, "\n")
	for i, l := range lines {
		lines[i] = strings.Join(strings.Fields(l), " ")
	}
	return strings.TrimSpace(strings.Join(lines, "\n"))
}

// attachment wraps a file posted with a message; the content is downloaded only if the core
// asks for it, with the bot token, and never beyond the core's size limit.
func (a *Adapter) attachment(ctx context.Context, f slack.File) (bot.Attachment, bool) {
	if f.ID == "" && f.URLPrivate == "" {
		return bot.Attachment{}, false
	}
	if f.Name == "" && f.URLPrivate == "" {
		// A partial file object ("file_access": "check_file_info"): the core needs the name and
		// type to decide what the file is, so ask now. Rare, and bounded.
		ictx, cancel := context.WithTimeout(ctx, 5*time.Second)
		info, _, _, err := a.api.GetFileInfoContext(ictx, f.ID, 0, 0)
		cancel()
		if err != nil {
			a.log.Warn("slack files.info failed; the file keeps no name", "file", f.ID, logkey.Err, err)
		} else {
			f = *info
		}
	}
	if f.Mode == "tombstone" || f.Mode == "hidden_by_limit" {
		return bot.Attachment{}, false // deleted, or beyond the free plan's history
	}
	name := f.Name
	if name == "" {
		name = f.Title
	}
	ref, err := json.Marshal(fileRef{ID: f.ID, Name: f.Name, URLPrivate: f.URLPrivate, URLPrivateDownload: f.URLPrivateDownload,
		Size: f.Size, External: f.IsExternal})
	if err != nil {
		a.log.Warn("slack: a file of the message cannot be kept; left out", "file", f.ID, logkey.Err, err)
		return bot.Attachment{}, false
	}
	return bot.Attachment{Name: name, MIME: f.Mimetype, Size: int64(f.Size), Ref: string(ref)}, true
}

// fileRef is what the store keeps of a posted file (bot.Attachment.Ref), so that any replica can
// download it later.
type fileRef struct {
	ID                 string `json:"id"`
	Name               string `json:"name,omitempty"`
	URLPrivate         string `json:"url,omitempty"`
	URLPrivateDownload string `json:"download,omitempty"`
	Size               int    `json:"size,omitempty"`
	External           bool   `json:"external,omitempty"`
}

var _ bot.FileFetcher = (*Adapter)(nil)

// FetchFile implements bot.FileFetcher: it downloads a file of a message from its Ref.
func (a *Adapter) FetchFile(ctx context.Context, at bot.Attachment, max int64) ([]byte, error) {
	var r fileRef
	if err := json.Unmarshal([]byte(at.Ref), &r); err != nil {
		return nil, fmt.Errorf("slack file %s: unreadable reference: %w", at.Name, err)
	}
	return a.fetchFile(ctx, slack.File{ID: r.ID, Name: cmp.Or(r.Name, at.Name), URLPrivate: r.URLPrivate, URLPrivateDownload: r.URLPrivateDownload,
		Size: r.Size, IsExternal: r.External}, max)
}

// ErrTooLarge is returned by an attachment's Fetch when the file exceeds the limit.
var ErrTooLarge = errors.New("file too large")

func (a *Adapter) fetchFile(ctx context.Context, f slack.File, max int64) ([]byte, error) {
	if f.IsExternal {
		return nil, bot.UserError(fmt.Sprintf("%s is stored outside Slack; upload the file itself", f.Name),
			fmt.Errorf("slack file %s (%s) is stored outside Slack", f.ID, f.Name))
	}
	link := f.URLPrivateDownload
	if link == "" {
		link = f.URLPrivate
	}
	if link == "" {
		// Events may carry a partial file object ("file_access": "check_file_info").
		info, _, _, err := a.api.GetFileInfoContext(ctx, f.ID, 0, 0)
		if err != nil {
			return nil, fmt.Errorf("slack files.info %s: %w", f.ID, err)
		}
		f = *info
		link = f.URLPrivateDownload
		if link == "" {
			link = f.URLPrivate
		}
		if link == "" {
			return nil, fmt.Errorf("slack file %s has no download link", f.ID)
		}
	}
	if max > 0 && int64(f.Size) > max {
		return nil, fmt.Errorf("slack file %s is %d bytes, the limit is %d: %w", f.Name, f.Size, max, ErrTooLarge)
	}
	w := &limitedBuffer{max: max}
	if err := a.api.GetFileContext(ctx, link, w); err != nil {
		if errors.Is(err, ErrTooLarge) {
			return nil, fmt.Errorf("slack file %s is larger than the limit of %d bytes: %w", f.Name, max, ErrTooLarge)
		}
		return nil, fmt.Errorf("download slack file %s: %w", f.Name, err)
	}
	return w.buf.Bytes(), nil
}

// limitedBuffer fails the download as soon as it grows beyond max (0: no limit), so a file that
// lies about its size still cannot fill memory.
type limitedBuffer struct {
	buf bytes.Buffer
	max int64
}

func (l *limitedBuffer) Write(p []byte) (int, error) {
	if l.max > 0 && int64(l.buf.Len()+len(p)) > l.max {
		return 0, ErrTooLarge
	}
	return l.buf.Write(p)
}

// threadSet remembers the threads the bot is part of, forgetting the oldest beyond max.
type threadSet struct {
	mu    sync.Mutex
	max   int
	set   map[string]struct{}
	order []string // insertion order, for eviction
}

func newThreadSet(max int) *threadSet {
	return &threadSet{max: max, set: map[string]struct{}{}}
}

func (s *threadSet) add(key string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.set[key]; ok {
		return
	}
	s.set[key] = struct{}{}
	s.order = append(s.order, key)
	if len(s.order) > s.max {
		old := s.order[0]
		s.order = s.order[1:]
		delete(s.set, old)
	}
}

// forget drops key. It is rare (a thread found to be other than thought), so the linear search
// of the order is fine.
func (s *threadSet) forget(key string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.set[key]; !ok {
		return
	}
	delete(s.set, key)
	if i := slices.Index(s.order, key); i >= 0 {
		s.order = slices.Delete(s.order, i, i+1)
	}
}

func (s *threadSet) has(key string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	_, ok := s.set[key]
	return ok
}
