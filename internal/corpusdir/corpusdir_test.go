package corpusdir

import (
	"os"
	"path/filepath"
	"slices"
	"testing"
)

func TestDir(t *testing.T) {
	t.Run("env", func(t *testing.T) {
		t.Setenv(Env, "/somewhere/corpus")
		got, err := Dir()
		if want := "/somewhere/corpus"; err != nil || got != want {
			t.Errorf("got %q, %v; want %q", got, err, want)
		}
	})
	t.Run("beside the module", func(t *testing.T) {
		t.Setenv(Env, "")
		root, err := filepath.Abs("../..")
		if err != nil {
			t.Fatal(err)
		}
		got, err := Dir()
		if want := filepath.Join(filepath.Dir(root), "shared", "testdata", "excalidraw-corpus"); err != nil || got != want {
			t.Errorf("got %q, %v; want %q", got, err, want)
		}
	})
}

func TestFiles(t *testing.T) {
	dir := t.TempDir()
	for _, name := range []string{"b.excalidraw", "a.excalidraw", "notes.txt"} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte("{}"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	t.Setenv(Env, dir)
	want := []string{filepath.Join(dir, "a.excalidraw"), filepath.Join(dir, "b.excalidraw")}
	if got := Files(t); !slices.Equal(got, want) {
		t.Errorf("Files: got %q, want %q", got, want)
	}
	if got := Optional(); !slices.Equal(got, want) {
		t.Errorf("Optional: got %q, want %q", got, want)
	}
}

func TestFilesSkipsWithoutCorpus(t *testing.T) {
	t.Setenv(Env, t.TempDir())
	if got := Optional(); got != nil {
		t.Errorf("Optional: got %q, want nil", got)
	}
	var skipped bool
	t.Run("inner", func(t *testing.T) {
		defer func() { skipped = t.Skipped() }()
		Files(t)
		t.Error("Files returned without a corpus")
	})
	if !skipped {
		t.Error("Files did not skip an empty corpus directory")
	}
}
