package scene

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"
)

func BenchmarkDecodeCorpus(b *testing.B) {
	data, err := os.ReadFile(filepath.Join(corpusDir, "starbridge--diagram.excalidraw"))
	if err != nil {
		b.Skip(err)
	}
	b.SetBytes(int64(len(data)))
	for b.Loop() {
		if _, err := Decode(data); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkEncodeCorpus(b *testing.B) {
	data, err := os.ReadFile(filepath.Join(corpusDir, "starbridge--diagram.excalidraw"))
	if err != nil {
		b.Skip(err)
	}
	s, _ := Decode(data)
	for b.Loop() {
		if _, err := s.Encode(); err != nil {
			b.Fatal(err)
		}
	}
}

var _ = fmt.Sprint
