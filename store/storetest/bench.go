package storetest

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	"github.com/excalibot/excalibot/store"
)

// Scene returns a deterministic .excalidraw document with n elements — boxes, their labels and
// arrows between them — with every field Excalidraw writes, pretty-printed as Excalidraw saves it
// (about 1 KB per element, like the files in the shared corpus).
func Scene(n int) []byte {
	r := rand.New(rand.NewPCG(1, 2))
	base := func(id, typ string, x, y, w, h float64) map[string]any {
		return map[string]any{
			"id": id, "type": typ, "x": x, "y": y, "width": w, "height": h, "angle": 0,
			"strokeColor": "#1e1e1e", "backgroundColor": "#a5d8ff", "fillStyle": "solid", "strokeWidth": 2,
			"strokeStyle": "solid", "roughness": 1, "opacity": 100, "groupIds": []string{}, "frameId": nil,
			"roundness": map[string]int{"type": 3}, "seed": r.Int32(), "version": 1 + r.IntN(900),
			"versionNonce": r.Int32(), "isDeleted": false, "boundElements": []any{}, "updated": 1710530844151,
			"link": nil, "locked": false,
		}
	}
	els := make([]map[string]any, 0, n)
	for i := 0; len(els) < n; i++ {
		x, y := float64(i%10)*260+r.Float64(), float64(i/10)*180+r.Float64()
		box, label := fmt.Sprintf("box%05d", i), fmt.Sprintf("txt%05d", i)
		b := base(box, "rectangle", x, y, 200, 100)
		b["boundElements"] = []map[string]string{{"type": "text", "id": label}}
		els = append(els, b)
		if len(els) < n {
			t := base(label, "text", x+20, y+37, 160, 25)
			text := fmt.Sprintf("Service %d", i)
			t["roundness"], t["containerId"], t["text"], t["originalText"] = nil, box, text, text
			t["fontSize"], t["fontFamily"], t["textAlign"], t["verticalAlign"], t["lineHeight"] = 20, 5, "center", "middle", 1.25
			els = append(els, t)
		}
		if len(els) < n && i > 0 {
			a := base(fmt.Sprintf("arr%05d", i), "arrow", x, y+50, 60, 0)
			a["points"] = [][2]float64{{0, 0}, {-60, 0}}
			a["startBinding"] = map[string]any{"elementId": box, "focus": 0, "gap": 8}
			a["endBinding"] = map[string]any{"elementId": fmt.Sprintf("box%05d", i-1), "focus": 0, "gap": 8}
			a["startArrowhead"], a["endArrowhead"], a["lastCommittedPoint"] = nil, "arrow", nil
			els = append(els, a)
		}
	}
	doc := map[string]any{"type": "excalidraw", "version": 2, "source": "https://excalidraw.com",
		"elements": els, "appState": map[string]any{"viewBackgroundColor": "#ffffff", "gridSize": nil}, "files": map[string]any{}}
	b, err := json.MarshalIndent(doc, "", "  ")
	if err != nil {
		panic(err)
	}
	return b
}

// baseline is what the benchmarks are compared with, measured in the same run and interleaved with
// the measured operations so that both see the same machine load: writing the scene to a file and
// fsyncing it (the least a durable save must do), or reading it back (for loads).
type baseline struct {
	path  string
	scene []byte
	write bool
	spent time.Duration
	n     int
}

func newBaseline(b *testing.B, scene []byte, write bool) *baseline {
	bl := &baseline{path: filepath.Join(b.TempDir(), "baseline.excalidraw"), scene: scene, write: write}
	if err := os.WriteFile(bl.path, scene, 0o600); err != nil {
		b.Fatal(err)
	}
	return bl
}

// sample runs the baseline operation once, outside the benchmark timer.
func (bl *baseline) sample(b *testing.B) {
	b.StopTimer()
	defer b.StartTimer()
	start := time.Now()
	if bl.write {
		f, err := os.Create(bl.path)
		if err != nil {
			b.Fatal(err)
		}
		if _, err := f.Write(bl.scene); err != nil {
			b.Fatal(err)
		}
		if err := f.Sync(); err != nil {
			b.Fatal(err)
		}
		f.Close()
	} else if _, err := os.ReadFile(bl.path); err != nil {
		b.Fatal(err)
	}
	bl.spent += time.Since(start)
	bl.n++
}

// Bench runs the store benchmarks: save (one new revision, compare-and-swap included) and load of a
// 500-element scene, and saves from 4 writers on 4 threads at once. Each reports revisions (or loads)
// per second and its ratio to a file baseline measured in the same run.
func Bench(b *testing.B, f Factory) {
	scene := Scene(500)
	b.Run("Save500", func(b *testing.B) {
		s := f(b)(b, store.Options{})
		ctx, key := b.Context(), Key(1)
		base := newBaseline(b, scene, true)
		b.SetBytes(int64(len(scene)))
		for i := 0; b.Loop(); i++ {
			base.sample(b)
			if _, err := s.Save(ctx, store.SaveRequest{Key: key, Base: int64(i), Scene: scene, Author: store.AuthorAgent}); err != nil {
				b.Fatal(err)
			}
		}
		report(b, base, "rev/s", "x-fsync-file")
	})
	b.Run("Load500", func(b *testing.B) {
		s := f(b)(b, store.Options{})
		ctx, key := b.Context(), Key(1)
		for i := range 60 { // a full history behind the current revision
			if _, err := s.Save(ctx, store.SaveRequest{Key: key, Base: int64(i), Scene: scene, Author: store.AuthorAgent}); err != nil {
				b.Fatal(err)
			}
		}
		base := newBaseline(b, scene, false)
		b.SetBytes(int64(len(scene)))
		for b.Loop() {
			base.sample(b)
			if _, err := s.Load(ctx, key); err != nil {
				b.Fatal(err)
			}
		}
		report(b, base, "loads/s", "x-read-file")
	})
	b.Run("Save500Parallel4", func(b *testing.B) {
		s := f(b)(b, store.Options{})
		base := newBaseline(b, scene, true)
		var next atomic.Int64
		b.SetBytes(int64(len(scene)))
		b.SetParallelism(4) // × GOMAXPROCS writers, each on its own thread
		for range 20 {
			base.sample(b)
		}
		b.ResetTimer()
		b.RunParallel(func(pb *testing.PB) {
			key := Key(int(next.Add(1)))
			var rev int64
			for pb.Next() {
				if _, err := s.Save(b.Context(), store.SaveRequest{Key: key, Base: rev, Scene: scene, Author: store.AuthorAgent}); err != nil {
					b.Error(err)
					return
				}
				rev++
			}
		})
		b.StopTimer()
		for range 20 { // after too: the load may have changed during the run
			base.sample(b)
		}
		report(b, base, "rev/s", "x-fsync-file")
	})
}

// BenchWork measures what the inbox and the outbox cost per message: one message kept, its thread
// claimed, its run started and finished with a small reply and the signs row, the reply posted in
// two recorded parts, both rows settled, the thread let go (nine commits and one claim of replies
// the run held already, as in the bot for a picture posted in two steps), against writing the
// reply to a file with fsync; and
// an idle poll (a claim of threads and of replies with nothing to take), as every replica makes
// every poll interval.
func BenchWork(b *testing.B, f Factory) {
	body := make([]byte, 2<<10)
	b.Run("MessageCycle", func(b *testing.B) {
		s := f(b)(b, store.Options{})
		ctx := b.Context()
		base := newBaseline(b, body, true)
		plat := []string{"slack"}
		for i := 0; b.Loop(); i++ {
			base.sample(b)
			key := Key(i)
			acc, err := s.Accept(ctx, store.AcceptRequest{Key: key, EventIDs: []string{fmt.Sprint("ev", i)}, Body: body[:200]})
			if err != nil {
				b.Fatal(err)
			}
			if cs, err := s.ClaimThreads(ctx, store.ClaimRequest{Owner: "A", TTL: time.Minute, Limit: 4, Platforms: plat}); err != nil || len(cs) != 1 {
				b.Fatalf("ClaimThreads: %v, %v", cs, err)
			}
			if _, err := s.Pending(ctx, key, 50); err != nil {
				b.Fatal(err)
			}
			r, err := s.StartRun(ctx, store.StartRunRequest{Key: key, Owner: "A", Lease: time.Minute, Inbox: []int64{acc.ID}})
			if err != nil {
				b.Fatal(err)
			}
			if _, _, err := s.FinishRun(ctx, store.FinishRunRequest{ID: r.ID, State: store.RunDone, Claim: time.Minute,
				Replies: []store.Outgoing{{Key: key, Kind: "reply", Body: body}, {Key: key, Kind: "signs", Body: []byte("{}")}}}); err != nil {
				b.Fatal(err)
			}
			rows, err := s.ClaimOutbox(ctx, store.ClaimOutboxRequest{Owner: "A", TTL: time.Minute, Limit: 8, Platforms: plat})
			if err != nil || len(rows) != 2 {
				b.Fatalf("ClaimOutbox: %d rows, %v", len(rows), err)
			}
			for _, part := range []string{"part-1", "part-2"} {
				if err := s.RecordPosted(ctx, rows[0].ID, "A", part); err != nil {
					b.Fatal(err)
				}
			}
			for _, o := range rows {
				if err := s.SettleOutbox(ctx, store.Settle{ID: o.ID, Owner: "A", State: store.OutboxSent}); err != nil {
					b.Fatal(err)
				}
			}
			if ok, err := s.ReleaseIdle(ctx, key, "A"); err != nil || !ok {
				b.Fatalf("ReleaseIdle: %v, %v", ok, err)
			}
		}
		report(b, base, "msgs/s", "x-fsync-file")
	})
	b.Run("IdlePoll", func(b *testing.B) {
		s := f(b)(b, store.Options{})
		ctx := b.Context()
		plat := []string{"slack", "telegram", "web"}
		for b.Loop() {
			if _, err := s.ClaimThreads(ctx, store.ClaimRequest{Owner: "A", TTL: time.Minute, Limit: 4, Platforms: plat}); err != nil {
				b.Fatal(err)
			}
			if _, err := s.ClaimOutbox(ctx, store.ClaimOutboxRequest{Owner: "A", TTL: time.Minute, Limit: 8, Platforms: plat}); err != nil {
				b.Fatal(err)
			}
		}
		b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "polls/s")
	})
}

func report(b *testing.B, base *baseline, unit, ratio string) {
	per := float64(b.Elapsed()) / float64(b.N)
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), unit)
	b.ReportMetric(per/(float64(base.spent)/float64(base.n)), ratio)
}
