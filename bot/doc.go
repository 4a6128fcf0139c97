// Package bot is the conversation core that every chat platform shares: each thread's messages
// kept in the store's inbox before they are acknowledged and worked in order by the one process
// holding the thread's lease, commands, limits, and replies posted through the store's outbox.
// Platform adapters (bot/slack, bot/telegram, the web chat page) turn their events into messages
// with a thread key and post the core's replies back.
package bot
