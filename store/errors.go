package store

import (
	"errors"
	"fmt"
	"time"
)

// Errors callers test with errors.Is. Implementations wrap them with the failing step and details.
var (
	ErrNotFound      = errors.New("not found")
	ErrConflict      = errors.New("conflict: the thread changed since it was read")
	ErrTooLarge      = errors.New("too large")
	ErrLeaseHeld     = errors.New("lease held by another owner")
	ErrSchemaTooNew  = errors.New("database schema is newer than this program")
	ErrNothingToUndo = errors.New("nothing to undo")
	ErrNothingToRedo = errors.New("nothing to redo")
	ErrLinkExpired   = errors.New("link expired")
	ErrLinkRevoked   = errors.New("link revoked")
	ErrBadTransition = errors.New("run state cannot change that way")
	ErrInvalid       = errors.New("invalid argument")
)

// TooLargeError is returned (wrapped) when a scene or memory is above Options.MaxSceneBytes.
type TooLargeError struct {
	What        string // "scene" or "memory"
	Size, Limit int
}

func (e *TooLargeError) Error() string {
	return fmt.Sprintf("%s is %s, above the limit of %s", e.What, humanBytes(e.Size), humanBytes(e.Limit))
}

// Is makes errors.Is(err, ErrTooLarge) true.
func (e *TooLargeError) Is(target error) bool { return target == ErrTooLarge }

// ConflictError is returned (wrapped) when Save, Undo or Redo was based on a stale revision.
type ConflictError struct {
	Key       ThreadKey
	Base, Now int64 // the revision the caller had, the thread's current one
}

func (e *ConflictError) Error() string {
	return fmt.Sprintf("conflict on thread %s: change based on revision %d, but the thread is at revision %d",
		e.Key, e.Base, e.Now)
}

// Is makes errors.Is(err, ErrConflict) true.
func (e *ConflictError) Is(target error) bool { return target == ErrConflict }

// LeaseHeldError says who holds a lease and until when.
type LeaseHeldError struct {
	Key     ThreadKey
	Owner   string
	Expires time.Time
}

func (e *LeaseHeldError) Error() string {
	return fmt.Sprintf("thread %s is leased by %q until %s", e.Key, e.Owner, e.Expires.UTC().Format(time.RFC3339))
}

// Is makes errors.Is(err, ErrLeaseHeld) true.
func (e *LeaseHeldError) Is(target error) bool { return target == ErrLeaseHeld }

// SchemaTooNewError is returned by Open when the database was migrated by a newer program.
type SchemaTooNewError struct {
	Have, Known int
}

func (e *SchemaTooNewError) Error() string {
	return fmt.Sprintf("database schema is at version %d but this program knows only up to version %d: "+
		"run a newer excalibot, or point it at another database", e.Have, e.Known)
}

// Is makes errors.Is(err, ErrSchemaTooNew) true.
func (e *SchemaTooNewError) Is(target error) bool { return target == ErrSchemaTooNew }

// CheckSize returns a *TooLargeError when b is above limit.
func CheckSize(what string, b []byte, limit int) error {
	if len(b) > limit {
		return &TooLargeError{What: what, Size: len(b), Limit: limit}
	}
	return nil
}

func humanBytes(n int) string {
	switch {
	case n >= 1<<20:
		return fmt.Sprintf("%.1f MB", float64(n)/(1<<20))
	case n >= 1<<10:
		return fmt.Sprintf("%.1f KB", float64(n)/(1<<10))
	}
	return fmt.Sprintf("%d bytes", n)
}
