package controller

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/minik8s/minik8s/internal/workqueue"
)

type fakeSyncer struct {
	mu     sync.Mutex
	synced bool
}

func (f *fakeSyncer) HasSynced() bool { f.mu.Lock(); defer f.mu.Unlock(); return f.synced }
func (f *fakeSyncer) set()            { f.mu.Lock(); f.synced = true; f.mu.Unlock() }

// TestLoopWaitsSyncsRetriesAndStops drives a Loop end to end: no sync runs
// before every cache it waits for has synced; a key whose sync fails is
// retried until it succeeds; a key added twice before its sync is synced
// once; Run returns once its context ends.
func TestLoopWaitsSyncsRetriesAndStops(t *testing.T) {
	var mu sync.Mutex
	calls := map[string]int{}
	failuresLeft := 2
	done := make(chan string, 10)
	l := NewLoop(LoopConfig[string]{
		Queue:       "loop_test",
		RateLimiter: workqueue.NewItemExponentialFailureRateLimiter[string](time.Millisecond, 10*time.Millisecond),
		Sync: func(_ context.Context, key string) error {
			mu.Lock()
			defer mu.Unlock()
			calls[key]++
			if key == "ns/flaky" && failuresLeft > 0 {
				failuresLeft--
				return errors.New("not yet")
			}
			done <- key
			return nil
		},
	})
	cacheA, cacheB := &fakeSyncer{}, &fakeSyncer{}
	l.WaitFor(cacheA, cacheB, cacheA)
	if len(l.waitFor) != 2 {
		t.Fatalf("WaitFor kept %d caches, want 2 (a cache given twice is waited for once)", len(l.waitFor))
	}
	l.Add("ns/steady")
	l.Add("ns/steady")
	l.Add("ns/flaky")

	ctx, cancel := context.WithCancel(context.Background())
	stopped := make(chan error)
	go func() { stopped <- l.Run(ctx, 2) }()

	cacheA.set()
	time.Sleep(50 * time.Millisecond)
	mu.Lock()
	n := len(calls)
	mu.Unlock()
	if n != 0 {
		t.Fatalf("synced %d keys before every cache synced", n)
	}
	cacheB.set()

	got := map[string]bool{}
	for len(got) < 2 {
		select {
		case k := <-done:
			got[k] = true
		case <-time.After(10 * time.Second):
			t.Fatalf("synced %v within 10s, want ns/steady and ns/flaky", got)
		}
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
	mu.Lock()
	defer mu.Unlock()
	if calls["ns/steady"] != 1 || calls["ns/flaky"] != 3 {
		t.Fatalf("sync calls %v, want ns/steady once and ns/flaky 3 times (2 failures, then success)", calls)
	}
	if !l.Queue.ShuttingDown() {
		t.Fatal("the queue is not shut down after Run returned")
	}
}

// TestLoopStoppedBeforeCachesSync: a controller stopped while its caches
// are still syncing runs no sync and leaves no queue behind.
func TestLoopStoppedBeforeCachesSync(t *testing.T) {
	l := NewLoop(LoopConfig[string]{Sync: func(context.Context, string) error {
		t.Error("synced a key although the caches never synced")
		return nil
	}})
	l.WaitFor(&fakeSyncer{})
	l.Add("ns/a")
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	if err := l.Run(ctx, 1); err != nil {
		t.Fatalf("Run: %v", err)
	}
	if !l.Queue.ShuttingDown() {
		t.Fatal("the queue is still up after Run returned")
	}
}
