// Package bot is the conversation core that every chat platform shares: one ordered queue per
// thread, commands, limits, and replies. Platform adapters (bot/slack, bot/telegram, the web chat
// page) turn their events into messages with a thread key and send the core's replies back.
package bot
