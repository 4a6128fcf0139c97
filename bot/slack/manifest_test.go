package slack

import (
	"context"
	"os"
	"slices"
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

	d := &drawReply{editURL: "https://excalibot.example/edit/x"}
	rec := newRecorder()
	rec.reply = func(ctx context.Context, a bot.Adapter, msg bot.Message) {
		for _, f := range msg.Files {
			if _, err := a.(bot.FileFetcher).FetchFile(ctx, f, 1<<20); err != nil {
				t.Errorf("fetch: %v", err)
			}
		}
		d.run(ctx, rec.fake, a, msg)
	}
	e := start(t, ModeSocket, rec, nil)
	_, err = e.fake.Send(e.ctx, slackfake.UserMessage{Channel: "C1", Text: "<@U0BOT> draw",
		Files: []slackfake.UploadedFile{{Name: "a.excalidraw", MIME: "application/json", Content: sceneJSON}}})
	must(t, err)
	rec.next(t)
	rec.waitReplied(t)
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
	// Events the adapter reads, and the scope each needs.
	for event, scope := range map[string]string{
		"app_mention":      "app_mentions:read",
		"message.channels": "channels:history",
		"message.groups":   "groups:history",
		"message.im":       "im:history",
		"message.mpim":     "mpim:history",
	} {
		if !slices.Contains(m.Settings.Events.BotEvents, event) {
			t.Errorf("event %s is not subscribed", event)
		}
		if !slices.Contains(m.OAuth.Scopes.Bot, scope) {
			t.Errorf("event %s needs scope %s, missing from the manifest", event, scope)
		}
	}
}
