package sqlite_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/excalibot/excalibot/store"
	"github.com/excalibot/excalibot/store/sqlite"
)

// lockChildEnv makes the test binary a second process that tries to open the database it names.
const lockChildEnv = "EXCALIBOT_SQLITE_LOCK_CHILD"

// Exit codes of the lock child.
const (
	childOpened = 0
	childInUse  = 3
	childFailed = 4
)

func lockChild(path string) int {
	s, err := sqlite.Open(context.Background(), path, store.Options{}, nil)
	if errors.Is(err, sqlite.ErrInUse) {
		fmt.Fprintln(os.Stderr, err)
		return childInUse
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "child:", err)
		return childFailed
	}
	s.Close()
	return childOpened
}

// openFromAnotherProcess runs the lock child on path and returns its exit code.
func openFromAnotherProcess(t *testing.T, path string) int {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), lockChildEnv+"="+path)
	out, err := cmd.CombinedOutput()
	var exit *exec.ExitError
	if err != nil && !errors.As(err, &exit) {
		t.Fatalf("run child: %v", err)
	}
	code := cmd.ProcessState.ExitCode()
	if code == childFailed {
		t.Fatalf("child could not open for another reason: %s", out)
	}
	return code
}

// TestOneProcessPerFile: the store promises SingleProcess, so a second process must be refused
// while any store of this process has the file open, and let in once all are closed.
func TestOneProcessPerFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "one.db")
	a, err := sqlite.Open(t.Context(), path, store.Options{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if !a.SingleProcess() {
		t.Fatal("SingleProcess: got false, want true")
	}
	b, err := sqlite.Open(t.Context(), path, store.Options{}, nil) // same process: shared
	if err != nil {
		t.Fatalf("second store in the same process: %v", err)
	}
	steps := []struct {
		name  string
		close *sqlite.Store
		want  int
	}{
		{"both open", nil, childInUse},
		{"one closed", a, childInUse},
		{"both closed", b, childOpened},
	}
	for _, st := range steps {
		if st.close != nil {
			if err := st.close.Close(); err != nil {
				t.Fatalf("%s: close: %v", st.name, err)
			}
		}
		if got := openFromAnotherProcess(t, path); got != st.want {
			t.Fatalf("%s: another process exited with %d, want %d", st.name, got, st.want)
		}
	}
	// This process can take the lock again too.
	c, err := sqlite.Open(t.Context(), path, store.Options{}, nil)
	if err != nil {
		t.Fatalf("reopen: %v", err)
	}
	c.Close()
}
