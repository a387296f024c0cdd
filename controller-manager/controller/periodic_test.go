package controller

import (
	"context"
	"sync/atomic"
	"testing"
	"time"
)

// TestEvery checks the two timers' first pass: Every's at once, EveryAfter's
// one period later; both return when their context ends.
func TestEvery(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		name   string
		every  func(context.Context, time.Duration, func(context.Context))
		atOnce bool
	}{
		{"Every", Every, true},
		{"EveryAfter", EveryAfter, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			var passes atomic.Int32
			ctx, cancel := context.WithCancel(context.Background())
			done := make(chan struct{})
			go func() {
				defer close(done)
				tt.every(ctx, time.Hour, func(context.Context) { passes.Add(1) })
			}()
			time.Sleep(50 * time.Millisecond)
			want := int32(0)
			if tt.atOnce {
				want = 1
			}
			if got := passes.Load(); got != want {
				t.Errorf("%d passes before the first period, want %d", got, want)
			}
			cancel()
			select {
			case <-done:
			case <-time.After(10 * time.Second):
				t.Fatal("did not return after its context ended")
			}
		})
	}
}

// TestPeriodicWaitsThenPasses checks that no pass runs before every cache
// synced, and that passes repeat every period until Run returns.
func TestPeriodicWaitsThenPasses(t *testing.T) {
	t.Parallel()
	var passes atomic.Int32
	p := NewPeriodic(PeriodicConfig{Period: 10 * time.Millisecond, Pass: func(context.Context) { passes.Add(1) }})
	cacheA, cacheB := &fakeSyncer{}, &fakeSyncer{}
	p.WaitFor(cacheA, cacheB)
	ctx, cancel := context.WithCancel(context.Background())
	stopped := make(chan error)
	go func() { stopped <- p.Run(ctx, 0) }()
	cacheA.set()
	time.Sleep(50 * time.Millisecond)
	if n := passes.Load(); n != 0 {
		t.Fatalf("%d passes before every cache synced", n)
	}
	cacheB.set()
	deadline := time.Now().Add(10 * time.Second)
	for passes.Load() < 3 {
		if time.Now().After(deadline) {
			t.Fatalf("%d passes within 10s, want 3", passes.Load())
		}
		time.Sleep(time.Millisecond)
	}
	cancel()
	select {
	case err := <-stopped:
		if err != nil {
			t.Fatalf("Run: %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Run did not return after its context ended")
	}
}
