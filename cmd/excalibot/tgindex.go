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

// tgIndex keeps the Telegram adapter's reply chains in the store, so a reply to a picture posted
// before a restart, or by another replica, continues the picture's thread instead of starting one.
type tgIndex struct{ st messageThreads }

var _ telegram.ThreadIndex = tgIndex{}

// Thread implements telegram.ThreadIndex.
func (x tgIndex) Thread(ctx context.Context, chat int64, msg int) (string, bool, error) {
	th, err := x.st.MessageThread(ctx, telegram.Platform, strconv.FormatInt(chat, 10), strconv.Itoa(msg))
	if errors.Is(err, store.ErrNotFound) {
		return "", false, nil
	}
	if err != nil {
		return "", false, fmt.Errorf("telegram thread index: %w", err)
	}
	return th, true, nil
}

// SetThread implements telegram.ThreadIndex.
func (x tgIndex) SetThread(ctx context.Context, chat int64, msg int, thread string) error {
	if err := x.st.SetMessageThread(ctx, telegram.Platform, strconv.FormatInt(chat, 10), strconv.Itoa(msg), thread); err != nil {
		return fmt.Errorf("telegram thread index: %w", err)
	}
	return nil
}
