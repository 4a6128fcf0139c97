package relay

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/excalibot/excalibot/bot"
	"github.com/excalibot/excalibot/store"
	"github.com/excalibot/excalibot/store/sqlite"
	"github.com/excalibot/excalibot/store/storetest"
)

// slowConv is conv taking a fixed time per answer, as a model with a fixed turn time.
type slowConv struct {
	*conv
	turn time.Duration
}

func (c slowConv) Answer(ctx context.Context, t bot.Turn, status func(string)) bot.Outcome {
	select {
	case <-time.After(c.turn):
	case <-ctx.Done():
	}
	return c.conv.Answer(ctx, t, status)
}

// BenchmarkReplicas sends one request to each of 16 threads, alternately through one or two
// engines on one store, each answering at most 2 threads at once in 200 ms a turn, and reports
// messages per second from the first message to the last reply: the second replica takes half
// the threads.
//
//	go test ./bot/relay -run '^$' -bench Replicas -benchtime 3x
func BenchmarkReplicas(b *testing.B) {
	for _, replicas := range []int{1, 2} {
		b.Run(fmt.Sprintf("%dreplicas", replicas), func(b *testing.B) {
			for b.Loop() {
				b.StopTimer()
				clock := storetest.NewClock()
				path := filepath.Join(b.TempDir(), "bench.db")
				rec := newRecorder()
				var engines []*Engine
				for i := range replicas {
					st, err := sqlite.Open(context.Background(), path, store.Options{Now: clock.Now}, nil)
					if err != nil {
						b.Fatal(err)
					}
					defer st.Close()
					opt := testOptions(fmt.Sprint("replica-", i), clock)
					opt.MaxConcurrentRuns = 2
					e := New(st, slowConv{newConv(st), 200 * time.Millisecond}, opt, nil)
					e.Register(rec)
					e.Start()
					engines = append(engines, e)
				}
				b.StartTimer()
				const threads = 16
				for i := range threads {
					msg := bot.Message{Key: threadN(i), EventID: fmt.Sprint("e", i), ID: fmt.Sprint(i), User: fmt.Sprint("u", i), Text: fmt.Sprintf("T%d-M1", i)}
					if err := engines[i%replicas].Handle(context.Background(), rec, msg); err != nil {
						b.Fatal(err)
					}
				}
				for range threads {
					<-rec.sent
				}
				b.StopTimer()
				for _, e := range engines {
					e.Close(context.Background())
				}
				b.StartTimer()
			}
			b.ReportMetric(float64(16*b.N)/b.Elapsed().Seconds(), "msgs/s")
		})
	}
}
