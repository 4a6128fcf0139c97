package bot

import (
	"context"
	"errors"
	"sync"
)

// ErrQueueClosed is returned by Queue.Submit after Close has begun.
var ErrQueueClosed = errors.New("bot is shutting down")

// Queue runs jobs one at a time per thread, in the order they were submitted, and at most `limit`
// threads at once. Jobs that arrive while their thread is busy wait; when the thread's turn comes,
// every waiting job is handed over together, so the caller can merge follow-ups into one run.
type Queue struct {
	limit chan struct{} // global concurrency semaphore

	mu      sync.Mutex
	threads map[ThreadKey]*threadQueue
	closed  bool
	ctx     context.Context
	cancel  context.CancelFunc
	wg      sync.WaitGroup
}

// Batch is the work of one turn of a thread: the items that waited, oldest first.
type Batch[T any] struct {
	Key   ThreadKey
	Items []T
}

type threadQueue struct {
	pending []any
	running bool
}

// NewQueue returns a queue running at most limit threads in parallel (at least 1).
func NewQueue(limit int) *Queue {
	if limit < 1 {
		limit = 1
	}
	ctx, cancel := context.WithCancel(context.Background())
	return &Queue{
		limit:   make(chan struct{}, limit),
		threads: map[ThreadKey]*threadQueue{},
		ctx:     ctx,
		cancel:  cancel,
	}
}

// Submit adds item to the thread's queue. When the thread gets its turn, run is called with every
// item waiting for that thread at that moment. run must honour ctx: it is cancelled when Close's
// grace period ends. Submit returns at once; it reports whether the item had to wait behind a
// running job of the same thread.
func Submit[T any](q *Queue, key ThreadKey, item T, run func(ctx context.Context, b Batch[T])) (waiting bool, err error) {
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.closed {
		return false, ErrQueueClosed
	}
	t := q.threads[key]
	if t == nil {
		t = &threadQueue{}
		q.threads[key] = t
	}
	t.pending = append(t.pending, item)
	if t.running {
		return true, nil
	}
	t.running = true
	q.wg.Add(1)
	go q.drain(key, t, func(ctx context.Context, items []any) {
		b := Batch[T]{Key: key, Items: make([]T, len(items))}
		for i, it := range items {
			b.Items[i] = it.(T)
		}
		run(ctx, b)
	})
	return false, nil
}

// drain is the one goroutine serving a thread while it has work; it exits when the thread is idle.
func (q *Queue) drain(key ThreadKey, t *threadQueue, run func(context.Context, []any)) {
	defer q.wg.Done()
	for {
		select {
		case q.limit <- struct{}{}:
		case <-q.ctx.Done():
			q.mu.Lock()
			t.pending, t.running = nil, false
			delete(q.threads, key)
			q.mu.Unlock()
			return
		}
		q.mu.Lock()
		items := t.pending
		t.pending = nil
		q.mu.Unlock()

		run(q.ctx, items)
		<-q.limit

		q.mu.Lock()
		if len(t.pending) == 0 {
			t.running = false
			delete(q.threads, key)
			q.mu.Unlock()
			return
		}
		q.mu.Unlock()
	}
}

// Depth returns how many items wait and how many threads are active, for metrics.
func (q *Queue) Depth() (waiting, active int) {
	q.mu.Lock()
	defer q.mu.Unlock()
	for _, t := range q.threads {
		waiting += len(t.pending)
		if t.running {
			active++
		}
	}
	return waiting, active
}

// Close stops accepting work and waits for running jobs. When ctx ends first, running jobs are
// cancelled, jobs still waiting are dropped, and Close returns the keys of threads that lost work
// so the caller can tell them to retry.
func (q *Queue) Close(ctx context.Context) (interrupted []ThreadKey) {
	q.mu.Lock()
	q.closed = true
	q.mu.Unlock()
	done := make(chan struct{})
	go func() { q.wg.Wait(); close(done) }()
	select {
	case <-done:
		q.cancel()
		return nil
	case <-ctx.Done():
	}
	q.mu.Lock()
	for k := range q.threads {
		interrupted = append(interrupted, k)
	}
	q.mu.Unlock()
	q.cancel()
	<-done
	return interrupted
}
