package slackfake

import (
	"encoding/base64"
	"net/url"
	"slices"
	"strconv"
	"strings"
)

// User is a person (or bot) of the fake workspace, as users.info tells of them.
type User struct {
	ID          string
	Name        string // the handle, e.g. "ana"
	RealName    string // e.g. "Ana Lima"
	DisplayName string // what Slack shows, e.g. "Ana"; may be empty
	IsBot       bool
}

// AddUser adds or replaces a user that users.info knows. The bot's own user is there from the
// start; anyone else is "user_not_found" until added.
func (s *Server) AddUser(u User) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.users[u.ID] = u
}

func (s *Server) userInfo(f url.Values) (map[string]any, string) {
	u, ok := s.users[f.Get("user")]
	if !ok {
		return nil, "user_not_found"
	}
	return map[string]any{"user": map[string]any{
		"id": u.ID, "team_id": s.cfg.TeamID, "name": u.Name, "real_name": u.RealName, "deleted": false,
		"is_bot": u.IsBot, "is_admin": false, "tz": "Europe/Lisbon", "tz_offset": 0,
		"profile": map[string]any{"real_name": u.RealName, "real_name_normalized": u.RealName,
			"display_name": u.DisplayName, "display_name_normalized": u.DisplayName, "team": s.cfg.TeamID},
	}}, ""
}

// repliesMax is Slack's largest conversations.replies page.
const repliesMax = 1000

// replies serves conversations.replies: the thread's parent and its replies, oldest first, within
// latest/oldest (inclusive or not), a page of at most limit (and Config.RepliesPage) messages at a
// time with has_more and response_metadata.next_cursor. Continuation pages do not repeat the parent.
func (s *Server) replies(f url.Values) (map[string]any, string) {
	channel, ts := f.Get("channel"), f.Get("ts")
	if channel == "" {
		return nil, "channel_not_found"
	}
	m := s.find(channel, ts)
	if m == nil || m.Deleted {
		return nil, "thread_not_found"
	}
	parent := m.TS
	if m.ThreadTS != "" {
		parent = m.ThreadTS
	}
	inclusive := f.Get("inclusive") == "1" || f.Get("inclusive") == "true"
	latest, oldest := f.Get("latest"), f.Get("oldest")
	var thread []*Message
	for _, x := range s.messages {
		if x.Channel != channel || x.Deleted || (x.TS != parent && x.ThreadTS != parent) {
			continue
		}
		if latest != "" && (tsLess(latest, x.TS) || (!inclusive && x.TS == latest)) {
			continue
		}
		if oldest != "" && (tsLess(x.TS, oldest) || (!inclusive && x.TS == oldest)) {
			continue
		}
		thread = append(thread, x)
	}
	slices.SortFunc(thread, func(a, b *Message) int {
		switch {
		case tsLess(a.TS, b.TS):
			return -1
		case tsLess(b.TS, a.TS):
			return 1
		}
		return 0
	})

	limit, err := strconv.Atoi(f.Get("limit"))
	if err != nil || limit <= 0 || limit > repliesMax {
		limit = repliesMax
	}
	if s.cfg.RepliesPage > 0 {
		limit = min(limit, s.cfg.RepliesPage)
	}
	start := 0
	if c := f.Get("cursor"); c != "" {
		next, ok := decodeCursor(c)
		if !ok {
			return nil, "invalid_cursor"
		}
		start = len(thread)
		for i, x := range thread {
			if !tsLess(x.TS, next) {
				start = i
				break
			}
		}
	}
	end := min(start+limit, len(thread))
	var out []any
	for _, x := range thread[start:end] {
		out = append(out, s.messageJSON(x, s.replyCount(channel, parent)))
	}
	if out == nil {
		out = []any{}
	}
	res := map[string]any{"messages": out, "has_more": end < len(thread)}
	meta := map[string]any{"next_cursor": ""}
	if end < len(thread) {
		meta["next_cursor"] = encodeCursor(thread[end].TS)
	}
	res["response_metadata"] = meta
	return res, ""
}

func (s *Server) replyCount(channel, parent string) int {
	n := 0
	for _, x := range s.messages {
		if x.Channel == channel && !x.Deleted && x.ThreadTS == parent && x.TS != parent {
			n++
		}
	}
	return n
}

// messageJSON is a message as conversations.replies returns it.
func (s *Server) messageJSON(m *Message, replies int) map[string]any {
	j := map[string]any{"type": "message", "text": m.Text, "ts": m.TS, "team": s.cfg.TeamID}
	if m.User != "" {
		j["user"] = m.User
	}
	if m.BotID != "" {
		j["bot_id"] = m.BotID
	}
	if m.Subtype != "" {
		j["subtype"] = m.Subtype
	}
	switch {
	case m.ThreadTS != "":
		j["thread_ts"] = m.ThreadTS
		j["parent_user_id"] = "U0USER"
	case replies > 0:
		j["thread_ts"] = m.TS
		j["reply_count"] = replies
	}
	if len(m.Files) > 0 {
		var files []any
		for i := range m.Files {
			files = append(files, s.fileJSON(&m.Files[i]))
		}
		j["files"] = files
	}
	return j
}

// encodeCursor makes an opaque cursor naming the next page's first message, as Slack's do
// ("bmV4dF90czox…" is "next_ts:1…").
func encodeCursor(ts string) string {
	return base64.StdEncoding.EncodeToString([]byte("next_ts:" + ts))
}

func decodeCursor(c string) (string, bool) {
	b, err := base64.StdEncoding.DecodeString(c)
	if err != nil {
		return "", false
	}
	ts, ok := strings.CutPrefix(string(b), "next_ts:")
	return ts, ok && ts != ""
}

// tsLess orders Slack timestamps ("1700000000.000123") as numbers, without float rounding.
func tsLess(a, b string) bool {
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
