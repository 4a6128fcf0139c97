package bot

import (
	"fmt"
	"time"
)

// RateLimitError is a platform's "too many requests" that the adapter did not wait out itself:
// the outbox tries the reply again after Wait.
type RateLimitError struct {
	Wait time.Duration
	Err  error
}

func (e *RateLimitError) Error() string {
	return fmt.Sprintf("rate limited (retry after %s): %v", e.Wait, e.Err)
}

func (e *RateLimitError) Unwrap() error { return e.Err }

// RateLimited wraps err, a platform's refusal for now, with how long it asks to wait.
func RateLimited(wait time.Duration, err error) error { return &RateLimitError{Wait: wait, Err: err} }

// PermanentError is a failure that trying again will not change (a channel the bot was removed
// from, a bot the user blocked, a reply the platform refuses): the outbox gives it up after a few
// attempts instead of retrying it for hours.
type PermanentError struct{ Err error }

func (e *PermanentError) Error() string { return e.Err.Error() }
func (e *PermanentError) Unwrap() error { return e.Err }

// Permanent marks err as a failure that trying again will not change.
func Permanent(err error) error {
	if err == nil {
		return nil
	}
	return &PermanentError{Err: err}
}
