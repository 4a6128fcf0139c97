// Package fuzzbound bounds the time one fuzz input may take. Go's fuzzer has no per-input
// timeout of its own that keeps the input: a hang leaves a stuck worker, while a panic is a
// crasher saved with the input that caused it.
package fuzzbound

import (
	"fmt"
	"time"
)

// Within runs fn and returns its error, or panics (a crasher with the input) when fn has not
// returned after budget. what names the step in the panic message. fn keeps running after a
// panic; the fuzz worker ends with it.
func Within(budget time.Duration, what string, fn func() error) error {
	done := make(chan error, 1)
	go func() { done <- fn() }()
	t := time.NewTimer(budget)
	defer t.Stop()
	select {
	case err := <-done:
		return err
	case <-t.C:
		panic(fmt.Sprintf("%s: no result after %s", what, budget))
	}
}
