package syncloop

import (
	"context"
	"log/slog"
	"sync"
	"time"
)

// Loop runs a sync function as changes come, at a bounded frequency.
type Loop struct {
	minPeriod time.Duration
	trigger   chan struct{}

	mu   sync.Mutex
	last time.Time
}

// New returns a loop that syncs at most once per minPeriod.
func New(minPeriod time.Duration) *Loop {
	return &Loop{minPeriod: minPeriod, trigger: make(chan struct{}, 1)}
}

// Kick asks for a sync; kicks before it runs count as one.
func (l *Loop) Kick() {
	select {
	case l.trigger <- struct{}{}:
	default:
	}
}

// Ran records that a sync (of the loop or called directly) ended now: the
// minimum period counts from here.
func (l *Loop) Ran() {
	l.mu.Lock()
	l.last = time.Now()
	l.mu.Unlock()
}

// Periods are the loop's timers; zero turns one off.
type Periods struct {
	// Resync calls sync(false) this often without a change.
	Resync time.Duration
	// Full calls sync(true), a complete rewrite, this often.
	Full time.Duration
}

// Run calls sync once at the start, then on every Kick and timer, until
// ctx ends. sync gets full for the Full timer's calls; a failing sync is
// logged with what and retried a second later. Run returns nil when ctx
// ends.
func (l *Loop) Run(ctx context.Context, p Periods, what string, log *slog.Logger, sync func(full bool) error) error {
	resync, full := tick(p.Resync), tick(p.Full)
	defer resync.stop()
	defer full.stop()
	l.Kick()
	for {
		isFull := false
		select {
		case <-ctx.Done():
			return nil
		case <-l.trigger:
		case <-resync.c:
		case <-full.c:
			isFull = true
		}
		l.mu.Lock()
		wait := l.minPeriod - time.Since(l.last)
		l.mu.Unlock()
		if wait > 0 {
			select {
			case <-ctx.Done():
				return nil
			case <-time.After(wait):
			}
		}
		if err := sync(isFull); err != nil {
			log.Error("syncing "+what+" failed", "err", err)
			time.AfterFunc(time.Second, l.Kick)
		}
	}
}

// ticker is a time.Ticker that may be off (a nil channel never fires).
type ticker struct {
	t *time.Ticker
	c <-chan time.Time
}

func tick(d time.Duration) ticker {
	if d <= 0 {
		return ticker{}
	}
	t := time.NewTicker(d)
	return ticker{t: t, c: t.C}
}

func (t ticker) stop() {
	if t.t != nil {
		t.t.Stop()
	}
}
