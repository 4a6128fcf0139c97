package main

import (
	"path/filepath"
	"testing"

	"github.com/excalibot/excalibot/store"
	"github.com/excalibot/excalibot/store/sqlite"
)

func openTgIndexStore(t *testing.T, path string) *sqlite.Store {
	t.Helper()
	st, err := sqlite.Open(t.Context(), path, store.Options{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	return st
}

// TestTgIndex: the Telegram thread index over the store answers what was recorded, across a
// restart and between two processes sharing the database.
func TestTgIndex(t *testing.T) {
	ctx := t.Context()
	path := filepath.Join(t.TempDir(), "bot.db")
	st := openTgIndexStore(t, path)
	x := tgIndex{st}
	sets := []struct {
		chat   int64
		msg    int
		thread string
	}{
		{-1001234567890, 10, "0:10"},
		{-1001234567890, 11, "0:10"}, // the bot's picture answering message 10
		{-1001234567890, 20, "5:20"}, // inside forum topic 5
		{-42, 10, "0:7"},             // the same message id in another chat
	}
	for _, s := range sets {
		if err := x.SetThread(ctx, s.chat, s.msg, s.thread); err != nil {
			t.Fatalf("SetThread(%d, %d): %v", s.chat, s.msg, err)
		}
	}
	if err := x.SetThread(ctx, -42, 10, "0:8"); err != nil { // recorded again: the newer answer wins
		t.Fatal(err)
	}
	if err := st.Close(); err != nil { // restart
		t.Fatal(err)
	}

	a, b := openTgIndexStore(t, path), openTgIndexStore(t, path) // two replicas
	defer a.Close()
	defer b.Close()
	tests := []struct {
		chat       int64
		msg        int
		wantThread string
		wantOK     bool
	}{
		{-1001234567890, 10, "0:10", true},
		{-1001234567890, 11, "0:10", true},
		{-1001234567890, 20, "5:20", true},
		{-42, 10, "0:8", true},
		{-1001234567890, 12, "", false},
		{-43, 10, "", false},
	}
	for _, ix := range []tgIndex{{a}, {b}} {
		for _, tt := range tests {
			got, ok, err := ix.Thread(ctx, tt.chat, tt.msg)
			if err != nil || got != tt.wantThread || ok != tt.wantOK {
				t.Errorf("Thread(%d, %d): got %q, %v, %v, want %q, %v, nil", tt.chat, tt.msg, got, ok, err, tt.wantThread, tt.wantOK)
			}
		}
	}
	if err := (tgIndex{a}).SetThread(ctx, -42, 99, "0:99"); err != nil {
		t.Fatal(err)
	}
	if got, ok, err := (tgIndex{b}).Thread(ctx, -42, 99); err != nil || !ok || got != "0:99" {
		t.Errorf("Thread on replica b of what a recorded: got %q, %v, %v, want 0:99", got, ok, err)
	}
}

// TestTgIndexErrors: a store failure is an error (the adapter logs it and treats the reply as a new
// thread), never a silent "unknown".
func TestTgIndexErrors(t *testing.T) {
	st := openTgIndexStore(t, filepath.Join(t.TempDir(), "bot.db"))
	x := tgIndex{st}
	if err := x.SetThread(t.Context(), -1, 1, ""); err == nil {
		t.Error("SetThread with an empty thread: got no error")
	}
	st.Close()
	if _, ok, err := x.Thread(t.Context(), -1, 1); err == nil || ok {
		t.Errorf("Thread on a closed store: got ok %v, error %v, want an error", ok, err)
	}
	if err := x.SetThread(t.Context(), -1, 1, "0:1"); err == nil {
		t.Error("SetThread on a closed store: got no error")
	}
}
