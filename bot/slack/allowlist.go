package slack

import (
	"context"
	"strings"
	"time"

	"github.com/excalibot/excalibot/bot"
	"github.com/excalibot/excalibot/internal/logkey"
)

// refuseEvery is how often a channel outside the allowlists is told so: once is polite, a reply
// to every mention would be noise.
const refuseEvery = 10 * time.Minute

func allowlist(ids []string) map[string]bool {
	var m map[string]bool
	for _, id := range ids {
		if id = strings.TrimSpace(id); id != "" {
			if m == nil {
				m = map[string]bool{}
			}
			m[id] = true
		}
	}
	return m
}

// refusal says why a message in channel of team is outside the allowlists; "" when allowed.
// The channel list applies to direct messages too: an operator who lists channels wants the
// bot nowhere else.
func (a *Adapter) refusal(team, channel string) string {
	switch {
	case a.workspaces != nil && !a.workspaces[team]:
		return "workspace"
	case a.channels != nil && !a.channels[channel]:
		return "channel"
	}
	return ""
}

// refuse tells a channel outside the allowlists, at most once per refuseEvery, that the bot does
// not work there: the refusal goes to the core, which posts it from its outbox, so the dispatcher
// never waits on Slack.
func (a *Adapter) refuse(ctx context.Context, key bot.ThreadKey, ts, why string) {
	now := time.Now()
	a.refusedMu.Lock()
	if last, ok := a.refused[key.Channel]; ok && now.Sub(last) < refuseEvery {
		a.refusedMu.Unlock()
		return
	}
	if len(a.refused) > 10_000 { // forget old entries rather than grow without bound
		for ch, at := range a.refused {
			if now.Sub(at) >= refuseEvery {
				delete(a.refused, ch)
			}
		}
	}
	a.refused[key.Channel] = now
	a.refusedMu.Unlock()

	thread := key.Thread
	if thread == "" && !strings.HasPrefix(key.Channel, "D") {
		thread = ts // answer a channel mention in its thread, not in the channel
	}
	text := "Sorry, I'm not enabled in this channel. An admin can allow it in excalibot's settings (EXCALIBOT_SLACK_CHANNELS)."
	if why == "workspace" {
		text = "Sorry, I'm not enabled in this workspace. An admin can allow it in excalibot's settings (EXCALIBOT_SLACK_WORKSPACES)."
	}
	// Kept through the core like any reply: posted from the outbox, retried while Slack is down.
	key.Thread = thread
	if err := a.handler.Handle(ctx, a, bot.Message{Key: key, ID: ts, Refusal: text}); err != nil {
		a.log.Warn("slack: the allowlist refusal was not kept", "channel", key.Channel, logkey.Err, err)
	}
}
