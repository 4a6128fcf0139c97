// Package store keeps what the bot must not forget: each chat thread's scene and its revisions, the
// agent's memory, settings, link tokens, handled event ids, runs and per-thread leases.
//
// Two implementations satisfy Store: store/sqlite (one process, zero set-up) and store/postgres
// (several replicas). Both pass the conformance suite in store/storetest. Scenes and memory are opaque
// bytes here, so the store does not depend on the scene package.
package store

import (
	"context"
	"fmt"
	"net/url"
	"strings"
	"time"
)

// Store is the bot's persistent state. All methods may be called concurrently, from several processes
// sharing one database. Every method that takes a ThreadKey validates it first.
type Store interface {
	// Load returns the thread with the scene at its current revision (nil Scene at revision 0: a
	// thread is created by its first message, before any revision). ErrNotFound if the thread was
	// never created or was pruned.
	Load(ctx context.Context, key ThreadKey) (*Thread, error)
	// Exists reports whether the thread is known (created by its first message, and not pruned)
	// without reading it.
	Exists(ctx context.Context, key ThreadKey) (bool, error)
	// Save stores a new revision if the thread's current revision is still req.Base (0 creates the
	// thread). ErrConflict if it moved on, ErrTooLarge if the scene or memory is above the limit.
	// The new revision becomes current and the newest; revisions that were undone are no longer
	// reachable by Redo from it. Older revisions beyond the history limit are dropped.
	Save(ctx context.Context, req SaveRequest) (*Thread, error)
	// Undo moves the current revision to the parent of revision from. ErrConflict if the current
	// revision is not from, ErrNothingToUndo at the first kept revision, ErrNotFound without thread.
	Undo(ctx context.Context, key ThreadKey, from int64) (*Thread, error)
	// Redo moves the current revision to the newest revision whose parent is from (the one most
	// recently undone). ErrConflict as for Undo, ErrNothingToRedo when there is none.
	Redo(ctx context.Context, key ThreadKey, from int64) (*Thread, error)
	// Revision returns one kept revision with its scene. ErrNotFound if never made or dropped.
	Revision(ctx context.Context, key ThreadKey, rev int64) (*Revision, error)
	// History lists kept revisions, newest first, at most limit (all kept when limit <= 0),
	// without scenes. ErrNotFound without thread.
	History(ctx context.Context, key ThreadKey, limit int) ([]Revision, error)
	// SetMemory replaces the agent's memory of the thread, creating the thread if needed.
	SetMemory(ctx context.Context, key ThreadKey, memory []byte) error
	// SetSettings replaces the thread's settings, creating the thread if needed.
	SetSettings(ctx context.Context, key ThreadKey, s Settings) error

	// CreateLinks makes one new link per kind, in that order, in one transaction: all or none.
	CreateLinks(ctx context.Context, key ThreadKey, expires time.Time, kinds ...LinkKind) (tokens []string, links []Link, err error)
	// ResolveLink finds the link a token belongs to. ErrNotFound for an unknown token (or a pruned
	// thread), ErrLinkExpired and ErrLinkRevoked for dead links.
	ResolveLink(ctx context.Context, token string) (Link, error)
	// RevokeLinks revokes the thread's live links of a kind ("" for every kind) and says how many.
	RevokeLinks(ctx context.Context, key ThreadKey, kind LinkKind) (int, error)

	// Accept records one incoming message in one transaction: it claims req.EventIDs (each is
	// remembered for Options.EventTTL; the message is a redelivery when any was seen), makes the thread known (its row is created with the first message),
	// queues req.Body in the thread's inbox and req.Replies in its outbox. Fresh is false for a
	// redelivery, and then nothing is recorded. Once it returns, the message is kept: call it
	// before the platform is told the message arrived.
	Accept(ctx context.Context, req AcceptRequest) (Accepted, error)
	// SeenEvents reports whether any of eventIDs was claimed by an Accept whose claim is still
	// live: the message was kept already. It writes nothing, so it may run before a decision that
	// must not be made twice (charging the sender's rate), with Accept still the one that decides.
	SeenEvents(ctx context.Context, eventIDs ...string) (bool, error)
	// ClaimThreads gives req.Owner the leases of up to req.Limit threads of req.Platforms that
	// have pending inbox messages (pinned to nobody, to the owner, or to an owner presumed dead,
	// whose messages and replies on the thread it then adopts: Claim.Adopted) and whose lease is free or
	// expired, the thread with the oldest pending message first. A lease of the owner's own that
	// lapsed is not taken back (its work may still be under way there): another owner takes it. Threads another claimer is
	// claiming at the same moment are skipped, not waited for. Runs another owner left unfinished
	// on a claimed thread are interrupted in the same transaction, their messages redone, told or
	// given up as req.Recovery says, and the replies it makes are queued.
	ClaimThreads(ctx context.Context, req ClaimRequest) ([]Claim, error)
	// Pending lists a thread's pending inbox messages in the order received, at most limit (all
	// when limit <= 0).
	Pending(ctx context.Context, key ThreadKey, limit int) ([]InboxMessage, error)
	// ReleaseIdle ends owner's lease on the thread unless messages are pending there, in one
	// statement, and reports whether it did.
	ReleaseIdle(ctx context.Context, key ThreadKey, owner string) (bool, error)
	// RenewLeases extends every unexpired lease and outbox claim of owner to ttl from now (the
	// owner's heartbeat, also recorded alone: an owner without a live one is presumed dead, and
	// what was pinned to it is taken over) and reports how many leases it renewed. An expired one stays expired: it
	// may have been taken over.
	RenewLeases(ctx context.Context, owner string, ttl time.Duration) (int, error)

	// Enqueue adds items to the outbox, each after what its thread is owed already.
	Enqueue(ctx context.Context, items ...Outgoing) ([]int64, error)
	// ClaimOutbox gives req.Owner, for req.TTL, the rows it may post now: of up to req.Limit
	// threads of req.Platforms, every pending row that is due and is not claimed by someone else,
	// from the thread's first pending row on (a thread's rows are posted in order, so a row
	// waiting for its next attempt holds back the ones behind it). Rows the owner holds already
	// are returned again. A thread's rows come together, in id order. Rows pinned to another
	// owner are not taken, unless that owner is presumed dead: then its rows on the thread are
	// pinned to req.Owner.
	ClaimOutbox(ctx context.Context, req ClaimOutboxRequest) ([]OutboxItem, error)
	// RecordPosted appends the platform's id of one part of row id that was posted, so a later
	// attempt goes on after it. ErrLeaseHeld when owner's claim on the row has lapsed.
	//
	// index is written in the same commit: what a platform that threads by replies (Telegram) must
	// know of the message it just posted, so a reply to it that reaches another replica at once
	// finds its thread.
	RecordPosted(ctx context.Context, id int64, owner, part string, index ...MessageThread) error
	// SettleOutbox ends an attempt on a claimed row. Sent: the row is done (the last failed
	// attempt's error stays unless s.Error replaces it), and a run whose
	// replies are all sent takes its final state. Dead: the row is kept with its error and no
	// longer holds its thread back; its run fails. Pending: the row waits until Due, and the
	// owner's claims on the rows behind it in its thread are released. ErrLeaseHeld when the claim
	// has lapsed.
	SettleOutbox(ctx context.Context, s Settle) error

	// ReleaseLease ends owner's lease; releasing a lease one does not hold is not an error.
	ReleaseLease(ctx context.Context, key ThreadKey, owner string) error
	// StartRun records a run of req.Key by req.Owner that starts at once, in state running. With
	// req.Lease > 0 it first acquires (or renews) the owner's lease on the thread for that long, in
	// the same transaction: ErrLeaseHeld (as *LeaseHeldError) while another owner holds it, and then
	// no run is recorded. The inbox messages req.Inbox are taken by the run in the same transaction;
	// ErrConflict when one of them is not a pending message of the thread (and then nothing is).
	StartRun(ctx context.Context, req StartRunRequest) (Run, error)
	// FinishRun moves run req.ID to a final state in one transaction with its revision req.Save,
	// when not nil (checked as Save checks it). When either part fails nothing changes: the run
	// keeps its state and no revision is made. Errors: ErrNotFound for an unknown run,
	// ErrBadTransition for one that finished already, those of Save, ErrInvalid for a state that is
	// not final or a Save of another thread. The thread is returned when
	// req.Save is set. The run's lease, if any, is kept: the caller releases it once the result is
	// delivered. The messages the run took are done with it (interrupted, for an interrupted run).
	// With req.Replies the run waits in state replying until its replies are sent (SettleOutbox),
	// then takes req.State.
	FinishRun(ctx context.Context, req FinishRunRequest) (Run, *Thread, error)
	// SetRunSign records the chat platform's handle on the working signs of run id (Run.Sign), for
	// RecoverRuns to hand back if the process dies before the run ends. ErrNotFound for an unknown run.
	SetRunSign(ctx context.Context, id int64, sign string) error
	// RecoverRuns marks as interrupted every queued or running run whose owner no longer holds a live
	// lease on its thread (the process died, or its lease ran out and it is presumed dead), puts the
	// messages the run took back to pending, or ends them, as req.Recovery says, queues the replies
	// it makes for each, and returns the runs. A run whose owner's lease is live is never touched,
	// nor one whose end committed (replying or final).
	RecoverRuns(ctx context.Context, req RecoverRequest) ([]Cut, error)
	// SetMessageThread records that message msgID of chat on platform belongs to thread (a
	// ThreadKey.Thread), replacing what was recorded for it. Platforms whose threads are reply chains
	// (Telegram) use it so that a reply to any message of a chain finds the chain, after a restart or
	// on another replica. ErrInvalid for an empty part.
	SetMessageThread(ctx context.Context, platform, chat, msgID, thread string) error
	// MessageThread returns the thread recorded for a message. ErrNotFound when none is (never
	// recorded, or pruned).
	MessageThread(ctx context.Context, platform, chat, msgID string) (string, error)

	// Prune deletes threads not updated since before (with their revisions and links) that have no
	// pending message or reply, finished runs older than before, finished inbox messages and outbox
	// rows older than before, message→thread entries recorded before before, expired events and
	// expired leases.
	Prune(ctx context.Context, before time.Time) (PruneStats, error)
	// SingleProcess reports whether this process is the only one that can use the database
	// (SQLite: the process that opened the file holds a lock on it). Then no other process can work
	// on a thread, and callers that order a thread's work themselves need no lease.
	SingleProcess() bool
	// Ping asks the database a trivial question: nil when it answers, for a readiness check.
	Ping(ctx context.Context) error
	// Close releases the database; it waits for nothing else because the store starts no goroutines.
	Close() error
}

// ThreadKey names one conversation: the unit that owns a diagram and runs one job at a time. It
// is the one key of a thread everywhere: chat adapters make it, the bot's queue orders work by it,
// and the store keeps the thread under its String.
type ThreadKey struct {
	Platform  string // "slack", "telegram" or "web"
	Workspace string // Slack team id, Telegram chat id; empty where the platform has none
	Channel   string // Slack channel id, Telegram chat id, web session
	// Thread is the Slack thread's parent ts ("" for the top level of a DM); on Telegram "" in a
	// private chat (one diagram until /new) and "topic:root" in groups (forum topic id or 0, and
	// the message id of the reply chain's first request); the web chat's thread id.
	Thread string
}

// String is the canonical encoding used as a database key: the parts path-escaped and joined by
// "/", an empty part written "-" (so every segment is non-empty, as stored keys have always been).
func (k ThreadKey) String() string {
	return keyPart(k.Platform) + "/" + keyPart(k.Workspace) + "/" + keyPart(k.Channel) + "/" + keyPart(k.Thread)
}

func keyPart(s string) string {
	if s == "" {
		return "-"
	}
	return url.PathEscape(s)
}

// ParseThreadKey is the inverse of ThreadKey.String.
func ParseThreadKey(s string) (ThreadKey, error) {
	parts := strings.Split(s, "/")
	if len(parts) != 4 {
		return ThreadKey{}, fmt.Errorf("thread key %q: want platform/workspace/channel/thread", s)
	}
	var out [4]string
	for i, p := range parts {
		if p == "" {
			return ThreadKey{}, fmt.Errorf("thread key %q: part %d is empty (an empty part is written -)", s, i+1)
		}
		if p == "-" {
			continue
		}
		v, err := url.PathUnescape(p)
		if err != nil {
			return ThreadKey{}, fmt.Errorf("thread key %q: %w", s, err)
		}
		out[i] = v
	}
	k := ThreadKey{Platform: out[0], Workspace: out[1], Channel: out[2], Thread: out[3]}
	return k, k.Validate()
}

// Validate reports a key that cannot name a thread: one without a platform, or too long to store.
func (k ThreadKey) Validate() error {
	switch {
	case k.Platform == "":
		return fmt.Errorf("%w: thread key has no platform", ErrInvalid)
	case len(k.String()) > 512:
		return fmt.Errorf("%w: thread key is %d bytes long, above 512", ErrInvalid, len(k.String()))
	}
	return nil
}

// Thread is one conversation's state at its current revision.
type Thread struct {
	Key ThreadKey
	// Rev is the current revision (what the chat shows); 0 before the first scene. Save, Undo and
	// Redo compare against it.
	Rev int64
	// Head is the newest revision number ever made; the next Save gets Head+1.
	Head     int64
	Scene    []byte // .excalidraw JSON at Rev; nil at revision 0
	Memory   []byte // the agent's memory; opaque
	Settings Settings
	Created  time.Time
	Updated  time.Time
}

// Settings are a thread's choices; empty fields mean "use the bot's default".
type Settings struct {
	Theme string `json:"theme,omitempty"` // "light" or "dark"
	Model string `json:"model,omitempty"` // Ollama model name
}

// Author says who made a revision.
type Author string

// Authors of revisions.
const (
	AuthorAgent  Author = "agent"  // the LLM agent (or the Mermaid import), answering a message
	AuthorEditor Author = "editor" // a person, through the editable link
	AuthorImport Author = "import" // an uploaded .excalidraw file
	AuthorRevert Author = "revert" // a copy of an older revision made current again by `revert N`
	AuthorReset  Author = "reset"  // the empty diagram `reset` starts
	// AuthorRestore is what `reset` wrote before AuthorReset; revisions kept from then still carry it.
	AuthorRestore Author = "restore"
)

// SaveRequest is one new revision.
type SaveRequest struct {
	Key    ThreadKey
	Base   int64  // the revision the change was made on; must equal the thread's current Rev
	Scene  []byte // the whole new scene; required
	Author Author
	Reason string // why, in a few words: the user's request, "edited in browser", …
	// Memory, when not nil, replaces the agent's memory in the same transaction.
	Memory []byte
}

// Revision is one kept version of a thread's scene.
type Revision struct {
	Rev     int64
	Parent  int64 // the revision it was made on; 0 for the first
	Author  Author
	Reason  string
	Size    int    // bytes of Scene
	Scene   []byte // nil in History listings
	Created time.Time
	Current bool // it is the thread's current revision
}

// LinkKind is what a link lets its holder do.
type LinkKind string

// Link kinds.
const (
	LinkEdit LinkKind = "edit"
	LinkView LinkKind = "view"
)

// Link is a stored link token (the token itself is never stored).
type Link struct {
	ID      string // first 16 hex digits of the token's hash: safe to log
	Key     ThreadKey
	Kind    LinkKind
	Created time.Time
	Expires time.Time // zero: never
	Revoked time.Time // zero: live
}

// Lease is one owner's exclusive right to work on a thread until Expires.
type Lease struct {
	Key     ThreadKey
	Owner   string
	Expires time.Time
	// Generation grows each time the lease changes hands, so a stale holder can be told apart.
	Generation int64
}

// RunState is where a run is in its life.
type RunState string

// Run states. Queued → running → done | failed; queued or running → interrupted (by RecoverRuns or
// by the bot on shutdown). A run finished with replies is replying until they are sent, and then
// takes the final state it was finished with.
const (
	RunQueued      RunState = "queued"
	RunRunning     RunState = "running"
	RunReplying    RunState = "replying"
	RunDone        RunState = "done"
	RunFailed      RunState = "failed"
	RunInterrupted RunState = "interrupted"
)

// Final reports whether a run in this state will not change again.
func (s RunState) Final() bool { return s == RunDone || s == RunFailed || s == RunInterrupted }

// Valid reports whether s is one of the run states.
func (s RunState) Valid() bool {
	switch s {
	case RunQueued, RunRunning, RunReplying, RunDone, RunFailed, RunInterrupted:
		return true
	}
	return false
}

// Run is one piece of work the bot does on a thread (answering a message, applying an edit).
type Run struct {
	ID     int64
	Key    ThreadKey
	Owner  string
	State  RunState
	Detail string
	// Sign is the chat platform's handle on the run's working signs (a status message), set with
	// SetRunSign; empty when there are none.
	Sign    string
	Created time.Time
	Updated time.Time
}

// StartRunRequest is a run that starts now.
type StartRunRequest struct {
	Key    ThreadKey
	Owner  string // the process doing the work; required
	Detail string // what the run is for, in a few words
	// Lease, when positive, is how long the owner's lease on the thread is taken or renewed for,
	// in the same transaction as the run.
	Lease time.Duration
	// Inbox are the pending messages of the thread the run answers.
	Inbox []int64
}

// FinishRunRequest is the end of a run and what is stored with it.
type FinishRunRequest struct {
	ID     int64
	State  RunState // done, failed or interrupted
	Detail string
	// Save, when not nil, is the run's new revision; its Key must be the run's thread.
	Save *SaveRequest
	// Replies are queued in the outbox with the run's end; their Key must be the run's thread.
	Replies []Outgoing
	// Claim, when positive, gives the run's owner the claim on its replies for that long (renewed
	// by RenewLeases), so its own sender posts them, and takes down the signs it put up, unless it
	// dies first.
	Claim time.Duration
}

// PruneStats says what Prune deleted.
type PruneStats struct {
	Threads, Revisions, Runs, Events, Leases int
	Messages                                 int // message→thread entries (SetMessageThread)
	Inbox, Outbox                            int // finished inbox messages and outbox rows
}

// Options tune a store; zero fields take the defaults below.
type Options struct {
	MaxSceneBytes int           // largest scene (and memory) accepted; default 5 MB
	HistoryLimit  int           // revisions kept per thread; default 50
	EventTTL      time.Duration // how long a claimed event id is remembered; default 24 h
	Now           func() time.Time
}

// Defaults.
const (
	DefaultMaxSceneBytes = 5 << 20
	DefaultHistoryLimit  = 50
	DefaultEventTTL      = 24 * time.Hour
)

// WithDefaults returns o with zero fields set to their defaults.
func (o Options) WithDefaults() Options {
	if o.MaxSceneBytes <= 0 {
		o.MaxSceneBytes = DefaultMaxSceneBytes
	}
	if o.HistoryLimit <= 0 {
		o.HistoryLimit = DefaultHistoryLimit
	}
	if o.EventTTL <= 0 {
		o.EventTTL = DefaultEventTTL
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	return o
}
