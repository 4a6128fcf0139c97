// Package corpusdir finds the optional corpus of real .excalidraw files drawn by other people,
// which some tests read, and skips those tests cleanly when it is not there. The corpus is not in
// the repository, as its files belong to their authors; SOURCES.md lists where each comes from.
package corpusdir

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"testing"
)

// Env names the directory of the corpus's .excalidraw files.
const Env = "EXCALIBOT_CORPUS"

// howToGet is the skip message's advice.
const howToGet = "fetch the files listed in internal/corpusdir/SOURCES.md into a directory and set " + Env + " to it"

// Dir returns the corpus directory: $EXCALIBOT_CORPUS when set, else
// shared/testdata/excalidraw-corpus in the directory that holds the module's root. It does not
// check that the directory exists.
func Dir() (string, error) {
	if d := os.Getenv(Env); d != "" {
		return d, nil
	}
	root, err := moduleRoot()
	if err != nil {
		return "", err
	}
	return filepath.Join(filepath.Dir(root), "shared", "testdata", "excalidraw-corpus"), nil
}

// Files returns the corpus's .excalidraw files, sorted, or skips t when there are none.
func Files(t testing.TB) []string {
	t.Helper()
	dir, err := Dir()
	if err != nil {
		t.Skipf("skipping: no corpus of real .excalidraw files (%v); %s", err, howToGet)
	}
	files := glob(dir)
	if len(files) == 0 {
		t.Skipf("skipping: no .excalidraw files in %s; %s", dir, howToGet)
	}
	return files
}

// Optional returns the corpus's .excalidraw files, sorted, or nil when there are none: for the
// tests and fuzz seeds that use the corpus when it is there and run on their own files without it.
func Optional() []string {
	dir, err := Dir()
	if err != nil {
		return nil
	}
	return glob(dir)
}

func glob(dir string) []string {
	files, _ := filepath.Glob(filepath.Join(dir, "*.excalidraw")) // the only error is a bad pattern
	return files
}

// moduleRoot returns the nearest directory at or above the working directory (a test's package
// directory) that holds go.mod.
func moduleRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", fmt.Errorf("find the module's root: %w", err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir, nil
		}
		up := filepath.Dir(dir)
		if up == dir {
			return "", errors.New("find the module's root: no go.mod above the working directory")
		}
		dir = up
	}
}
