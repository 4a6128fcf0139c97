// Package logkey names the log attributes many packages write, so one spelling holds everywhere
// and a log query for a thread or an error finds every line.
package logkey

const (
	// Err is the error a line reports.
	Err = "err"
	// Thread is the conversation's store key (store.ThreadKey.String()).
	Thread = "thread"
	// Chat is a chat platform's own chat or channel id.
	Chat = "chat"
	// Model is the Ollama model a line is about.
	Model = "model"
	// Platform is the chat platform: slack, telegram, web.
	Platform = "platform"
)
