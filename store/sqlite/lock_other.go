//go:build !unix

package sqlite

import "os"

// lockFile cannot lock here; running two processes on one file is then the operator's mistake to
// avoid, and a thread's compare-and-swap still keeps revisions whole.
func lockFile(*os.File) error { return nil }
