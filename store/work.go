package store

import "time"

// The inbox, the outbox and the thread leases are how work moves between replicas: a message is
// kept (Accept) before its platform is told it arrived; only the holder of a thread's lease works
// the thread, draining its inbox in the order received; what the work says goes into the outbox,
// and a sender posts it, in order per thread, until the platform took it.

// InboxState is where an incoming message is.
type InboxState string

// Inbox states: pending until a run takes it; then done with the run. When the run is cut short
// (its process died, or stopped past its grace), the message is pending again to be redone, or
// interrupted when its work cannot be redone (the thread is told), or failed when its runs were
// cut short too often (the thread is told, and the reason kept).
const (
	InboxPending     InboxState = "pending"
	InboxTaken       InboxState = "taken"
	InboxDone        InboxState = "done"
	InboxInterrupted InboxState = "interrupted"
	InboxFailed      InboxState = "failed"
)

// InboxMessage is one kept incoming message.
type InboxMessage struct {
	ID    int64 // the order messages were received in; within a thread, the order of their commits
	Key   ThreadKey
	Body  []byte // the message as the bot encodes it; opaque here
	State InboxState
	// Run is the run that took it: 0 while it was never taken; for a message pending again, the
	// run that was cut short (the messages of one run are redone together).
	Run int64
	Pin string // the only owner that may take it; "" for any
	// Interruptions counts the runs of this message that were cut short.
	Interruptions int
	Error         string // why it failed
	Created       time.Time
}

// OutboxState is where a reply is.
type OutboxState string

// Outbox states: pending until the platform took it (sent), or until the sender gave up (dead;
// the row is kept, with its last error).
const (
	OutboxPending OutboxState = "pending"
	OutboxSent    OutboxState = "sent"
	OutboxDead    OutboxState = "dead"
)

// Outgoing is something to post into a thread: a reply, or the taking down of working signs.
type Outgoing struct {
	Key  ThreadKey
	Kind string // what Body holds, for the sender
	Body []byte // opaque here
	// Pin, when set, is the only owner whose sender may post it (a thread that lives in one
	// process's memory, as the web chat's do).
	Pin string
}

// OutboxItem is one outbox row.
type OutboxItem struct {
	ID       int64 // rows of one thread are posted in this order
	Key      ThreadKey
	Kind     string
	Body     []byte
	Run      int64 // the run whose reply it is; 0 for a notice of its own
	Pin      string
	State    OutboxState
	Posted   []string // the platform's ids of the parts already posted, in order
	Attempts int      // failed attempts so far
	Due      time.Time
	Error    string // the last attempt's error
	Created  time.Time
	Updated  time.Time
}

// AcceptRequest is one incoming message, recorded before its platform is acknowledged.
type AcceptRequest struct {
	Key ThreadKey
	// EventIDs are claimed as ClaimEvents claims them; none means no de-duplication.
	EventIDs []string
	// Body, when not nil, is queued in the thread's inbox.
	Body []byte
	// Pin, when set, lets only that owner take the message (and the replies queued with it).
	Pin string
	// Replies are queued in the outbox in the same transaction (a refusal, for a message that is
	// not queued).
	Replies []Outgoing
	// Index entries are recorded in the same transaction, as SetMessageThread records them: a
	// message's place in a platform's reply chains is known once the message is.
	Index []MessageThread
}

// MessageThread files a platform's message (or any name a platform gives a place in its chat)
// under a thread, as Store.SetMessageThread does.
type MessageThread struct {
	Platform, Chat, Msg, Thread string
}

// Accepted says what Accept recorded.
type Accepted struct {
	// Fresh is false when one of the event ids was claimed before: then nothing was recorded.
	Fresh bool
	// ID is the inbox message's id; 0 when nothing was queued.
	ID int64
}

// ClaimRequest asks for threads to work on.
type ClaimRequest struct {
	Owner string
	TTL   time.Duration // lease length; RenewLeases extends it
	Limit int           // threads at most
	// Platforms limits the claim to threads of these platforms (those this process can answer);
	// empty claims none.
	Platforms []string
	// Recovery is what becomes of the runs a previous holder left unfinished on a claimed thread;
	// the replies it makes are queued before anything the new holder posts.
	Recovery Recovery
}

// Claim is one thread given to an owner.
type Claim struct {
	Lease Lease
	// Interrupted are the runs a previous holder left unfinished on the thread; they are
	// interrupted now, and their messages redone, told or given up.
	Interrupted []Cut
	// Adopted are the waiting messages of the thread that were pinned to an owner presumed dead
	// (no live heartbeat) and are pinned to the claimer now, in the order received: the thread
	// lived in that owner's memory, and goes on in the claimer's.
	Adopted []int64
}

// ClaimOutboxRequest asks for replies to post.
type ClaimOutboxRequest struct {
	Owner     string
	TTL       time.Duration // claim length; RenewLeases extends it
	Limit     int           // threads at most; every due row of a thread is claimed together
	Platforms []string      // as in ClaimRequest
}

// Settle is how an attempt to post an outbox row ended.
type Settle struct {
	ID    int64
	Owner string
	// State is OutboxSent, OutboxDead (given up) or OutboxPending (try again at Due).
	State OutboxState
	// Part, when set, is the platform's id of the last part posted, recorded as RecordPosted would.
	Part  string
	Error string
	Due   time.Time // next attempt, for OutboxPending
}

// RecoverRequest is a pass over runs whose holder is gone.
type RecoverRequest struct {
	// Recovery is what becomes of each run found; the replies it makes are queued in the same
	// transaction.
	Recovery Recovery
	// SoleOwner, when set, is the only owner alive: every other owner's leases and outbox claims
	// end first, whatever their expiry, and its runs are recovered. Only a caller that knows no
	// other process uses the database may set it (SQLite, whose file one process locks, at start).
	SoleOwner string
}

// Recovery says what becomes of runs found cut short (queued or running while their owner's lease
// is gone: the process died, stalled, or stopped past its grace), in the commit that marks them
// interrupted. Nothing a run did is in the store until its end commits, so its messages can be
// worked again from the start.
type Recovery struct {
	// Redo reports whether a run's work may be done again from its messages: then they are pending
	// again, in the order received, and the thread's next holder works them as if the run had never
	// started. nil redoes nothing. A run that took no message is never redone. Messages pinned to
	// the run's owner are redone like any other; the next holder of the thread adopts them.
	Redo func(Run) bool
	// MaxInterruptions bounds redoing: a message whose runs were cut short this many times (this
	// time included) is given up instead: it fails, with the reason, and its thread moves on.
	MaxInterruptions int
	// Notice, when set, makes the replies queued for each run: what its thread is told, and the
	// taking down of its working signs.
	Notice func(Cut) []Outgoing
}

// Fate is what a recovery did with a run cut short.
type Fate string

// Fates of a run cut short.
const (
	FateRedone  Fate = "redone"   // its messages are pending again
	FateTold    Fate = "told"     // not to be redone: its messages are interrupted; its thread is told
	FateGivenUp Fate = "given up" // cut short Recovery.MaxInterruptions times: its messages failed
)

// Cut is a run found cut short, now interrupted, and what became of its messages.
type Cut struct {
	Run
	Fate Fate
	// Interruptions is how many times its messages' runs were cut short, this time included (the
	// most of any of its messages).
	Interruptions int
}
