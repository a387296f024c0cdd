package queue

import (
	"context"
	"errors"
	"reflect"
	"sync"
	"time"

	"github.com/minik8s/minik8s/api"
)

// Defaults, as kube-scheduler's.
const (
	DefaultPodInitialBackoff = 1 * time.Second
	DefaultPodMaxBackoff     = 10 * time.Second
	// DefaultMaxUnschedulableDuration is how long a pod may stay
	// unschedulable before it is retried anyway.
	DefaultMaxUnschedulableDuration = 5 * time.Minute
	backoffFlushPeriod              = time.Second
	unschedulableFlushPeriod        = 30 * time.Second
)

// ErrClosed is returned by Pop after Close.
var ErrClosed = errors.New("scheduling queue is closed")

// QueuedPodInfo is a pod in the queue with its scheduling history.
type QueuedPodInfo struct {
	Pod *api.Pod
	// Timestamp is when the pod was last added to the queue (the activeQ
	// tie-break and the start of its back-off).
	Timestamp time.Time
	// InitialAttemptTimestamp is when the pod first entered the queue, the
	// start of its end-to-end scheduling latency.
	InitialAttemptTimestamp time.Time
	// Attempts counts the times the pod was popped.
	Attempts int
	key      string
}

// Key returns namespace/name.
func Key(pod *api.Pod) string { return pod.Namespace + "/" + pod.Name }

func priority(p *api.Pod) int32 {
	if p.Spec.Priority != nil {
		return *p.Spec.Priority
	}
	return 0
}

// Options configure a PriorityQueue.
type Options struct {
	InitialBackoff, MaxBackoff time.Duration
	MaxUnschedulableDuration   time.Duration
	// Now is the clock; tests replace it.
	Now func() time.Time
}

// PriorityQueue is the scheduling queue. It is safe for concurrent use.
type PriorityQueue struct {
	opts Options

	mu            sync.Mutex
	cond          *sync.Cond
	active        *keyedHeap
	backoff       *keyedHeap
	unschedulable map[string]*QueuedPodInfo
	// schedulingCycle counts pops; moveRequestCycle is the cycle of the
	// last cluster event. A pod whose attempt started before that event
	// goes to back-off rather than unschedulable, so the event is not lost.
	schedulingCycle  int64
	moveRequestCycle int64
	closed           bool
}

// New returns an empty queue.
func New(opts Options) *PriorityQueue {
	if opts.InitialBackoff <= 0 {
		opts.InitialBackoff = DefaultPodInitialBackoff
	}
	if opts.MaxBackoff <= 0 {
		opts.MaxBackoff = DefaultPodMaxBackoff
	}
	if opts.MaxUnschedulableDuration <= 0 {
		opts.MaxUnschedulableDuration = DefaultMaxUnschedulableDuration
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	q := &PriorityQueue{opts: opts, unschedulable: map[string]*QueuedPodInfo{}, moveRequestCycle: -1}
	q.cond = sync.NewCond(&q.mu)
	// Higher priority first, then the pod queued earlier.
	q.active = newHeap(func(a, b *QueuedPodInfo) bool {
		pa, pb := priority(a.Pod), priority(b.Pod)
		return pa > pb || (pa == pb && a.Timestamp.Before(b.Timestamp))
	})
	q.backoff = newHeap(func(a, b *QueuedPodInfo) bool {
		return q.backoffExpiry(a).Before(q.backoffExpiry(b))
	})
	return q
}

// BackoffDuration is the back-off after attempts failed attempts:
// initial * 2^(attempts-1), at most max.
func (q *PriorityQueue) BackoffDuration(attempts int) time.Duration {
	d := q.opts.InitialBackoff
	for i := 1; i < attempts; i++ {
		d *= 2
		if d >= q.opts.MaxBackoff {
			return q.opts.MaxBackoff
		}
	}
	return min(d, q.opts.MaxBackoff)
}

func (q *PriorityQueue) backoffExpiry(p *QueuedPodInfo) time.Time {
	return p.Timestamp.Add(q.BackoffDuration(p.Attempts))
}

func (q *PriorityQueue) backingOff(p *QueuedPodInfo) bool {
	return p.Attempts > 0 && q.backoffExpiry(p).After(q.opts.Now())
}

// Run flushes completed back-offs every second and long-unschedulable pods
// every 30 seconds until ctx ends, then closes the queue.
func (q *PriorityQueue) Run(ctx context.Context) {
	defer q.Close()
	b := time.NewTicker(backoffFlushPeriod)
	defer b.Stop()
	u := time.NewTicker(unschedulableFlushPeriod)
	defer u.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-b.C:
			q.FlushBackoffQCompleted()
		case <-u.C:
			q.FlushUnschedulableLeftover()
		}
	}
}

// Close wakes Pop callers, which then return ErrClosed.
func (q *PriorityQueue) Close() {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.closed = true
	q.cond.Broadcast()
}

// Add queues a new pending pod (or updates it where it already is).
func (q *PriorityQueue) Add(pod *api.Pod) {
	q.mu.Lock()
	defer q.mu.Unlock()
	key := Key(pod)
	if p, ok := q.find(key); ok {
		q.updateLocked(p, pod)
		return
	}
	now := q.opts.Now()
	q.active.AddOrUpdate(&QueuedPodInfo{Pod: pod, Timestamp: now, InitialAttemptTimestamp: now, key: key})
	q.cond.Broadcast()
}

func (q *PriorityQueue) find(key string) (*QueuedPodInfo, bool) {
	if p, ok := q.active.Get(key); ok {
		return p, true
	}
	if p, ok := q.backoff.Get(key); ok {
		return p, true
	}
	p, ok := q.unschedulable[key]
	return p, ok
}

// Update replaces a pending pod's object. An unschedulable pod whose spec,
// labels or annotations changed may fit now: it moves to back-off or active.
// A pod in no sub-queue (being scheduled, or new) is added.
func (q *PriorityQueue) Update(_, pod *api.Pod) {
	q.mu.Lock()
	defer q.mu.Unlock()
	if p, ok := q.find(Key(pod)); ok {
		q.updateLocked(p, pod)
		return
	}
	now := q.opts.Now()
	q.active.AddOrUpdate(&QueuedPodInfo{Pod: pod, Timestamp: now, InitialAttemptTimestamp: now, key: Key(pod)})
	q.cond.Broadcast()
}

func (q *PriorityQueue) updateLocked(p *QueuedPodInfo, pod *api.Pod) {
	old := p.Pod
	np := *p
	np.Pod = pod
	if _, ok := q.active.Get(p.key); ok {
		q.active.AddOrUpdate(&np)
		return
	}
	if _, ok := q.backoff.Get(p.key); ok {
		q.backoff.AddOrUpdate(&np)
		return
	}
	if !specChanged(old, pod) {
		q.unschedulable[p.key] = &np
		return
	}
	delete(q.unschedulable, p.key)
	if q.backingOff(&np) {
		q.backoff.AddOrUpdate(&np)
		return
	}
	q.active.AddOrUpdate(&np)
	q.cond.Broadcast()
}

// specChanged reports whether an update could change the scheduling
// outcome: anything but status and the bookkeeping metadata.
func specChanged(a, b *api.Pod) bool {
	return !reflect.DeepEqual(a.Spec, b.Spec) || !reflect.DeepEqual(a.Labels, b.Labels) || !reflect.DeepEqual(a.Annotations, b.Annotations)
}

// Delete removes a pod from every sub-queue.
func (q *PriorityQueue) Delete(pod *api.Pod) {
	q.mu.Lock()
	defer q.mu.Unlock()
	key := Key(pod)
	q.active.Delete(key)
	q.backoff.Delete(key)
	delete(q.unschedulable, key)
}

// Pop waits for the highest-priority active pod and returns it with its
// attempt counted; it returns ErrClosed once the queue is closed.
func (q *PriorityQueue) Pop() (*QueuedPodInfo, error) {
	q.mu.Lock()
	defer q.mu.Unlock()
	for q.active.Len() == 0 {
		if q.closed {
			return nil, ErrClosed
		}
		q.cond.Wait()
	}
	if q.closed {
		return nil, ErrClosed
	}
	p := q.active.Pop()
	p.Attempts++
	q.schedulingCycle++
	return p, nil
}

// SchedulingCycle returns the number of pops so far; the scheduler passes
// the value seen at Pop to AddUnschedulableIfNotPresent.
func (q *PriorityQueue) SchedulingCycle() int64 {
	q.mu.Lock()
	defer q.mu.Unlock()
	return q.schedulingCycle
}

// AddUnschedulableIfNotPresent puts back a pod whose attempt in cycle
// failed. Unschedulable pods wait for a cluster event in the unschedulable
// set, unless such an event came during their attempt; pods that failed
// on an error go to back-off.
func (q *PriorityQueue) AddUnschedulableIfNotPresent(p *QueuedPodInfo, unschedulable bool, cycle int64) {
	q.mu.Lock()
	defer q.mu.Unlock()
	if p.key == "" {
		p.key = Key(p.Pod)
	}
	if _, ok := q.find(p.key); ok {
		return
	}
	p.Timestamp = q.opts.Now()
	if !unschedulable || q.moveRequestCycle >= cycle {
		q.backoff.AddOrUpdate(p)
		return
	}
	q.unschedulable[p.key] = p
}

// MoveAllToActiveOrBackoffQueue moves every unschedulable pod back after a
// cluster event (node added or changed, pod deleted): to back-off while its
// back-off lasts, else to active.
func (q *PriorityQueue) MoveAllToActiveOrBackoffQueue() {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.moveAllLocked(func(*QueuedPodInfo) bool { return true })
	q.moveRequestCycle = q.schedulingCycle
}

func (q *PriorityQueue) moveAllLocked(pred func(*QueuedPodInfo) bool) {
	moved := false
	for key, p := range q.unschedulable {
		if !pred(p) {
			continue
		}
		delete(q.unschedulable, key)
		if q.backingOff(p) {
			q.backoff.AddOrUpdate(p)
		} else {
			q.active.AddOrUpdate(p)
			moved = true
		}
	}
	if moved {
		q.cond.Broadcast()
	}
}

// FlushBackoffQCompleted moves pods whose back-off ended to active.
func (q *PriorityQueue) FlushBackoffQCompleted() {
	q.mu.Lock()
	defer q.mu.Unlock()
	moved := false
	for {
		p := q.backoff.Peek()
		if p == nil || q.backingOff(p) {
			break
		}
		q.backoff.Pop()
		q.active.AddOrUpdate(p)
		moved = true
	}
	if moved {
		q.cond.Broadcast()
	}
}

// FlushUnschedulableLeftover moves pods unschedulable for longer than
// MaxUnschedulableDuration back, in case an event was missed.
func (q *PriorityQueue) FlushUnschedulableLeftover() {
	q.mu.Lock()
	defer q.mu.Unlock()
	now := q.opts.Now()
	q.moveAllLocked(func(p *QueuedPodInfo) bool {
		return now.Sub(p.Timestamp) > q.opts.MaxUnschedulableDuration
	})
}

// Lens returns the sizes of the active, back-off and unschedulable queues.
func (q *PriorityQueue) Lens() (active, backoff, unschedulable int) {
	q.mu.Lock()
	defer q.mu.Unlock()
	return q.active.Len(), q.backoff.Len(), len(q.unschedulable)
}

// Has reports whether the pod is in any sub-queue.
func (q *PriorityQueue) Has(pod *api.Pod) bool {
	q.mu.Lock()
	defer q.mu.Unlock()
	_, ok := q.find(Key(pod))
	return ok
}
