package telegram

import (
	"testing"
	"time"

	"github.com/excalibot/excalibot/bot"
)

// BenchmarkReply measures a full reply (photo with caption and button, then the .excalidraw
// document) against the fake, and reports it as a ratio to one bare sendMessage measured in the
// same run: the adapter's own cost over the two uploads it has to make.
func BenchmarkReply(b *testing.B) {
	a, _, _ := sendOnly(b)
	reply := bot.Reply{
		Text:    "Browser → API → Postgres",
		Image:   &bot.File{Name: "diagram.png", Content: smallPNG()},
		Files:   []bot.File{{Name: "diagram.excalidraw", Content: make([]byte, 20<<10)}},
		EditURL: editURL,
	}
	var base, full time.Duration
	for b.Loop() {
		t0 := time.Now()
		if err := a.Send(b.Context(), dmKey, bot.Reply{Text: "ping"}); err != nil {
			b.Fatal(err)
		}
		t1 := time.Now()
		if err := a.Send(b.Context(), dmKey, reply); err != nil {
			b.Fatal(err)
		}
		base, full = base+t1.Sub(t0), full+time.Since(t1)
	}
	b.ReportMetric(float64(full)/float64(base), "reply/sendMessage")
	b.ReportMetric(float64(full.Microseconds())/float64(b.N), "µs/reply")
}
