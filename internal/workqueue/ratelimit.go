package workqueue

import (
	"math"
	"sync"
	"time"

	"golang.org/x/time/rate"
)

// RateLimiter decides how long an item waits before it is retried.
type RateLimiter[K comparable] interface {
	// When returns how long to wait before adding item again (and counts
	// the retry).
	When(item K) time.Duration
	// Forget resets item's history.
	Forget(item K)
	// NumRequeues returns how many retries item has had.
	NumRequeues(item K) int
}

// DefaultControllerRateLimiter is client-go's default for controllers: the
// slower of a per-item exponential back-off from 5 ms to 1000 s and an overall
// token bucket of 10 qps with a burst of 100.
func DefaultControllerRateLimiter[K comparable]() RateLimiter[K] {
	return NewMaxOfRateLimiter(
		NewItemExponentialFailureRateLimiter[K](5*time.Millisecond, 1000*time.Second),
		NewBucketRateLimiter[K](10, 100),
	)
}

// ItemExponentialFailureRateLimiter waits base*2^failures for an item,
// capped at max.
type ItemExponentialFailureRateLimiter[K comparable] struct {
	mu       sync.Mutex
	failures map[K]int
	base     time.Duration
	max      time.Duration
}

var _ RateLimiter[string] = (*ItemExponentialFailureRateLimiter[string])(nil)

// NewItemExponentialFailureRateLimiter returns a per-item exponential
// back-off from base to max.
func NewItemExponentialFailureRateLimiter[K comparable](base, max time.Duration) *ItemExponentialFailureRateLimiter[K] {
	return &ItemExponentialFailureRateLimiter[K]{failures: map[K]int{}, base: base, max: max}
}

// When implements RateLimiter.
func (r *ItemExponentialFailureRateLimiter[K]) When(item K) time.Duration {
	r.mu.Lock()
	defer r.mu.Unlock()
	exp := r.failures[item]
	r.failures[item]++
	backoff := float64(r.base) * math.Pow(2, float64(exp))
	if backoff > math.MaxInt64 || time.Duration(backoff) > r.max {
		return r.max
	}
	return time.Duration(backoff)
}

// Forget implements RateLimiter.
func (r *ItemExponentialFailureRateLimiter[K]) Forget(item K) {
	r.mu.Lock()
	defer r.mu.Unlock()
	delete(r.failures, item)
}

// NumRequeues implements RateLimiter.
func (r *ItemExponentialFailureRateLimiter[K]) NumRequeues(item K) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.failures[item]
}

// BucketRateLimiter limits all items together with a token bucket; it keeps
// no per-item history.
type BucketRateLimiter[K comparable] struct {
	Limiter *rate.Limiter
}

var _ RateLimiter[string] = (*BucketRateLimiter[string])(nil)

// NewBucketRateLimiter returns a token bucket of qps with burst.
func NewBucketRateLimiter[K comparable](qps float64, burst int) *BucketRateLimiter[K] {
	return &BucketRateLimiter[K]{Limiter: rate.NewLimiter(rate.Limit(qps), burst)}
}

// When implements RateLimiter.
func (r *BucketRateLimiter[K]) When(K) time.Duration { return r.Limiter.Reserve().Delay() }

// Forget implements RateLimiter.
func (r *BucketRateLimiter[K]) Forget(K) {}

// NumRequeues implements RateLimiter.
func (r *BucketRateLimiter[K]) NumRequeues(K) int { return 0 }

// MaxOfRateLimiter waits the longest of its limiters.
type MaxOfRateLimiter[K comparable] struct {
	limiters []RateLimiter[K]
}

var _ RateLimiter[string] = (*MaxOfRateLimiter[string])(nil)

// NewMaxOfRateLimiter combines limiters: the longest delay wins.
func NewMaxOfRateLimiter[K comparable](limiters ...RateLimiter[K]) *MaxOfRateLimiter[K] {
	return &MaxOfRateLimiter[K]{limiters: limiters}
}

// When implements RateLimiter; every limiter counts the retry.
func (r *MaxOfRateLimiter[K]) When(item K) time.Duration {
	var d time.Duration
	for _, l := range r.limiters {
		if w := l.When(item); w > d {
			d = w
		}
	}
	return d
}

// Forget implements RateLimiter.
func (r *MaxOfRateLimiter[K]) Forget(item K) {
	for _, l := range r.limiters {
		l.Forget(item)
	}
}

// NumRequeues implements RateLimiter: the largest count.
func (r *MaxOfRateLimiter[K]) NumRequeues(item K) int {
	n := 0
	for _, l := range r.limiters {
		if c := l.NumRequeues(item); c > n {
			n = c
		}
	}
	return n
}
