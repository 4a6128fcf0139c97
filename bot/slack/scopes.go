package slack

// Scopes are the bot scopes the adapter's calls and events need: slack-app-manifest.yaml grants
// exactly these (its test checks both). `excalibot doctor` compares them with what a bot token
// holds, so an app installed from an older manifest is told to reinstall.
var Scopes = []string{
	"app_mentions:read", "channels:history", "groups:history", "im:history", "mpim:history", "im:read",
	"chat:write", "reactions:write", "files:write", "files:read", "assistant:write", "users:read",
}
