package store

import "time"

// The inbox, the outbox and the thread leases are how work moves between replicas: a message is
// kept (Accept) before its platform is told it arrived; only the holder of a thread's lease works
// the thread, draining its inbox in the order received; what the work says goes into the outbox,
// and a sender posts it, in order per thread, until the platform took it.

// InboxState is where an incoming message is.
type InboxState string

// Inbox states: pending until a run takes it; then done with the run, or interrupted when the
// run was cut short (the thread is told).
const (
	InboxPending     InboxState = "pending"
	InboxTaken       InboxState = "taken"
	InboxDone        InboxState = "done"
	InboxInterrupted InboxState = "interrupted"
)

// InboxMessage is one kept incoming message.
type InboxMessage struct {
	ID      int64 // the order messages were received in; within a thread, the order of their commits
	Key     ThreadKey
	Body    []byte // the message as the bot encodes it; opaque here
	State   InboxState
	Run     int64  // the run that took it; 0 while pending
	Pin     string // the only owner that may take it; "" for any
	Created time.Time
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
	// Notice, when set, makes the replies that tell a thread its interrupted run ended; they are
	// queued before anything the new holder posts.
	Notice func(Run) []Outgoing
}

// Claim is one thread given to an owner.
type Claim struct {
	Lease Lease
	// Interrupted are the runs a previous holder left unfinished on the thread; they are
	// interrupted now, with their messages.
	Interrupted []Run
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
	// Notice, when set, makes the replies that tell each run's thread; they are queued in the same
	// transaction.
	Notice func(Run) []Outgoing
	// SoleOwner, when set, is the only owner alive: every other owner's leases and outbox claims
	// end first, whatever their expiry, and its runs are recovered. Only a caller that knows no
	// other process uses the database may set it (SQLite, whose file one process locks, at start).
	SoleOwner string
}
