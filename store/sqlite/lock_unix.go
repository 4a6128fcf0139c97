//go:build unix

package sqlite

import (
	"errors"
	"fmt"
	"os"
	"syscall"
)

// lockFile takes an exclusive lock on f without waiting; the kernel drops it when the process
// dies, so a crashed server never leaves the database locked.
func lockFile(f *os.File) error {
	err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
	if errors.Is(err, syscall.EWOULDBLOCK) {
		return fmt.Errorf("%w: SQLite serves one process; stop the other one, or use PostgreSQL for several replicas", ErrInUse)
	}
	return err
}
