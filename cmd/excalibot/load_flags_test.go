//go:build load

package main

// The sized load run, with figures. It needs the build tag so the flags below exist only when
// asked for, and a plain `go test` never spends minutes on it:
//
//	go test -tags load ./cmd/excalibot -run '^TestLoad$' -v -timeout 30m -args -threads 40 -messages 4 -turn 300ms
//
// The fakes of Slack, Telegram and Ollama are test code (they import package testing), so the
// harness is a test, not a subcommand of the shipped binary.

import (
	"flag"
	"testing"
	"time"
)

var (
	loadThreads  = flag.Int("threads", 40, "load: conversations (alternately Slack and Telegram)")
	loadMessages = flag.Int("messages", 4, "load: messages per conversation")
	loadTurn     = flag.Duration("turn", 300*time.Millisecond, "load: model latency per turn (three turns per run)")
	loadEarly    = flag.Float64("early", 0.3, "load: share of follow-ups sent while their thread still works")
	loadRuns     = flag.Int("runs", 0, "load: max concurrent runs (0: as shipped)")
	loadTabs     = flag.Int("tabs", 0, "load: warm render tabs (0: as shipped)")
	loadRamp     = flag.Duration("ramp", 5*time.Second, "load: conversations start spread over this time")
	loadTimeout  = flag.Duration("wait", 10*time.Minute, "load: give up waiting for answers after this")
	loadSeed     = flag.Uint64("seed", 1, "load: seed of think times and early follow-ups")
)

func TestLoad(t *testing.T) {
	rep := runLoad(t, loadSize{Threads: *loadThreads, Messages: *loadMessages, Turn: *loadTurn, Early: *loadEarly,
		Runs: *loadRuns, Tabs: *loadTabs, Ramp: *loadRamp, Timeout: *loadTimeout, Seed: *loadSeed})
	t.Log("\n" + rep.String())
	checkLoad(t, rep)
}
