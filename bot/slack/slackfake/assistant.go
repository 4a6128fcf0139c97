package slackfake

import (
	"encoding/json"
	"net/url"
	"slices"
)

// AssistantThread is a thread of the app's assistant surface (the "Agents & AI Apps" feature): a
// person opened the app's container, which starts a thread in their direct message with the app.
// The fake records what the app set on it.
type AssistantThread struct {
	Channel  string // the direct message, "D…"
	ThreadTS string // the thread's root message
	User     string
	// Context is the channel the person was looking at when the thread started (or when it
	// last changed); "" when none.
	Context string
	// Statuses are the assistant.threads.setStatus calls in order, "" for a clear; Status is
	// what shows now. Slack clears the status itself when the app posts in the thread.
	Statuses []string
	Status   string
	// Prompts are the suggested prompts of each assistant.threads.setSuggestedPrompts call.
	Prompts []SuggestedPrompts
	// Titles are the assistant.threads.setTitle calls in order; the last one shows.
	Titles []string
}

// SuggestedPrompts is one assistant.threads.setSuggestedPrompts call.
type SuggestedPrompts struct {
	Title   string
	Prompts []Prompt
}

// Prompt is one suggested prompt: the button's title and the message it sends.
type Prompt struct {
	Title   string `json:"title"`
	Message string `json:"message"`
}

// AssistantStart describes a person opening the app's assistant container.
type AssistantStart struct {
	User    string // default "U0USER"
	Channel string // their direct message with the app; default "D" + User
	Context string // the channel they are looking at; may be empty
	Team    string // default the fake's team
}

// StartAssistantThread starts an assistant thread as Slack does when a person opens the app's
// container: a root message of subtype assistant_app_thread in their direct message, and the
// assistant_thread_started event it sends the app (deliver it with Deliver or DeliverHTTP).
func (s *Server) StartAssistantThread(st AssistantStart) Posted {
	if st.User == "" {
		st.User = "U0USER"
	}
	if st.Channel == "" {
		st.Channel = "D" + st.User
	}
	if st.Team == "" {
		st.Team = s.cfg.TeamID
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	ts := s.nextTS()
	s.messages = append(s.messages, &Message{Channel: st.Channel, TS: ts, User: st.User, Subtype: "assistant_app_thread",
		Text: "New chat"})
	s.assistant = append(s.assistant, &AssistantThread{Channel: st.Channel, ThreadTS: ts, User: st.User, Context: st.Context})
	inner := map[string]any{"type": "assistant_thread_started", "assistant_thread": s.assistantJSON(st.Channel, ts, st.User, st.Context, st.Team),
		"event_ts": ts}
	return Posted{TS: ts, Events: []Event{s.callback(st.Team, inner)}}
}

// ChangeAssistantContext records that the person moved to another channel while the assistant
// thread is open, and returns the assistant_thread_context_changed event Slack sends.
func (s *Server) ChangeAssistantContext(channel, threadTS, context string) Event {
	s.mu.Lock()
	defer s.mu.Unlock()
	th := s.findAssistant(channel, threadTS)
	user := ""
	if th != nil {
		th.Context = context
		user = th.User
	}
	inner := map[string]any{"type": "assistant_thread_context_changed",
		"assistant_thread": s.assistantJSON(channel, threadTS, user, context, s.cfg.TeamID), "event_ts": s.nextTS()}
	return s.callback(s.cfg.TeamID, inner)
}

func (s *Server) assistantJSON(channel, ts, user, context, team string) map[string]any {
	ctx := map[string]any{}
	if context != "" {
		ctx = map[string]any{"channel_id": context, "team_id": team, "enterprise_id": ""}
	}
	return map[string]any{"user_id": user, "context": ctx, "channel_id": channel, "thread_ts": ts}
}

// Assistant returns an assistant thread as the app left it; false when there is none.
func (s *Server) Assistant(channel, threadTS string) (AssistantThread, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	th := s.findAssistant(channel, threadTS)
	if th == nil {
		return AssistantThread{}, false
	}
	c := *th
	c.Statuses = slices.Clone(th.Statuses)
	c.Prompts = slices.Clone(th.Prompts)
	c.Titles = slices.Clone(th.Titles)
	return c, true
}

func (s *Server) findAssistant(channel, threadTS string) *AssistantThread {
	for _, th := range s.assistant {
		if th.Channel == channel && th.ThreadTS == threadTS {
			return th
		}
	}
	return nil
}

// assistantTarget finds the thread an assistant.threads.* call names. The fake refuses the
// methods outside an assistant thread (Slack's answer there is not documented), so a test sees
// the adapter calling them where it should not; Config.AssistantAnywhere makes it take them.
func (s *Server) assistantTarget(f url.Values) (*AssistantThread, string) {
	channel, ts := f.Get("channel_id"), f.Get("thread_ts")
	switch {
	case channel == "":
		return nil, "channel_not_found"
	case ts == "":
		return nil, "invalid_arguments"
	}
	th := s.findAssistant(channel, ts)
	if th == nil && s.cfg.AssistantAnywhere && s.find(channel, ts) != nil {
		th = &AssistantThread{Channel: channel, ThreadTS: ts}
		s.assistant = append(s.assistant, th)
	}
	if th == nil {
		return nil, "invalid_thread_ts"
	}
	return th, ""
}

func (s *Server) setAssistantStatus(f url.Values) (map[string]any, string) {
	th, e := s.assistantTarget(f)
	if e != "" {
		return nil, e
	}
	if _, ok := f["status"]; !ok {
		return nil, "invalid_arguments" // required; "" clears
	}
	th.Statuses = append(th.Statuses, f.Get("status"))
	th.Status = f.Get("status")
	return nil, ""
}

// maxPrompts is Slack's limit of suggested prompts in one call.
const maxPrompts = 4

func (s *Server) setSuggestedPrompts(f url.Values) (map[string]any, string) {
	th, e := s.assistantTarget(f)
	if e != "" {
		return nil, e
	}
	var prompts []Prompt
	if err := json.Unmarshal([]byte(f.Get("prompts")), &prompts); err != nil || len(prompts) == 0 || len(prompts) > maxPrompts {
		return nil, "invalid_arguments"
	}
	for _, p := range prompts {
		if p.Title == "" || p.Message == "" {
			return nil, "invalid_arguments"
		}
	}
	th.Prompts = append(th.Prompts, SuggestedPrompts{Title: f.Get("title"), Prompts: prompts})
	return nil, ""
}

func (s *Server) setAssistantTitle(f url.Values) (map[string]any, string) {
	th, e := s.assistantTarget(f)
	if e != "" {
		return nil, e
	}
	if f.Get("title") == "" {
		return nil, "invalid_arguments"
	}
	th.Titles = append(th.Titles, f.Get("title"))
	return nil, ""
}

// botPostedIn clears an assistant thread's status when the app posts in it, as Slack does; s.mu
// is held.
func (s *Server) botPostedIn(channel, threadTS string) {
	if th := s.findAssistant(channel, threadTS); th != nil {
		th.Status = ""
	}
}
