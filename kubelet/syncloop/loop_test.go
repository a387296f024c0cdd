package syncloop

import (
	"context"
	"errors"
	"log/slog"
	"sync"
	"testing"
	"time"
)

// TestLoop: one sync at the start; a burst of kicks costs at most two
// syncs (the one it started and one for the kicks during its wait), each
// no sooner than the minimum period after the last; a failed sync is
// retried a second later without a kick.
func TestLoop(t *testing.T) {
	l := New(200 * time.Millisecond)
	var mu sync.Mutex
	var calls []time.Time
	failNext := false
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		done <- l.Run(ctx, Periods{}, "test rules", slog.Default(), func(full bool) error {
			mu.Lock()
			defer mu.Unlock()
			defer l.Ran()
			calls = append(calls, time.Now())
			if full {
				t.Errorf("a full sync without a Full timer")
			}
			if failNext {
				failNext = false
				return errors.New("boom")
			}
			return nil
		})
	}()
	count := func() int {
		mu.Lock()
		defer mu.Unlock()
		return len(calls)
	}
	waitFor := func(n int) {
		t.Helper()
		deadline := time.Now().Add(5 * time.Second)
		for count() < n {
			if time.Now().After(deadline) {
				t.Fatalf("%d syncs, want %d", count(), n)
			}
			time.Sleep(10 * time.Millisecond)
		}
	}
	waitFor(1)
	for range 10 {
		l.Kick()
	}
	waitFor(2)
	time.Sleep(500 * time.Millisecond)
	n := count()
	if n > 3 {
		t.Errorf("%d syncs after a burst of 10 kicks, want them folded", n)
	}
	mu.Lock()
	for i := 1; i < len(calls); i++ {
		if d := calls[i].Sub(calls[i-1]); d < 190*time.Millisecond {
			t.Errorf("sync %d came %v after the one before, want at least the minimum period", i, d)
		}
	}
	failNext = true
	mu.Unlock()
	l.Kick()
	waitFor(n + 2) // the failing sync, then its retry
	mu.Lock()
	if d := calls[n+1].Sub(calls[n]); d < 900*time.Millisecond {
		t.Errorf("the retry came %v after the failure, want about a second", d)
	}
	mu.Unlock()
	cancel()
	if err := <-done; err != nil {
		t.Errorf("Run: %v", err)
	}
}

// TestLoopTimers: the Resync timer's calls are partial, the Full timer's
// full, without any kick.
func TestLoopTimers(t *testing.T) {
	l := New(10 * time.Millisecond)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	var mu sync.Mutex
	partial, full := 0, 0
	_ = l.Run(ctx, Periods{Resync: 150 * time.Millisecond, Full: 400 * time.Millisecond}, "test rules", slog.Default(), func(f bool) error {
		mu.Lock()
		defer mu.Unlock()
		if f {
			full++
		} else {
			partial++
		}
		if full >= 2 && partial >= 4 {
			cancel()
		}
		return nil
	})
	if full < 2 || partial < 4 {
		t.Errorf("in 2 s with Resync 150 ms and Full 400 ms: %d partial and %d full syncs", partial, full)
	}
}
