package slack

import (
	"testing"
	"time"

	"github.com/excalibot/excalibot/bot"
	"github.com/excalibot/excalibot/bot/slack/slackfake"
)

// BenchmarkEventToHandler measures how long a Socket Mode event takes from the fake's websocket
// to the core's Handle, against the baseline of the bare websocket round trip (envelope out,
// ack back) in the same run. The ratio is the adapter's cost in units of one local round trip.
func BenchmarkEventToHandler(b *testing.B) {
	rec := newRecorder()
	e := start(b, ModeSocket, rec, nil)
	var base, event time.Duration
	for b.Loop() {
		p := e.fake.Post(slackfake.UserMessage{Channel: "D1", Text: "draw"})
		t0 := time.Now()
		env, err := e.fake.Deliver(e.ctx, p.Events[0], slackfake.DeliverOptions{})
		if err != nil {
			b.Fatal(err)
		}
		if err := e.fake.WaitAck(e.ctx, env); err != nil {
			b.Fatal(err)
		}
		t1 := time.Now()
		<-rec.got
		t2 := time.Now()
		base += t1.Sub(t0)
		event += t2.Sub(t0)
	}
	b.ReportMetric(float64(base.Microseconds())/float64(b.N), "ack-µs/op")
	b.ReportMetric(float64(event.Microseconds())/float64(b.N), "handle-µs/op")
	b.ReportMetric(float64(event)/float64(base), "x-ack")
}

// BenchmarkSendReply measures a full reply (PNG and .excalidraw uploaded, shared in one call,
// the Block Kit message with buttons) against the baseline of one chat.postMessage.
func BenchmarkSendReply(b *testing.B) {
	e := start(b, ModeSocket, newRecorder(), nil)
	key := bot.ThreadKey{Platform: Platform, Workspace: "T0FAKE", Channel: "D1"}
	full := bot.Reply{
		Text:    "Browser → API → Postgres",
		Image:   &bot.File{Name: "diagram.png", MIME: "image/png", Content: pngBytes},
		Files:   []bot.File{{Name: "diagram.excalidraw", MIME: "application/json", Content: sceneJSON}},
		EditURL: "https://excalibot.example/edit/x",
	}
	var base, send time.Duration
	for b.Loop() {
		t0 := time.Now()
		if err := e.a.Send(e.ctx, key, bot.Reply{Text: "ok"}); err != nil {
			b.Fatal(err)
		}
		t1 := time.Now()
		if err := e.a.Send(e.ctx, key, full); err != nil {
			b.Fatal(err)
		}
		base += t1.Sub(t0)
		send += time.Since(t1)
	}
	b.ReportMetric(float64(base.Microseconds())/float64(b.N), "post-µs/op")
	b.ReportMetric(float64(send.Microseconds())/float64(b.N), "reply-µs/op")
	b.ReportMetric(float64(send)/float64(base), "x-post")
}
