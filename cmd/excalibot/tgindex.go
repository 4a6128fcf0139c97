package main

import (
	"context"
	"errors"
	"fmt"
	"strconv"

	"github.com/excalibot/excalibot/bot/telegram"
	"github.com/excalibot/excalibot/store"
)

// messageThreads is the store's message→thread index (store.Store satisfies it).
type messageThreads interface {
	SetMessageThread(ctx context.Context, platform, chat, msgID, thread string) error
	MessageThread(ctx context.Context, platform, chat, msgID string) (string, error)
}

// tgIndex keeps the Telegram adapter's thread index in the store's message→thread index (the
// adapter's names go where message ids go), so a reply to a picture posted before a restart, or by
// another replica, continues the picture's thread instead of starting one, and a plain /undo finds
// the diagram its sender last worked on.
//
// Most entries reach the store in the commits that make them true (the adapter runs with
// IndexKeptByCore): a request's with the commit that keeps it, a posted step's with the commit
// that records it. SetThread writes the rest (the status message) at once. Lookups always ask the
// store: an entry such as a sender's last diagram changes, and another replica may have changed it.
type tgIndex struct{ st messageThreads }

var _ telegram.ThreadIndex = tgIndex{}

// Thread implements telegram.ThreadIndex.
func (x tgIndex) Thread(ctx context.Context, chat int64, ref string) (string, bool, error) {
	th, err := x.st.MessageThread(ctx, telegram.Platform, strconv.FormatInt(chat, 10), ref)
	if errors.Is(err, store.ErrNotFound) {
		return "", false, nil
	}
	if err != nil {
		return "", false, fmt.Errorf("telegram thread index: %w", err)
	}
	return th, true, nil
}

// SetThread implements telegram.ThreadIndex.
func (x tgIndex) SetThread(ctx context.Context, chat int64, ref string, thread string) error {
	if err := x.st.SetMessageThread(ctx, telegram.Platform, strconv.FormatInt(chat, 10), ref, thread); err != nil {
		return fmt.Errorf("telegram thread index: %w", err)
	}
	return nil
}
