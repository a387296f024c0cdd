package workqueue

import (
	"container/heap"
	"sync"
	"time"
)

// Option configures a queue.
type Option func(*options)

type options struct {
	name string
}

// WithName names the queue; named queues record metrics labelled with it.
func WithName(name string) Option { return func(o *options) { o.name = name } }

// Queue is a work queue with delayed adds. The zero value is not usable; call
// New.
type Queue[K comparable] struct {
	mu   sync.Mutex
	cond *sync.Cond

	queue      []K
	dirty      map[K]struct{}
	processing map[K]struct{}

	shuttingDown bool
	drain        bool

	// Delayed adds: a min-heap on readiness, deduplicated by item.
	waiting    waitHeap[K]
	waitingIdx map[K]*waitEntry[K]
	wake       chan struct{}
	stop       chan struct{}
	stopOnce   sync.Once

	metrics *queueMetrics[K]
}

// New returns a queue. It starts one goroutine for delayed adds, which ends
// at ShutDown.
func New[K comparable](opts ...Option) *Queue[K] {
	var o options
	for _, opt := range opts {
		opt(&o)
	}
	q := &Queue[K]{
		dirty:      map[K]struct{}{},
		processing: map[K]struct{}{},
		waitingIdx: map[K]*waitEntry[K]{},
		wake:       make(chan struct{}, 1),
		stop:       make(chan struct{}),
		metrics:    newQueueMetrics[K](o.name),
	}
	q.cond = sync.NewCond(&q.mu)
	go q.waitingLoop()
	return q
}

// Add marks item as needing processing. It is a no-op after ShutDown.
func (q *Queue[K]) Add(item K) {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.addLocked(item)
}

func (q *Queue[K]) addLocked(item K) {
	if q.shuttingDown {
		return
	}
	if _, ok := q.dirty[item]; ok {
		return
	}
	q.metrics.add(item)
	q.dirty[item] = struct{}{}
	if _, ok := q.processing[item]; ok {
		return // queued again by Done
	}
	q.queue = append(q.queue, item)
	q.cond.Signal()
}

// Len returns the number of items waiting to be handed out (not counting
// delayed ones or those being processed).
func (q *Queue[K]) Len() int {
	q.mu.Lock()
	defer q.mu.Unlock()
	return len(q.queue)
}

// Get blocks until an item is available and returns it; the caller must call
// Done with it when finished. shutdown is true, with a zero item, once the
// queue is shut down and empty.
func (q *Queue[K]) Get() (item K, shutdown bool) {
	q.mu.Lock()
	defer q.mu.Unlock()
	for len(q.queue) == 0 && !q.shuttingDown {
		q.cond.Wait()
	}
	if len(q.queue) == 0 {
		var zero K
		return zero, true
	}
	item = q.queue[0]
	var zero K
	q.queue[0] = zero // let the garbage collector have it
	q.queue = q.queue[1:]
	q.metrics.get(item)
	q.processing[item] = struct{}{}
	delete(q.dirty, item)
	return item, false
}

// Done marks item as processed. If it was added again meanwhile, it is queued
// again now.
func (q *Queue[K]) Done(item K) {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.metrics.done(item)
	delete(q.processing, item)
	if _, ok := q.dirty[item]; ok {
		q.queue = append(q.queue, item)
		q.cond.Signal()
	} else if len(q.processing) == 0 {
		q.cond.Broadcast() // ShutDownWithDrain may be waiting
	}
}

// ShutDown makes the queue ignore new adds and makes Get return shutdown once
// the queued items have been handed out. Delayed adds are dropped. It does not
// wait for workers.
func (q *Queue[K]) ShutDown() {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.drain = false
	q.shutDownLocked()
}

// ShutDownWithDrain is ShutDown that then waits until every item handed out
// has been marked Done.
func (q *Queue[K]) ShutDownWithDrain() {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.drain = true
	q.shutDownLocked()
	for len(q.processing) > 0 && q.drain {
		q.cond.Wait()
	}
}

func (q *Queue[K]) shutDownLocked() {
	q.shuttingDown = true
	q.stopOnce.Do(func() {
		close(q.stop)
		q.metrics.unregister()
	})
	q.cond.Broadcast()
}

// ShuttingDown reports whether ShutDown was called.
func (q *Queue[K]) ShuttingDown() bool {
	q.mu.Lock()
	defer q.mu.Unlock()
	return q.shuttingDown
}

// AddAfter adds item after d. If item is already waiting, the earlier of the
// two times wins. d <= 0 adds at once.
func (q *Queue[K]) AddAfter(item K, d time.Duration) {
	if d <= 0 {
		q.Add(item)
		return
	}
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.shuttingDown {
		return
	}
	ready := time.Now().Add(d)
	if e, ok := q.waitingIdx[item]; ok {
		if ready.Before(e.ready) {
			e.ready = ready
			heap.Fix(&q.waiting, e.index)
		}
	} else {
		e := &waitEntry[K]{item: item, ready: ready}
		heap.Push(&q.waiting, e)
		q.waitingIdx[item] = e
	}
	select {
	case q.wake <- struct{}{}:
	default:
	}
}

// waitingLoop moves delayed items into the queue when they are ready.
func (q *Queue[K]) waitingLoop() {
	timer := time.NewTimer(time.Hour)
	defer timer.Stop()
	for {
		q.mu.Lock()
		now := time.Now()
		for len(q.waiting) > 0 && !q.waiting[0].ready.After(now) {
			e := heap.Pop(&q.waiting).(*waitEntry[K])
			delete(q.waitingIdx, e.item)
			q.addLocked(e.item)
		}
		next := time.Hour
		if len(q.waiting) > 0 {
			next = q.waiting[0].ready.Sub(now)
		}
		q.mu.Unlock()

		timer.Reset(next)
		select {
		case <-q.stop:
			return
		case <-q.wake:
		case <-timer.C:
		}
	}
}

type waitEntry[K comparable] struct {
	item  K
	ready time.Time
	index int
}

type waitHeap[K comparable] []*waitEntry[K]

func (h waitHeap[K]) Len() int           { return len(h) }
func (h waitHeap[K]) Less(i, j int) bool { return h[i].ready.Before(h[j].ready) }
func (h waitHeap[K]) Swap(i, j int) {
	h[i], h[j] = h[j], h[i]
	h[i].index, h[j].index = i, j
}
func (h *waitHeap[K]) Push(x any) {
	e := x.(*waitEntry[K])
	e.index = len(*h)
	*h = append(*h, e)
}
func (h *waitHeap[K]) Pop() any {
	old := *h
	n := len(old)
	e := old[n-1]
	old[n-1] = nil
	*h = old[:n-1]
	return e
}

// RateLimitingQueue is a Queue whose AddRateLimited delays items by a
// RateLimiter.
type RateLimitingQueue[K comparable] struct {
	*Queue[K]
	limiter RateLimiter[K]
}

// NewRateLimiting returns a queue limited by rl (DefaultControllerRateLimiter
// when nil).
func NewRateLimiting[K comparable](rl RateLimiter[K], opts ...Option) *RateLimitingQueue[K] {
	if rl == nil {
		rl = DefaultControllerRateLimiter[K]()
	}
	return &RateLimitingQueue[K]{Queue: New[K](opts...), limiter: rl}
}

// AddRateLimited adds item after the delay the rate limiter gives it.
func (q *RateLimitingQueue[K]) AddRateLimited(item K) {
	q.mu.Lock()
	q.metrics.retry()
	q.mu.Unlock()
	q.AddAfter(item, q.limiter.When(item))
}

// Forget tells the rate limiter item succeeded: its back-off starts over. It
// does not remove the item from the queue.
func (q *RateLimitingQueue[K]) Forget(item K) { q.limiter.Forget(item) }

// NumRequeues returns how many times item was rate-limited since it was last
// forgotten.
func (q *RateLimitingQueue[K]) NumRequeues(item K) int { return q.limiter.NumRequeues(item) }
