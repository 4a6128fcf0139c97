package slackfake

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// UserMessage is a message someone posts in the fake workspace.
type UserMessage struct {
	Channel string // "C…" channel, "G…" private channel, "D…" direct message
	// ChannelType is "channel", "group", "im" or "mpim"; by default it follows Channel's prefix.
	ChannelType string
	User        string // default "U0USER"
	Text        string // in Slack's markup: "<@U0BOT> draw …"
	ThreadTS    string // a reply in this thread
	BotID       string // set for messages from bots (integrations, or the bot itself)
	Subtype     string // e.g. "channel_join", "message_changed"; "file_share" is set when Files are given
	Team        string // the workspace the event is for (team_id); default the fake's team
	Files       []UploadedFile
	// PartialFiles sends the files as Slack sometimes does (Slack Connect, large events): only
	// {"id", "file_access": "check_file_info"}, so the app must call files.info.
	PartialFiles bool
}

// UploadedFile is a file a person posts with a message.
type UploadedFile struct {
	Name    string
	MIME    string
	Content []byte
}

// Event is one Events API callback as Slack sends it (the payload of a Socket Mode envelope, or
// the body of an Events API request).
type Event struct {
	ID   string // event_id
	Type string // "message" or "app_mention"
	Body []byte // the event_callback JSON
}

// Posted is the outcome of Post: the new message's ts and the events Slack sends for it.
type Posted struct {
	TS     string
	Events []Event
}

// Post records a person's message and returns the events Slack would send to an app subscribed
// to app_mention and message.channels/groups/im/mpim: a message event, plus an app_mention
// (with its own event id) when the message mentions the bot outside a DM, so one mention
// arrives twice, as it does from Slack.
func (s *Server) Post(m UserMessage) Posted {
	if m.User == "" {
		m.User = "U0USER"
	}
	if m.Team == "" {
		m.Team = s.cfg.TeamID
	}
	if m.ChannelType == "" {
		m.ChannelType = map[byte]string{'D': "im", 'G': "group"}[firstByte(m.Channel)]
		if m.ChannelType == "" {
			m.ChannelType = "channel"
		}
	}
	if len(m.Files) > 0 && m.Subtype == "" {
		m.Subtype = "file_share"
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	ts := s.nextTS()
	msg := &Message{Channel: m.Channel, TS: ts, ThreadTS: m.ThreadTS, User: m.User, BotID: m.BotID, Subtype: m.Subtype, Text: m.Text}
	var files []map[string]any
	for _, u := range m.Files {
		f := &File{ID: s.nextID("F"), Name: u.Name, Title: u.Name, MIME: u.MIME, Content: u.Content, User: m.User}
		s.files[f.ID] = f
		msg.Files = append(msg.Files, *f)
		if m.PartialFiles {
			files = append(files, map[string]any{"id": f.ID, "file_access": "check_file_info", "created": 1700000000, "timestamp": 1700000000, "user": m.User})
		} else {
			files = append(files, s.fileJSON(f))
		}
	}
	s.messages = append(s.messages, msg)

	inner := map[string]any{
		"type": "message", "channel": m.Channel, "user": m.User, "text": m.Text, "ts": ts, "event_ts": ts,
		"channel_type": m.ChannelType, "team": m.Team, "client_msg_id": fmt.Sprintf("c0ffee00-0000-4000-8000-%012d", s.seq),
		"blocks": richText(m.Text),
	}
	if m.ThreadTS != "" {
		inner["thread_ts"] = m.ThreadTS
		inner["parent_user_id"] = "U0USER"
	}
	if m.BotID != "" {
		inner["bot_id"] = m.BotID
		delete(inner, "client_msg_id")
	}
	if m.Subtype != "" {
		inner["subtype"] = m.Subtype
	}
	if files != nil {
		inner["files"] = files
		inner["upload"] = false
		inner["display_as_bot"] = false
	}
	out := Posted{TS: ts}
	// Slack sends app_mention for new messages only: not for joins, edits or other subtypes.
	newMessage := m.Subtype == "" || m.Subtype == "file_share" || m.Subtype == "thread_broadcast"
	if m.ChannelType != "im" && newMessage && strings.Contains(m.Text, "<@"+s.cfg.BotUserID+">") {
		mention := map[string]any{}
		for _, k := range []string{"channel", "user", "text", "ts", "event_ts", "team", "client_msg_id", "blocks", "thread_ts", "parent_user_id", "bot_id", "files", "upload"} {
			if v, ok := inner[k]; ok {
				mention[k] = v
			}
		}
		mention["type"] = "app_mention"
		out.Events = append(out.Events, s.callback(m.Team, mention))
	}
	out.Events = append(out.Events, s.callback(m.Team, inner))
	return out
}

func firstByte(s string) byte {
	if s == "" {
		return 0
	}
	return s[0]
}

// richText is the blocks field Slack adds to a typed message.
func richText(text string) []any {
	return []any{map[string]any{"type": "rich_text", "block_id": "b0", "elements": []any{
		map[string]any{"type": "rich_text_section", "elements": []any{map[string]any{"type": "text", "text": text}}},
	}}}
}

// callback wraps an inner event in an event_callback; s.mu is held.
func (s *Server) callback(team string, inner map[string]any) Event {
	id := s.nextID("Ev0")
	body, err := json.Marshal(map[string]any{
		"token": "fake-verification-token", "team_id": team, "context_team_id": team, "context_enterprise_id": nil,
		"api_app_id": s.cfg.AppID, "event": inner, "type": "event_callback", "event_id": id,
		"event_time": 1700000000, "is_ext_shared_channel": false, "event_context": "4-fake-" + id,
		"authorizations": []any{map[string]any{"enterprise_id": nil, "team_id": team, "user_id": s.cfg.BotUserID,
			"is_bot": true, "is_enterprise_install": false}},
	})
	if err != nil {
		panic(err) // plain maps always marshal
	}
	return Event{ID: id, Type: inner["type"].(string), Body: body}
}

// Send posts a person's message and delivers its events over Socket Mode, waiting for each ack.
func (s *Server) Send(ctx context.Context, m UserMessage) (string, error) {
	p := s.Post(m)
	for _, ev := range p.Events {
		env, err := s.Deliver(ctx, ev, DeliverOptions{})
		if err != nil {
			return "", err
		}
		if err := s.WaitAck(ctx, env); err != nil {
			return "", err
		}
	}
	return p.TS, nil
}

// URLVerificationBody is the request Slack sends when the Events API URL is configured.
func URLVerificationBody(challenge string) []byte {
	b, _ := json.Marshal(map[string]string{"token": "fake-verification-token", "challenge": challenge, "type": "url_verification"})
	return b
}

// Sign computes X-Slack-Signature for a request body sent at ts.
func Sign(secret string, ts time.Time, body []byte) string {
	h := hmac.New(sha256.New, []byte(secret))
	_, _ = fmt.Fprintf(h, "v0:%d:%s", ts.Unix(), body)
	return "v0=" + hex.EncodeToString(h.Sum(nil))
}

// HTTPOptions alter a signed Events API request, to test retries and forgeries.
type HTTPOptions struct {
	RetryNum    int       // X-Slack-Retry-Num (0: not a retry)
	RetryReason string    // X-Slack-Retry-Reason, default "http_timeout" on retries
	Time        time.Time // X-Slack-Request-Timestamp (zero: now)
	Signature   string    // overrides the computed signature
	Secret      string    // signs with this secret instead of the fake's
}

// SignedRequest builds an Events API request to url as Slack signs it.
func (s *Server) SignedRequest(ctx context.Context, url string, body []byte, opt HTTPOptions) (*http.Request, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(body))
	if err != nil {
		return nil, err
	}
	at := opt.Time
	if at.IsZero() {
		at = time.Now()
	}
	secret := opt.Secret
	if secret == "" {
		secret = s.cfg.SigningSecret
	}
	sig := opt.Signature
	if sig == "" {
		sig = Sign(secret, at, body)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("User-Agent", "Slackbot 1.0 (+https://api.slack.com/robots)")
	req.Header.Set("X-Slack-Request-Timestamp", strconv.FormatInt(at.Unix(), 10))
	req.Header.Set("X-Slack-Signature", sig)
	if opt.RetryNum > 0 {
		reason := opt.RetryReason
		if reason == "" {
			reason = "http_timeout"
		}
		req.Header.Set("X-Slack-Retry-Num", strconv.Itoa(opt.RetryNum))
		req.Header.Set("X-Slack-Retry-Reason", reason)
	}
	return req, nil
}

// Response is what an Events API endpoint answered.
type Response struct {
	Status int
	Body   string
}

// DeliverHTTP sends a signed Events API request with body (an Event's Body, or
// URLVerificationBody) to url and returns the answer.
func (s *Server) DeliverHTTP(ctx context.Context, url string, body []byte, opt HTTPOptions) (Response, error) {
	req, err := s.SignedRequest(ctx, url, body, opt)
	if err != nil {
		return Response{}, err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return Response{}, fmt.Errorf("slackfake: events request: %w", err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return Response{}, fmt.Errorf("slackfake: events response: %w", err)
	}
	return Response{Status: resp.StatusCode, Body: string(b)}, nil
}
