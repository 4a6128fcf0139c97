package main

import (
	"log/slog"
	"net/http"

	"github.com/excalibot/excalibot/bot"
	"github.com/excalibot/excalibot/config"
)

// startAdapters builds the chat adapters that have credentials and mounts their webhook handlers.
func startAdapters(cfg config.Config, core *bot.Bot, mux *http.ServeMux, log *slog.Logger) ([]runner, error) {
	return nil, nil
}
