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
	MessageThread(ctx context.Context, platform, chat, msgID string) (string, error)
}

// tgIndex is the Telegram adapter's thread index in serve: a reply to a picture posted before a
// restart, or by another replica, continues the picture's thread instead of starting one, and a
// plain /undo finds the diagram its sender last worked on.
//
// The adapter's entries reach the store in the commits that make them true: a request's with the
// commit that keeps it (bot.Message.Index), a posted message's with the commit that records the
// step posted (bot.Record), so another replica knows a message's thread as soon as the store
// knows the message. SetThread only keeps an entry in this process's memory, which lookups ask
// first: this process never waits on the store for its own entries.
type tgIndex struct {
	mem *telegram.MemoryIndex
	st  messageThreads
}

var _ telegram.ThreadIndex = tgIndex{}

// tgIndexMemory bounds this process's own entries; older ones are asked of the store.
const tgIndexMemory = 10_000

func newTgIndex(st messageThreads) tgIndex {
	return tgIndex{mem: telegram.NewMemoryIndex(tgIndexMemory), st: st}
}

// Thread implements telegram.ThreadIndex.
func (x tgIndex) Thread(ctx context.Context, chat int64, ref string) (string, bool, error) {
	if th, ok, _ := x.mem.Thread(ctx, chat, ref); ok {
		return th, true, nil
	}
	th, err := x.st.MessageThread(ctx, telegram.Platform, strconv.FormatInt(chat, 10), ref)
	if errors.Is(err, store.ErrNotFound) {
		return "", false, nil
	}
	if err != nil {
		return "", false, fmt.Errorf("telegram thread index: %w", err)
	}
	return th, true, nil
}

// SetThread implements telegram.ThreadIndex: in this process's memory (see tgIndex).
func (x tgIndex) SetThread(ctx context.Context, chat int64, ref string, thread string) error {
	if thread == "" {
		return fmt.Errorf("telegram thread index: %w: empty thread", store.ErrInvalid)
	}
	return x.mem.SetThread(ctx, chat, ref, thread)
}
