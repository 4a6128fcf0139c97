// Package storetest is the conformance suite every store.Store implementation must pass, plus the
// shared durability check and benchmarks. Each backend's tests call Run, Durability and Bench with a
// Factory for fresh databases.
package storetest

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/excalibot/excalibot/store"
)

// Opener opens a store on one database; calling it twice gives two stores sharing the database, as
// two replicas (or processes) would. The suite closes what it opens.
type Opener func(t testing.TB, opt store.Options) Store

// Store is a store.Store with what tests read and arrange beyond it.
type Store interface {
	store.Store
	Inspector
}

// Inspector is what tests of the stores (and of what runs on them) read and arrange that the
// program never asks for: listings of runs, messages and replies, queued runs, leases and claimed
// event ids set up directly. Both stores of this module have it.
type Inspector interface {
	Runs(ctx context.Context, states ...store.RunState) ([]store.Run, error)
	Inbox(ctx context.Context, key store.ThreadKey, states ...store.InboxState) ([]store.InboxMessage, error)
	Outbox(ctx context.Context, key store.ThreadKey, states ...store.OutboxState) ([]store.OutboxItem, error)
	CreateRun(ctx context.Context, key store.ThreadKey, owner, detail string) (store.Run, error)
	SetRunState(ctx context.Context, id int64, state store.RunState, detail string) (store.Run, error)
	AcquireLease(ctx context.Context, key store.ThreadKey, owner string, ttl time.Duration) (store.Lease, error)
	ReleaseOwner(ctx context.Context, owner string) (int, error)
	ClaimEvents(ctx context.Context, eventIDs ...string) (bool, error)
}

// CreateLink makes one link of kind to key (the program makes its links with CreateLinks).
func CreateLink(ctx context.Context, s store.Store, key store.ThreadKey, kind store.LinkKind, expires time.Time) (string, store.Link, error) {
	tokens, links, err := s.CreateLinks(ctx, key, expires, kind)
	if err != nil {
		return "", store.Link{}, err
	}
	return tokens[0], links[0], nil
}

// Factory makes a fresh, empty database and returns an Opener for it.
type Factory func(t testing.TB) Opener

// Clock is a settable time source for Options.Now.
type Clock struct {
	mu sync.Mutex
	t  time.Time
}

// NewClock starts a clock at a fixed instant.
func NewClock() *Clock { return &Clock{t: time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)} }

// Now reads the clock.
func (c *Clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

// Advance moves the clock forward.
func (c *Clock) Advance(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}

// env is one test's store and clock.
type env struct {
	t     *testing.T
	s     Store
	clock *Clock
	open  Opener
	opt   store.Options
}

func newEnv(t *testing.T, f Factory, opt store.Options) *env {
	t.Helper()
	c := NewClock()
	opt.Now = c.Now
	open := f(t)
	s := open(t, opt)
	return &env{t: t, s: s, clock: c, open: open, opt: opt}
}

// another opens a second store on the same database, with the same clock.
func (e *env) another() Store { return e.open(e.t, e.opt) }

// Key returns a thread key for tests.
func Key(n int) store.ThreadKey {
	return store.ThreadKey{Platform: "slack", Workspace: "T01", Channel: "C/42", Thread: fmt.Sprintf("1700000000.%06d", n)}
}

// SceneN is a small distinct scene for revision n.
func SceneN(n int) []byte {
	return fmt.Appendf(nil, `{"type":"excalidraw","version":2,"elements":[{"id":"e%d","type":"rectangle"}]}`, n)
}

func (e *env) save(key store.ThreadKey, base int64, scene []byte) *store.Thread {
	e.t.Helper()
	th, err := e.s.Save(e.t.Context(), store.SaveRequest{Key: key, Base: base, Scene: scene, Author: store.AuthorAgent, Reason: "test"})
	if err != nil {
		e.t.Fatalf("Save(base %d): %v", base, err)
	}
	return th
}

func (e *env) load(key store.ThreadKey) *store.Thread {
	e.t.Helper()
	th, err := e.s.Load(e.t.Context(), key)
	if err != nil {
		e.t.Fatalf("Load: %v", err)
	}
	return th
}

func wantErr(t *testing.T, what string, err, target error) {
	t.Helper()
	if !errors.Is(err, target) {
		t.Fatalf("%s: got error %v, want %v", what, err, target)
	}
}

func wantScene(t *testing.T, what string, got, want []byte) {
	t.Helper()
	if !bytes.Equal(got, want) {
		t.Fatalf("%s: got scene %q, want %q", what, got, want)
	}
}

// Run runs the conformance suite.
func Run(t *testing.T, f Factory) {
	tests := []struct {
		name string
		fn   func(t *testing.T, f Factory)
	}{
		{"CreateLoad", testCreateLoad},
		{"Exists", testExists},
		{"Ping", testPing},
		{"SeenEvents", testSeenEvents},
		{"SaveConflict", testSaveConflict},
		{"InvalidInput", testInvalidInput},
		{"UndoRedo", testUndoRedo},
		{"UndoRedoBranch", testUndoRedoBranch},
		{"History", testHistory},
		{"HistoryLimit", testHistoryLimit},
		{"Revision", testRevision},
		{"MemorySettings", testMemorySettings},
		{"SizeLimit", testSizeLimit},
		{"Links", testLinks},
		{"Events", testEvents},
		{"Lease", testLease},
		{"Runs", testRuns},
		{"RunTransitions", testRunTransitions},
		{"Prune", testPrune},
		{"MessageThreads", testMessageThreads},
		{"MessageThreadsPrune", testMessageThreadsPrune},
		{"IndexWithCommits", testIndexWithCommits},
		{"ConcurrentCAS", testConcurrentCAS},
		{"ConcurrentWriters", testConcurrentWriters},
		{"ConcurrentClaims", testConcurrentClaims},
		{"ClaimEvents", testClaimEvents},
		{"StartRun", testStartRun},
		{"FinishRun", testFinishRun},
		{"ConcurrentStartRuns", testConcurrentStartRuns},
		{"CreateLinks", testCreateLinks},
		{"Accept", testAccept},
		{"AcceptOrder", testAcceptOrder},
		{"ClaimThreads", testClaimThreads},
		{"Takeover", testTakeover},
		{"StartRunInbox", testStartRunInbox},
		{"ConcurrentClaimThreads", testConcurrentClaimThreads},
		{"RecoverRunsTells", testRecoverRunsTells},
		{"Redo", testRedo},
		{"RedoWhatMayBe", testRedoWhatMayBe},
		{"AdoptDeadPins", testAdoptDeadPins},
		{"RunReplies", testRunReplies},
		{"OutboxOrder", testOutboxOrder},
		{"OutboxClaims", testOutboxClaims},
		{"ConcurrentOutbox", testConcurrentOutbox},
		{"PruneWork", testPruneWork},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) { tt.fn(t, f) })
	}
}
