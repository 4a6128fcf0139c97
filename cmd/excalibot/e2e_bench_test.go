package main

import (
	"bufio"
	"context"
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/go-telegram/bot/models"
	"github.com/ollama/ollama/api"

	"github.com/excalibot/excalibot/agent/ollamafake"

	"github.com/excalibot/excalibot/bot/slack/slackfake"
	"github.com/excalibot/excalibot/bot/telegram/tgfake"
	"github.com/excalibot/excalibot/config"
)

// BenchmarkMessageToPicture times a drawing request from the moment the platform has the
// person's message to the moment the picture is posted, with a fake model that takes
// benchTurnDelay per turn, as a local model does (two turns: create_element, done). What the
// picture waits for is measured in the same run: the model's turns (counted at the fake Ollama,
// times the delay) and rendering (from the bot's own excalibot_render_seconds histogram). The
// rest is the time the bot adds (queueing, the agent loop and tools, the store, working signs,
// uploads), reported against the model's time: other/model near 0 means the model dominates.
//
//	go test ./cmd/excalibot -run '^$' -bench MessageToPicture -benchtime 10x
func BenchmarkMessageToPicture(b *testing.B) {
	sl := &slackDriver{fake: slackfake.New(b, slackfake.Config{})}
	tgFake := tgfake.New(tgToken)
	b.Cleanup(tgFake.Close)
	e := startE2E(b, func(c *config.Config) {
		fc := sl.fake.Config()
		c.SlackBotToken, c.SlackAppToken, c.SlackAPIURL = fc.BotToken, fc.AppToken, sl.fake.APIURL()
		c.TelegramToken, c.TelegramAPIURL = tgToken, tgFake.URL
		c.UserRatePerMinute, c.ChatRatePerMinute = 1e6, 1e6 // one person sends every request
		c.RenderTabs = 2                                    // as shipped
	})
	e.ollama.SetResponder(func(req api.ChatRequest) ollamafake.Turn {
		return ollamafake.Slow(ollamafake.Boxes(req), benchTurnDelay)
	})
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	if err := sl.fake.WaitConnected(ctx); err != nil {
		b.Fatal(err)
	}

	// b.Run calls each function more than once (growing b.N): chats and channels are numbered
	// across calls, since a message id seen before is ignored as a redelivery.
	seq := 0
	b.Run("telegram", func(b *testing.B) {
		measure(b, e, func(int) {
			seq++
			id := int64(100000 + seq) // a new private chat: every request draws a one-box scene
			tgFake.AddChat(models.Chat{ID: id, Type: models.ChatTypePrivate})
			tgFake.Send(tgfake.Post{Chat: id, From: models.User{ID: id, FirstName: "Bench"}, Text: "draw a box"})
			if !tgFake.WaitFor(e2eWait, func() bool {
				for _, m := range tgFake.BotMessages(id) {
					if m.Kind == "photo" {
						return true
					}
				}
				return false
			}) {
				var calls []string
				for _, c := range tgFake.Calls("") {
					calls = append(calls, fmt.Sprintf("%s %d %s %v", c.Method, c.Code, c.Error, c.Fields))
				}
				b.Fatalf("no picture in chat %d; calls:\n%s", id, strings.Join(calls, "\n"))
			}
		})
	})
	b.Run("slack", func(b *testing.B) {
		measure(b, e, func(int) {
			seq++
			ch := fmt.Sprintf("CBENCH%05d", seq)
			p := sl.fake.Post(slackfake.UserMessage{Channel: ch, Text: "<@U0BOT> draw a box"})
			for _, ev := range p.Events {
				if _, err := sl.fake.Deliver(ctx, ev, slackfake.DeliverOptions{}); err != nil {
					b.Fatal(err)
				}
			}
			for {
				for _, m := range sl.fake.Thread(ch, p.TS) {
					if len(m.Files) > 0 {
						return
					}
				}
				if ctx.Err() != nil {
					b.Fatalf("no picture in %s", ch)
				}
				// The Slack fake has no change notification: poll, often enough that the poll adds
				// little to the latency measured.
				time.Sleep(time.Millisecond)
			}
		})
	})
}

// benchTurnDelay is how long the fake model takes per turn: a small local model answers a short
// drawing turn in a few hundred milliseconds on a GPU, a larger one in seconds.
const benchTurnDelay = 300 * time.Millisecond

// measure runs one request per iteration and reports per picture: the whole time, the model's
// and the rendering time, and the rest.
func measure(b *testing.B, e *e2e, request func(i int)) {
	renderBefore, n0 := renderSeconds(b, e)
	turns0 := len(e.ollama.Requests())
	var total time.Duration
	b.ResetTimer()
	for i := range b.N {
		t0 := time.Now()
		request(i)
		total += time.Since(t0)
	}
	b.StopTimer()
	renderAfter, n1 := renderSeconds(b, e)
	if n1-n0 < float64(b.N) {
		b.Fatalf("%v renders for %d pictures", n1-n0, b.N)
	}
	turns := len(e.ollama.Requests()) - turns0
	perMS := func(d float64) float64 { return d * 1000 / float64(b.N) }
	render := renderAfter - renderBefore
	model := float64(turns) * benchTurnDelay.Seconds()
	other := total.Seconds() - render - model
	b.ReportMetric(perMS(total.Seconds()), "ms/picture")
	b.ReportMetric(perMS(model), "model-ms/picture")
	b.ReportMetric(perMS(render), "render-ms/picture")
	b.ReportMetric(perMS(other), "other-ms/picture")
	b.ReportMetric(other/model, "other/model")
	b.ReportMetric(total.Seconds()/model, "picture/model")
}

// renderSeconds reads the sum and count of excalibot_render_seconds from /metrics.
func renderSeconds(b *testing.B, e *e2e) (sum, count float64) {
	b.Helper()
	code, body := e.get(b, "/metrics")
	if code != 200 {
		b.Fatalf("/metrics: %d", code)
	}
	sc := bufio.NewScanner(strings.NewReader(body))
	for sc.Scan() {
		name, value, ok := strings.Cut(sc.Text(), " ")
		if !ok {
			continue
		}
		v, err := strconv.ParseFloat(value, 64)
		if err != nil {
			continue
		}
		switch {
		case strings.HasPrefix(name, "excalibot_render_seconds_sum"):
			sum += v
		case strings.HasPrefix(name, "excalibot_render_seconds_count"):
			count += v
		}
	}
	return sum, count
}
