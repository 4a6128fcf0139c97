package slack

import (
	"context"
	"os"
	"slices"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"

	"github.com/excalibot/excalibot/bot"
	"github.com/excalibot/excalibot/bot/slack/slackfake"
)

// scopeOf is the bot scope each Web API method the adapter calls needs (docs.slack.dev/reference/methods).
var scopeOf = map[string]string{
	"auth.test":                    "",
	"apps.connections.open":        "", // app-level token with connections:write
	"chat.postMessage":             "chat:write",
	"chat.update":                  "chat:write",
	"chat.delete":                  "chat:write",
	"reactions.add":                "reactions:write",
	"reactions.remove":             "reactions:write",
	"files.getUploadURLExternal":   "files:write",
	"files.completeUploadExternal": "files:write",
	"files.info":                   "files:read",
	"conversations.replies":        "channels:history", // in a public channel; groups:, im:, mpim:history elsewhere
	"users.info":                   "users:read",
	// Slack takes chat:write or assistant:write for the status, and means to keep chat:write.
	"assistant.threads.setStatus":           "chat:write",
	"assistant.threads.setSuggestedPrompts": "assistant:write",
	"assistant.threads.setTitle":            "assistant:write",
}

// The manifest must grant every scope the adapter's calls need and subscribe to the events it
// reads. The calls are taken from a full scenario against the fake, so a new call without a
// scope here fails the test.
func TestManifestCoversWhatTheAdapterUses(t *testing.T) {
	raw, err := os.ReadFile("../../slack-app-manifest.yaml")
	must(t, err)
	var m struct {
		OAuth struct {
			Scopes struct {
				Bot []string `yaml:"bot"`
			} `yaml:"scopes"`
		} `yaml:"oauth_config"`
		Settings struct {
			Events struct {
				BotEvents []string `yaml:"bot_events"`
			} `yaml:"event_subscriptions"`
			SocketMode bool `yaml:"socket_mode_enabled"`
		} `yaml:"settings"`
		Features struct {
			AppHome struct {
				Messages bool `yaml:"messages_tab_enabled"`
			} `yaml:"app_home"`
			AssistantView *struct {
				Description string `yaml:"assistant_description"`
				Prompts     []struct {
					Title   string `yaml:"title"`
					Message string `yaml:"message"`
				} `yaml:"suggested_prompts"`
			} `yaml:"assistant_view"`
		} `yaml:"features"`
	}
	if err := yaml.Unmarshal(raw, &m); err != nil {
		t.Fatalf("slack-app-manifest.yaml: %v", err)
	}
	if !m.Settings.SocketMode {
		t.Error("socket_mode_enabled is false; Socket Mode is the default mode")
	}
	if !m.Features.AppHome.Messages {
		t.Error("messages_tab_enabled is false; people could not write to the bot directly")
	}

	if v := m.Features.AssistantView; v == nil || v.Description == "" {
		t.Error("features.assistant_view is missing or has no assistant_description; the AI app surface is off")
	} else {
		var prompts []string
		for _, p := range v.Prompts {
			prompts = append(prompts, p.Title+": "+p.Message)
		}
		var want []string
		for _, p := range suggestedPrompts {
			want = append(want, p.Title+": "+p.Message)
		}
		if !slices.Equal(prompts, want) {
			t.Errorf("the manifest's suggested prompts:\n%s\ndiffer from the adapter's:\n%s", strings.Join(prompts, "\n"), strings.Join(want, "\n"))
		}
	}

	d := &drawReply{editURL: "https://excalibot.example/edit/x", title: "Deploy pipeline"}
	rec := newRecorder()
	rec.reply = func(ctx context.Context, a bot.Adapter, msg bot.Message) {
		for _, f := range msg.Files {
			if _, err := a.(bot.FileFetcher).FetchFile(ctx, f, 1<<20); err != nil {
				t.Errorf("fetch: %v", err)
			}
		}
		if msg.Key.Thread != msg.ID {
			if _, err := a.(bot.DiscussionReader).Discussion(ctx, msg, bot.DiscussionLimit{Messages: 10, Chars: 1000}); err != nil {
				t.Errorf("discussion: %v", err)
			}
		}
		d.run(ctx, rec.fake, a, msg)
	}
	e := start(t, ModeSocket, rec, nil)
	e.fake.AddUser(slackfake.User{ID: "U0USER", Name: "ana", DisplayName: "Ana"})
	ts, err := e.fake.Send(e.ctx, slackfake.UserMessage{Channel: "C1", Text: "<@U0BOT> draw",
		Files: []slackfake.UploadedFile{{Name: "a.excalidraw", MIME: "application/json", Content: sceneJSON}}})
	must(t, err)
	rec.next(t)
	rec.waitReplied(t)
	// "draw this thread" in the same thread reads it.
	_, err = e.fake.Send(e.ctx, slackfake.UserMessage{Channel: "C1", ThreadTS: ts, Text: "<@U0BOT> draw this thread"})
	must(t, err)
	rec.next(t)
	rec.waitReplied(t)
	// The AI app: its thread starts, and a request there is drawn with the native status.
	at := openAssistant(t, e, slackfake.AssistantStart{Channel: "D1"})
	waitPrompts(t, e, "D1", at)
	_, err = e.fake.Send(e.ctx, slackfake.UserMessage{Channel: "D1", ThreadTS: at, Text: "draw a pipeline"})
	must(t, err)
	rec.next(t)
	rec.waitReplied(t)
	if len(d.errs) > 0 {
		t.Fatal(d.errs)
	}
	for _, method := range []string{"conversations.replies", "users.info", "assistant.threads.setSuggestedPrompts",
		"assistant.threads.setStatus", "assistant.threads.setTitle"} {
		if len(e.fake.Calls(method)) == 0 {
			t.Errorf("the scenario made no %s call: its scope goes unchecked", method)
		}
	}
	for _, c := range e.fake.Calls("") {
		scope, ok := scopeOf[c.Method]
		if !ok {
			t.Errorf("the adapter calls %s: add its scope to scopeOf and the manifest", c.Method)
			continue
		}
		if scope != "" && !slices.Contains(m.OAuth.Scopes.Bot, scope) {
			t.Errorf("%s needs scope %s, missing from the manifest", c.Method, scope)
		}
	}
	// Scopes (what doctor checks a token against) is the manifest's list.
	if got, want := slices.Sorted(slices.Values(Scopes)), slices.Sorted(slices.Values(m.OAuth.Scopes.Bot)); !slices.Equal(got, want) {
		t.Errorf("Scopes = %q, want the manifest's bot scopes %q", got, want)
	}
	// Events the adapter reads, and the scope each needs.
	for event, scope := range map[string]string{
		"app_mention":      "app_mentions:read",
		"message.channels": "channels:history",
		"message.groups":   "groups:history",
		"message.im":       "im:history",
		"message.mpim":     "mpim:history",
		// The assistant events need no scope of their own, only the assistant_view feature.
		"assistant_thread_started":         "",
		"assistant_thread_context_changed": "",
	} {
		if !slices.Contains(m.Settings.Events.BotEvents, event) {
			t.Errorf("event %s is not subscribed", event)
		}
		if scope != "" && !slices.Contains(m.OAuth.Scopes.Bot, scope) {
			t.Errorf("event %s needs scope %s, missing from the manifest", event, scope)
		}
	}
}
