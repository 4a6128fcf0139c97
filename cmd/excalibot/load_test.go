package main

// The load harness: many conversations at once, half on fake Slack (Socket Mode), half on fake
// Telegram (polling, private chats), through the real serve, with a model that takes a realistic
// time per turn. Each message carries a tag ("T3-M2"), the model names the tags it drew in its
// summary, and the harness reads back what the bot posted: which messages were answered, how
// often, in what order, and how long after they were sent the picture appeared.
//
// TestLoadCI is a small run that asserts correctness only. The sized run with figures is
// TestLoad in load_flags_test.go (build tag "load"; see docs/reliability.md).

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"runtime"
	"runtime/metrics"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-telegram/bot/models"

	"github.com/excalibot/excalibot/agent/ollamafake"
	"github.com/excalibot/excalibot/bot/slack/slackfake"
	"github.com/excalibot/excalibot/bot/telegram/tgfake"
	"github.com/excalibot/excalibot/config"
	"github.com/excalibot/excalibot/scene"
)

// loadSize sizes a load run.
type loadSize struct {
	Threads  int           // conversations, alternately Slack and Telegram
	Messages int           // messages per conversation
	Turn     time.Duration // the model's latency per turn (a run takes three turns)
	Early    float64       // share of follow-ups sent while their thread is still working
	Runs     int           // serve's max concurrent runs (0: as shipped)
	Tabs     int           // warm render tabs (0: as shipped)
	Ramp     time.Duration // conversations start spread over this time
	Timeout  time.Duration // give up waiting for answers after this
	Seed     uint64        // for the think times and which follow-ups come early
}

func (c loadSize) withDefaults() loadSize {
	d := config.Default()
	if c.Runs == 0 {
		c.Runs = d.MaxConcurrentRuns
	}
	if c.Tabs == 0 {
		c.Tabs = d.RenderTabs
	}
	if c.Timeout == 0 {
		c.Timeout = 5 * time.Minute
	}
	return c
}

// loadReport is what a run measured.
type loadReport struct {
	Cfg        loadSize
	Wall       time.Duration   // first message sent to last picture seen
	Sent       int             // messages sent
	Pictures   int             // pictures posted
	Requests   int             // chat requests the model answered
	Latencies  []time.Duration // per answered message: sent → its picture seen, sorted
	Lost       []string        // tags never answered
	Dups       []string        // tags answered more than once
	Errors     []string        // error replies (each says what failed and to retry)
	NoPicture  []string        // tags answered without a picture
	OutOfOrder []string        // threads whose answers came out of order
	SceneBad   []string        // threads whose last .excalidraw lacks a box or has one twice
	PeakHeap   uint64          // Go heap objects, sampled every 100 ms (test process: serve and fakes)
	PeakRSS    uint64          // VmHWM of the test process
	PeakChrome uint64          // PSS of Chromium's processes together, sampled every 500 ms
}

func (r loadReport) pct(p float64) time.Duration {
	if len(r.Latencies) == 0 {
		return 0
	}
	return r.Latencies[min(len(r.Latencies)-1, int(p*float64(len(r.Latencies))))]
}

func (r loadReport) String() string {
	var b strings.Builder
	c := r.Cfg
	mib := func(n uint64) string { return fmt.Sprintf("%.0f MiB", float64(n)/(1<<20)) }
	sec := func(d time.Duration) string { return fmt.Sprintf("%.2f s", d.Seconds()) }
	fmt.Fprintf(&b, "load: %d threads × %d messages (%d Slack, %d Telegram); model %s per turn, 3 turns per run; %.0f%% of follow-ups sent while the thread works; %d runs at once, %d render tabs; %d CPUs\n",
		c.Threads, c.Messages, (c.Threads+1)/2, c.Threads/2, c.Turn, c.Early*100, c.Runs, c.Tabs, runtime.NumCPU())
	fmt.Fprintf(&b, "sent %d messages, %d pictures posted in %s (follow-ups that arrived during a run are drawn in the next run together)\n", r.Sent, r.Pictures, sec(r.Wall))
	fmt.Fprintf(&b, "model requests: %d (%.1f per picture)\n", r.Requests, float64(r.Requests)/float64(max(1, r.Pictures)))
	fmt.Fprintf(&b, "throughput: %.2f messages/s, %.2f pictures/s\n", float64(r.Sent)/r.Wall.Seconds(), float64(r.Pictures)/r.Wall.Seconds())
	fmt.Fprintf(&b, "latency message → picture posted: p50 %s, p90 %s, p99 %s, max %s\n", sec(r.pct(0.5)), sec(r.pct(0.9)), sec(r.pct(0.99)), sec(r.pct(1)))
	fmt.Fprintf(&b, "peak memory: Go heap %s (test process: serve and the fakes), test process RSS (VmHWM) %s, Chromium PSS %s\n", mib(r.PeakHeap), mib(r.PeakRSS), mib(r.PeakChrome))
	fmt.Fprintf(&b, "lost %d, duplicated %d, error replies %d, answers without picture %d, threads out of order %d, scenes wrong %d; every thread in order: %v\n",
		len(r.Lost), len(r.Dups), len(r.Errors), len(r.NoPicture), len(r.OutOfOrder), len(r.SceneBad), len(r.OutOfOrder) == 0)
	for _, l := range []struct {
		name string
		v    []string
	}{{"lost", r.Lost}, {"duplicated", r.Dups}, {"errors", r.Errors}, {"without picture", r.NoPicture}, {"out of order", r.OutOfOrder}, {"scenes", r.SceneBad}} {
		if len(l.v) > 0 {
			fmt.Fprintf(&b, "  %s: %q\n", l.name, l.v[:min(len(l.v), 10)])
		}
	}
	return b.String()
}

// botPost is one thing the bot posted in a thread, as the harness reads it.
type botPost struct {
	id      string // platform message id
	picture bool
	scene   []byte // the .excalidraw file, when this post carries it
	text    string
	status  bool // the working sign
}

// loadThread is one conversation of the run.
type loadThread struct {
	n        int
	platform string
	channel  string // Slack channel
	root     string // Slack thread ts, set by the first message
	chat     int64  // Telegram private chat

	mu   sync.Mutex
	sent map[string]time.Time // tag → when it was sent
	seen map[string]time.Time // bot post id → when the harness first saw it
	done map[string]int       // tag → answers naming it, as last polled
	errs int
}

// loadRun drives one serve with fake Slack and fake Telegram.
type loadRun struct {
	cfg  loadSize
	sl   *slackDriver
	tg   *tgDriver
	ths  []*loadThread
	logs *tailBuffer
}

// runLoad starts serve, plays cfg's conversations and returns what it measured.
func runLoad(t *testing.T, cfg loadSize) loadReport {
	t.Helper()
	cfg = cfg.withDefaults()
	chrome := chromium(t)
	r := &loadRun{cfg: cfg, sl: newSlack(t), tg: newTelegram(t), logs: &tailBuffer{max: 64 << 10}}
	model := ollamafake.New(t, ollamafake.Config{Responder: taggedBoxes, Delay: cfg.Turn})
	c := config.Default()
	c.Listen = "127.0.0.1:0"
	c.Database = "sqlite:" + t.TempDir() + "/bot.db"
	c.OllamaHost, c.Model, c.ChromePath = model.URL(), ollamafake.DefaultModel, chrome
	c.RenderTabs, c.MaxConcurrentRuns = cfg.Tabs, cfg.Runs
	c.UserRatePerMinute, c.ChatRatePerMinute = 1e6, 1e6 // the harness measures the bot, not its limits
	r.sl.configure(&c, "socket")
	r.tg.configure(&c, "")
	t0 := time.Now()
	_, stop := startServe(t, c, r.logs)
	t.Cleanup(func() {
		t0 := time.Now()
		stop()
		t.Logf("serve stopped in %.1f s", time.Since(t0).Seconds())
		if t.Failed() {
			t.Logf("the end of serve's log:\n%s", r.logs.String())
		}
	})
	r.sl.ready(t, nil)
	r.tg.ready(t)
	t.Logf("serve is up in %.1f s", time.Since(t0).Seconds())

	for i := range cfg.Threads {
		th := &loadThread{n: i + 1, sent: map[string]time.Time{}, seen: map[string]time.Time{}, done: map[string]int{}}
		if i%2 == 0 {
			th.platform, th.channel = "slack", fmt.Sprintf("CLOAD%04d", th.n)
		} else {
			th.platform, th.chat = "telegram", 900000+int64(th.n)
			r.tg.fake.AddChat(models.Chat{ID: th.chat, Type: models.ChatTypePrivate, FirstName: "Load"})
		}
		r.ths = append(r.ths, th)
	}

	ctx, cancel := context.WithTimeout(context.Background(), cfg.Timeout)
	defer cancel()
	var peakHeap, peakChrome uint64
	sampled := r.sampleMemory(ctx, &peakHeap, &peakChrome)
	polled := r.poll(ctx)

	start := time.Now()
	var wg sync.WaitGroup
	errc := make(chan error, len(r.ths))
	for i, th := range r.ths {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := r.converse(ctx, th, time.Duration(i)*cfg.Ramp/time.Duration(max(1, cfg.Threads)), cfg.Seed+uint64(i)); err != nil {
				errc <- fmt.Errorf("thread %d (%s): %w", th.n, th.platform, err)
			}
		}()
	}
	wg.Wait()
	close(errc)
	for err := range errc {
		t.Error(err)
	}
	r.waitSettled(ctx)
	cancel()
	<-polled
	<-sampled

	rep := r.analyse(start)
	rep.PeakHeap, rep.PeakChrome, rep.PeakRSS = peakHeap, peakChrome, vmHWM()
	rep.Requests = len(model.Requests())
	return rep
}

// converse plays one thread: the first message after delay, then the follow-ups, each either
// right after the previous one (while the thread still works on it) or once it is answered.
func (r *loadRun) converse(ctx context.Context, th *loadThread, delay time.Duration, seed uint64) error {
	rng := rand.New(rand.NewPCG(seed, uint64(th.n)))
	if !sleepCtx(ctx, delay) {
		return ctx.Err()
	}
	for k := 1; k <= r.cfg.Messages; k++ {
		if k > 1 {
			if rng.Float64() < r.cfg.Early {
				// A person adding to what they just asked, before the picture is back.
				if !sleepCtx(ctx, time.Duration(rng.Int64N(int64(r.cfg.Turn)+1))) {
					return ctx.Err()
				}
			} else {
				prev := msgTag(th.n, k-1)
				for !th.answered(prev) {
					if !sleepCtx(ctx, 20*time.Millisecond) {
						return fmt.Errorf("no answer to %s: %w", prev, ctx.Err())
					}
				}
				if !sleepCtx(ctx, time.Duration(rng.Int64N(int64(200*time.Millisecond)))) { // reading the picture
					return ctx.Err()
				}
			}
		}
		if err := r.send(ctx, th, k); err != nil {
			return err
		}
	}
	return nil
}

func (th *loadThread) answered(tag string) bool {
	th.mu.Lock()
	defer th.mu.Unlock()
	return th.done[tag] > 0 || th.errs > 0
}

// send posts message k of th as a person would.
func (r *loadRun) send(ctx context.Context, th *loadThread, k int) error {
	tag := msgTag(th.n, k)
	text := "draw a box " + tag
	th.mu.Lock()
	th.sent[tag] = time.Now()
	root := th.root
	th.mu.Unlock()
	if th.platform == "telegram" {
		s := r.tg.fake.Send(tgfake.Post{Chat: th.chat, From: models.User{ID: th.chat, FirstName: "Load"}, Text: text})
		if s.UpdateID == 0 {
			return fmt.Errorf("telegram did not deliver %s", tag)
		}
		return nil
	}
	m := slackfake.UserMessage{Channel: th.channel, ThreadTS: root, User: fmt.Sprintf("UL%04d", th.n), Text: text}
	if root == "" {
		m.Text = "<@U0BOT> " + text
	}
	p := r.sl.fake.Post(m)
	if root == "" {
		th.mu.Lock()
		th.root = p.TS
		th.mu.Unlock()
	}
	for _, ev := range p.Events {
		env, err := r.sl.fake.Deliver(ctx, ev, slackfake.DeliverOptions{})
		if err == nil {
			err = r.sl.fake.WaitAck(ctx, env)
		}
		if err != nil {
			return fmt.Errorf("deliver %s: %w", tag, err)
		}
	}
	return nil
}

// posts reads what the bot posted in th, oldest first.
func (r *loadRun) posts(th *loadThread) []botPost {
	var out []botPost
	if th.platform == "telegram" {
		for _, m := range r.tg.fake.BotMessages(th.chat) {
			p := botPost{id: strconv.Itoa(m.ID), text: m.Text}
			switch {
			case m.Kind == "text" && (m.Text == tgWorking || len(m.Edits) > 0):
				p.status = true
			case m.Kind == "photo":
				p.picture = true
			case m.Kind == "document" && strings.HasSuffix(m.File.Name, ".excalidraw"):
				p.scene = m.File.Data
			}
			out = append(out, p)
		}
		return out
	}
	th.mu.Lock()
	root := th.root
	th.mu.Unlock()
	if root == "" {
		return nil
	}
	for _, m := range r.sl.fake.Thread(th.channel, root) {
		if m.BotID == "" || m.Deleted {
			continue
		}
		p := botPost{id: m.TS, text: m.Text}
		if len(m.Files) == 0 && (m.Text == slackWorking || m.Edits > 0) {
			p.status = true
		}
		for _, f := range m.Files {
			switch {
			case strings.HasSuffix(f.Name, ".png"):
				p.picture = true
			case strings.HasSuffix(f.Name, ".excalidraw"):
				p.scene = f.Content
			}
		}
		out = append(out, p)
	}
	return out
}

// isErrorReply tells a failure notice: every one says what failed and that the request can be
// sent again, or that it could not be finished (a request given up); answers name their tags
// instead.
func isErrorReply(text string) bool {
	return len(tags(text)) == 0 && (strings.Contains(text, "again") || strings.Contains(text, "could not finish"))
}

// poll notes when each bot post first appears (the picture's latency is measured to that
// moment) and which tags are answered, every 20 ms until ctx ends.
func (r *loadRun) poll(ctx context.Context) <-chan struct{} {
	done := make(chan struct{})
	go func() {
		defer close(done)
		for sleepCtx(ctx, 20*time.Millisecond) {
			for _, th := range r.ths {
				posts := r.posts(th)
				now := time.Now()
				answers := map[string]int{}
				errs := 0
				for _, p := range posts {
					for _, tag := range answerTags(p.text) {
						answers[tag]++
					}
					if isErrorReply(p.text) {
						errs++
					}
				}
				th.mu.Lock()
				for _, p := range posts {
					if _, ok := th.seen[p.id]; !ok {
						th.seen[p.id] = now
					}
				}
				th.done, th.errs = answers, errs
				th.mu.Unlock()
			}
		}
	}()
	return done
}

// waitSettled waits until every message is answered and nothing new appeared in its thread for
// half a second (a reply's parts, the file after the picture, are posted one after another), or
// its thread ended with an error reply and nothing new appeared there for 3 s, or ctx ends.
func (r *loadRun) waitSettled(ctx context.Context) {
	type mark struct {
		posts int
		at    time.Time
	}
	last := map[*loadThread]mark{}
	for sleepCtx(ctx, 50*time.Millisecond) {
		settled := true
		for _, th := range r.ths {
			th.mu.Lock()
			all := true
			for tag := range th.sent {
				all = all && th.done[tag] > 0
			}
			n, errs := len(th.seen), th.errs
			th.mu.Unlock()
			if m, ok := last[th]; !ok || m.posts != n {
				last[th] = mark{n, time.Now()}
			}
			switch {
			case all && time.Since(last[th].at) > 500*time.Millisecond:
			case errs > 0 && time.Since(last[th].at) > 3*time.Second:
			default:
				settled = false
			}
		}
		if settled {
			return
		}
	}
}

// analyse reads every thread once more and computes the report.
func (r *loadRun) analyse(start time.Time) loadReport {
	rep := loadReport{Cfg: r.cfg}
	var last time.Time
	for _, th := range r.ths {
		posts := r.posts(th)
		th.mu.Lock()
		count := map[string]int{}
		prev, inOrder := 0, true
		var picAt time.Time
		pendingPic := false
		var lastScene []byte
		for _, p := range posts {
			if p.status {
				continue
			}
			if p.picture {
				picAt, pendingPic = th.seen[p.id], true
				rep.Pictures++
				if picAt.After(last) {
					last = picAt
				}
			}
			if p.scene != nil {
				lastScene = p.scene
			}
			ts := answerTags(p.text)
			for _, tag := range ts {
				count[tag]++
				if count[tag] > 1 {
					rep.Dups = append(rep.Dups, tag)
					continue
				}
				if n := tagMessage(tag); n <= prev {
					inOrder = false
				} else {
					prev = n
				}
				if !pendingPic {
					rep.NoPicture = append(rep.NoPicture, tag)
					continue
				}
				rep.Latencies = append(rep.Latencies, picAt.Sub(th.sent[tag]))
			}
			if len(ts) > 0 {
				pendingPic = false // the next answer needs a picture of its own
			}
			if isErrorReply(p.text) {
				rep.Errors = append(rep.Errors, fmt.Sprintf("T%d: %s", th.n, p.text))
			}
		}
		rep.Sent += len(th.sent)
		for tag := range th.sent {
			if count[tag] == 0 {
				rep.Lost = append(rep.Lost, tag)
			}
		}
		if !inOrder {
			rep.OutOfOrder = append(rep.OutOfOrder, fmt.Sprintf("T%d", th.n))
		}
		if why := checkScene(lastScene, th.n, count); why != "" {
			rep.SceneBad = append(rep.SceneBad, fmt.Sprintf("T%d: %s", th.n, why))
		}
		th.mu.Unlock()
	}
	rep.Wall = last.Sub(start)
	slices.Sort(rep.Latencies)
	slices.Sort(rep.Lost)
	return rep
}

// checkScene checks that the thread's last .excalidraw file holds one box for each answered tag.
func checkScene(doc []byte, thread int, answered map[string]int) string {
	if len(answered) == 0 {
		return ""
	}
	if doc == nil {
		return "no .excalidraw file posted"
	}
	sc, err := scene.Decode(doc)
	if err != nil {
		return "decode: " + err.Error()
	}
	inScene := map[string]int{}
	for _, e := range sc.Elements() {
		if e.Type == scene.Text {
			for _, tag := range tags(e.OriginalText) {
				inScene[tag]++
			}
		}
	}
	var bad []string
	for tag := range answered {
		if inScene[tag] != 1 {
			bad = append(bad, fmt.Sprintf("%s ×%d", tag, inScene[tag]))
		}
	}
	slices.Sort(bad)
	return strings.Join(bad, ", ")
}

// sampleMemory records the peak Go heap every 100 ms and the peak RSS of Chromium every 500 ms.
func (r *loadRun) sampleMemory(ctx context.Context, heap, chrome *uint64) <-chan struct{} {
	done := make(chan struct{})
	go func() {
		defer close(done)
		s := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
		for i := 0; sleepCtx(ctx, 100*time.Millisecond); i++ {
			metrics.Read(s)
			*heap = max(*heap, s[0].Value.Uint64())
			if i%5 == 0 {
				*chrome = max(*chrome, descendantsRSS(os.Getpid()))
			}
		}
	}()
	return done
}

func sleepCtx(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-t.C:
		return true
	}
}

// tailBuffer keeps the last max bytes written: serve's log under load, shown when a test fails,
// without the whole log counting against the memory the harness measures.
type tailBuffer struct {
	mu  sync.Mutex
	max int
	b   []byte
}

func (w *tailBuffer) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.b = append(w.b, p...)
	if len(w.b) > w.max {
		w.b = append(w.b[:0], w.b[len(w.b)-w.max:]...)
	}
	return len(p), nil
}

func (w *tailBuffer) String() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return string(w.b)
}

// TestLoadCI is a small load run for CI: several threads on both platforms, follow-ups during
// runs. It asserts what must hold at any speed — nothing lost, nothing answered twice, answers in
// order, every answer with its picture — and no timing.
func TestLoadCI(t *testing.T) {
	if testing.Short() {
		t.Skip("load run: skipped in -short")
	}
	rep := runLoad(t, loadSize{Threads: 6, Messages: 3, Turn: 30 * time.Millisecond, Early: 0.5,
		Ramp: time.Second, Timeout: 4 * time.Minute, Seed: 1})
	t.Log("\n" + rep.String())
	checkLoad(t, rep)
}

// checkLoad fails the test for anything the harness must never see.
func checkLoad(t *testing.T, rep loadReport) {
	t.Helper()
	if rep.Sent != rep.Cfg.Threads*rep.Cfg.Messages {
		t.Errorf("sent %d messages, want %d", rep.Sent, rep.Cfg.Threads*rep.Cfg.Messages)
	}
	for _, c := range []struct {
		what string
		got  []string
	}{{"lost messages", rep.Lost}, {"duplicated replies", rep.Dups}, {"error replies", rep.Errors},
		{"answers without a picture", rep.NoPicture}, {"threads answered out of order", rep.OutOfOrder},
		{"threads whose scene is wrong", rep.SceneBad}} {
		if len(c.got) > 0 {
			t.Errorf("%s: %d, want 0: %q", c.what, len(c.got), c.got)
		}
	}
}
