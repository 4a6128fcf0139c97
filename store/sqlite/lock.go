package sqlite

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
)

// ErrInUse is returned by Open when another process has the database open.
var ErrInUse = errors.New("the database is in use by another process")

// The store tells its callers that it is the only process on the file (store.Store.SingleProcess),
// so they skip leases between processes; the lock makes that true. Stores opened on one file in
// the same process share the lock, since they share the process's queues too.
var (
	locksMu sync.Mutex
	locks   = map[string]*fileLock{} // by absolute path of the lock file
)

type fileLock struct {
	f    *os.File
	refs int
}

// lockPath is the file locked for the database at path. It is not the database itself: SQLite
// uses POSIX locks on that, which a process's own flock must not disturb.
func lockPath(path string) string { return path + ".lock" }

// acquire takes this process's lock on the database at path; call the result to give it back.
func acquire(path string) (release func() error, err error) {
	lp, err := filepath.Abs(lockPath(path))
	if err != nil {
		return nil, fmt.Errorf("lock %s: %w", path, err)
	}
	locksMu.Lock()
	defer locksMu.Unlock()
	l := locks[lp]
	if l == nil {
		f, err := os.OpenFile(lp, os.O_RDWR|os.O_CREATE, 0o600)
		if err != nil {
			return nil, fmt.Errorf("lock %s: %w", path, err)
		}
		if err := lockFile(f); err != nil {
			f.Close()
			return nil, fmt.Errorf("lock %s: %w", lp, err)
		}
		l = &fileLock{f: f}
		locks[lp] = l
	}
	l.refs++
	var once sync.Once
	return func() error {
		var err error
		once.Do(func() {
			locksMu.Lock()
			defer locksMu.Unlock()
			if l.refs--; l.refs == 0 {
				delete(locks, lp)
				err = l.f.Close() // closing the last descriptor drops the lock
			}
		})
		return err
	}, nil
}
