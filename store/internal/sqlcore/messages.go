package sqlcore

import (
	"context"
	"fmt"

	"github.com/excalibot/excalibot/store"
)

// Limits on the message index's parts: platform ids of chats and messages are short, and a thread
// part never exceeds what a whole thread key may hold.
const (
	maxMessagePart   = 256
	maxMessageThread = 512
)

// checkMessage validates the parts naming a chat message, and the thread when one is given.
func checkMessage(platform, chat, msgID string, thread ...string) error {
	for _, p := range []struct{ name, v string }{{"platform", platform}, {"chat", chat}, {"message id", msgID}} {
		if p.v == "" || len(p.v) > maxMessagePart {
			return fmt.Errorf("%w: message %s must be 1 to %d bytes, got %d", store.ErrInvalid, p.name, maxMessagePart, len(p.v))
		}
	}
	for _, t := range thread {
		if t == "" || len(t) > maxMessageThread {
			return fmt.Errorf("%w: thread of a message must be 1 to %d bytes, got %d", store.ErrInvalid, maxMessageThread, len(t))
		}
	}
	return nil
}

// SetMessageThread implements store.Store.
func (s *DB) SetMessageThread(ctx context.Context, platform, chat, msgID, thread string) error {
	defer s.lockWrite()()
	if err := checkMessage(platform, chat, msgID, thread); err != nil {
		return fmt.Errorf("set thread of message %s/%s/%s: %w", platform, chat, msgID, err)
	}
	return s.fileMessages(ctx, s.db, store.MessageThread{Platform: platform, Chat: chat, Msg: msgID, Thread: thread})
}

// checkIndex checks entries as SetMessageThread checks its arguments.
func checkIndex(entries []store.MessageThread) error {
	for _, m := range entries {
		if err := checkMessage(m.Platform, m.Chat, m.Msg, m.Thread); err != nil {
			return fmt.Errorf("set thread of message %s/%s/%s: %w", m.Platform, m.Chat, m.Msg, err)
		}
	}
	return nil
}

// fileMessages records message→thread entries, alone or inside a transaction (Accept,
// RecordPosted).
func (s *DB) fileMessages(ctx context.Context, e execer, entries ...store.MessageThread) error {
	for _, m := range entries {
		// An overwrite renews created, so Prune counts from the last time the message was recorded.
		if _, err := s.exec(ctx, e, `INSERT INTO message_threads (platform, chat, msg, thread, created) VALUES (?, ?, ?, ?, ?)
			ON CONFLICT (platform, chat, msg) DO UPDATE SET thread = excluded.thread, created = excluded.created`,
			m.Platform, m.Chat, m.Msg, m.Thread, s.now()); err != nil {
			return fmt.Errorf("set thread of message %s/%s/%s: %w", m.Platform, m.Chat, m.Msg, err)
		}
	}
	return nil
}

// MessageThread implements store.Store.
func (s *DB) MessageThread(ctx context.Context, platform, chat, msgID string) (string, error) {
	if err := checkMessage(platform, chat, msgID); err != nil {
		return "", fmt.Errorf("thread of message %s/%s/%s: %w", platform, chat, msgID, err)
	}
	var thread string
	err := s.row(ctx, s.db, `SELECT thread FROM message_threads WHERE platform = ? AND chat = ? AND msg = ?`,
		platform, chat, msgID).Scan(&thread)
	if isNoRows(err) {
		return "", fmt.Errorf("thread of message %s/%s/%s: %w", platform, chat, msgID, store.ErrNotFound)
	}
	if err != nil {
		return "", fmt.Errorf("thread of message %s/%s/%s: %w", platform, chat, msgID, err)
	}
	return thread, nil
}
