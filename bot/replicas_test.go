package bot

import (
	"context"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/excalibot/excalibot/scene"
	"github.com/excalibot/excalibot/store"
	"github.com/excalibot/excalibot/store/sqlite"
)

// Two cores on one store, as two replicas (SQLite lets one process open a file twice; the cores
// share nothing else): per-thread order whichever replica a message reaches, and the takeover of a
// replica that stops renewing its leases.

// tagDrawer adds a box per request and names, in its summary, the tags (T1-M2) of the requests
// it drew, in the order it was given them.
type tagDrawer struct {
	mu    sync.Mutex
	runs  map[string]int // tag → runs that drew it
	block chan struct{}  // when set, Draw waits on it (or for its context)
	began chan string    // when set, told each prompt as its run begins
}

var tagRE = regexp.MustCompile(`T\d+-M\d+`)

func (d *tagDrawer) Draw(ctx context.Context, req DrawRequest) (DrawResult, error) {
	if d.began != nil {
		d.began <- req.Prompt
	}
	if d.block != nil {
		select {
		case <-d.block:
		case <-ctx.Done():
			return DrawResult{}, ctx.Err()
		}
	}
	tags := tagRE.FindAllString(req.Prompt, -1)
	d.mu.Lock()
	if d.runs == nil {
		d.runs = map[string]int{}
	}
	for _, t := range tags {
		d.runs[t]++
	}
	d.mu.Unlock()
	sc := scene.New()
	if req.Scene != nil {
		sc = req.Scene.Clone()
	}
	e := scene.NewElement(scene.Rectangle)
	e.ID = fmt.Sprintf("r%d", sc.Len()+1)
	e.Width, e.Height = 100, 50
	if _, err := sc.Add(e); err != nil {
		return DrawResult{}, err
	}
	return DrawResult{Scene: sc, Summary: "drew " + strings.Join(tags, " "), Changed: true}, nil
}

// sharedStore opens a second store on st's file, as another replica would.
func sharedStore(t *testing.T, st *sqlite.Store) *sqlite.Store {
	t.Helper()
	other, err := sqlite.Open(context.Background(), st.Path(), store.Options{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { other.Close() })
	return other
}

// replicaOptions poll often; the lease is long enough that no replica loses one while it works,
// even on a loaded machine under -race (a lease that lapses mid-post lets another replica post
// the same reply again: the documented window of a stalled replica).
var replicaOptions = Options{PollInterval: 50 * time.Millisecond, RetryBase: 20 * time.Millisecond, LeaseTTL: 5 * time.Second,
	UserRatePerMinute: noRateLimit, ChatRatePerMinute: noRateLimit}

// TestReplicasKeepThreadOrder: the messages of ten threads go to two replicas alternately, each
// the moment the previous one is kept; every message is answered once, each thread's in the order
// sent, and no answer lands in another thread.
func TestReplicasKeepThreadOrder(t *testing.T) {
	st := tempStore(t)
	rec := newRecorder() // the platform: both replicas post into it
	d := &tagDrawer{}
	a, b := replicaOptions, replicaOptions
	a.Owner, b.Owner = "replica-a", "replica-b"
	ra := New(st, d, fakeRenderer{}, nil, a, nil)
	rb := New(sharedStore(t, st), d, fakeRenderer{}, nil, b, nil)
	for _, r := range []*Bot{ra, rb} {
		r.Register(rec)
		t.Cleanup(func() { r.Close(context.Background()) })
	}
	const threads, messages = 10, 3
	key := func(i int) ThreadKey {
		return ThreadKey{Platform: "test", Workspace: "w", Channel: "c", Thread: fmt.Sprint("t", i)}
	}
	n := 0
	for m := 1; m <= messages; m++ {
		for i := 1; i <= threads; i++ {
			n++
			replica := []*Bot{ra, rb}[n%2]
			msg := Message{Key: key(i), EventID: fmt.Sprint("e", n), ID: fmt.Sprint(n), User: "u", Text: fmt.Sprintf("draw T%d-M%d", i, m)}
			if err := replica.Handle(context.Background(), rec, msg); err != nil {
				t.Fatal(err)
			}
		}
	}
	// Every tag answered; wait for the last of each thread.
	waitFor(t, "every message answered", func() bool {
		for i := 1; i <= threads; i++ {
			if !strings.Contains(allText(rec, key(i)), fmt.Sprintf("T%d-M%d", i, messages)) {
				return false
			}
		}
		return true
	})
	for _, r := range []*Bot{ra, rb} {
		r.Close(context.Background())
	}
	for i := 1; i <= threads; i++ {
		got := tagRE.FindAllString(allText(rec, key(i)), -1)
		var want []string
		for m := 1; m <= messages; m++ {
			want = append(want, fmt.Sprintf("T%d-M%d", i, m))
		}
		if !slices.Equal(got, want) {
			t.Errorf("thread %d answered %v, want %v: each once, in order, none of another thread", i, got, want)
		}
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	for tag, runs := range d.runs {
		if runs != 1 {
			t.Errorf("%s drawn %d times, want once", tag, runs)
		}
	}
}

func allText(rec *recorder, key ThreadKey) string {
	rec.mu.Lock()
	defer rec.mu.Unlock()
	var sb strings.Builder
	for _, r := range rec.replies[key.String()] {
		sb.WriteString(r.Text + "\n")
	}
	return sb.String()
}

// deadHeart is a replica's store whose heartbeat no longer reaches the database: its leases lapse
// while its work goes on, as for a replica that hangs or lost its network.
type deadHeart struct{ *sqlite.Store }

func (deadHeart) RenewLeases(context.Context, string, time.Duration) (int, error) {
	return 0, fmt.Errorf("renew leases: dial tcp 10.0.0.5:5432: i/o timeout")
}

// TestTakeoverOfAReplicaThatStopped: replica A draws a thread's message and stops renewing its
// lease; replica B takes the thread over once the lease has run out, tells the thread that the
// run was interrupted, then draws the message that waited. A's run, when it ends after all,
// changes nothing and says nothing.
func TestTakeoverOfAReplicaThatStopped(t *testing.T) {
	st := tempStore(t)
	rec := newRecorder()
	stuck := &tagDrawer{block: make(chan struct{}), began: make(chan string, 1)}
	a, b := replicaOptions, replicaOptions
	a.Owner, b.Owner = "replica-a", "replica-b"
	a.LeaseTTL, b.LeaseTTL = time.Second, time.Second
	ra := New(deadHeart{st}, stuck, fakeRenderer{}, nil, a, nil)
	ra.Register(rec)
	t.Cleanup(func() { ra.Close(context.Background()) })
	defer close(stuck.block)

	if err := ra.Handle(context.Background(), rec, Message{Key: thread, EventID: "e1", ID: "1", User: "u", Text: "draw T1-M1"}); err != nil {
		t.Fatal(err)
	}
	select {
	case <-stuck.began:
	case <-time.After(10 * time.Second):
		t.Fatal("A never started drawing")
	}
	began := time.Now() // about when A's lease was last renewed: its run's start
	rb := New(sharedStore(t, st), &tagDrawer{}, fakeRenderer{}, nil, b, nil)
	rb.Register(rec)
	t.Cleanup(func() { rb.Close(context.Background()) })
	if err := rb.Handle(context.Background(), rec, Message{Key: thread, EventID: "e2", ID: "2", User: "u", Text: "draw T1-M2"}); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the notice", func() bool { return strings.Contains(allText(rec, thread), "restarted while working") })
	t.Logf("thread told %v after A's last renewal (lease %v, poll %v)", time.Since(began).Round(10*time.Millisecond), a.LeaseTTL, a.PollInterval)
	waitFor(t, "B's answer", func() bool { return strings.Contains(allText(rec, thread), "drew T1-M2") })
	text := allText(rec, thread)
	told := strings.Index(text, "restarted while working")
	if told < 0 || told > strings.Index(text, "drew T1-M2") {
		t.Fatalf("thread got %q; want the interrupted run told first, then B's drawing", text)
	}
	th, err := st.Load(context.Background(), thread)
	if err != nil || th.Rev != 1 {
		t.Fatalf("thread %+v, %v; want revision 1, B's", th, err)
	}
	// A's run ends after all: nothing more is saved or said.
	stuck.block <- struct{}{}
	runsIn(t, st, store.RunInterrupted, 1)
	time.Sleep(200 * time.Millisecond)
	if th, _ := st.Load(context.Background(), thread); th.Rev != 1 {
		t.Errorf("A's late run saved revision %d", th.Rev)
	}
	if strings.Contains(allText(rec, thread), "drew T1-M1") {
		t.Errorf("A's late run answered: %q", allText(rec, thread))
	}
}

// slowDrawer takes a fixed time per run, as a model with a fixed turn time.
type slowDrawer struct{ turn time.Duration }

func (d slowDrawer) Draw(ctx context.Context, req DrawRequest) (DrawResult, error) {
	select {
	case <-time.After(d.turn):
	case <-ctx.Done():
		return DrawResult{}, ctx.Err()
	}
	return (&tagDrawer{}).Draw(ctx, req)
}

// BenchmarkReplicas sends one request to each of 16 threads, alternately through one or two cores
// on one store, each core drawing at most 2 threads at once with a drawer that takes 200 ms per
// run, and reports messages per second from the first message to the last reply: the second
// replica takes half the threads.
//
//	go test ./bot -run '^$' -bench Replicas -benchtime 3x
func BenchmarkReplicas(b *testing.B) {
	for _, replicas := range []int{1, 2} {
		b.Run(fmt.Sprintf("%dreplicas", replicas), func(b *testing.B) {
			for b.Loop() {
				b.StopTimer()
				st, err := sqlite.Open(context.Background(), b.TempDir()+"/bench.db", store.Options{}, nil)
				if err != nil {
					b.Fatal(err)
				}
				rec := newRecorder()
				rec.sent = make(chan struct{}, 1000)
				var cores []*Bot
				for i := range replicas {
					opt := replicaOptions
					opt.Owner, opt.MaxConcurrentRuns = fmt.Sprint("replica-", i), 2
					s := st
					if i > 0 {
						if s, err = sqlite.Open(context.Background(), st.Path(), store.Options{}, nil); err != nil {
							b.Fatal(err)
						}
						defer s.Close()
					}
					c := New(s, slowDrawer{200 * time.Millisecond}, fakeRenderer{}, nil, opt, nil)
					c.Register(rec)
					c.Start()
					cores = append(cores, c)
				}
				b.StartTimer()
				const threads = 16
				for i := range threads {
					msg := Message{Key: ThreadKey{Platform: "test", Channel: "c", Thread: fmt.Sprint("t", i)},
						EventID: fmt.Sprint("e", i), ID: fmt.Sprint(i), User: fmt.Sprint("u", i), Text: fmt.Sprintf("draw T%d-M1", i)}
					if err := cores[i%replicas].Handle(context.Background(), rec, msg); err != nil {
						b.Fatal(err)
					}
				}
				for range threads {
					<-rec.sent
				}
				b.StopTimer()
				for _, c := range cores {
					c.Close(context.Background())
				}
				st.Close()
				b.StartTimer()
			}
			b.ReportMetric(float64(16*b.N)/b.Elapsed().Seconds(), "msgs/s")
		})
	}
}
