package backoff

import (
	"sync"
	"time"
)

// Backoff is kube's per-key exponential back-off (flowcontrol.Backoff): the
// delay starts at Initial, doubles on each Next up to Max, and an entry not
// touched for ResetAfter starts over.
type Backoff struct {
	Initial, Max, ResetAfter time.Duration
	// Now is the clock (time.Now); tests may replace it before use.
	Now func() time.Time

	mu      sync.Mutex
	entries map[string]*backoffEntry
}

type backoffEntry struct {
	delay      time.Duration
	lastUpdate time.Time
}

// New returns a back-off; resetAfter 0 means 2×max (kube's rule,
// 10 minutes with a 5 minute cap).
func New(initial, max, resetAfter time.Duration) *Backoff {
	if resetAfter <= 0 {
		resetAfter = 2 * max
	}
	return &Backoff{Initial: initial, Max: max, ResetAfter: resetAfter, Now: time.Now, entries: map[string]*backoffEntry{}}
}

// Get is the current delay of key (0 if none).
func (b *Backoff) Get(key string) time.Duration {
	b.mu.Lock()
	defer b.mu.Unlock()
	if e := b.entries[key]; e != nil {
		return e.delay
	}
	return 0
}

// Next moves key to its next delay, measured from eventTime.
func (b *Backoff) Next(key string, eventTime time.Time) {
	b.mu.Lock()
	defer b.mu.Unlock()
	e := b.entries[key]
	if e == nil || eventTime.Sub(e.lastUpdate) > b.ResetAfter {
		b.entries[key] = &backoffEntry{delay: b.Initial, lastUpdate: eventTime}
		return
	}
	e.delay = min(2*e.delay, b.Max)
	e.lastUpdate = eventTime
}

// InBackoffSince reports whether eventTime is less than key's delay ago, and
// how long is left.
func (b *Backoff) InBackoffSince(key string, eventTime time.Time) (bool, time.Duration) {
	b.mu.Lock()
	defer b.mu.Unlock()
	e := b.entries[key]
	if e == nil {
		return false, 0
	}
	now := b.Now()
	if now.Sub(e.lastUpdate) > b.ResetAfter {
		return false, 0
	}
	left := e.delay - now.Sub(eventTime)
	return left > 0, left
}

// InBackoffSinceUpdate reports whether key's delay has not yet passed
// since its last Next, and how long is left (kube's
// IsInBackOffSinceUpdate).
func (b *Backoff) InBackoffSinceUpdate(key string) (bool, time.Duration) {
	b.mu.Lock()
	defer b.mu.Unlock()
	e := b.entries[key]
	if e == nil {
		return false, 0
	}
	left := e.delay - b.Now().Sub(e.lastUpdate)
	return left > 0, left
}

// Reset forgets key.
func (b *Backoff) Reset(key string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	delete(b.entries, key)
}

// GC drops entries idle for longer than ResetAfter.
func (b *Backoff) GC() {
	b.mu.Lock()
	defer b.mu.Unlock()
	now := b.Now()
	for k, e := range b.entries {
		if now.Sub(e.lastUpdate) > b.ResetAfter {
			delete(b.entries, k)
		}
	}
}
