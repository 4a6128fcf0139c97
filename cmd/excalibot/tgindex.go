package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"strconv"
	"sync"
	"time"

	"github.com/excalibot/excalibot/bot/telegram"
	"github.com/excalibot/excalibot/internal/logkey"
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

// laterIndex writes a ThreadIndex's entries behind the caller's back: a reply's picture is posted
// without waiting for the index's commit (a fsync on SQLite, one per message sent). Entries not yet
// written are answered from memory, so this process never misses its own; another replica or a
// restart sees them once written, long before anyone can reply to the message. Close writes what
// is left and stops the writer.
type laterIndex struct {
	next telegram.ThreadIndex
	log  *slog.Logger

	mu      sync.Mutex
	pending map[tgRef]string
	closed  bool

	kick chan struct{} // capacity 1: "there is something to write"
	stop chan struct{}
	done chan struct{}
}

type tgRef struct {
	chat int64
	ref  string
}

var _ telegram.ThreadIndex = (*laterIndex)(nil)

func newLaterIndex(next telegram.ThreadIndex, log *slog.Logger) *laterIndex {
	x := &laterIndex{next: next, log: log, pending: map[tgRef]string{},
		kick: make(chan struct{}, 1), stop: make(chan struct{}), done: make(chan struct{})}
	go x.write()
	return x
}

// Thread implements telegram.ThreadIndex.
func (x *laterIndex) Thread(ctx context.Context, chat int64, ref string) (string, bool, error) {
	x.mu.Lock()
	th, ok := x.pending[tgRef{chat, ref}]
	x.mu.Unlock()
	if ok {
		return th, true, nil
	}
	return x.next.Thread(ctx, chat, ref)
}

// SetThread implements telegram.ThreadIndex. After Close it writes at once.
func (x *laterIndex) SetThread(ctx context.Context, chat int64, ref string, thread string) error {
	x.mu.Lock()
	if x.closed {
		x.mu.Unlock()
		return x.next.SetThread(ctx, chat, ref, thread)
	}
	x.pending[tgRef{chat, ref}] = thread
	x.mu.Unlock()
	select {
	case x.kick <- struct{}{}:
	default: // a write is already due
	}
	return nil
}

func (x *laterIndex) write() {
	defer close(x.done)
	for {
		select {
		case <-x.kick:
			x.flush()
		case <-x.stop:
			x.flush()
			return
		}
	}
}

// flush writes every pending entry; one that fails is logged and dropped (the reply chain then
// starts a new thread, which is what the in-memory index does after a restart).
func (x *laterIndex) flush() {
	x.mu.Lock()
	batch := make(map[tgRef]string, len(x.pending))
	maps.Copy(batch, x.pending)
	x.mu.Unlock()
	for ref, th := range batch {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		if err := x.next.SetThread(ctx, ref.chat, ref.ref, th); err != nil {
			x.log.Warn("telegram: thread not recorded; replies to this message will start a new thread",
				logkey.Chat, ref.chat, "ref", ref.ref, logkey.Err, err)
		}
		cancel()
		x.mu.Lock()
		if x.pending[ref] == th { // unless it was set again meanwhile
			delete(x.pending, ref)
		}
		x.mu.Unlock()
	}
}

// Close writes the pending entries and stops the writer; later SetThreads write directly.
func (x *laterIndex) Close() {
	x.mu.Lock()
	if x.closed {
		x.mu.Unlock()
		return
	}
	x.closed = true
	x.mu.Unlock()
	close(x.stop)
	<-x.done
}
