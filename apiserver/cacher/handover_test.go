package cacher_test

import (
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/minik8s/minik8s/apiserver/cacher"
)

// A dispatcher waiting for room in a watcher's queue must not keep the
// watcher's goroutine, which drains that queue, from taking its lock: the
// goroutine, paused just before it goes direct while the dispatcher fills
// the queue and waits, then drains it, and the watch gets every event in
// order instead of being ended as too slow after SlowWatcherTimeout.
// (Not parallel: the hook is the package's.)
func TestHandOverWhileDispatcherWaits(t *testing.T) {
	e := newEnv(t, func(c *cacher.Config) {
		c.WatcherBufferSize = 2
		c.SlowWatcherTimeout = 30 * time.Second
	})
	rev := e.create("ns", "p0", "", nil)

	var target atomic.Pointer[cacher.Watcher]
	paused, release := make(chan struct{}), make(chan struct{})
	var once sync.Once
	defer cacher.SetBeforeDirectHook(func(w *cacher.Watcher) {
		if target.Load() != w {
			return
		}
		once.Do(func() {
			close(paused)
			<-release
		})
	})()

	w := watch(t, e.c, cacher.WatchOptions{ResourceVersion: fmt.Sprint(rev), SendInitialEvents: ptr(true)})
	target.Store(w)
	if ev := next(t, w, false); ev.Type != "ADDED" || ev.Object.Metadata.Name != "p0" {
		t.Fatalf("first event %s %s, want ADDED p0", ev.Type, ev.Object.Metadata.Name)
	}
	<-paused
	// Two lines fill the queue; the third makes the dispatcher wait for
	// room, the fourth and fifth queue behind it.
	const n = 5
	created := make(chan struct{})
	go func() {
		defer close(created)
		for i := 1; i <= n; i++ {
			e.create("ns", fmt.Sprint("p", i), "", nil)
		}
	}()
	<-created
	// Give the dispatcher time to reach its wait for room; whether it has
	// or not, the goroutine must go on once released.
	time.Sleep(200 * time.Millisecond)
	close(release)

	for i := 1; i <= n; {
		select {
		case line, ok := <-w.Events():
			if !ok {
				t.Fatalf("watch closed after %d of %d events: ended as too slow", i-1, n)
			}
			ev := parseLine(t, line)
			if ev.Type == "BOOKMARK" {
				continue
			}
			if ev.Type != "ADDED" || ev.Object.Metadata.Name != fmt.Sprint("p", i) {
				t.Fatalf("event %d: %s %s, want ADDED p%d", i, ev.Type, ev.Object.Metadata.Name, i)
			}
			i++
		case <-time.After(20 * time.Second):
			t.Fatalf("event %d of %d not delivered", i, n)
		}
	}
	if v := metricValue(t, e.c, "apiserver_terminated_watchers_total", "", ""); v != 0 {
		t.Fatalf("terminated watchers = %v, want 0", v)
	}
}
