package agent

import (
	"context"
	"runtime"
	"strings"
	"testing"

	"github.com/ollama/ollama/api"
)

// The Ollama client library as released allocates its stream scanner's whole 8 MB maximum for
// every call; the project carries a patched copy (third_party/ollama) that starts at 64 KB. These
// tests hold both halves of that patch: calls stay small, and long lines still fit.

// TestOllamaChatAllocation fails if a chat call allocates anything like the 8 MB buffer again
// (for example after the replace in go.mod is dropped for a release that still does).
func TestOllamaChatAllocation(t *testing.T) {
	const calls = 20
	turns := make([]fakeTurn, calls+1)
	for i := range turns {
		turns[i] = say("Drawn.")
	}
	_, srv := newFakeOllama(t, turns...)
	m, err := NewOllama(OllamaConfig{Host: srv.URL, Model: "qwen3:8b"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	msgs := []Message{{Role: RoleUser, Content: "hi"}}
	specs := newBoard().Specs()
	if _, err := m.Chat(ctx, msgs, specs); err != nil { // the first call converts the tool list
		t.Fatal(err)
	}
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	for range calls {
		if _, err := m.Chat(ctx, msgs, specs); err != nil {
			t.Fatal(err)
		}
	}
	runtime.ReadMemStats(&after)
	perCall := (after.TotalAlloc - before.TotalAlloc) / calls
	if perCall > 1<<20 {
		t.Errorf("a chat call allocates %d KB (client and fake server together), want under 1 MB", perCall>>10)
	}
}

// TestOllamaLongLine sends an answer whose one NDJSON line is 2 MB: the scanner grows to it.
func TestOllamaLongLine(t *testing.T) {
	long := strings.Repeat("box ", 512<<10)
	_, srv := newFakeOllama(t, fakeTurn{chunks: []api.ChatResponse{
		{Message: api.Message{Role: "assistant", Content: long}}, doneChunk(),
	}})
	r, err := chatOnce(t, OllamaConfig{Host: srv.URL, Model: "qwen3:8b"})
	if err != nil {
		t.Fatal(err)
	}
	if got, want := len(r.Message.Content), len(long); got != want {
		t.Errorf("content %d bytes, want %d", got, want)
	}
}
