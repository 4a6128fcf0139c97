package main

import (
	"fmt"
	"log/slog"
	"net/http"

	"github.com/excalibot/excalibot/bot"
	"github.com/excalibot/excalibot/bot/relay"
	"github.com/excalibot/excalibot/bot/slack"
	"github.com/excalibot/excalibot/bot/telegram"
	"github.com/excalibot/excalibot/config"
)

// startAdapters builds the chat adapters that have credentials, hands their messages to the work
// engine, registers them with it and mounts their webhook handlers. The returned runners are their
// receive loops.
func startAdapters(cfg config.Config, core *bot.Bot, work *relay.Engine, threads telegram.ThreadIndex, mux interface{ Handle(string, http.Handler) }, log *slog.Logger) ([]runner, error) {
	var out []runner
	if cfg.SlackBotToken != "" {
		a, err := slack.New(slack.Config{
			BotToken: cfg.SlackBotToken, AppToken: cfg.SlackAppToken, SigningSecret: cfg.SlackSigningSecret,
			Mode: cfg.SlackMode, APIURL: cfg.SlackAPIURL, Workspaces: cfg.SlackWorkspaces, Channels: cfg.SlackChannels,
			KnownThread: core.KnownThread,
		}, work, log)
		if err != nil {
			return nil, fmt.Errorf("slack: %w", err)
		}
		work.Register(a)
		if cfg.SlackMode == slack.ModeEvents {
			mux.Handle("POST /slack/events", a.EventsHandler())
		}
		out = append(out, runner{name: "slack", run: a.Run})
	}
	if cfg.TelegramToken != "" {
		a, err := telegram.New(telegram.Config{
			Token: cfg.TelegramToken, Mode: cfg.TelegramMode, WebhookSecret: cfg.TelegramWebhookSecret,
			PublicURL: cfg.PublicURL, APIURL: cfg.TelegramAPIURL, Chats: cfg.TelegramChats, Users: cfg.TelegramUsers,
			Threads: threads, IndexKeptByCore: true,
		}, work, log)
		if err != nil {
			return nil, fmt.Errorf("telegram: %w", err)
		}
		work.Register(a)
		if cfg.TelegramMode == "webhook" {
			mux.Handle("POST "+telegram.WebhookPath, a.WebhookHandler())
		}
		out = append(out, runner{name: "telegram", run: a.Run})
	}
	return out, nil
}
