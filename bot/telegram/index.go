package telegram

import (
	"container/list"
	"context"
	"fmt"
	"strconv"
	"sync"
)

// ThreadIndex files group threads (ThreadKey.Thread) under names in a chat. The names are the
// adapter's: a message id in decimal ("123") for each request and each message the bot posted, so
// a reply to any of them continues their thread; "last:<topic>:<user>" for the thread a user last
// worked on in a topic; "asked:<message id>" for a request that was given that last thread without
// replying to it, so its answer names the diagram. Lookups that fail are logged and treated as
// unknown.
type ThreadIndex interface {
	// Thread returns the thread filed under ref in chat, or ok=false when none is.
	Thread(ctx context.Context, chat int64, ref string) (thread string, ok bool, err error)
	// SetThread files thread under ref in chat, replacing what was filed there.
	SetThread(ctx context.Context, chat int64, ref string, thread string) error
}

// msgRef names a message of the chat in the index.
func msgRef(id int) string { return strconv.Itoa(id) }

// lastRef names the thread user last worked on in a forum topic (0 outside topics).
func lastRef(topic int, user int64) string { return fmt.Sprintf("last:%d:%d", topic, user) }

// askedRef marks request id as given its sender's last thread.
func askedRef(id int) string { return "asked:" + strconv.Itoa(id) }

// MemoryIndex is the default ThreadIndex: the max entries set most recently, in memory.
type MemoryIndex struct {
	mu    sync.Mutex
	max   int
	m     map[indexRef]*list.Element // of *indexEntry
	order *list.List                 // least recently set first
}

type indexRef struct {
	chat int64
	ref  string
}

type indexEntry struct {
	key    indexRef
	thread string
}

// NewMemoryIndex returns an index that forgets the entries set longest ago beyond max. Setting an
// entry again counts as setting it anew, so a user's last thread stays while they use it.
func NewMemoryIndex(max int) *MemoryIndex {
	return &MemoryIndex{max: max, m: map[indexRef]*list.Element{}, order: list.New()}
}

// SetThread implements ThreadIndex.
func (t *MemoryIndex) SetThread(_ context.Context, chat int64, ref string, thread string) error {
	t.mu.Lock()
	defer t.mu.Unlock()
	k := indexRef{chat, ref}
	if el, ok := t.m[k]; ok {
		el.Value.(*indexEntry).thread = thread
		t.order.MoveToBack(el)
	} else {
		t.m[k] = t.order.PushBack(&indexEntry{key: k, thread: thread})
	}
	for t.order.Len() > t.max {
		oldest := t.order.Front()
		t.order.Remove(oldest)
		delete(t.m, oldest.Value.(*indexEntry).key)
	}
	return nil
}

// Thread implements ThreadIndex.
func (t *MemoryIndex) Thread(_ context.Context, chat int64, ref string) (string, bool, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	el, ok := t.m[indexRef{chat, ref}]
	if !ok {
		return "", false, nil
	}
	return el.Value.(*indexEntry).thread, true, nil
}
