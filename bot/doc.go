// Package bot is the conversation that every chat platform shares: what a thread's messages ask
// for (a drawing, a command, a version of the diagram, a discussion to draw, a Mermaid diagram),
// carried out on the thread's diagram, and the reply. It is a function of a thread's kept messages
// (Plan, Answer) to an Outcome; the durable work around it (the inbox, the leases, the runs, the
// outbox) is bot/relay's. Platform adapters (bot/slack, bot/telegram, bot/webchat) turn their
// events into messages with a thread key and post the replies back.
package bot
