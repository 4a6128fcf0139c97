package main

import (
	"context"
	"errors"
	"log/slog"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
)

// gatedIndex is a ThreadIndex whose writes wait for a gate, counting them.
type gatedIndex struct {
	next   tgIndex
	gate   chan struct{}
	mu     sync.Mutex
	writes int
	fail   bool
}

func (g *gatedIndex) Thread(ctx context.Context, chat int64, ref string) (string, bool, error) {
	return g.next.Thread(ctx, chat, ref)
}

func (g *gatedIndex) SetThread(ctx context.Context, chat int64, ref string, thread string) error {
	<-g.gate
	g.mu.Lock()
	g.writes++
	fail := g.fail
	g.mu.Unlock()
	if fail {
		return errors.New("disk I/O error")
	}
	return g.next.SetThread(ctx, chat, ref, thread)
}

// TestLaterIndex: SetThread returns before the store is written; the entry is answered from memory
// meanwhile, written by the background writer, and everything pending is written by Close.
func TestLaterIndex(t *testing.T) {
	ctx := t.Context()
	st := openTgIndexStore(t, filepath.Join(t.TempDir(), "bot.db"))
	defer st.Close()
	g := &gatedIndex{next: tgIndex{st}, gate: make(chan struct{})}
	var logs strings.Builder
	var logMu sync.Mutex
	x := newLaterIndex(g, slog.New(slog.NewTextHandler(lockedWriter{&logs, &logMu}, nil)))

	// The store's write is held at the gate, yet SetThread returns and Thread answers.
	if err := x.SetThread(ctx, -42, "10", "0:10"); err != nil {
		t.Fatal(err)
	}
	if got, ok, err := x.Thread(ctx, -42, "10"); err != nil || !ok || got != "0:10" {
		t.Fatalf("pending Thread = %q %v %v; want 0:10 from memory", got, ok, err)
	}
	if _, ok, _ := (tgIndex{st}).Thread(ctx, -42, "10"); ok {
		t.Fatal("the store has the entry before its write was let through")
	}
	for i := 11; i < 14; i++ {
		if err := x.SetThread(ctx, -42, strconv.Itoa(i), "0:10"); err != nil {
			t.Fatal(err)
		}
	}
	close(g.gate) // let every write through; Close waits for them
	x.Close()
	for i := 10; i < 14; i++ {
		if got, ok, err := (tgIndex{st}).Thread(ctx, -42, strconv.Itoa(i)); err != nil || !ok || got != "0:10" {
			t.Errorf("store after Close: message %d = %q %v %v; want 0:10", i, got, ok, err)
		}
	}
	// After Close a write goes straight to the store.
	if err := x.SetThread(ctx, -42, "20", "0:20"); err != nil {
		t.Fatal(err)
	}
	if got, ok, _ := (tgIndex{st}).Thread(ctx, -42, "20"); !ok || got != "0:20" {
		t.Errorf("write after Close = %q %v; want it in the store", got, ok)
	}

	// A failed write is logged, not retried forever, and does not stop later writes.
	g2 := &gatedIndex{next: tgIndex{st}, gate: make(chan struct{}), fail: true}
	close(g2.gate)
	y := newLaterIndex(g2, slog.New(slog.NewTextHandler(lockedWriter{&logs, &logMu}, nil)))
	if err := y.SetThread(ctx, -42, "last:0:7", "0:30"); err != nil {
		t.Fatal(err)
	}
	y.Close()
	logMu.Lock()
	defer logMu.Unlock()
	if !strings.Contains(logs.String(), "disk I/O error") || !strings.Contains(logs.String(), "ref=last:0:7") {
		t.Errorf("log lacks the failed write:\n%s", logs.String())
	}
	if g2.writes != 1 {
		t.Errorf("failed entry written %d times, want 1", g2.writes)
	}
}

type lockedWriter struct {
	b  *strings.Builder
	mu *sync.Mutex
}

func (w lockedWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.b.Write(p)
}
